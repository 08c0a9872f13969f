"""observability/relay records what ran from host payloads of either shape: the middleware
trace and the model's arguments next to the executed ones, the host's own outcome, the
host's agent version; and `wayline atif convert` of its ATOF gives its ATIF."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wayline.host.manager import PluginManager
from wayline.relay.atif import ConvertOptions, convert_file
from wayline.relay.atof import read_events

SID = "20261127_070000_abcdef"
TURN = f"{SID}:task-1:0a1b2c3d"
TRACE = [{"source": "fx-policy", "reason": "settle in USD only"}]
SCHEMA = {"telemetry_schema_version": "hermes.observer.v1"}


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[PluginManager, Path]]:
    """wayline's plugin manager with observability/relay loaded, writing under tmp."""
    for key in list(os.environ):
        if key.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_")):
            monkeypatch.delenv(key)
    out = tmp_path / "out"
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY", str(out / "atof"))
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_FILENAME", "events.jsonl")
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY", str(out / "atif"))
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE", "trajectory-{session_id}.json")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - observability/relay\n")
    manager = PluginManager(home)
    manager.discover_and_load()
    yield manager, out
    manager.close_instances()


def _api(**extra: Any) -> dict[str, Any]:
    return {
        "session_id": SID,
        "task_id": "task-1",
        "turn_id": TURN,
        "api_request_id": f"{TURN}:api:1",
        "model": "m",
        "provider": "custom",
        **SCHEMA,
        **extra,
    }


def _session(m: PluginManager, tool_calls: list[dict[str, Any]]) -> None:
    """One model call asking for ``tool_calls`` (Hermes' OpenAI shape), then the tools."""
    m.invoke_hook("on_session_start", session_id=SID, model="m", agent_version="7.7.7", **SCHEMA)
    messages = [{"role": "user", "content": "convert"}]
    m.invoke_hook(
        "pre_api_request",
        **_api(request={"method": "POST", "body": {"model": "m", "messages": messages}}),
        middleware_trace=[{"source": "tuner", "reason": "cooler"}],
        original_request_fields={"temperature": None},
    )
    message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    m.invoke_hook(
        "post_api_request",
        **_api(response={"assistant_message": message, "usage": {"prompt_tokens": 3}}),
    )


def _tool(m: PluginManager, call: str, args: dict[str, Any], **end: Any) -> None:
    base = {"tool_name": "convert", "session_id": SID, "turn_id": TURN, "tool_call_id": call}
    trace = TRACE if args.get("currency") == "USD" else []
    m.invoke_hook("pre_tool_call", **base, args=args, middleware_trace=trace, **SCHEMA)
    m.invoke_hook("post_tool_call", **base, args=args, middleware_trace=trace, **SCHEMA, **end)


def _call(call_id: str, currency: str) -> dict[str, Any]:
    arguments = json.dumps({"amount": 1, "currency": currency})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "convert", "arguments": arguments},
    }


def test_rewritten_call_is_recorded_with_what_the_model_asked(host: Any, tmp_path: Path) -> None:
    """Hermes-shaped payloads: the rewritten call's start event has the trace and the model's
    arguments; the ATIF call keeps the model's arguments and adds what ran; a blocked call
    keeps its status; the host's agent_version names the agent; the converter agrees."""
    m, out = host
    _session(m, [_call("c1", "EUR"), _call("c2", "JPY")])
    _tool(m, "c1", {"amount": 1, "currency": "USD"}, result="1 USD", status="ok")
    _tool(m, "c2", {"amount": 1, "currency": "JPY"}, result='{"error":"no"}', status="blocked")
    m.invoke_hook("on_session_finalize", session_id=SID, **SCHEMA)
    m.close_instances()
    events = read_events(out / "atof" / "events.jsonl", sort=False)
    starts = {
        e["metadata"]["tool_call_id"]: e
        for e in events
        if e.get("category") == "tool" and e["scope_category"] == "start"
    }
    assert starts["c1"]["data"] == {"amount": 1, "currency": "USD"}
    assert starts["c1"]["metadata"]["middleware_trace"] == TRACE
    assert starts["c1"]["metadata"]["original_arguments"] == {"amount": 1, "currency": "EUR"}
    assert "middleware_trace" not in starts["c2"]["metadata"]
    (llm,) = [e for e in events if e.get("category") == "llm" and e["scope_category"] == "start"]
    assert llm["metadata"]["middleware_trace"] == [{"source": "tuner", "reason": "cooler"}]
    assert llm["metadata"]["original_request_fields"] == {"temperature": None}
    trajectory = json.loads((out / "atif" / f"trajectory-{SID}.json").read_text())
    assert trajectory["agent"]["version"] == "7.7.7"
    step = trajectory["steps"][1]
    calls = {c["tool_call_id"]: c for c in step["tool_calls"]}
    assert calls["c1"]["arguments"] == {"amount": 1, "currency": "EUR"}
    assert calls["c1"]["extra"] == {
        "executed_arguments": {"amount": 1, "currency": "USD"},
        "middleware_trace": TRACE,
    }
    assert "extra" not in calls["c2"]
    assert [i["status"] for i in step["extra"]["tool_invocations"]] == ["completed", "blocked"]
    assert step["extra"]["middleware_trace"] == [{"source": "tuner", "reason": "cooler"}]
    report = convert_file(
        out / "atof" / "events.jsonl",
        tmp_path / "converted",
        ConvertOptions(filename_template="trajectory-{session_id}.json"),
    )
    (path,) = report.written
    assert json.loads(path.read_text()) == trajectory
