"""The ATIF validator: one test per Harbor rule, each checking the reported JSON path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from wayline.relay.atif import validate_atif_file, validate_trajectory


def valid() -> dict[str, Any]:
    """A small valid ATIF document with a tool call, an observation and an embedded sub-agent."""
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": "s",
        "trajectory_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {
                "step_id": 2,
                "timestamp": "2026-11-21T20:42:58.930109515+00:00",
                "source": "agent",
                "model_name": "m",
                "message": "calling",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "f", "arguments": {}}],
                "observation": {
                    "results": [
                        {
                            "source_call_id": "c1",
                            "content": "r",
                            "subagent_trajectory_ref": [{"trajectory_id": "sub"}],
                        }
                    ]
                },
                "metrics": {"prompt_tokens": 3, "completion_tokens": 1},
                "llm_call_count": 1,
            },
        ],
        "final_metrics": {"total_prompt_tokens": 3, "total_steps": 2},
        "subagent_trajectories": [
            {
                "schema_version": "ATIF-v1.7",
                "trajectory_id": "sub",
                "agent": {"name": "a", "version": "1"},
                "steps": [{"step_id": 1, "source": "agent", "message": "done"}],
            }
        ],
    }


def problems(document: Any) -> list[str]:
    """The validator's findings as ``path: message`` strings."""
    return [str(problem) for problem in validate_trajectory(document)]


def paths(document: Any) -> list[str]:
    """Only the JSON paths of the validator's findings."""
    return [problem.path for problem in validate_trajectory(document)]


def test_valid_document_has_no_problems() -> None:
    """The baseline document is valid, so each rule test below isolates one violation."""
    assert problems(valid()) == []


def test_reference_samples_are_valid(manual_atif: Any, plugin_atif: Any) -> None:
    """Relay's own ATIF outputs pass (they passed Harbor's validator too)."""
    assert problems(manual_atif) == []
    assert problems(plugin_atif) == []


@pytest.mark.parametrize(
    ("where", "path"),
    [
        (lambda d: d, "$.bogus"),
        (lambda d: d["agent"], "$.agent.bogus"),
        (lambda d: d["steps"][1], "$.steps[1].bogus"),
        (lambda d: d["steps"][1]["tool_calls"][0], "$.steps[1].tool_calls[0].bogus"),
        (
            lambda d: d["steps"][1]["observation"]["results"][0],
            "$.steps[1].observation.results[0].bogus",
        ),
        (lambda d: d["subagent_trajectories"][0], "$.subagent_trajectories[0].bogus"),
    ],
)
def test_unknown_keys_are_forbidden(where: Any, path: str) -> None:
    """Any key outside the schema is an error at its own path (custom data belongs in extra)."""
    document = valid()
    where(document)["bogus"] = 1
    assert paths(document) == [path]
    assert "unknown field" in problems(document)[0]


def test_keys_inside_extra_are_free() -> None:
    """extra objects may hold anything."""
    document = valid()
    document["extra"] = {"anything": {"nested": [1]}}
    document["steps"][0]["extra"] = {"bogus": True}
    assert problems(document) == []


def test_at_least_one_step() -> None:
    """An empty steps list is rejected at $.steps."""
    document = valid()
    document["steps"] = []
    assert problems(document) == ["$.steps: must contain at least 1 step"]


def test_step_ids_are_sequential_from_one() -> None:
    """step_id must equal position + 1; the offending step is named."""
    document = valid()
    document["steps"][1]["step_id"] = 3
    assert paths(document) == ["$.steps[1].step_id"]
    assert "expected 2" in problems(document)[0]


def test_step_id_must_be_positive() -> None:
    """step_id 0 breaks the >= 1 bound."""
    document = valid()
    document["steps"][0]["step_id"] = 0
    assert problems(document) == ["$.steps[0].step_id: must be >= 1, got 0"]


