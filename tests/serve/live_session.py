"""A multi-turn session with a slow model, run in its own process for the live tail test.

    python live_session.py HOME BASE_URL TURNS

Each turn calls ``lookup`` and then answers; the scripted server delays every answer, so the
steps are written one by one while the test watches.
"""

from __future__ import annotations

import sys
from pathlib import Path

import wayline


def lookup(topic: str) -> str:
    """Look a topic up in the team wiki."""
    return f"{topic}: runs nightly at 02:00 UTC; rollbacks use the previous image tag."


def main() -> None:
    """Run TURNS turns into HOME's recordings against the scripted model at BASE_URL."""
    home, base_url, turns = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    with wayline.Agent(
        model="gpt-4o-mini",
        base_url=base_url,
        tools=[lookup],
        home=home,
        plugins=["observability/relay"],
        yolo=True,
    ) as agent:
        print(agent.session_id, flush=True)
        for turn in range(turns):
            result = agent.run(f"question {turn}: how do deploys of service {turn} work?")
            if not result.completed:
                raise SystemExit(f"turn {turn} did not complete: {result.reason}")


if __name__ == "__main__":
    main()
