"""A real wayline session whose middleware rewrites one tool call and every model request.

Run as a script by the viewer tests' ``rewrite_run`` fixture (``python rewrite_session.py HOME``,
with the relay plugin's output directories in the environment): the model asks to convert EUR
and JPY amounts; ``usd_only`` (source ``fx-policy``) makes the EUR call run in USD, and
``cooler`` (source ``tuner``) sets the temperature of every model request.
"""

from __future__ import annotations

import sys
from typing import Any

import wayline
from wayline.testing import ScriptedServer


def convert(amount: float, currency: str) -> str:
    """Convert an amount (the result shows which currency ran)."""
    return f"{amount:.2f} {currency}"


def usd_only(**kw: Any) -> dict[str, Any] | None:
    """tool_request middleware (control callback, agent thread, may block): EUR runs as USD."""
    if kw.get("tool_name") != "convert" or kw["args"].get("currency") != "EUR":
        return None
    return {
        "args": {**kw["args"], "currency": "USD"},
        "source": "fx-policy",
        "reason": "settle in USD only",
    }


def cooler(**kw: Any) -> dict[str, Any]:
    """llm_request middleware (control callback, agent thread, may block): fixed temperature."""
    return {
        "request": {**kw["request"], "temperature": 0.25},
        "source": "tuner",
        "reason": "steadier answers",
    }


SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": {},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "convert", "arguments": {"amount": 2, "currency": "EUR"}},
                        {"name": "convert", "arguments": {"amount": 3, "currency": "JPY"}},
                    ]
                },
                {"content": "done"},
            ],
        }
    ]
}


def main() -> None:
    """Run the session once with the relay plugin recording it."""
    with (
        ScriptedServer(SCRIPT) as model,
        wayline.Agent(
            model="m",
            base_url=model.base_url,
            tools=[wayline.Tool(convert)],
            home=sys.argv[1],
            plugins=["observability/relay"],
            yolo=True,
        ) as agent,
    ):
        agent.use("tool_request", usd_only)
        agent.use("llm_request", cooler)
        agent.run("convert my money")


if __name__ == "__main__":
    main()
