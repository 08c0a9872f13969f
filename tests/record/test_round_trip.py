"""`wayline atif convert` of wayline's own ATOF gives the ATIF the plugin wrote, field by field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import atif
import nat.atif
from record_support import (
    CHILD_MARK,
    REWRITE_REASON,
    REWRITE_SOURCE,
    Recording,
    batch,
    delegate,
    record_session,
)

from wayline.plugins.observability.relay.settings import wayline_version
from wayline.relay.atif import ConvertOptions, convert_file, validate_trajectory

SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": {"first_user_contains": CHILD_MARK},
            "turns": [batch("child", ["EUR", "USD"]), {"content": "child converted"}],
        },
        {
            "match": {},
            "turns": [
                batch("parent", ["EUR", "GBP", "USD"]),
                delegate("call_delegate", f"{CHILD_MARK}: convert two amounts"),
                {"content": "parent done"},
                batch("again", ["JPY"]),
                {"content": "second turn done"},
            ],
        },
    ]
}


def _differences(a: Any, b: Any, path: str = "$") -> list[str]:
    """Every path where two JSON values differ (empty: equal)."""
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: only in {'converted' if key not in a else 'plugin'}")
            else:
                out.extend(_differences(a[key], b[key], f"{path}.{key}"))
        return out
    if isinstance(a, list):
        out = [f"{path}: {len(a)} != {len(b)} items"] if len(a) != len(b) else []
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            out.extend(_differences(x, y, f"{path}[{i}]"))
        return out
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def _converted(recording: Recording, out: Path) -> dict[str, Any]:
    report = convert_file(
        recording.atof_path, out, ConvertOptions(filename_template="trajectory-{session_id}.json")
    )
    (path,) = report.written
    assert path.name == recording.atif_path.name  # the session's id, not a scope UUID
    converted: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return converted


def test_converter_reproduces_the_plugin_atif(tmp_path: Path) -> None:
    """Parallel tools, a delegation, rewriting middleware and two user turns: the converted
    ATOF equals the plugin's ATIF in every field, and both are valid ATIF (our validator,
    Harbor's `atif` models and NAT's `nvidia-nat-atif` models)."""
    recording = record_session(tmp_path, SCRIPT, ["convert my money", "and once more"])
    converted = _converted(recording, tmp_path / "converted")
    assert _differences(recording.atif, converted) == []
    for document in (recording.atif, converted):
        assert validate_trajectory(document) == []
        atif.Trajectory.model_validate(document)
        nat.atif.Trajectory.model_validate(document)


def test_agent_blocks_name_and_version_every_agent(tmp_path: Path) -> None:
    """The session keeps its id and wayline's version; the child agent has its own name."""
    recording = record_session(tmp_path, SCRIPT, ["convert my money"])
    document = recording.atif
    assert (document["session_id"], document["trajectory_id"]) == (
        recording.session_id,
        recording.session_id,
    )
    assert document["agent"]["name"] == "wayline"
    assert document["agent"]["version"] == wayline_version() != "unknown"
    (child,) = document["subagent_trajectories"]
    (start,) = recording.hooks.of("subagent_start")
    assert child["session_id"] == start["child_session_id"]
    assert child["agent"]["name"] == f"wayline/{start.get('child_role') or 'subagent'}"
    assert child["agent"]["version"] == document["agent"]["version"]


def test_rewritten_calls_keep_the_model_arguments_and_show_what_ran(tmp_path: Path) -> None:
    """A rewritten call: the model's arguments, the executed ones and the trace in `extra`;
    an untouched call has no `extra`; the observation is the executed call's result."""
    recording = record_session(tmp_path, SCRIPT, ["convert my money"])
    step = next(s for s in recording.atif["steps"] if s.get("tool_calls"))
    calls = {c["tool_call_id"]: c for c in step["tool_calls"]}
    rewritten = calls["parent_0"]
    assert rewritten["arguments"] == {"amount": 1, "currency": "EUR"}
    assert rewritten["extra"] == {
        "executed_arguments": {"amount": 1, "currency": "USD"},
        "middleware_trace": [{"source": REWRITE_SOURCE, "reason": REWRITE_REASON}],
    }
    assert "extra" not in calls["parent_2"]  # USD already: nothing changed
    results = {r["source_call_id"]: r["content"] for r in step["observation"]["results"]}
    assert results["parent_0"] == "1.00 USD"
    trace = step["extra"]["middleware_trace"]
    assert [entry["source"] for entry in trace] == ["tuner"]
