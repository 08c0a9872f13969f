"""Seed 001 scenarios through `wayline chat` with observability/relay: ATOF and ATIF structure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import atif

from wayline.relay.atif.validate import validate_trajectory
from wayline.relay.atof import read_events, validate_atof

WAYLINE = [sys.executable, "-m", "wayline"]
GOAL = "Run the command `printf docs_nested_leaf_function` using the terminal tool."


def _run(
    tmp_path: Path, base_url: str, query: str, toolsets: str, **env_extra: str
) -> dict[str, Any]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {base_url}\n"
        "plugins:\n  enabled:\n    - observability/relay\n"
        "delegation:\n  max_spawn_depth: 2\n  max_concurrent_children: 2\n"
    )
    out = tmp_path / "out"
    env = {
        **os.environ,
        "WAYLINE_HOME": str(home),
        "HERMES_NEMO_RELAY_ATOF_ENABLED": "1",
        "HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
        "HERMES_NEMO_RELAY_ATOF_FILENAME": "events.jsonl",
        "HERMES_NEMO_RELAY_ATOF_MODE": "overwrite",
        "HERMES_NEMO_RELAY_ATIF_ENABLED": "1",
        "HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        "HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE": "trajectory-{session_id}.json",
        "HERMES_NEMO_RELAY_ATIF_AGENT_NAME": "wayline E2E",
        "HERMES_NEMO_RELAY_ATIF_AGENT_VERSION": "test",
        **env_extra,
    }
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "alpha.txt").write_text("alpha_function\n")
    (work / "beta.txt").write_text("beta_function\n")
    proc = subprocess.run(
        [
            *WAYLINE,
            "chat",
            "--query",
            query,
            "--toolsets",
            toolsets,
            "--max-turns",
            "10",
            "--quiet",
            "--accept-hooks",
            "--yolo",
        ],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    # --quiet prints only the answer: the session is the stored one with an ATIF file (a
    # delegated child's transcript is stored too, its trajectory embedded in the parent's).
    atif_names = " ".join(p.name for p in (out / "atif").glob("*.json"))
    (session,) = [t.stem for t in (home / "sessions").glob("*.jsonl") if t.stem in atif_names]
    atof_path = out / "atof" / "events.jsonl"
    assert validate_atof(atof_path) == []
    atif_path = out / "atif" / f"trajectory-{session}.json"
    trajectory = json.loads(atif_path.read_text())
    assert [str(p) for p in validate_trajectory(trajectory)] == []
    atif.Trajectory.model_validate(trajectory)  # Harbor's pydantic models agree
    return {
        "stdout": proc.stdout,
        "session": session,
        "events": read_events(atof_path, sort=False),
        "atif": trajectory,
        "out": out,
    }


def _scopes(events: list[dict[str, Any]], category: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "scope" and e.get("category") == category]


def test_delegated_subagent_tool_call(scripted_server, tmp_path: Path) -> None:
    """Delegation: subagent start mark with ids, child tool scopes, embedded child trajectory."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {"first_user_contains": "printf docs_nested"},
                    "turns": [
                        {
                            "tool_calls": [
                                {
                                    "name": "terminal",
                                    "id": "call_terminal",
                                    "arguments": {"command": "printf docs_nested_leaf_function"},
                                }
                            ]
                        },
                        {"content": "child done"},
                    ],
                },
                {
                    "match": {},
                    "turns": [
                        {
                            "tool_calls": [
                                {
                                    "name": "delegate_task",
                                    "id": "call_delegate",
                                    "arguments": {
                                        "goal": GOAL,
                                        "toolsets": ["terminal"],
                                    },
                                }
                            ]
                        },
                        {"content": "parent received nested subagent result."},
                    ],
                },
            ]
        }
    )
    r = _run(tmp_path, srv.base_url, "Use delegate_task exactly once.", "delegation,terminal")
    assert r["stdout"] == "parent received nested subagent result.\n"
    events = r["events"]
    start_marks = [
        e for e in events if e["kind"] == "mark" and e["name"] == "hermes.subagent.start"
    ]
    assert len(start_marks) == 1
    meta = start_marks[0]["metadata"]
    assert meta["parent_session_id"] == r["session"]
    child = meta["child_session_id"]
    assert meta["child_trajectory_id"] == child and meta["child_role"] == "leaf"
    tool_ends = [e for e in _scopes(events, "tool") if e["scope_category"] == "end"]
    term = next(e for e in tool_ends if e["name"] == "terminal")
    assert term["metadata"]["session_id"] == child and term["metadata"]["status"] == "ok"
    assert json.loads(term["data"])["output"] == "docs_nested_leaf_function"
    delegate = next(e for e in tool_ends if e["name"] == "delegate_task")
    assert delegate["metadata"]["session_id"] == r["session"]
    # every scope that starts also ends
    starts = {e["uuid"] for e in events if e["kind"] == "scope" and e["scope_category"] == "start"}
    ends = {e["uuid"] for e in events if e["kind"] == "scope" and e["scope_category"] == "end"}
    assert starts == ends
    atif = r["atif"]
    assert atif["schema_version"] == "ATIF-v1.7" and atif["session_id"] == r["session"]
    assert atif["agent"]["name"] == "wayline E2E"
    step = next(s for s in atif["steps"] if s.get("tool_calls"))
    assert step["tool_calls"][0]["function_name"] == "delegate_task"
    result = step["observation"]["results"][0]
    assert result["subagent_trajectory_ref"][0]["session_id"] == child
    assert json.loads(result["content"])["results"][0]["tool_trace"] == [
        {"tool": "terminal", "status": "ok"}
    ]
    sub = atif["subagent_trajectories"][0]
    assert sub["session_id"] == child
    child_step = next(s for s in sub["steps"] if s.get("tool_calls"))
    assert child_step["tool_calls"][0]["arguments"] == {
        "command": "printf docs_nested_leaf_function"
    }
    assert atif["steps"][-1]["message"] == "parent received nested subagent result."


def test_parallel_tool_calls(scripted_server, tmp_path: Path) -> None:
    """Two parallel read_file calls: both tool scopes, one agent step, results by source_call_id."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {},
                    "turns": [
                        {
                            "tool_calls": [
                                {
                                    "name": "read_file",
                                    "id": "call_alpha",
                                    "arguments": {"path": "alpha.txt"},
                                },
                                {
                                    "name": "read_file",
                                    "id": "call_beta",
                                    "arguments": {"path": "beta.txt"},
                                },
                            ]
                        },
                        {"content": "parallel tools complete."},
                    ],
                }
            ]
        }
    )
    r = _run(tmp_path, srv.base_url, "Read both files.", "file")
    tool = _scopes(r["events"], "tool")
    assert sorted((e["scope_category"], e["metadata"]["tool_call_id"]) for e in tool) == [
        ("end", "call_alpha"),
        ("end", "call_beta"),
        ("start", "call_alpha"),
        ("start", "call_beta"),
    ]
    step = next(s for s in r["atif"]["steps"] if s.get("tool_calls"))
    assert [c["tool_call_id"] for c in step["tool_calls"]] == ["call_alpha", "call_beta"]
    assert step["tool_calls"][0]["arguments"] == {"path": "alpha.txt"}
    by_id = {res["source_call_id"]: res["content"] for res in step["observation"]["results"]}
    assert "alpha_function" in by_id["call_alpha"] and "beta_function" in by_id["call_beta"]
    assert r["atif"]["steps"][-1]["message"] == "parallel tools complete."
