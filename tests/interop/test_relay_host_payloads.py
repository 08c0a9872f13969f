"""observability/relay fed Hermes 0.19.0-shaped payloads through wayline's real plugin host.

Fast (no Hermes install): each test replays a payload difference the interop runs exposed
(reference §2, appendices A/B) and checks the ATOF/ATIF stay complete.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from interop_support import atof_fingerprint, relay_env

from wayline.host.context import PluginContext
from wayline.host.manager import PluginManager
from wayline.plugins.observability import relay as relay_plugin
from wayline.plugins.observability.relay import RelayPlugin
from wayline.relay.atof import read_events

MODEL = "scripted-model"
SID = "20261121_204400_005564"
CHILD = "20261121_204401_1a2b3c"
TURN = f"{SID}:task-1:0a1b2c3d"
CHILD_TURN = f"{CHILD}:sa-0-5e6f7a8b:11223344"
SCHEMA = {"telemetry_schema_version": "hermes.observer.v1"}


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[PluginManager, Path]]:
    """wayline's plugin manager with observability/relay loaded, exporting under tmp (its
    instance in this process: the tests read and close its sessions directly)."""
    for key in list(os.environ):
        if key.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_")):
            monkeypatch.delenv(key)
    out = tmp_path / "out"
    for key, value in relay_env(out).items():
        monkeypatch.setenv(key, value)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - observability/relay\n")
    manager = PluginManager(home)
    manager.discover_and_load()
    assert _relay(manager).observer is not None
    yield manager, out
    manager.close_instances()


def _relay(m: PluginManager) -> RelayPlugin:
    instance = m.instance("observability/relay")
    assert isinstance(instance, RelayPlugin), instance
    return instance


def _events(m: PluginManager, out: Path) -> list[dict[str, Any]]:
    m.close_instances()  # every session closed, the ATOF file flushed and closed
    return read_events(out / "atof" / "events.jsonl", sort=False)


def _atif(out: Path, sid: str = SID) -> dict[str, Any]:
    return json.loads((out / "atif" / f"trajectory-{sid}.json").read_text())


def _api(sid: str, turn: str, n: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": sid,
        "task_id": "task-1",
        "turn_id": turn,
        "api_request_id": f"{turn}:api:{n}",
        "api_call_count": n,
        "platform": "cli",
        "model": MODEL,
        "provider": "custom",
        "base_url": "http://127.0.0.1:9/v1",
        "api_mode": "chat_completions",
        **SCHEMA,
        **extra,
    }


def _messages(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "You are Hermes."}, {"role": "user", "content": text}]


def _request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"method": "POST", "body": {"model": MODEL, "messages": messages}}


def _response(text: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "model": MODEL,
        "finish_reason": "tool_calls" if calls else "stop",
        "assistant_message": {"role": "assistant", "content": text, "tool_calls": calls or []},
        "usage": {"input_tokens": 10, "output_tokens": 2, "prompt_tokens": 10},
    }


def _turn(m: PluginManager, sid: str, turn: str, text: str, reply: str) -> None:
    m.invoke_hook("pre_llm_call", session_id=sid, turn_id=turn, user_message=text, **SCHEMA)
    messages = _messages(text)
    m.invoke_hook(
        "pre_api_request",
        **_api(sid, turn),
        request_messages=messages,
        request=_request(messages),
    )
    m.invoke_hook("post_api_request", **_api(sid, turn), response=_response(reply))
    m.invoke_hook("post_llm_call", session_id=sid, turn_id=turn, assistant_response=reply)
    m.invoke_hook("on_session_end", session_id=sid, turn_id=turn, completed=True)


def test_retry_under_same_api_request_id_ends_superseded_attempt(host: Any) -> None:
    """Two attempts share an api_request_id with no error hook between: both spans end."""
    m, out = host
    m.invoke_hook("on_session_start", session_id=SID, model=MODEL, platform="cli", **SCHEMA)
    messages = _messages("hi")
    for _ in range(2):
        m.invoke_hook(
            "pre_api_request",
            **_api(SID, TURN),
            request_messages=messages,
            request=_request(messages),
        )
    m.invoke_hook("post_api_request", **_api(SID, TURN), response=_response("hello"))
    events = _events(m, out)
    ends = [e for e in events if e.get("category") == "llm" and e["scope_category"] == "end"]
    assert [e["metadata"]["otel.status_code"] for e in ends] == ["ERROR", "OK"]
    assert ends[0]["metadata"]["error.type"] == "Superseded"
    assert atof_fingerprint(events)["unclosed"] == []


def test_truncated_request_falls_back_to_raw_messages(host: Any) -> None:
    """A preview-only or tail-cut sanitized request still yields the turn's user step."""
    m, out = host
    m.invoke_hook("on_session_start", session_id=SID, model=MODEL, platform="cli", **SCHEMA)
    preview = {"_truncated": True, "original_type": "dict", "preview": '{"method": "POST"'}
    m.invoke_hook(
        "pre_api_request",
        **_api(SID, TURN),
        request_messages=_messages("first question"),
        request=preview,
    )
    m.invoke_hook("post_api_request", **_api(SID, TURN), response=_response("first answer"))
    history = [*_messages("first question"), {"role": "assistant", "content": "first answer"}]
    long = [*history * 30, {"role": "user", "content": "second question"}]
    cut = {
        "method": "POST",
        "body": {"model": MODEL, "messages": [*long[:50], {"_truncated_items": 42}]},
    }
    m.invoke_hook("pre_api_request", **_api(SID, TURN, 2), request_messages=long, request=cut)
    m.invoke_hook("post_api_request", **_api(SID, TURN, 2), response=_response("second answer"))
    m.invoke_hook("on_session_finalize", session_id=SID, platform="cli", reason="shutdown")
    steps = [(s["source"], s.get("message")) for s in _atif(out)["steps"]]
    assert steps == [
        ("user", "first question"),
        ("agent", "first answer"),
        ("user", "second question"),
        ("agent", "second answer"),
    ]


