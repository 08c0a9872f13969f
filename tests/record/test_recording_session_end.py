"""Nothing on the agent's thread but the hand-off: with both observability plugins on, a
session's end (a top-level run's, and a delegated child's) returns while the hook thread has
not run one hook of the session — before either plugin is even built. Shown by causality,
not timing: the hook thread is held until the runs have returned."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import wayline
from wayline.plugins.observability.hookqueue import HookQueue
from wayline.plugins.observability.otel.plugin import OtelPlugin
from wayline.plugins.observability.relay import RelayPlugin
from wayline.relay.atof import read_events
from wayline.testing import ScriptedServer

SCRIPT: dict[str, Any] = {
    "model": "m",
    "rules": [
        {"match": {"first_user_contains": "CHILD"}, "respond": {"content": "child done"}},
        {
            "match": {"last_role": "user"},
            "respond": {
                "tool_calls": [
                    {"name": "delegate_task", "id": "d1", "arguments": {"goal": "CHILD work"}}
                ]
            },
        },
        {"match": {"last_role": "tool"}, "respond": {"content": "parent done"}},
    ],
}


class Gate:
    """Holds the shared hook thread, queued before any hook of the session, until the test
    opens it (or ``limit_s`` passes, which the test reports as a failure: something on the
    agent's side waited for the thread)."""

    def __init__(self, limit_s: float = 20.0) -> None:
        self.open = threading.Event()
        self.limit_s = limit_s
        self.timed_out = False
        HookQueue(label="gate").put("gate", self.hold, {})

    def hold(self) -> None:
        """Runs on the hook thread."""
        self.timed_out = not self.open.wait(self.limit_s)


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_session_ends_return_while_the_hook_thread_is_held(tmp_path: Path) -> None:
    """A run with a delegated child returns (both sessions' ``on_session_end`` fired) while
    the hook thread is held before the plugins' first hook; once released, the files hold
    both sessions."""
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "out"
    (home / "config.yaml").write_text(
        "plugins:\n  entries:\n    observability/otel:\n      exporter: file\n"
        f"      file: {out / 'spans.jsonl'}\n"
    )
    env = {
        "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
        "WAYLINE_RELAY_ATOF_FILENAME": "events.jsonl",
        "WAYLINE_RELAY_ATOF_MODE": "overwrite",
        "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
    }
    ends: list[str] = []

    class EndProbe:
        """Notes each session end on the agent's side (a synchronous observer)."""

        def register(self, ctx: Any) -> None:
            ctx.register_hook("on_session_end", lambda session_id, **_: ends.append(session_id))

    gate = Gate()
    try:
        with (
            _env(env),
            ScriptedServer(SCRIPT) as server,
            wayline.Agent(
                model="m",
                base_url=server.base_url,
                toolsets=["delegation"],
                home=home,
                plugins=["observability/relay", "observability/otel", EndProbe()],
                yolo=True,
            ) as agent,
        ):
            relay = agent.plugin("observability/relay")
            assert isinstance(relay, RelayPlugin)
            assert isinstance(agent.plugin("observability/otel"), OtelPlugin)
            agent.run("delegate please")
            assert len(ends) == 2, "the child's and the parent's run ended"
            assert not gate.open.is_set(), "nothing waited for the hook thread"
            assert relay.stats()["hooks_pending"] > 0
            gate.open.set()
        # The agent's close finalized the sessions and closed both plugin instances.
        assert not gate.timed_out
        assert relay.drain()
    finally:
        gate.open.set()
    events = read_events(out / "atof" / "events.jsonl", sort=False)
    sessions = {e["metadata"].get("session_id") for e in events if e.get("metadata")}
    assert set(ends) <= sessions
    spans = (out / "spans.jsonl").read_text().splitlines()
    assert any('"name": "subagent.' in line or '"subagent.' in line for line in spans)
