"""The hook worker process (``WAYLINE_HOOK_WORKER=process``, the default): the observability
plugins' callbacks run in a child process that writes what the worker thread writes, keeps
the hooks' times, survives the agent's SIGKILL long enough to finish the files, and hands
the work back to the agent's process when it dies."""

from __future__ import annotations

import itertools
import json
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_relay_async_hooks import SCRIPT  # one scripted read-then-answer model

from wayline import relay
from wayline.contract.redact import add_secret_pattern, add_sensitive_key, remove_secret_pattern
from wayline.plugins.observability import otel as otel_plugin
from wayline.plugins.observability import relay as relay_plugin
from wayline.plugins.observability.hookproc import (
    DeltaLists,
    ListStore,
    remote,
    worker_mode,
    worker_process,
)
from wayline.plugins.observability.hookqueue import HookQueue
from wayline.relay import clock
from wayline.runtime import build_runtime
from wayline.testing.server import ScriptedServer


class Recorder:
    """Handlers (built in the worker process) that append each hook, as JSON, to a file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.callbacks = {
            "pre_tool_call": self._record("pre_tool_call"),
            "post_api_request": self._record("post_api_request"),
            "fails": self._fails,
        }

    def _record(self, hook: str) -> Any:
        def callback(**payload: Any) -> None:
            line = {"hook": hook, "ns": clock.now_ns(), "pid": os.getpid(), **payload}
            with open(self.path, "a") as fh:
                fh.write(json.dumps(line, default=repr) + "\n")

        return callback

    def _fails(self, **payload: Any) -> None:
        raise ValueError("observer bug")

    def call(self, name: str, *args: Any) -> Any:
        """``echo`` returns its arguments; ``gc`` the process's collector settings."""
        if name == "echo":
            return list(args)
        if name == "gc":
            import gc

            return {"threshold": gc.get_threshold(), "frozen": gc.get_freeze_count()}
        raise ValueError(name)

    def close(self, timeout_s: float = 0.0) -> None:
        """Writes a last line."""
        with open(self.path, "a") as fh:
            fh.write(json.dumps({"hook": "closed"}) + "\n")


def recorder(path: str) -> Recorder:
    """Factory the worker process calls."""
    return Recorder(path)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> tuple[Path, Path]:
    for key in list(os.environ):
        if key.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_", "WAYLINE_OTEL_", "OTEL_")):
            monkeypatch.delenv(key)
    out = tmp_path / mode
    for key, value in {
        "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
        "WAYLINE_RELAY_ATOF_FILENAME": "events.jsonl",
        "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        "WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "trajectory-{session_id}.json",
        "WAYLINE_HOOK_WORKER": mode,
    }.items():
        monkeypatch.setenv(key, value)
    home = tmp_path / f"home-{mode}"
    home.mkdir()
    monkeypatch.setenv("WAYLINE_HOME", str(home))
    (home / "config.yaml").write_text(
        'approvals:\n  mode: "off"\nplugins:\n  enabled: [observability/relay, '
        "observability/otel]\n  entries:\n    observability/otel:\n      exporter: file\n"
        f"      file: {out / 'spans.jsonl'}\n"
    )
    return home, out


@pytest.fixture
def plugins_down() -> Iterator[None]:
    """Both plugins are shut down after the test (their queues and the worker process)."""
    yield
    relay_plugin.shutdown()
    otel_plugin.shutdown()


def _session(home: Path, work: Path, base_url: str, turns: int = 3) -> str:
    runtime = build_runtime(home, base_url=base_url, model="scripted-model")
    agent = runtime.agent(cwd=work)
    for turn in range(turns):
        assert agent.run_turn(f"read a.txt, turn {turn}").completed
    agent.finalize()
    plugin = otel_plugin.current()
    assert plugin is not None and plugin.force_flush()
    return agent.session_id


def _shape(out: Path, session_id: str) -> dict[str, Any]:
    """What both workers must agree on: event kinds and names, steps, span names."""
    events = [
        (e.get("kind"), e.get("scope_category"), e.get("category"))
        for e in _lines(out / "atof" / "events.jsonl")
    ]
    trajectory = json.loads((out / "atif" / f"trajectory-{session_id}.json").read_text())
    steps = [
        (s["source"], s.get("message"), [c["function_name"] for c in s.get("tool_calls", [])])
        for s in trajectory["steps"]
    ]
    spans = sorted(s["name"] for s in _lines(out / "spans.jsonl"))
    return {"events": events, "steps": steps, "spans": spans}