def test_approval_marks_are_routed_to_the_owning_session(host: Any) -> None:
    """Approval hooks carry no session_id: the marks land on the session of the tool call."""
    m, out = host
    m.invoke_hook("on_session_start", session_id=SID, model=MODEL, platform="cli", **SCHEMA)
    m.invoke_hook("pre_llm_call", session_id=SID, turn_id=TURN, user_message="rm it", **SCHEMA)
    call = {"tool_name": "terminal", "session_id": SID, "turn_id": TURN, "tool_call_id": "c1"}
    m.invoke_hook("pre_tool_call", **call, args={"command": "rm -rf /tmp/x"})
    approval = {
        "command": "rm -rf /tmp/x",
        "pattern_key": "delete in root path",
        "session_key": "default",
        "surface": "cli",
        "turn_id": TURN,
    }
    m.invoke_hook("pre_approval_request", **approval, tool_call_id="c1")
    m.invoke_hook("post_approval_response", **approval, tool_call_id="c1", choice="deny")
    m.invoke_hook("post_tool_call", **call, result='{"error": "BLOCKED"}', status="blocked")
    # After the tool ended only the turn id is left to route by.
    m.invoke_hook("post_approval_response", **approval, tool_call_id="c9", choice="deny")
    events = _events(m, out)
    root = next(e["uuid"] for e in events if e.get("category") == "agent")
    marks = [e for e in events if e["name"].startswith("hermes.approval.")]
    assert [e["name"] for e in marks] == [
        "hermes.approval.request",
        "hermes.approval.response",
        "hermes.approval.response",
    ]
    assert {e["parent_uuid"] for e in marks} == {root}
    assert {e["metadata"]["session_id"] for e in marks} == {SID}