def test_source_call_id_must_match_a_call_of_the_same_step() -> None:
    """A result pointing at another step's (or no) tool call is reported."""
    document = valid()
    document["steps"][1]["observation"]["results"][0]["source_call_id"] = "c9"
    assert paths(document) == ["$.steps[1].observation.results[0].source_call_id"]
    moved = valid()
    moved["steps"][0] = {
        "step_id": 1,
        "source": "system",
        "message": "m",
        "observation": {"results": [{"source_call_id": "c1"}]},
    }
    assert paths(moved) == ["$.steps[0].observation.results[0].source_call_id"]


def test_null_source_call_id_is_allowed() -> None:
    """A result without source_call_id (system-initiated) needs no tool call."""
    document = valid()
    document["steps"][0] = {
        "step_id": 1,
        "source": "system",
        "message": "m",
        "observation": {"results": [{"source_call_id": None, "content": "x"}]},
    }
    assert problems(document) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model_name", "m"),
        ("reasoning_effort", "high"),
        ("reasoning_content", "r"),
        ("tool_calls", []),
        ("metrics", {}),
    ],
)
def test_agent_only_fields(field: str, value: Any) -> None:
    """model_name, reasoning_*, tool_calls and metrics are only allowed on agent steps."""
    document = valid()
    document["steps"][0][field] = value
    assert paths(document) == [f"$.steps[0].{field}"]
    assert "only allowed on agent steps" in problems(document)[0]


@pytest.mark.parametrize("field", ["metrics", "reasoning_content"])
def test_no_metrics_or_reasoning_without_llm_call(field: str) -> None:
    """An agent step with llm_call_count 0 must not carry metrics or reasoning_content."""
    document = valid()
    step = document["steps"][1]
    step["llm_call_count"] = 0
    del step["metrics"]
    step[field] = {"prompt_tokens": 1} if field == "metrics" else "r"
    assert paths(document) == [f"$.steps[1].{field}"]


def test_required_fields() -> None:
    """Missing or null required fields are reported at their path."""
    document = valid()
    del document["agent"]["name"]
    document["steps"][0]["message"] = None
    del document["steps"][1]["tool_calls"][0]["arguments"]
    assert problems(document) == [
        "$.agent.name: required field is missing",
        "$.steps[0].message: required field is null",
        "$.steps[1].tool_calls[0].arguments: required field is missing",
    ]


def test_types_are_not_coerced() -> None:
    """JSON types must match: a string step_id or a non-object arguments is an error."""
    document = valid()
    document["steps"][0]["step_id"] = "1"
    document["steps"][1]["tool_calls"][0]["arguments"] = "{}"
    document["final_metrics"]["total_steps"] = True
    assert problems(document) == [
        "$.steps[0].step_id: expected integer, got string",
        "$.steps[1].tool_calls[0].arguments: expected object, got string",
        "$.final_metrics.total_steps: expected integer, got boolean",
    ]


def test_source_and_schema_version_are_enumerations() -> None:
    """source and schema_version take only the listed values."""
    document = valid()
    document["steps"][0]["source"] = "bot"
    document["schema_version"] = "ATIF-v2.0"
    assert paths(document) == ["$.schema_version", "$.steps[0].source"]


def test_timestamps_are_iso_8601() -> None:
    """A step timestamp must parse as ISO 8601 (Z accepted)."""
    document = valid()
    document["steps"][0]["timestamp"] = "2026-11-21T20:42:58Z"
    assert problems(document) == []
    document["steps"][0]["timestamp"] = "yesterday"
    assert problems(document) == ["$.steps[0].timestamp: not an ISO 8601 timestamp: 'yesterday'"]


def test_embedded_subagents_need_a_trajectory_id() -> None:
    """Every embedded sub-agent carries a trajectory_id."""
    document = valid()
    del document["subagent_trajectories"][0]["trajectory_id"]
    assert problems(document) == [
        "$.subagent_trajectories[0].trajectory_id: required on an embedded sub-agent trajectory"
    ]


def test_embedded_subagent_ids_are_unique() -> None:
    """Two embedded sub-agents with one trajectory_id: the second is reported."""
    document = valid()
    document["subagent_trajectories"].append(copy.deepcopy(document["subagent_trajectories"][0]))
    assert problems(document) == [
        "$.subagent_trajectories[1].trajectory_id: duplicate 'sub' "
        "(also at $.subagent_trajectories[0])"
    ]


