"""A real session with one turn of each outcome, recorded by observability/relay (ATIF + ATOF).

Run as ``python outcome_session.py HOME``: six turns through ``wayline.Agent`` against the
scripted model: completed, max_turns (tools until the limit), error (a 400 from the model),
cancelled during a tool, cancelled during a model call, completed again. Prints each turn's
``TurnResult.reason`` on a line.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import wayline
from wayline.testing import ScriptedServer

SCRIPT: dict[str, Any] = {
    "default": {"content": "ok"},
    "rules": [
        {
            "match": {"last_user_contains": "loop"},
            "respond": {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
        },
        {
            "match": {"last_user_contains": "nap"},
            "respond": {"tool_calls": [{"name": "nap", "arguments": {"seconds": 60}}]},
        },
        {
            "match": {"last_user_contains": "fail"},
            "respond": {"content": "x", "fault": {"status": 400}},
        },
        {"match": {"last_user_contains": "hang"}, "respond": {"content": "late", "delay": 60}},
    ],
}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def main(home: Path) -> None:
    """Run the six turns; the cancellations wait on events, not on time."""
    started = asyncio.Event()

    async def nap(seconds: float) -> str:
        """Sleep for a while."""
        started.set()
        await asyncio.sleep(seconds)
        return "rested"

    with (
        ScriptedServer(SCRIPT) as srv,
        wayline.Agent(
            model="m",
            base_url=srv.base_url,
            tools=[add, nap],
            plugins=["observability/relay"],
            home=home,
            max_turns=2,
            max_retries=0,
        ) as agent,
    ):
        print(agent.run("hello").reason)
        print(agent.run("loop forever").reason)
        print(agent.run("please fail").reason)

        async def cancelled() -> None:
            task = asyncio.create_task(agent.arun("nap please"))
            await started.wait()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            print("interrupted")
            seen = len(srv.requests)
            task = asyncio.create_task(agent.arun("hang now"))
            await asyncio.to_thread(srv.wait_for_requests, seen + 1, 30)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            print("interrupted")

        asyncio.run(cancelled())
        print(agent.run("bye").reason)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