def _delegation(m: PluginManager) -> None:
    m.invoke_hook("on_session_start", session_id=SID, model=MODEL, platform="cli", **SCHEMA)
    m.invoke_hook("pre_llm_call", session_id=SID, turn_id=TURN, user_message="delegate", **SCHEMA)
    m.invoke_hook(
        "pre_api_request",
        **_api(SID, TURN),
        request_messages=_messages("delegate"),
        request=_request(_messages("delegate")),
    )
    calls = [{"id": "call_delegate", "name": "delegate_task", "arguments": '{"goal": "g"}'}]
    m.invoke_hook("post_api_request", **_api(SID, TURN), response=_response("", calls))
    tool = {"tool_name": "delegate_task", "session_id": SID, "turn_id": TURN}
    m.invoke_hook("pre_tool_call", **tool, tool_call_id="call_delegate", args={"goal": "g"})
    m.invoke_hook(
        "subagent_start",
        parent_session_id=SID,
        parent_turn_id=TURN,
        parent_subagent_id=None,
        child_session_id=CHILD,
        child_subagent_id="sa-0-5e6f7a8b",
        child_role="leaf",
        child_goal="g",
        **SCHEMA,
    )
    m.invoke_hook("on_session_start", session_id=CHILD, model=MODEL, platform="subagent")
    _turn(m, CHILD, CHILD_TURN, "g", "child done")


def test_subagent_stop_gets_child_subagent_id_and_tool_link(host: Any) -> None:
    """subagent_stop lacks child_subagent_id: restored; the child links to its delegate call."""
    m, out = host
    _delegation(m)
    m.invoke_hook(
        "subagent_stop",
        parent_session_id=SID,
        parent_turn_id=TURN,
        child_session_id=CHILD,
        child_role="leaf",
        child_summary="child done",
        child_status="completed",
        duration_ms=12,
        **SCHEMA,
    )
    tool = {"tool_name": "delegate_task", "session_id": SID, "turn_id": TURN}
    m.invoke_hook("post_tool_call", **tool, tool_call_id="call_delegate", result='{"results": []}')
    events = _events(m, out)
    stop = next(e for e in events if e["name"] == "hermes.subagent.stop")
    assert stop["metadata"]["child_subagent_id"] == "sa-0-5e6f7a8b"
    child = next(e for e in events if e.get("category") == "agent" and CHILD in e["name"])
    assert child["metadata"]["parent_tool_call_id"] == "call_delegate"
    assert atof_fingerprint(events)["unclosed"] == []
    step = next(s for s in _atif(out)["steps"] if s.get("tool_calls"))
    assert step["observation"]["results"][0]["subagent_trajectory_ref"][0]["session_id"] == CHILD


def test_background_child_work_after_parent_closed_ends_at_shutdown(host: Any) -> None:
    """A child still running when the parent finalizes (chat -q delegation): all spans end."""
    m, out = host
    _delegation(m)
    m.invoke_hook("on_session_finalize", session_id=SID, platform="cli", reason="shutdown")
    child_tool = {"tool_name": "terminal", "session_id": CHILD, "turn_id": CHILD_TURN}
    m.invoke_hook("pre_tool_call", **child_tool, tool_call_id="late", args={"command": "true"})
    events = _events(m, out)
    assert atof_fingerprint(events)["unclosed"] == []
    late = [e for e in events if (e.get("category_profile") or {}).get("tool_call_id") == "late"]
    assert [e["scope_category"] for e in late] == ["start", "end"]
    assert late[1]["metadata"]["status"] == "cancelled"


ADAPTIVE = """version = 1
[[components]]
kind = "adaptive"
enabled = true
"""


