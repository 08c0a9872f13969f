"""The ATIF mapping reproduces Relay 0.10.4's reference outputs, live and offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wayline import relay
from wayline.relay.atif import (
    AgentInfo,
    AtifExporter,
    ConvertOptions,
    TrajectoryBuilder,
    TrajectoryNode,
    convert_events,
    convert_file,
    render_trajectory,
    validate_trajectory,
)

ADD_TOOL = {"function": {"name": "add", "parameters": {"type": "object"}}, "type": "function"}


def _manual_exporter() -> AtifExporter:
    return AtifExporter(
        "session-123",
        "demo-agent",
        "0.0.1",
        model_name="gpt-4.1",
        tool_definitions=[ADD_TOOL],
        extra={"k": "v"},
    )


def test_manual_exporter_reproduces_relay_sample(
    manual_events: list[dict[str, Any]], manual_atif: Any
) -> None:
    """AtifExporter fed the §1.4 events exports exactly Relay's §2.1 ATIF document."""
    exporter = _manual_exporter()
    for event in manual_events:
        exporter.on_event(event)
    document = exporter.export()
    assert document == manual_atif
    assert validate_trajectory(document) == []


def test_export_json_uses_struct_field_order(manual_events: list[dict[str, Any]]) -> None:
    """export_json emits Relay's struct field order, not sorted keys."""
    exporter = _manual_exporter()
    for event in manual_events:
        exporter.on_event(event)
    decoded = json.loads(exporter.export_json())
    assert list(decoded) == [
        "schema_version",
        "session_id",
        "trajectory_id",
        "agent",
        "steps",
        "final_metrics",
    ]
    assert list(decoded["steps"][1]) == [
        "step_id",
        "timestamp",
        "source",
        "model_name",
        "message",
        "tool_calls",
        "observation",
        "metrics",
        "llm_call_count",
        "extra",
    ]


def test_clear_forgets_received_events(manual_events: list[dict[str, Any]]) -> None:
    """clear() empties the trajectory; later events build a fresh one."""
    exporter = _manual_exporter()
    for event in manual_events:
        exporter.on_event(event)
    exporter.clear()
    assert exporter.export()["steps"] == []
    for event in manual_events:
        exporter.on_event(event)
    assert len(exporter.export()["steps"]) == 4


def test_session_mode_reproduces_relay_plugin_sample(
    plugin_events: list[dict[str, Any]], plugin_atif: Any
) -> None:
    """Plugin-style building of appendix A embeds the sub-agent exactly as Relay does."""
    finished: list[TrajectoryNode] = []
    builder = TrajectoryBuilder(
        AgentInfo("demo-agent", "0.0.1", "gpt-4.1"),
        on_complete=finished.append,
        include_events=True,
    )
    for event in plugin_events:
        builder.feed(event)
    assert len(finished) == 1  # written when the root scope ends, before finish()
    builder.finish()
    document = render_trajectory(finished[0])
    assert document == plugin_atif
    assert validate_trajectory(document) == []
    ref = document["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"][0]
    assert ref["trajectory_id"] == document["subagent_trajectories"][0]["trajectory_id"]


def test_converter_writes_relay_plugin_file(
    plugin_events: list[dict[str, Any]], plugin_atif: Any, tmp_path: Path
) -> None:
    """The offline converter writes Relay's file name and its document as sorted compact JSON
    (Relay's own ``write`` indents; whitespace aside, the bytes are the same)."""
    options = ConvertOptions(
        agent_name="demo-agent",
        agent_version="0.0.1",
        model_name="gpt-4.1",
        include_events=True,
    )
    report = convert_events(plugin_events, tmp_path, options)
    root_uuid = plugin_events[0]["uuid"]
    target = tmp_path / f"trajectory-{root_uuid}.json"
    assert report.written == [target]
    assert (report.events, report.trajectories, report.skipped_events) == (13, 1, 0)
    text = target.read_text(encoding="utf-8")
    compact = json.dumps(plugin_atif, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert text == compact + "\n"


def test_converter_defaults_infer_agent_and_skip_raw_events(
    manual_events: list[dict[str, Any]], tmp_path: Path
) -> None:
    """Without options the agent block comes from the events and no raw events are embedded."""
    report = convert_events(manual_events, tmp_path)
    document = json.loads(report.written[0].read_text(encoding="utf-8"))
    assert document["agent"] == {
        "name": "demo-agent",
        "version": "unknown",
        "model_name": "gpt-4.1",
        "tool_definitions": [ADD_TOOL],
    }
    assert document["extra"] == {
        "nemo_relay": {"session_instance_id": manual_events[0]["uuid"], "session_id": "session-123"}
    }
    assert [step["source"] for step in document["steps"]] == ["user", "agent", "user", "agent"]
    assert validate_trajectory(document) == []


def test_live_and_offline_entry_points_agree(tmp_path: Path) -> None:
    """Events from the relay runtime give the same steps live and via the written ATOF file."""
    config = relay.AtofExporterConfig(
        output_directory=tmp_path, filename="events.jsonl", mode=relay.AtofExporterMode.Overwrite
    )
    atof_exporter = relay.AtofExporter(config)
    live = AtifExporter("live-session", "calc", "1.0")
    atof_exporter.register("test.atif.live.atof")
    live.register("test.atif.live.atif")
    try:
        agent = relay.scope.push(
            "calc", relay.ScopeType.Agent, input={"task": "add"}, metadata={"session_id": "s"}
        )
        request = relay.LLMRequest(
            {}, {"model": "m", "messages": [{"role": "user", "content": "add 1 and 2"}]}
        )
        span = relay.llm.call("openai", request, model_name="m")
        call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
        message = {"role": "assistant", "content": "adding", "tool_calls": [call]}
        usage = {"prompt_tokens": 5, "completion_tokens": 2}
        relay.llm.call_end(span, {"model": "m", "choices": [{"message": message}], "usage": usage})
        tool = relay.tools.call("add", {"a": 1, "b": 2}, tool_call_id="c1")
        relay.tools.call_end(tool, relay.ToolExecutionResult({"sum": 3}))
        relay.scope.pop(agent)
    finally:
        live.deregister("test.atif.live.atif")
        atof_exporter.shutdown()
    offline = convert_file(tmp_path / "events.jsonl", tmp_path / "out")
    converted = json.loads(offline.written[0].read_text(encoding="utf-8"))
    exported = live.export()
    assert exported["steps"] == converted["steps"]
    assert [step["source"] for step in exported["steps"]] == ["user", "agent"]
    result = exported["steps"][1]["observation"]["results"][0]
    assert result["source_call_id"] == "c1"
    assert result["extra"]["tool_result"] == {"sum": 3}
    assert validate_trajectory(exported) == []
    assert validate_trajectory(converted) == []