def test_process_worker_writes_what_the_thread_worker_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins_down: None
) -> None:
    """The same 3-turn session gives the same ATOF events, ATIF steps and spans whether the
    callbacks run on the worker thread or in the worker process — and in the process mode
    nothing of it is produced in the agent's process."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    seen: list[str] = []
    relay.subscribers.register("test.here", lambda event: seen.append(event.name))
    try:
        shapes = {}
        with ScriptedServer(SCRIPT) as server:
            for mode in ("thread", "process"):
                home, out = _home(tmp_path, monkeypatch, mode)
                assert worker_mode() == mode
                seen.clear()
                session_id = _session(home, work, server.base_url)
                shapes[mode] = _shape(out, session_id)
                in_process = bool(seen)
                relay_plugin.shutdown()
                otel_plugin.shutdown()
                assert in_process is (mode == "thread")
    finally:
        relay.subscribers.deregister("test.here")
    assert shapes["process"] == shapes["thread"]
    assert len(shapes["process"]["steps"]) == 9 and shapes["process"]["spans"]


def test_the_worker_process_writes_a_batchs_spans_without_waiting_for_a_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins_down: None
) -> None:
    """With a local (file) exporter, the spans a hook batch ended reach the file right after
    the worker process has run that batch, although the export schedule is a minute long: a
    flush at the end of a session has little left to wait for."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    home, out = _home(tmp_path, monkeypatch, "process")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "60000")
    with ScriptedServer(SCRIPT) as server:
        runtime = build_runtime(home, base_url=server.base_url, model="scripted-model")
        agent = runtime.agent(cwd=work)
        assert agent.run_turn("read a.txt").completed
        plugin = otel_plugin.current()
        assert plugin is not None
        assert plugin.queue.drain(30.0)  # type: ignore[attr-defined]  # (RemoteOtel)
        deadline = time.monotonic() + 10.0  # the export thread was woken; far below 60 s
        names: set[str] = set()
        while len(names) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
            names = {span["name"] for span in _lines(out / "spans.jsonl")}
        agent.finalize()
    assert any(name.startswith("tool") for name in names) and len(names) >= 3, names


def test_process_worker_keeps_hook_times_and_survives_bad_callbacks(tmp_path: Path) -> None:
    """A remote queue's callback runs in another process, at the time its hook fired (relay's
    clock is pinned there too); a payload value that does not pickle arrives sanitized (a
    Deferred one as a "not sent" note); a failing callback is counted, not fatal; ``close``
    closes the handlers there."""
    from wayline.contract.deferred import Deferred
    from wayline.plugins.observability.hookproc import NOT_SENT

    path = tmp_path / "hooks.jsonl"
    queue = HookQueue(label="test/recorder", remote=remote(f"{__name__}:recorder", str(path)))
    pre = queue.wrap("pre_tool_call", None)
    fails = queue.wrap("fails", None)
    before = time.time_ns()
    odd = Deferred({"lock": threading.Lock()})
    pre(tool_name="terminal", args={"command": "ls"}, lock=threading.Lock(), odd=odd)
    fails(x=1)
    pre(tool_name="read_file", args={"path": "a"})
    after = time.time_ns()
    assert queue.drain(30.0)
    assert queue.call("echo", 1, "two") == [1, "two"]
    assert queue.failure_count() == 1
    assert queue.close(30.0)
    lines = _lines(path)
    assert [line["hook"] for line in lines] == ["pre_tool_call", "pre_tool_call", "closed"]
    first, second = lines[0], lines[1]
    assert first["pid"] != os.getpid() and first["pid"] == second["pid"]
    assert before <= first["ns"] <= second["ns"] <= after  # the hooks' times, not the run's
    assert first["args"] == {"command": "ls"} and "lock" in str(first["lock"]).lower()
    assert first["odd"] == NOT_SENT


