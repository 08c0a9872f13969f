"""ATIF files: atomic writes, naming, and the embedded/all sub-agent export modes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from atif_events import Atof, hermes_delegation

from wayline.relay.atif import (
    AtifExporter,
    ConvertOptions,
    TrajectoryWriter,
    convert_events,
    validate_atif_file,
    write_json_atomic,
)


class Unserializable:
    """A value json cannot encode, to make the serializer fail mid-document."""


def test_atomic_write_produces_sorted_compact_json(tmp_path: Path) -> None:
    """A successful write yields sorted keys, compact separators, non-ASCII as is, a newline."""
    target = tmp_path / "t.json"
    write_json_atomic(target, {"b": [1], "a": "é"})
    assert target.read_text(encoding="utf-8") == '{"a":"é","b":[1]}\n'
    assert list(tmp_path.iterdir()) == [target]


def test_serializer_crash_mid_write_leaves_no_file(tmp_path: Path) -> None:
    """When serialization fails after output has started, neither target nor temp file remain."""
    target = tmp_path / "t.json"
    # Sorted keys put the large string first, so a partial document is streamed out before the
    # unserializable value raises.
    document = {"a": "x" * 300_000, "z": Unserializable()}
    with pytest.raises(TypeError):
        write_json_atomic(target, document)
    assert list(tmp_path.iterdir()) == []


def test_serializer_crash_keeps_the_previous_file(tmp_path: Path) -> None:
    """A failed rewrite leaves the old complete file untouched."""
    target = tmp_path / "t.json"
    write_json_atomic(target, {"version": 1})
    before = target.read_bytes()
    with pytest.raises(TypeError):
        write_json_atomic(target, {"a": "x" * 300_000, "z": Unserializable()})
    assert target.read_bytes() == before
    assert list(tmp_path.iterdir()) == [target]


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_all_mode_writes_standalone_child_files(atof: Atof, tmp_path: Path) -> None:
    """Mode 'all' adds one file per sub-agent, referenced by trajectory_path; all validate."""
    ids = hermes_delegation(atof)
    report = convert_events(atof.events, tmp_path, ConvertOptions(subagents="all"))
    names = [p.name for p in report.written]
    assert ids["parent"] != "P"  # the session's own id names the file, not its scope UUID
    assert names == ["trajectory-P.json", "trajectory-C.json"]
    parent, child = (_read(p) for p in report.written)
    ref = parent["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"][0]
    assert ref["trajectory_path"] == "trajectory-C.json"
    assert child == parent["subagent_trajectories"][0]
    for path in report.written:
        assert validate_atif_file(path) == []


def test_all_mode_names_children_without_own_session_by_trajectory_id(
    plugin_events: list[dict[str, Any]], tmp_path: Path
) -> None:
    """A Relay sub-agent shares its parent's session, so its file is named by its scope UUID."""
    report = convert_events(plugin_events, tmp_path, ConvertOptions(subagents="all"))
    sub_uuid = plugin_events[4]["uuid"]
    assert [p.name for p in report.written][1] == f"trajectory-{sub_uuid}.json"


def test_embedded_mode_writes_only_root_files(atof: Atof, tmp_path: Path) -> None:
    """The default mode writes the parent only, with the child embedded."""
    hermes_delegation(atof)
    report = convert_events(atof.events, tmp_path)
    assert len(report.written) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [report.written[0].name]


def test_exporter_write_supports_subagent_modes(atof: Atof, tmp_path: Path) -> None:
    """AtifExporter.write honours the template and the 'all' mode."""
    hermes_delegation(atof)
    exporter = AtifExporter("P", "Hermes Agent", "local")
    for event in atof.events:
        exporter.on_event(event)
    paths = exporter.write(
        tmp_path, filename_template="hermes-atif-{session_id}.json", subagents="all"
    )
    assert [p.name for p in paths] == ["hermes-atif-P.json", "hermes-atif-C.json"]


def test_colliding_names_get_a_counter(atof: Atof, tmp_path: Path) -> None:
    """A template without ids does not overwrite: later files get -2, -3 suffixes."""
    for _ in range(3):
        agent = atof.start("a", "agent")
        atof.llm(agent, [{"role": "user", "content": "x"}], "y")
        atof.end(agent)
    report = convert_events(atof.events, tmp_path, ConvertOptions(filename_template="run.json"))
    assert [p.name for p in report.written] == ["run.json", "run-2.json", "run-3.json"]


def test_root_without_steps_writes_only_its_subagents(atof: Atof, tmp_path: Path) -> None:
    """A step-less root is not valid ATIF: its sub-agents are written standalone instead."""
    parent = atof.start("p", "agent")
    child = atof.start("c", "agent", parent)
    atof.llm(child, [{"role": "user", "content": "x"}], "y")
    atof.end(child)
    atof.end(parent)
    report = convert_events(atof.events, tmp_path)
    assert [p.name for p in report.written] == [f"trajectory-{child}.json"]
    assert report.empty_trajectories == 1
    assert validate_atif_file(report.written[0]) == []


@pytest.mark.parametrize("template", ["{nope}.json", "{0}.json", "dir/{session_id}.json", ""])
def test_bad_templates_are_rejected(template: str, tmp_path: Path) -> None:
    """Unknown fields and path separators in a filename template raise ValueError up front."""
    with pytest.raises(ValueError, match="template"):
        TrajectoryWriter(tmp_path, filename_template=template)
