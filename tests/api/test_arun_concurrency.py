"""Many agents awaited at once: ``arun`` runs each turn on a thread of its own.

Overlap is shown by the model server holding every request at the same time (its request
log), never by a clock: a turn that waited for another's would never let the server see
them all while none has been answered.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.testing import ScriptedServer
from wayline.testing.server import RecordedRequest

pytestmark = pytest.mark.timeout(120)

AGENTS = 40
HELD = 16
HANG = 60.0


def _per_agent_script(n: int, delay: float) -> dict[str, Any]:
    return {
        "rules": [
            {
                "match": {"first_user_contains": f"agent {i:02d}:"},
                "respond": {"content": f"answer {i:02d}", "delay": delay},
            }
            for i in range(n)
        ]
    }


def test_forty_agents_gathered_each_get_their_own_answer(home: Path) -> None:
    """40 agents awaited with ``asyncio.gather`` against a model that takes a while per
    answer all complete, each with the answer to its own question."""
    with ScriptedServer(_per_agent_script(AGENTS, 0.2)) as srv:
        agents = [wayline.Agent(model="m", base_url=srv.base_url, home=home) for _ in range(AGENTS)]
        try:

            async def main() -> list[Any]:
                turns = (a.arun(f"agent {i:02d}: hello") for i, a in enumerate(agents))
                return await asyncio.gather(*turns)

            results = asyncio.run(main())
        finally:
            for agent in agents:
                agent.close()
        assert len(srv.requests) == AGENTS
    assert [r.completed for r in results] == [True] * AGENTS
    assert [r.text for r in results] == [f"answer {i:02d}" for i in range(AGENTS)]
    assert all(a.messages[-1]["content"] == f"answer {i:02d}" for i, a in enumerate(agents))


def test_arun_does_not_wait_for_the_loops_default_executor(home: Path) -> None:
    """With a one-thread default executor on the loop, 16 ``arun`` turns still reach the
    model at the same time (the server holds all 16 requests at once); cancelling them all
    then closes every request."""
    held = threading.Event()
    seen: list[RecordedRequest] = []
    lock = threading.Lock()

    def on_request(request: RecordedRequest) -> None:
        with lock:
            seen.append(request)
            if len(seen) == HELD:
                held.set()

    script = {"default": {"content": "too late", "delay": HANG}}
    with ScriptedServer(script, on_request=on_request) as srv:
        agents = [wayline.Agent(model="m", base_url=srv.base_url, home=home) for _ in range(HELD)]
        try:

            async def main() -> list[BaseException | Any]:
                loop = asyncio.get_running_loop()
                one = ThreadPoolExecutor(max_workers=1)
                loop.set_default_executor(one)
                tasks = [asyncio.create_task(a.arun(f"turn {i}")) for i, a in enumerate(agents)]
                deadline = loop.time() + 60
                while not held.is_set() and loop.time() < deadline:
                    await asyncio.sleep(0.02)
                all_held = held.is_set()
                for task in tasks:
                    task.cancel()
                outcomes = await asyncio.gather(*tasks, return_exceptions=True)
                return [all_held, *outcomes]

            all_held, *outcomes = asyncio.run(main())
            assert all_held, f"the server saw {len(seen)} of {HELD} requests at once"
            assert all(isinstance(o, asyncio.CancelledError) for o in outcomes)
            for request in seen:
                srv.wait_for_disconnect(request.index, timeout=20)
        finally:
            for agent in agents:
                agent.close()