def test_message_lists_travel_as_deltas() -> None:
    """A growing conversation is sent as its new messages only and rebuilt exactly; a list
    that does not continue the last one is sent whole; forgotten lists are forgotten on both
    sides (a session's end, the slot limit)."""
    sender, receiver = DeltaLists(slots=2), ListStore()

    def roundtrip(hook: str, payload: dict[str, Any]) -> tuple[dict[str, Any], int]:
        encoded = sender.encode(hook, payload)
        data = pickle.dumps((encoded, sender.dropped))
        decoded, dropped = pickle.loads(data)
        sender.dropped = []
        receiver.drop(dropped)
        return receiver.decode(decoded), len(data)

    history = [{"role": "user", "content": f"message {i} " + "x" * 500} for i in range(40)]
    full, full_size = roundtrip("pre_api_request", {"session_id": "s", "messages": history})
    assert full["messages"] == history
    history.append({"role": "assistant", "content": "new"})
    grown, grown_size = roundtrip("pre_api_request", {"session_id": "s", "messages": list(history)})
    assert grown["messages"] == history and grown_size < full_size / 10
    edited = [{"role": "system", "content": "compressed"}, *history[5:]]
    whole, _ = roundtrip("pre_api_request", {"session_id": "s", "messages": edited})
    assert whole["messages"] == edited
    short, _ = roundtrip("pre_api_request", {"session_id": "s", "messages": history[:3]})
    assert short["messages"] == history[:3]
    roundtrip("x", {"session_id": "a", "messages": history})
    roundtrip("x", {"session_id": "b", "messages": history})  # slot limit: "s" forgotten
    assert ("messages", "s") not in receiver._lists
    roundtrip("on_session_finalize", {"session_id": "b"})
    assert ("messages", "b") not in receiver._lists and ("messages", "a") in receiver._lists


def test_the_sanitized_requests_lists_travel_as_deltas() -> None:
    """``request.body.messages`` and ``.tools`` are sent as deltas too, a conversation cut
    by the sanitizer (a new ``_truncated_items`` marker each call) included, and rebuilt
    exactly; a later list reuses the rebuilt messages (same objects, for the worker's
    identity caches)."""
    sender, receiver = DeltaLists(), ListStore()

    def roundtrip(payload: dict[str, Any]) -> tuple[dict[str, Any], int]:
        data = pickle.dumps(sender.encode("pre_api_request", payload))
        return receiver.decode(pickle.loads(data)), len(data)

    tools = [{"type": "function", "function": {"name": f"t{i}", "x": "y" * 300}} for i in range(5)]
    kept = [{"role": "user", "content": f"m{i} " + "x" * 400} for i in range(50)]

    def request(messages: list[Any]) -> dict[str, Any]:
        body = {"model": "m", "messages": messages, "tools": tools}
        return {"session_id": "s", "request": {"method": "POST", "body": body}}

    first, first_size = roundtrip(request([*kept, {"_truncated_items": 3}]))
    assert first == request([*kept, {"_truncated_items": 3}])
    second, second_size = roundtrip(request([*kept, {"_truncated_items": 4}]))
    assert second == request([*kept, {"_truncated_items": 4}])
    assert second_size < first_size / 20
    assert second["request"]["body"]["messages"][0] is first["request"]["body"]["messages"][0]
    grown = [*kept, {"role": "assistant", "content": "new"}, {"role": "user", "content": "q"}]
    assert roundtrip(request(grown))[0] == request(grown)
    other = [{"role": "system", "content": "compressed"}, *kept[5:]]
    assert roundtrip(request(other))[0] == request(other)


def test_fields_the_handlers_never_read_are_not_sent(tmp_path: Path) -> None:
    """A remote spec's ``unread`` (hook, field) pairs are left out of what the worker process
    receives; the same field of other hooks, and the other fields, arrive."""
    path = tmp_path / "hooks.jsonl"
    unread = [("post_api_request", "raw")]
    queue = HookQueue(label="test/unread", remote=remote(f"{__name__}:recorder", str(path), unread))
    queue.wrap("post_api_request", None)(session_id="s", raw=1, kept=2)
    queue.wrap("pre_tool_call", None)(session_id="s", raw=3)
    assert queue.close(30.0)
    seen = [{k: v for k, v in line.items() if k not in ("ns", "pid")} for line in _lines(path)]
    assert seen == [
        {"hook": "post_api_request", "session_id": "s", "kept": 2},
        {"hook": "pre_tool_call", "session_id": "s", "raw": 3},
        {"hook": "closed"},
    ]


