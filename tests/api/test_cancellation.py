"""Cancelling a turn: ``arun`` cancelled (directly or by ``wait_for``) and Ctrl-C in ``run``.

The model hangs for a minute and the tools block for a minute (or until the test releases
them), while each test has a much shorter pytest timeout: a turn that waited for either
would fail the test. "Quickly" is pinned by ordering, not by a clock: the cancel returns
while the hang is still on, and the server sees the request's connection close.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.testing import ScriptedServer
from wayline.testing.server import RecordedRequest

pytestmark = pytest.mark.timeout(30)

HANG = 60.0


def _tool_then_answer(tool: str) -> dict[str, Any]:
    return {
        "default": {"content": "done"},
        "rules": [
            {
                "match": {"first_user_contains": "nap"},
                "turns": [{"tool_calls": [{"name": tool, "arguments": {"seconds": HANG}}]}],
            }
        ],
    }


class Seen:
    """What the observers of one agent saw."""

    def __init__(self, agent: wayline.Agent) -> None:
        self.ends: list[tuple[bool, str]] = []
        self.api_errors: list[str] = []
        self.tool_ends: list[str] = []
        agent.on("on_session_end", lambda **kw: self.ends.append((kw["interrupted"], kw["reason"])))
        agent.on("api_request_error", lambda **kw: self.api_errors.append(kw["reason"]))
        agent.on("post_tool_call", lambda **kw: self.tool_ends.append(kw["status"]))


HANG_SECOND: dict[str, Any] = {
    "default": {"content": "too late", "delay": HANG},
    "rules": [{"match": {"last_user_contains": "warm up"}, "respond": {"content": "ready"}}],
}


@pytest.fixture
def hanging_model() -> Iterator[ScriptedServer]:
    """A model server that answers "warm up" at once and everything else after a minute."""
    with ScriptedServer(HANG_SECOND) as srv:
        yield srv


def test_cancelling_arun_closes_the_hanging_model_request(
    home: Path, hanging_model: ScriptedServer
) -> None:
    """Cancelling the task awaiting ``arun`` while the model hangs closes the request's
    connection (the server sees it go), and the observers see the attempt and the turn
    interrupted."""

    async def main(agent: wayline.Agent) -> None:
        task = asyncio.create_task(agent.arun("hi"))
        await asyncio.to_thread(hanging_model.wait_for_requests, 1, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with wayline.Agent(model="m", base_url=hanging_model.base_url, home=home) as agent:
        seen = Seen(agent)
        asyncio.run(main(agent))
        hanging_model.wait_for_disconnect(0, timeout=10)
    assert seen.ends == [(True, "interrupted")]
    assert seen.api_errors == ["interrupted"]


def test_wait_for_on_arun_times_out_while_the_model_hangs(
    home: Path, hanging_model: ScriptedServer
) -> None:
    """``asyncio.wait_for(agent.arun(...), 1)`` raises ``TimeoutError`` while the model still
    hangs, and the request's connection is closed."""

    async def main(agent: wayline.Agent) -> None:
        await agent.arun("warm up")  # the SDK's first-call set-up is done before the clock
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(agent.arun("hi"), 1.0)

    with wayline.Agent(model="m", base_url=hanging_model.base_url, home=home) as agent:
        seen = Seen(agent)
        asyncio.run(main(agent))
        hanging_model.wait_for_disconnect(1, timeout=10)
    assert seen.ends == [(False, "completed"), (True, "interrupted")]


def test_cancelled_arun_cancels_an_async_tool(home: Path) -> None:
    """Cancelling the task awaiting ``arun`` cancels a running ``async def`` tool on the
    caller's loop (it sees ``CancelledError``) and reports the call ``cancelled``."""
    started = asyncio.Event()
    outcome: list[str] = []

    async def nap(seconds: float) -> str:
        """Sleep for a while."""
        started.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        outcome.append("slept")
        return "rested"

    async def main(agent: wayline.Agent) -> None:
        task = asyncio.create_task(agent.arun("nap please"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with (
        ScriptedServer(_tool_then_answer("nap")) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[nap], home=home) as agent,
    ):
        seen = Seen(agent)
        asyncio.run(main(agent))
    assert outcome == ["cancelled"]
    assert seen.tool_ends == ["cancelled"]
    assert seen.ends == [(True, "interrupted")]


def test_cancelled_arun_abandons_a_sync_tool_that_does_not_stop(home: Path) -> None:
    """A sync tool that ignores the cancel is left to finish on its thread: ``arun`` raises
    ``CancelledError`` while the tool is still blocked, and the call is reported
    ``cancelled`` once."""
    started = threading.Event()
    release = threading.Event()
    returned = threading.Event()

    def nap(seconds: float) -> str:
        """Block until released (or for ``seconds``)."""
        started.set()
        release.wait(seconds)
        returned.set()
        return "rested"

    async def main(agent: wayline.Agent) -> bool:
        task = asyncio.create_task(agent.arun("nap please"))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return returned.is_set()

    with (
        ScriptedServer(_tool_then_answer("nap")) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[nap], home=home) as agent,
    ):
        seen = Seen(agent)
        try:
            tool_had_returned = asyncio.run(main(agent))
        finally:
            release.set()
        assert returned.wait(10)
    assert tool_had_returned is False
    assert seen.tool_ends == ["cancelled"]
    assert seen.ends == [(True, "interrupted")]
    assert len(srv.requests) == 1  # the abandoned result never went to the model


def _interrupt_main_thread() -> None:
    """Deliver SIGINT to the main thread, as Ctrl-C in a terminal does."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def test_ctrl_c_in_run_closes_the_hanging_model_request(home: Path) -> None:
    """Ctrl-C while ``run`` waits for a hanging model raises ``KeyboardInterrupt`` at once,
    closes the request's connection, and the observers see the turn interrupted."""

    def on_request(request: RecordedRequest) -> None:
        _interrupt_main_thread()

    with (
        ScriptedServer(
            {"default": {"content": "too late", "delay": HANG}}, on_request=on_request
        ) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, home=home) as agent,
    ):
        seen = Seen(agent)
        with pytest.raises(KeyboardInterrupt):
            agent.run("hi")
        srv.wait_for_disconnect(0, timeout=10)
    assert seen.ends == [(True, "interrupted")]
    assert seen.api_errors == ["interrupted"]


def test_ctrl_c_in_run_abandons_a_blocked_sync_tool(home: Path) -> None:
    """Ctrl-C while a sync tool blocks ends ``run`` with ``KeyboardInterrupt`` before the tool
    returns; the call is reported ``cancelled`` and the turn interrupted."""
    release = threading.Event()
    returned = threading.Event()

    def nap(seconds: float) -> str:
        """Block until released (or for ``seconds``)."""
        _interrupt_main_thread()
        release.wait(seconds)
        returned.set()
        return "rested"

    with (
        ScriptedServer(_tool_then_answer("nap")) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[nap], home=home) as agent,
    ):
        seen = Seen(agent)
        try:
            with pytest.raises(KeyboardInterrupt):
                agent.run("nap please")
            tool_had_returned = returned.is_set()
        finally:
            release.set()
        assert returned.wait(10)
    assert tool_had_returned is False
    assert seen.tool_ends == ["cancelled"]
    assert seen.ends == [(True, "interrupted")]