def test_subagents_are_validated_recursively() -> None:
    """Rules apply inside embedded trajectories, with the full path."""
    document = valid()
    document["subagent_trajectories"][0]["steps"][0]["step_id"] = 2
    assert paths(document) == ["$.subagent_trajectories[0].steps[0].step_id"]


def test_subagent_ref_needs_id_or_path() -> None:
    """A reference must name a trajectory_id or a trajectory_path."""
    document = valid()
    result = document["steps"][1]["observation"]["results"][0]
    result["subagent_trajectory_ref"] = [{"session_id": "only-session"}]
    assert problems(document) == [
        "$.steps[1].observation.results[0].subagent_trajectory_ref[0]: "
        "must set trajectory_id or trajectory_path"
    ]


def test_content_parts_match_their_type() -> None:
    """Text parts need text and no source; image parts need a matching image source."""
    document = valid()
    document["steps"][0]["message"] = [
        {"type": "text", "text": "ok"},
        {"type": "text"},
        {"type": "image", "source": {"media_type": "image/tiff", "path": "x.tiff"}},
        {"type": "video"},
    ]
    assert paths(document) == [
        "$.steps[0].message[1].text",
        "$.steps[0].message[2].source.media_type",
        "$.steps[0].message[3].type",
    ]


def test_audio_media_type_aliases_are_normalized() -> None:
    """audio/mp3 is accepted as audio/mpeg; duration must not be negative."""
    document = valid()
    document["steps"][0]["message"] = [
        {"type": "audio", "source": {"media_type": "audio/mp3", "path": "a.mp3"}},
        {
            "type": "audio",
            "source": {"media_type": "audio/wav", "path": "b.wav", "duration_sec": -1},
        },
    ]
    assert paths(document) == ["$.steps[0].message[1].source.duration_sec"]


def test_local_media_files_must_exist(tmp_path: Path) -> None:
    """With a base directory, a missing local image is reported; existing ones pass."""
    (tmp_path / "there.png").write_bytes(b"png")
    document = valid()
    document["steps"][0]["message"] = [
        {"type": "image", "source": {"media_type": "image/png", "path": "there.png"}},
        {"type": "image", "source": {"media_type": "image/png", "path": "missing.png"}},
        {"type": "image", "source": {"media_type": "image/png", "path": "https://x/y.png"}},
    ]
    found = validate_trajectory(document, base_dir=tmp_path)
    assert [p.path for p in found] == ["$.steps[0].message[1].source.path"]
    assert validate_trajectory(document) == []


def test_file_validation_reports_bad_json_with_position(tmp_path: Path) -> None:
    """Invalid JSON is one problem at $ naming line and column; OSError for unreadable files."""
    target = tmp_path / "t.json"
    target.write_text('{"schema_version": ', encoding="utf-8")
    (problem,) = validate_atif_file(target)
    assert problem.path == "$"
    assert "line 1, column 20" in problem.message
    target.write_text(json.dumps(valid()), encoding="utf-8")
    assert validate_atif_file(target) == []
    with pytest.raises(OSError):
        validate_atif_file(tmp_path / "missing.json")


def test_integer_timestamps_outside_the_calendar_give_no_step_timestamp() -> None:
    """Epoch-µs timestamps the fuzzer found (beyond time_t, year 0, year 999) become a valid
    four-digit ISO timestamp or none at all, never an exception or an invalid document."""
    from wayline.relay.atif.payloads import timestamp_text

    assert timestamp_text(9_223_372_036_854_775_808_000_000) is None
    assert timestamp_text(-62_135_596_800_000_001) is None  # before 0001-01-01
    assert timestamp_text(-30_610_224_000_000_001) == "0999-12-31T23:59:59.999999+00:00"
    assert timestamp_text(1_700_000_000_123_456) == "2023-11-14T22:13:20.123456+00:00"
    assert timestamp_text(1_700_000_000_000_000) == "2023-11-14T22:13:20+00:00"