def test_redaction_rules_added_at_runtime_reach_the_worker_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins_down: None
) -> None:
    """``add_secret_pattern`` / ``add_sensitive_key`` after the worker process started: the
    next session's ATOF, ATIF and spans no longer hold the secret (the session before the
    rules still did, in the raw tool result the worker redacts)."""
    home, out = _home(tmp_path, monkeypatch, "process")
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("key ZQX-9931-SECRET and zqxfield=plainvalue123\n")

    def texts() -> dict[Path, str]:
        return {p: p.read_text() for p in out.rglob("*") if p.is_file()}

    with ScriptedServer(SCRIPT) as server:
        _session(home, work, server.base_url, turns=1)
        assert worker_process.pid is not None
        before = texts()
        assert "ZQX-9931-SECRET" in "".join(before.values())
        assert "plainvalue123" in "".join(before.values())
        add_secret_pattern("test-zqx", r"ZQX-\d{4}-SECRET", triggers=["zqx-"])
        add_sensitive_key("zqxfield")
        try:
            session_id = _session(home, work, server.base_url, turns=1)
        finally:
            remove_secret_pattern("test-zqx")
    relay_plugin.shutdown()
    otel_plugin.shutdown()
    # the files are appended to (ATOF, spans) or new (the session's ATIF)
    after = "".join(text[len(before.get(p, "")) :] for p, text in texts().items())
    assert session_id in after and "<redacted>" in after
    assert "ZQX-9931-SECRET" not in after and "plainvalue123" not in after


CRASH_SCRIPT = """
import sys, time
from pathlib import Path
from wayline.plugins.observability import relay
from wayline.runtime import build_runtime
runtime = build_runtime(Path(sys.argv[1]), base_url=sys.argv[2], model="scripted-model")
agent = runtime.agent(cwd=Path(sys.argv[3]))
assert agent.run_turn("read a.txt").completed
assert relay.drain(30.0)  # the worker process has every hook (none sits in the batch delay)
print(agent.session_id, flush=True)
time.sleep(120)
"""