@pytest.fixture
def adaptive(host: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The host reloaded with an adaptive plugins.toml (managed execution middleware)."""
    m, out = host
    toml = tmp_path / "plugins.toml"
    toml.write_text(ADAPTIVE)
    monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(toml))
    m.discover_and_load(force=True)
    m.invoke_hook("on_session_start", session_id=SID, model=MODEL, platform="cli", **SCHEMA)
    return m, out


def test_double_tool_execution_wrap_records_one_span(adaptive: Any) -> None:
    """Hermes' parallel batches nest tool_execution twice: one span, the tool runs once."""
    m, out = adaptive
    ctx = {
        "session_id": SID,
        "turn_id": TURN,
        "tool_call_id": "call_alpha",
        "tool_name": "read_file",
    }
    runs: list[dict[str, Any]] = []

    def tool(args: dict[str, Any]) -> str:
        runs.append(args)
        return '{"content": "1|alpha"}'

    def inner(args: dict[str, Any]) -> Any:
        return m.middleware.execute("tool_execution", args, tool, **ctx)

    result = m.middleware.execute("tool_execution", {"path": "alpha.txt"}, inner, **ctx)
    assert result == '{"content": "1|alpha"}' and runs == [{"path": "alpha.txt"}]
    starts = [
        e for e in _events(m, out) if e.get("category") == "tool" and e["scope_category"] == "start"
    ]
    assert len(starts) == 1


def test_simple_namespace_response_runs_managed_and_comes_back(adaptive: Any) -> None:
    """Hermes streams into a SimpleNamespace: the managed span ends OK, the host gets it back."""
    m, out = adaptive
    message = SimpleNamespace(role="assistant", content="hi", tool_calls=None)
    choice = SimpleNamespace(index=0, message=message, finish_reason="stop")
    usage = SimpleNamespace(prompt_tokens=3, completion_tokens=1, total_tokens=4)
    response = SimpleNamespace(
        id="r1", object="chat.completion", created=1, model=MODEL, choices=[choice], usage=usage
    )
    request = {"model": MODEL, "messages": _messages("hi"), "timeout": 1800.0}
    got = m.middleware.execute("llm_execution", request, lambda _req: response, **_api(SID, TURN))
    assert isinstance(got, SimpleNamespace) and got.choices[0].message.content == "hi"
    ends = [
        e for e in _events(m, out) if e.get("category") == "llm" and e["scope_category"] == "end"
    ]
    assert [e["metadata"]["otel.status_code"] for e in ends] == ["OK"]


class HermesContext(PluginContext):
    """Stands in for Hermes' PluginContext: its module name differs, and it has no
    ``register_instance`` (Hermes keeps no per-host plugin instances)."""

    register_instance = None  # type: ignore[assignment]


HermesContext.__module__ = "hermes_cli.plugins"


def test_hermes_host_sets_the_atif_agent_default(
    host: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under Hermes (no ATIF_AGENT_NAME set) trajectories are attributed to "Hermes Agent"."""
    m, _ = host
    monkeypatch.delenv("HERMES_NEMO_RELAY_ATIF_AGENT_NAME", raising=False)
    manifest = m.plugins["observability/relay"].manifest
    plugin = relay_plugin.register(HermesContext(manifest))
    try:
        observer = plugin.observer
        assert observer.settings.atif is not None
        assert observer.settings.atif.agent_name == "Hermes Agent"
    finally:
        plugin.close()


EXIT_SCRIPT = """
import logging, logging.config, os, sys
from wayline.host.bus import HookBus
from wayline.plugins.observability import relay
bus = HookBus()
class HermesContext:  # what Hermes hands to register(ctx): hooks, no register_instance
    def register_hook(self, name, callback):
        bus.register(name, callback, "observability/relay")
relay.register(HermesContext())
bus.invoke_hook("on_session_start", session_id="s1", model="m", platform="cli")
# A mid-run logging reconfiguration closes every handler but is not an exit.
logging.config.dictConfig({"version": 1, "incremental": False})
bus.invoke_hook("pre_llm_call", session_id="s1", turn_id="t1", user_message="after")
bus.invoke_hook("on_session_end", session_id="s1", turn_id="t1", completed=True)
sys.stdout.flush()
logging.shutdown()
os._exit(0)
"""


def test_os_exit_after_logging_shutdown_still_closes_sessions(tmp_path: Path) -> None:
    """hermes -z exits through logging.shutdown() + os._exit: the session scope still ends
    (a Hermes host: no register_instance, so the plugin instance closes itself at exit)."""
    out = tmp_path / "out"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_"))
    }
    env.update(relay_env(out))
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    events = read_events(out / "atof" / "events.jsonl", sort=False)
    names = [(e["name"], e.get("scope_category")) for e in events]
    assert names == [
        ("hermes-session-s1", "start"),
        ("hermes.turn.start", None),
        ("hermes.session.end", None),
        ("hermes-session-s1", "end"),
    ]
