"""Sub-agent embedding: Hermes-style delegation (seed 001) through both entry points."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atif_events import DELEGATE_RESULT, TERMINAL_RESULT, Atof, hermes_delegation

from wayline.relay.atif import (
    AtifExporter,
    TrajectoryBuilder,
    TrajectoryNode,
    convert_events,
    render_trajectory,
    validate_trajectory,
)
from wayline.relay.atif.builder import INCOMPLETE_NOTE


def _check_embedding(document: dict[str, Any], child_scope: str) -> None:
    assert [s["source"] for s in document["steps"]] == ["user", "agent", "agent"]
    delegating = document["steps"][1]
    assert delegating["tool_calls"] == [
        {
            "tool_call_id": "call_delegate",
            "function_name": "delegate_task",
            "arguments": {"goal": "run printf"},
        }
    ]
    result = delegating["observation"]["results"][0]
    assert result["source_call_id"] == "call_delegate"
    assert result["content"] == DELEGATE_RESULT
    assert result["subagent_trajectory_ref"] == [
        {
            "trajectory_id": "C",
            "session_id": "C",
            "extra": {"name": "hermes-session-C", "scope_uuid": child_scope},
        }
    ]
    assert document["steps"][2]["message"] == "parent received nested subagent result."
    (sub,) = document["subagent_trajectories"]
    assert (sub["session_id"], sub["trajectory_id"]) == ("C", "C")
    assert [s["source"] for s in sub["steps"]] == ["user", "agent", "agent"]
    call = sub["steps"][1]["tool_calls"][0]
    assert call["arguments"] == {"command": "printf docs_nested_leaf_function"}
    sub_result = sub["steps"][1]["observation"]["results"][0]
    assert (sub_result["source_call_id"], sub_result["content"]) == (
        "call_terminal",
        TERMINAL_RESULT,
    )
    # The child's tokens stay in the child: final metrics are per trajectory.
    assert document["final_metrics"]["total_prompt_tokens"] == 10
    assert sub["final_metrics"] == {
        "total_prompt_tokens": 16,
        "total_completion_tokens": 3,
        "total_steps": 3,
    }
    assert validate_trajectory(document) == []


def test_live_exporter_embeds_hermes_child_session(atof: Atof) -> None:
    """A per-session exporter embeds the nested child session and refs it from delegate_task."""
    ids = hermes_delegation(atof)
    exporter = AtifExporter("P", "Hermes Agent", "local", model_name="m-1")
    for event in atof.events:
        exporter.on_event(event)
    document = exporter.export()
    assert (document["session_id"], document["trajectory_id"]) == ("P", "P")
    _check_embedding(document, ids["child"])


def test_converter_embeds_hermes_child_session(atof: Atof, tmp_path: Path) -> None:
    """The converter writes one file per root session with the child embedded, not separate;
    the session keeps the ids it recorded (as the live exporter's file does)."""
    ids = hermes_delegation(atof)
    report = convert_events(atof.events, tmp_path)
    assert [p.name for p in report.written] == ["trajectory-P.json"]
    document = json.loads(report.written[0].read_text(encoding="utf-8"))
    assert (document["session_id"], document["trajectory_id"]) == ("P", "P")
    assert document["extra"]["nemo_relay"] == {
        "session_id": "P",
        "session_instance_id": ids["parent"],
    }
    _check_embedding(document, ids["child"])


def test_child_exporter_follows_only_its_own_session(atof: Atof) -> None:
    """The child's exporter anchors on the child scope and ignores the parent's later work."""
    hermes_delegation(atof)
    child_index = next(i for i, e in enumerate(atof.events) if e["name"] == "hermes-session-C")
    exporter = AtifExporter("C", "Hermes Agent", "local")
    for event in atof.events[child_index:]:  # registered when the child session starts
        exporter.on_event(event)
    document = exporter.export()
    assert [s["message"] for s in document["steps"]] == ["run printf", "", "done"]
    assert "subagent_trajectories" not in document
    assert validate_trajectory(document) == []


def test_duplicate_child_trajectory_ids_fall_back_to_scope_uuid(atof: Atof) -> None:
    """Two children claiming one trajectory_id stay unique: the second uses its scope UUID."""
    parent = atof.start("p", "agent")
    atof.llm(parent, [{"role": "user", "content": "go"}], "ok")
    children = []
    for _ in range(2):
        child = atof.start("c", "agent", parent, metadata={"trajectory_id": "same"})
        atof.llm(child, [{"role": "user", "content": "sub"}], "sub ok")
        atof.end(child)
        children.append(child)
    atof.end(parent)
    finished: list[TrajectoryNode] = []
    builder = TrajectoryBuilder(on_complete=finished.append)
    for event in atof.events:
        builder.feed(event)
    document = render_trajectory(finished[0])
    ids = [sub["trajectory_id"] for sub in document["subagent_trajectories"]]
    assert ids == ["same", children[1]]
    assert validate_trajectory(document) == []


def test_background_child_still_running_is_embedded_as_far_as_it_got(atof: Atof) -> None:
    """A child still open when its root ends is embedded with its steps; later events drop."""
    parent = atof.start("p", "agent")
    atof.llm(parent, [{"role": "user", "content": "go"}], "", [("d1", "delegate", {})])
    tool = atof.tool_start(parent, "delegate", "d1", {})
    child = atof.start("c", "agent", parent)
    atof.llm(child, [{"role": "user", "content": "sub"}], "sub step")
    atof.tool_end(tool, "started in background")
    atof.end(parent)
    atof.llm(child, [{"role": "user", "content": "late"}], "late step")
    atof.end(child)
    finished: list[TrajectoryNode] = []
    builder = TrajectoryBuilder(on_complete=finished.append)
    for event in atof.events:
        builder.feed(event)
    builder.finish()
    assert len(finished) == 1
    document = render_trajectory(finished[0])
    (sub,) = document["subagent_trajectories"]
    assert [s["message"] for s in sub["steps"]] == ["sub", "sub step"]
    result = document["steps"][1]["observation"]["results"][0]
    assert result["subagent_trajectory_ref"][0]["trajectory_id"] == child
    assert builder.held == {
        "scopes": 0,
        "llm_spans": 0,
        "tool_spans": 0,
        "trajectories": 0,
        "retired": 0,
    }


def test_unfinished_root_is_handed_over_with_a_note(atof: Atof) -> None:
    """finish() flushes a root whose scope never ended (crashed producer), marked in notes."""
    parent = atof.start("p", "agent")
    atof.llm(parent, [{"role": "user", "content": "go"}], "partial")
    finished: list[TrajectoryNode] = []
    builder = TrajectoryBuilder(on_complete=finished.append)
    for event in atof.events:
        builder.feed(event)
    assert finished == []
    builder.finish()
    document = render_trajectory(finished[0])
    assert document["notes"] == INCOMPLETE_NOTE
    assert validate_trajectory(document) == []