def test_agent_killed_mid_session_the_worker_process_finishes_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL of the agent with a session open: the worker process reads EOF, ends the
    session and writes its ATIF trajectory and closing ATOF event."""
    home, out = _home(tmp_path, monkeypatch, "process")
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    with ScriptedServer(SCRIPT) as server:
        agent = subprocess.Popen(
            [sys.executable, "-c", CRASH_SCRIPT, str(home), server.base_url, str(work)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert agent.stdout is not None
            session_id = agent.stdout.readline().strip()
            assert session_id
        finally:
            agent.send_signal(signal.SIGKILL)
            agent.wait(30)
    events = out / "atof" / "events.jsonl"
    path = out / "atif" / f"trajectory-{session_id}.json"

    def finished() -> tuple[str, list[str]]:
        # read while the worker process writes: a mark (no scope_category) or a line
        # still being written may be last; only whole lines count
        whole = events.read_text().rpartition("\n")[0].splitlines() if events.exists() else []
        last = json.loads(whole[-1]) if whole else {}
        steps = json.loads(path.read_text())["steps"] if path.exists() else []
        return f"{last.get('name')}/{last.get('scope_category')}", [s["source"] for s in steps]

    expected = (f"hermes-session-{session_id}/end", ["user", "agent", "agent"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and finished() != expected:
        time.sleep(0.1)
    assert finished() == expected


def test_worker_process_death_hands_the_callbacks_back(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    plugins_down: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """When the worker process dies, one error is logged and the next session is recorded by
    the agent's own process (ATIF written when ``finalize()`` returns)."""
    home, out = _home(tmp_path, monkeypatch, "process")
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    with ScriptedServer(SCRIPT) as server:
        _session(home, work, server.base_url, turns=1)
        pid = worker_process.pid
        assert pid is not None and pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        with caplog.at_level(logging.ERROR, logger="wayline.plugins.hooks"):
            session_id = _session(home, work, server.base_url, turns=1)
    steps = json.loads((out / "atif" / f"trajectory-{session_id}.json").read_text())["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "agent"]
    errors = [r for r in caplog.records if "run in this process" in r.getMessage()]
    assert len(errors) == 1


def test_deferred_fields_are_sanitized_in_the_worker_process(tmp_path: Path) -> None:
    """A Deferred ``request`` (raw messages sent as deltas) and ``response`` reach the
    worker process's callbacks as exactly ``sanitize(raw)``: secrets redacted there, a
    growing conversation rebuilt call after call."""
    from wayline.contract.deferred import Deferred
    from wayline.contract.sanitize import sanitize

    path = tmp_path / "hooks.jsonl"
    queue = HookQueue(label="test/deferred", remote=remote(f"{__name__}:recorder", str(path)))
    hook = queue.wrap("post_api_request", None)
    assert getattr(hook, "accepts_deferred", False) is True
    secret = "sk-" + "Zq9x" * 10
    messages: list[dict[str, Any]] = []
    expected = []
    for i in range(12):
        messages = [*messages, {"role": "user", "content": f"turn {i} {secret}"}]
        request = {"method": "POST", "body": {"model": "m", "messages": messages}}
        response = {"model": "m", "assistant_message": {"content": f"ok {i}"}, "api_key": "k"}
        hook(session_id="s", request=Deferred(request, 3), response=Deferred(response))
        expected.append((sanitize(request), sanitize(response)))
    assert queue.close(30.0)
    lines = [line for line in _lines(path) if line["hook"] == "post_api_request"]
    assert [(line["request"], line["response"]) for line in lines] == expected
    assert secret not in path.read_text() and lines[0]["pid"] != os.getpid()


def test_a_deferred_requests_lists_travel_as_deltas() -> None:
    """The raw message list inside a Deferred ``request`` is sent as a delta like the
    sanitized one, and the rebuilt Deferred resolves to the sanitized request."""
    from wayline.contract.deferred import Deferred
    from wayline.contract.sanitize import sanitize

    sender, receiver = DeltaLists(), ListStore()
    messages = [{"role": "user", "content": f"m{i} " + "x" * 400} for i in range(40)]
    sizes = []
    for extra in range(3):
        messages = [*messages, {"role": "assistant", "content": f"new {extra}"}]
        raw = {"method": "POST", "body": {"model": "m", "messages": messages}}
        payload = {"session_id": "s", "request": Deferred(raw, 3)}
        data = pickle.dumps(sender.encode("pre_api_request", payload))
        decoded = receiver.decode(pickle.loads(data))
        assert type(decoded["request"]) is Deferred
        assert decoded["request"].raw == raw
        assert decoded["request"].value() == sanitize(raw)
        sizes.append(len(data))
    assert sizes[1] < sizes[0] / 10 and sizes[2] < sizes[0] / 10


def test_the_worker_process_runs_at_background_priority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker process runs at ``WAYLINE_HOOK_WORKER_NICE`` (default 19), and so does its
    autogroup where the kernel has one (a task's nice only counts inside its group); a bad
    value is refused for the default."""
    from wayline.plugins.observability.hookchild import worker_nice

    assert worker_nice({}) == 19 and worker_nice({"WAYLINE_HOOK_WORKER_NICE": "0"}) == 0
    assert worker_nice({"WAYLINE_HOOK_WORKER_NICE": "high"}) == 19
    assert worker_nice({"WAYLINE_HOOK_WORKER_NICE": "40"}) == 19
    assert worker_process.pid is None  # the previous tests stopped theirs
    monkeypatch.setenv("WAYLINE_HOOK_WORKER_NICE", "7")
    path = tmp_path / "hooks.jsonl"
    queue = HookQueue(label="test/nice", remote=remote(f"{__name__}:recorder", str(path)))
    try:
        queue.wrap("pre_tool_call", None)(tool_name="x")
        assert queue.drain(30.0)
        pid = worker_process.pid
        assert pid is not None and pid != os.getpid()
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(stat[16]) == max(7, os.nice(0))
        group = Path(f"/proc/{pid}/autogroup")
        if group.exists():
            assert group.read_text().split()[-1] == "7"
    finally:
        assert queue.close(30.0)


def test_the_worker_process_is_pinned_to_one_cpu_until_hooks_arrive_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``WAYLINE_HOOK_WORKER_CPU``: auto = the last allowed CPU (with 2+), none, a number, a
    bad value warns and means auto; the live worker process is pinned so; a hook arriving
    ``LAG_UNPIN_S`` late restores every thread's CPUs."""
    from wayline.plugins.observability import hookchild
    from wayline.plugins.observability.hookchild import Pinning, worker_cpu

    allowed = sorted(os.sched_getaffinity(0))
    auto = allowed[-1] if len(allowed) >= 2 else None
    assert worker_cpu({}) == auto and worker_cpu({"WAYLINE_HOOK_WORKER_CPU": "AUTO"}) == auto
    assert worker_cpu({"WAYLINE_HOOK_WORKER_CPU": "none"}) is None
    assert worker_cpu({"WAYLINE_HOOK_WORKER_CPU": str(allowed[0])}) == allowed[0]
    assert worker_cpu({"WAYLINE_HOOK_WORKER_CPU": "9999"}) == auto
    assert worker_cpu({"WAYLINE_HOOK_WORKER_CPU": "fast"}) == auto

    assert worker_process.pid is None  # the previous tests stopped theirs
    monkeypatch.setenv("WAYLINE_HOOK_WORKER_CPU", str(allowed[0]))
    queue = HookQueue(label="test/cpu", remote=remote(f"{__name__}:recorder", os.devnull))
    try:
        queue.wrap("pre_tool_call", None)(tool_name="x")
        assert queue.drain(30.0)
        assert worker_process.pid is not None
        for task in os.listdir(f"/proc/{worker_process.pid}/task"):
            assert os.sched_getaffinity(int(task)) == {allowed[0]}
    finally:
        assert queue.close(30.0)

    # In a thread of this process (affinity is per thread): pin, then a late hook.
    seen: list[Any] = []

    def pinned_thread() -> None:
        pinning = Pinning(allowed[0])
        seen.append((pinning.pinned, os.sched_getaffinity(0)))
        pinning.check(time.time_ns())  # on time: stays pinned
        seen.append((pinning.pinned, os.sched_getaffinity(0)))
        pinning.check(time.time_ns() - int(hookchild.LAG_UNPIN_S * 2e9))
        seen.append((pinning.pinned, os.sched_getaffinity(0)))

    thread = threading.Thread(target=pinned_thread)
    thread.start()
    thread.join()
    assert seen == [(True, {allowed[0]}), (True, {allowed[0]}), (False, set(allowed))]
    assert Pinning(None).pinned is False


OUTSIDE_SCRIPT = """
import os, sys
os.sched_setaffinity(0, {int(sys.argv[1])})
os.environ["WAYLINE_HOOK_WORKER_CPU"] = sys.argv[2]
from wayline.plugins.observability.hookproc import remote, worker_process
from wayline.plugins.observability.hookqueue import HookQueue
queue = HookQueue(label="test/outside", remote=remote(sys.argv[3] + ":recorder", os.devnull))
queue.wrap("pre_tool_call", None)(tool_name="x")
assert queue.drain(30.0)
tasks = os.listdir(f"/proc/{worker_process.pid}/task")
cpus = {c for t in tasks for c in os.sched_getaffinity(int(t))}
print(sorted(cpus), sorted(os.sched_getaffinity(0)))
assert queue.close(30.0)
"""


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and two CPUs",
)
def test_the_worker_process_may_be_pinned_to_a_cpu_outside_the_agents_own() -> None:
    """An agent confined to one CPU (``taskset``) with ``WAYLINE_HOOK_WORKER_CPU`` naming
    another: the worker process runs on that other CPU only, the agent stays where it was."""
    from wayline.plugins.observability.hookchild import worker_cpu

    first, last = min(os.sched_getaffinity(0)), max(os.sched_getaffinity(0))
    assert worker_cpu({"WAYLINE_HOOK_WORKER_CPU": str(os.cpu_count())}) is not None  # auto
    done = subprocess.run(
        [sys.executable, "-c", OUTSIDE_SCRIPT, str(first), str(last), __name__],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == f"[{last}] [{first}]"
    assert "not pinned" not in done.stderr


def test_the_worker_process_collects_garbage_less_often_and_not_its_startup_heap() -> None:
    """The worker process raises the young-generation GC threshold and freezes the heap it
    has once a plugin is built (imports, handlers): collections then skip that heap."""
    from wayline.plugins.observability.hookchild import GC_YOUNG_THRESHOLD

    assert worker_process.pid is None  # the previous tests stopped theirs
    queue = HookQueue(label="test/gc", remote=remote(f"{__name__}:recorder", os.devnull))
    try:
        state = queue.call("gc", timeout_s=30.0)
        assert worker_process.pid is not None
        assert state["threshold"][0] == GC_YOUNG_THRESHOLD > 700
        assert state["frozen"] > 10_000  # the modules and the plugin's objects
    finally:
        assert queue.close(30.0)


def test_a_plugin_built_after_hooks_ran_does_not_freeze_the_sessions() -> None:
    """The worker freezes its heap only for plugins built before the first hooks: later the
    heap holds sessions (trajectory trees are reference cycles) that must stay collectable."""
    code = """
import gc, os, sys
from wayline.plugins.observability.hookchild import Child
from wayline.plugins.observability.hookproc import remote
child = Child(os.open(os.devnull, os.O_WRONLY), settle=True)
spec = remote("test_hook_process:recorder", os.devnull)
if sys.argv[1] == "late":
    child.handle(("hooks", [], []))
child.handle(("open", 1, spec))
print(gc.get_freeze_count())
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    frozen = {
        when: int(
            subprocess.run(
                [sys.executable, "-c", code, when],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout
        )
        for when in ("first", "late")
    }
    assert frozen["first"] > 10_000 and frozen["late"] == 0


def test_two_callbacks_copies_of_one_payload_are_encoded_once() -> None:
    """Each plugin's callback gets its own copy of a hook's payload: copies holding the very
    same objects under the same keys are one payload (encoded and pickled once); the same
    objects under swapped keys, or an equal but different object, are not."""
    from wayline.plugins.observability.hookproc import _same_values

    first, second = object(), [1]
    payload = {"a": first, "b": second}
    assert _same_values(dict(**payload), dict(**payload))
    assert not _same_values(payload, {"b": first, "a": second})
    assert not _same_values(payload, {"a": first, "b": [1]})
    assert not _same_values(payload, {"a": first})


def test_worker_offers_its_cpu_once_per_interval_of_callbacks() -> None:
    """Between callbacks the worker yields its CPU once per YIELD_S of running, not per
    callback (a syscall each) and not never (a waking agent thread would wait a slice)."""
    from wayline.plugins.observability.cooperation import YIELD_S, Yielder

    now = [100.0]
    yields: list[float] = []
    yielder = Yielder(YIELD_S, clock=lambda: now[0], yield_cpu=lambda: yields.append(now[0]))
    for _ in range(40):  # callbacks of 0.1 ms each: one yield per three or so
        now[0] += 0.0001
        yielder.tick()
    assert 10 <= len(yields) <= 14
    assert all(b - a >= YIELD_S - 1e-12 for a, b in itertools.pairwise(yields))
    Yielder(yield_cpu=None).tick()  # no sched_yield on this platform: nothing to call


def test_cooperate_ticks_only_the_worker_processs_yielder() -> None:
    """cooperate() does nothing outside the hook worker process and ticks the yielder the
    worker process installs (so shared observer code may call it anywhere)."""
    from wayline.plugins.observability import cooperation

    assert cooperation.worker_yielder is None
    cooperation.cooperate()  # in the agent's process: nothing to tick
    now = [0.0]
    yields: list[float] = []
    cooperation.worker_yielder = cooperation.Yielder(
        0.001, clock=lambda: now[0], yield_cpu=lambda: yields.append(now[0])
    )
    try:
        for _ in range(5):
            now[0] += 0.0006
            cooperation.cooperate()
    finally:
        cooperation.worker_yielder = None
    assert yields == [pytest.approx(0.0012), pytest.approx(0.0024)]
