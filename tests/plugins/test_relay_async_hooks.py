"""observability/relay's hook thread: hooks only queue, events keep the hook's time, the
session's end waits for its files, and ``*_ASYNC_HOOKS=0`` restores the calling thread."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wayline import relay
from wayline.host.manager import PluginManager
from wayline.plugins.observability.hookqueue import HookQueue
from wayline.plugins.observability.relay import RelayPlugin
from wayline.relay import clock
from wayline.runtime import build_runtime
from wayline.testing.server import ScriptedServer

SID = "20261122_010000_abcdef"
SCRIPT: dict[str, Any] = {
    "model": "scripted-model",
    "rules": [
        {
            "match": {"last_role": "user"},
            "respond": {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        },
        {"match": {"last_role": "tool"}, "respond": {"content": "done"}},
    ],
}


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> tuple[Path, Path]:
    for key in list(os.environ):
        if key.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_")):
            monkeypatch.delenv(key)
    out = tmp_path / "out"
    settings = {
        "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
        "WAYLINE_RELAY_ATOF_FILENAME": "events.jsonl",
        "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        "WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "trajectory-{session_id}.json",
        **env,
    }
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("WAYLINE_HOME", str(home))
    (home / "config.yaml").write_text(
        'approvals:\n  mode: "off"\nplugins:\n  enabled: [observability/relay]\n'
    )
    return home, out


class _Threads:
    """A relay subscriber recording which thread delivered each event, and its time."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    def __call__(self, event: Any) -> None:
        self.seen.append((event.name, threading.current_thread().name, event.timestamp_ns))


@pytest.fixture
def threads() -> Iterator[_Threads]:
    """Subscribed for the test's duration."""
    recorder = _Threads()
    relay.subscribers.register("test.threads", recorder)
    yield recorder
    relay.subscribers.deregister("test.threads")


@pytest.fixture
def hosts() -> Iterator[list[PluginManager]]:
    """Plugin managers the test builds; their plugin instances are closed after it."""
    made: list[PluginManager] = []
    yield made
    for manager in made:
        manager.close_instances()


def test_hooks_are_handled_on_the_hook_thread_with_the_hooks_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: _Threads, hosts: list[PluginManager]
) -> None:
    """A hook's events are emitted on the hook thread but stamped with the time the hook
    fired."""
    home, _ = _home(tmp_path, monkeypatch)
    manager = PluginManager(home)
    hosts.append(manager)
    manager.discover_and_load()
    plugin = manager.instance("observability/relay")
    assert isinstance(plugin, RelayPlugin)
    hooks = manager.hooks
    before = time.time_ns()
    hooks.invoke_hook("on_session_start", session_id=SID, model="m", platform="cli")
    hooks.invoke_hook(
        "on_session_end", session_id=SID, completed=True, interrupted=False, reason=None
    )
    after = time.time_ns()
    assert plugin.drain(5.0)
    assert plugin.stats() == {"hooks_pending": 0, "hook_failures": 0}
    names = {name for name, _, _ in threads.seen}
    assert "hermes.session.end" in names
    assert {thread for _, thread, _ in threads.seen} == {"wayline-hooks"}
    assert all(before <= ns <= after for _, _, ns in threads.seen), (before, threads.seen, after)


def test_async_hooks_off_handles_hooks_on_the_calling_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: _Threads, hosts: list[PluginManager]
) -> None:
    """``WAYLINE_RELAY_ASYNC_HOOKS=0``: events are emitted before the hook returns."""
    home, _ = _home(tmp_path, monkeypatch, WAYLINE_RELAY_ASYNC_HOOKS="0")
    manager = PluginManager(home)
    hosts.append(manager)
    manager.discover_and_load()
    manager.hooks.invoke_hook("on_session_start", session_id=SID, model="m", platform="cli")
    assert threads.seen
    assert {thread for _, thread, _ in threads.seen} == {threading.current_thread().name}


def test_finalize_returns_with_the_trajectory_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: _Threads, hosts: list[PluginManager]
) -> None:
    """A real session: when ``finalize()`` returns, the ATIF file holds every step and the
    ATOF file every event, with no shutdown or drain in between."""
    home, out = _home(tmp_path, monkeypatch)
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    with ScriptedServer(SCRIPT) as server:
        runtime = build_runtime(home, base_url=server.base_url, model="scripted-model")
        hosts.append(runtime.manager)
        agent = runtime.agent(cwd=work)
        assert agent.run_turn("read a.txt").completed
        agent.finalize()
        trajectory_text = (out / "atif" / f"trajectory-{agent.session_id}.json").read_text()
        lines = (out / "atof" / "events.jsonl").read_text().splitlines()
        session_id = agent.session_id
    trajectory = json.loads(trajectory_text)
    assert [s["source"] for s in trajectory["steps"]] == ["user", "agent", "agent"]
    last = json.loads(lines[-1])
    assert last["name"] == f"hermes-session-{session_id}" and last["scope_category"] == "end"
    assert "wayline-hooks" in {thread for _, thread, _ in threads.seen}
    # Every model call's start event carries the tools its request sent, the second one too
    # (the same list object repeated across requests is not mistaken for "no tools").
    starts = [
        json.loads(line)
        for line in lines
        if '"category":"llm"' in line and '"scope_category":"start"' in line
    ]
    assert len(starts) == 2
    assert all(
        {t["function"]["name"] for t in e["data"]["content"]["tools"]} >= {"read_file"}
        for e in starts
    )


def test_queue_pins_the_relay_clock_per_callback() -> None:
    """Relay events emitted by a queued callback carry the time of its ``put`` (not the time
    it ran, 200 ms later), and a pin holds for its own thread only."""
    queue = HookQueue(label="test")
    stamps: list[int] = []
    queue.put("slow", lambda: time.sleep(0.2), {})
    put_at = time.time_ns()
    queue.put("stamp", lambda: stamps.append(clock.now_ns()), {})
    queued_by = time.time_ns()
    assert queue.drain(5.0)
    assert put_at <= stamps[0] <= queued_by < stamps[0] + 150_000_000 < time.time_ns()
    queue.close(1.0)
    other = threading.Thread(target=clock.pin, args=(123,))
    other.start()
    other.join()
    assert abs(clock.now_ns() - time.time_ns()) < 50_000_000
