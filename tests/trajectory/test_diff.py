"""`wayline diff`: step-by-step comparison, volatile fields, exit codes, JSON and HTML."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from traj_support import RELAY_MANUAL_ATIF, load, run_cli

from wayline.trajectory import CompareOptions, compare


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_replay_output_is_same_but_not_strictly(recorded: dict[str, Path], tmp_path: Path) -> None:
    """A replay's trajectory equals its recording by default; --strict sees ids and timestamps."""
    out = tmp_path / "new.json"
    assert (
        run_cli(
            "replay", recorded["trajectory"], "-o", out, home=recorded["home"], cwd=tmp_path
        ).returncode
        == 0
    )
    same = run_cli("diff", recorded["trajectory"], out, home=recorded["home"], cwd=tmp_path)
    assert (same.returncode, same.stdout) == (0, "same\n")
    strict = run_cli(
        "diff",
        "--strict",
        "--json",
        recorded["trajectory"],
        out,
        home=recorded["home"],
        cwd=tmp_path,
    )
    assert strict.returncode == 1
    paths = {d["path"] for d in json.loads(strict.stdout)}
    assert {"session_id", "trajectory_id", "timestamp"} <= paths


def test_changed_text_is_reported_with_step(tmp_path: Path) -> None:
    """A changed final answer: exit 1 and a JSON difference of kind text at that step."""
    old = load(RELAY_MANUAL_ATIF)
    new = copy.deepcopy(old)
    new["steps"][3]["message"] = "The answer is 4."
    proc = run_cli(
        "diff",
        "--json",
        RELAY_MANUAL_ATIF,
        _write(tmp_path / "b.json", new),
        home=tmp_path,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == [
        {
            "trajectory": "main",
            "step": 4,
            "tool_call": None,
            "kind": "text",
            "path": "message",
            "old": "The answer is 3.",
            "new": "The answer is 4.",
        }
    ]


def test_volatile_fields_are_ignored_by_default() -> None:
    """Ids, timestamps, metrics and ids inside a JSON tool result do not count unless strict."""
    old: dict[str, Any] = {
        "session_id": "a",
        "steps": [
            {"step_id": 1, "source": "user", "message": "go", "timestamp": "t1"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "metrics": {"prompt_tokens": 3},
                "tool_calls": [{"tool_call_id": "c1", "function_name": "f", "arguments": {"x": 1}}],
                "observation": {
                    "results": [
                        {
                            "source_call_id": "c1",
                            "content": '{"ok": true, "session_id": "s1", "duration_ms": 5}',
                        }
                    ]
                },
            },
        ],
    }
    new = copy.deepcopy(old)
    new["session_id"] = "b"
    new["steps"][0]["timestamp"] = "t2"
    new["steps"][1]["metrics"] = {"prompt_tokens": 9}
    new["steps"][1]["tool_calls"][0]["tool_call_id"] = "c9"
    new["steps"][1]["observation"]["results"][0] = {
        "source_call_id": "c9",
        "content": '{"ok": true, "session_id": "s2", "duration_ms": 7}',
    }
    assert compare(old, new) == []
    strict = {(d.kind, d.path) for d in compare(old, new, CompareOptions(strict=True))}
    assert ("field", "session_id") in strict
    assert ("result", "observation.results[0].content") in strict


def test_an_inserted_step_is_one_difference() -> None:
    """Steps are aligned by shape: one extra step shows once, later steps still pair up."""
    steps = [
        {"source": "user", "message": "go"},
        {
            "source": "agent",
            "message": "a",
            "tool_calls": [{"tool_call_id": "1", "function_name": "f"}],
        },
        {"source": "agent", "message": "done"},
    ]
    extra = {
        "source": "agent",
        "message": "b",
        "tool_calls": [{"tool_call_id": "2", "function_name": "g"}],
    }
    diffs = compare({"steps": steps}, {"steps": [*steps[:2], extra, steps[2]]})
    assert [(d.kind, d.step, d.new["tool_calls"]) for d in diffs] == [("step", 3, ["g"])]


def test_relay_repeated_user_steps_are_folded() -> None:
    """Relay writes the user message before every model call; wayline once: same turn."""
    relay = load(RELAY_MANUAL_ATIF)
    folded = copy.deepcopy(relay)
    del folded["steps"][2]  # the repeated "appended-by-intercept" user step
    assert compare(relay, folded) == []
    strict = compare(relay, folded, CompareOptions(strict=True))
    assert strict and strict[0].kind == "step"


def test_html_is_self_contained_and_escaped(tmp_path: Path) -> None:
    """--html prints one page with every value escaped (a message with markup stays text)."""
    old = load(RELAY_MANUAL_ATIF)
    new = copy.deepcopy(old)
    new["steps"][3]["message"] = "<script>alert(1)</script>"
    proc = run_cli(
        "diff",
        "--html",
        RELAY_MANUAL_ATIF,
        _write(tmp_path / "b.json", new),
        home=tmp_path,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    page = proc.stdout
    assert page.startswith("<!DOCTYPE html>") and "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "1 difference;" in page


def test_diff_trouble_exits_2(tmp_path: Path) -> None:
    """A missing or malformed file is trouble: exit 2 with the file named."""
    proc = run_cli("diff", RELAY_MANUAL_ATIF, tmp_path / "nope.json", home=tmp_path, cwd=tmp_path)
    assert proc.returncode == 2 and "nope.json: cannot read" in proc.stderr
