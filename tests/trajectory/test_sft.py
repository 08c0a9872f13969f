"""`wayline export sft`: OpenAI chat fine-tuning JSONL, checked line by line by the validator."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from traj_support import RELAY_MANUAL_ATIF, RELAY_PLUGIN_ATIF, load, run_cli

from wayline.trajectory.sft import validate_sample


def _lines(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        assert validate_sample(row) == [], row
    return rows


def test_export_recorded_session_with_subagents(recorded: dict[str, Path], tmp_path: Path) -> None:
    """One valid sample per agent and subagent; tool calls carry JSON-string arguments, tool
    messages answer them by id, and the tools' definitions are included."""
    out = tmp_path / "train.jsonl"
    proc = run_cli(
        "export",
        "sft",
        recorded["trajectory"],
        "-o",
        out,
        "--include-subagents",
        home=recorded["home"],
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    parent, child = _lines(out)
    roles = [m["role"] for m in parent["messages"]]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    calls = parent["messages"][4]["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"command": "printf one"},
        {"path": "alpha.txt"},
        {"path": "beta.txt"},
    ]
    assert [m["tool_call_id"] for m in parent["messages"][5:8]] == ["call_t1", "call_r1", "call_r2"]
    names = {t["function"]["name"] for t in parent["tools"]}
    assert {"delegate_task", "read_file", "terminal"} <= names
    delegate = next(t for t in parent["tools"] if t["function"]["name"] == "delegate_task")
    assert "depth limit" not in json.dumps(delegate)  # the intact schema, not the sanitized one
    assert child["messages"][0]["role"] == "system"
    assert child["messages"][1] == {"role": "user", "content": "Read both files alpha and beta"}
    assert child["messages"][-1] == {"role": "assistant", "content": "child read both"}
    without = run_cli(
        "export", "sft", recorded["trajectory"], "-o", out, home=recorded["home"], cwd=tmp_path
    )
    assert without.returncode == 0 and len(_lines(out)) == 1


def test_relay_exports_fold_and_use_tool_definitions(tmp_path: Path) -> None:
    """Relay files export too: repeated user steps folded, agent.tool_definitions used."""
    out = tmp_path / "t.jsonl"
    proc = run_cli(
        "export",
        "sft",
        RELAY_MANUAL_ATIF,
        RELAY_PLUGIN_ATIF,
        "-o",
        out,
        home=tmp_path,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    manual, plugin = _lines(out)
    assert [m["role"] for m in manual["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert manual["messages"][0]["content"] == "You are a calculator."  # from extra.llm_request
    assert manual["tools"] == [
        {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
    ]
    assert manual["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '{"sum": 3}',
    }
    assert plugin["messages"][0] == {"role": "system", "content": "sys"}


def test_copied_context_and_incomplete_runs(tmp_path: Path) -> None:
    """Steps marked is_copied_context are left out; --only-completed skips unfinished runs."""
    data = load(RELAY_MANUAL_ATIF)
    copied = copy.deepcopy(data)
    copied["steps"].insert(
        0, {"step_id": 0, "source": "user", "message": "old context", "is_copied_context": True}
    )
    unfinished = copy.deepcopy(data)
    unfinished["steps"] = unfinished["steps"][:2]
    (tmp_path / "copied.json").write_text(json.dumps(copied))
    (tmp_path / "unfinished.json").write_text(json.dumps(unfinished))
    out = tmp_path / "t.jsonl"
    proc = run_cli(
        "export",
        "sft",
        tmp_path / "copied.json",
        tmp_path / "unfinished.json",
        "-o",
        out,
        "--only-completed",
        home=tmp_path,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (only,) = _lines(out)
    assert "old context" not in json.dumps(only)
    assert "unfinished.json: not completed" in proc.stderr
    none = run_cli(
        "export",
        "sft",
        tmp_path / "unfinished.json",
        "-o",
        out,
        "--only-completed",
        home=tmp_path,
        cwd=tmp_path,
    )
    assert none.returncode == 1 and "nothing to export" in none.stderr


def _sample(**changes: Any) -> dict[str, Any]:
    sample: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": "add"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "3"},
            {"role": "assistant", "content": "3"},
        ]
    }
    sample.update(changes)
    return sample


def test_validator_accepts_a_good_sample() -> None:
    """The reference sample is valid."""
    assert validate_sample(_sample()) == []


def test_validator_rejects_each_broken_rule() -> None:
    """Each rule of the format is checked: roles, keys, arguments as a JSON string, call ids,
    answers before the next message, at least one assistant message, tools' shape."""
    good = _sample()["messages"]

    def with_message(i: int, message: dict[str, Any]) -> dict[str, Any]:
        messages = copy.deepcopy(good)
        messages[i] = message
        return _sample(messages=messages)

    call = good[1]["tool_calls"][0]
    cases = {
        "messages[0].role": with_message(0, {"role": "human", "content": "x"}),
        "messages[0]: unknown keys": with_message(
            0, {"role": "user", "content": "x", "tool_call_id": "c"}
        ),
        "function.arguments: must be a JSON string": with_message(
            1,
            {
                "role": "assistant",
                "tool_calls": [{**call, "function": {"name": "add", "arguments": {}}}],
            },
        ),
        "function.arguments: is not valid JSON": with_message(
            1,
            {
                "role": "assistant",
                "tool_calls": [{**call, "function": {"name": "add", "arguments": "{"}}],
            },
        ),
        "messages[2].tool_call_id: 'zz' answers no earlier open call": with_message(
            2, {"role": "tool", "tool_call_id": "zz", "content": "3"}
        ),
        "are not answered before it": with_message(2, {"role": "user", "content": "again"}),
        "needs at least one assistant message": _sample(
            messages=[{"role": "user", "content": "x"}]
        ),
        "messages: must be a non-empty list": _sample(messages=[]),
        "tools[0].type": _sample(tools=[{"function": {"name": "add"}}]),
        "weight: must be 0 or 1": with_message(
            3, {"role": "assistant", "content": "3", "weight": 2}
        ),
        "unknown top-level keys": _sample(prompt="x"),
    }
    for expected, sample in cases.items():
        problems = validate_sample(sample)
        assert any(expected in p for p in problems), (expected, problems)
