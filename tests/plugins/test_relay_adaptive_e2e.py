"""Seed 001 "Local Adaptive E2E" through `wayline chat`: managed llm/tool spans, no duplicates.

The real CLI runs in a subprocess against the scripted server, with ``observability/relay``
configured by a plugins.toml that has an ``adaptive`` component, and optionally the example
intercept plugin from ``examples/relay_intercepts`` installed as a user plugin.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from wayline.relay.atif.validate import validate_trajectory
from wayline.relay.atof import read_events, validate_atof
from wayline.relay.timefmt import parse_timestamp_ns

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "relay_intercepts"
QUERY = (
    "Use the terminal tool exactly once to run printf middleware_execution_ok. "
    "Then reply with exactly the command output."
)
TERMINAL_SCRIPT: dict[str, Any] = {
    "model": "qwen3.6:35b",
    "rules": [
        {
            "match": {},
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "terminal",
                            "id": "call_terminal",
                            "arguments": {"command": "printf middleware_execution_ok"},
                        }
                    ]
                },
                {"content": "middleware_execution_ok"},
            ],
        }
    ],
}
TOML = """version = 1

[[components]]
kind = "observability"
enabled = true

[components.config]
version = 1

[components.config.atof]
enabled = true
output_directory = "{out}/atof"
filename = "middleware-events.jsonl"
mode = "overwrite"

[components.config.atif]
enabled = true
output_directory = "{out}/atif"
filename_template = "middleware-trajectory-{{session_id}}.json"
agent_name = "Hermes Middleware E2E"
agent_version = "local"

[[components]]
kind = "adaptive"
enabled = true

[components.config.tool_parallelism]
mode = "{mode}"
"""


def _run(
    tmp_path: Path,
    base_url: str,
    query: str,
    toolsets: str,
    *,
    mode: str = "observe_only",
    example: bool = False,
    stream: bool = False,
) -> dict[str, Any]:
    home = tmp_path / "hermes-home"
    home.mkdir()
    enabled = ["observability/relay"] + (["relay-intercepts-example"] if example else [])
    (home / "config.yaml").write_text(
        "model:\n  provider: custom\n  default: qwen3.6:35b\n"
        f"  base_url: {base_url}\n  api_key: ollama\n"
        f"plugins:\n  enabled: {json.dumps(enabled)}\n"
        "  entries:\n    relay-intercepts-example:\n      system_suffix: Be brief.\n"
    )
    if example:
        shutil.copytree(EXAMPLE, home / "plugins" / "relay_intercepts")
    out = tmp_path / "out"
    toml = tmp_path / "nemo-relay" / "plugins.toml"
    toml.parent.mkdir()
    toml.write_text(TOML.format(out=out, mode=mode))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_", "WAYLINE_HOME"))
    }
    env |= {"WAYLINE_HOME": str(home), "HERMES_NEMO_RELAY_PLUGINS_TOML": str(toml)}
    work = tmp_path / "work"
    work.mkdir()
    (work / "alpha.txt").write_text("alpha_function\n")
    (work / "beta.txt").write_text("beta_function\n")
    argv = [sys.executable, "-m", "wayline", "chat", "--query", query, "--provider", "custom"]
    argv += ["--model", "qwen3.6:35b", "--toolsets", toolsets, "--max-turns", "4"]
    argv += ["--stream"] if stream else []
    proc = subprocess.run(
        [*argv, "--quiet", "--accept-hooks"],
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
    atof_path = out / "atof" / "middleware-events.jsonl"
    assert validate_atof(atof_path) == []
    trajectory = json.loads((out / "atif" / f"middleware-trajectory-{session}.json").read_text())
    assert [str(p) for p in validate_trajectory(trajectory)] == []
    events = read_events(atof_path, sort=False)
    return {"stdout": proc.stdout, "session": session, "events": events, "atif": trajectory}


def _spans(events: list[dict[str, Any]], category: str, phase: str) -> list[dict[str, Any]]:
    return [
        e
        for e in events
        if e["kind"] == "scope" and e["category"] == category and e["scope_category"] == phase
    ]


def _assert_no_duplicates(events: list[dict[str, Any]], llm_calls: int, tool_calls: int) -> None:
    """Every scope starts and ends once; one llm span per provider request, one per tool."""
    phases = Counter((e["uuid"], e["scope_category"]) for e in events if e["kind"] == "scope")
    assert set(phases.values()) == {1}
    assert {u for u, p in phases if p == "start"} == {u for u, p in phases if p == "end"}
    assert len(_spans(events, "llm", "start")) == llm_calls
    assert len(_spans(events, "tool", "start")) == tool_calls
    ids = [e["metadata"]["tool_call_id"] for e in _spans(events, "tool", "start")]
    assert len(ids) == len(set(ids))


def test_local_adaptive_e2e_matches_the_seed_shapes(scripted_server, tmp_path: Path) -> None:
    """Seed 001 Local Adaptive E2E: managed llm/tool spans with the seed's ATOF/ATIF shapes."""
    srv = scripted_server(TERMINAL_SCRIPT)
    r = _run(tmp_path, srv.base_url, QUERY, "terminal")
    assert r["stdout"] == "middleware_execution_ok\n"
    events, session = r["events"], r["session"]
    _assert_no_duplicates(events, llm_calls=len(srv.requests), tool_calls=1)
    assert len(srv.requests) == 2
    llm_start = _spans(events, "llm", "start")[0]
    assert llm_start["name"] == "custom"
    assert llm_start["metadata"]["session_id"] == session
    assert llm_start["metadata"]["mode"] == "observe_only"
    # Managed: the start records what the provider was sent (Relay's llm.execute).
    assert llm_start["data"]["content"] == srv.requests[0].body
    assert llm_start["category_profile"]["annotated_request"]["api_specific"] == {
        "api": "openai_chat"
    }
    tool_start, tool_end = _spans(events, "tool", "start")[0], _spans(events, "tool", "end")[0]
    assert tool_start["name"] == tool_end["name"] == "terminal"
    assert tool_start["metadata"]["session_id"] == session
    assert tool_start["metadata"]["tool_call_id"] == "call_terminal"
    assert tool_start["metadata"]["mode"] == "observe_only"
    assert tool_end["metadata"]["status"] == "ok"
    assert tool_end["metadata"]["otel.status_code"] == "OK"
    assert json.loads(tool_end["data"]) == {
        "output": "middleware_execution_ok",
        "exit_code": 0,
        "error": None,
    }
    # Observer marks continue next to the managed spans.
    marks = {e["name"] for e in events if e["kind"] == "mark"}
    assert {"hermes.turn.start", "hermes.turn.end", "hermes.session.end"} <= marks
    atif = r["atif"]
    assert atif["schema_version"] == "ATIF-v1.7" and atif["session_id"] == session
    agent = atif["agent"]
    assert (agent["name"], agent["version"], agent["model_name"]) == (
        "Hermes Middleware E2E",
        "local",
        "qwen3.6:35b",
    )
    agent_steps = [s for s in atif["steps"] if s["source"] == "agent"]
    call_step, final_step = agent_steps[0], agent_steps[-1]
    assert [(c["function_name"], c["arguments"]) for c in call_step["tool_calls"]] == [
        ("terminal", {"command": "printf middleware_execution_ok"})
    ]
    result = call_step["observation"]["results"][0]
    assert result["source_call_id"] == "call_terminal"
    assert result["content"] == tool_end["data"]
    assert final_step["message"] == "middleware_execution_ok"


def test_example_intercepts_reach_the_provider(scripted_server, tmp_path: Path) -> None:
    """The example plugin's header, codec-path prompt rewrite and tool annotation all apply."""
    srv = scripted_server(TERMINAL_SCRIPT)
    r = _run(tmp_path, srv.base_url, QUERY, "terminal", example=True)
    assert r["stdout"] == "middleware_execution_ok\n"
    events = r["events"]
    _assert_no_duplicates(events, llm_calls=len(srv.requests), tool_calls=1)
    for sent in srv.requests:
        assert sent.headers["x-wayline-example"] == "1"
        assert sent.headers["traceparent"].startswith("00-")
        system = sent.body["messages"][0]
        assert system["role"] == "system" and system["content"].endswith("\n\nBe brief.")
    starts = _spans(events, "llm", "start")
    for start, sent in zip(starts, srv.requests, strict=True):
        assert start["data"]["content"] == sent.body
        assert start["category_profile"]["annotated_request"]["messages"] == sent.body["messages"]
        assert start["data"]["headers"]["x-wayline-example"] == "1"
        marks = [e for e in events if e["kind"] == "mark" and e["parent_uuid"] == start["uuid"]]
        assert [m["name"] for m in marks] == ["example.request_intercepted"]
        assert marks[0]["metadata"] == {"nemo_relay.log.severity": "info"}
        offset = parse_timestamp_ns(marks[0]["timestamp"]) - parse_timestamp_ns(start["timestamp"])
        assert offset == 1_000
    tool_end = _spans(events, "tool", "end")[0]
    assert tool_end["category_profile"]["tool_result_annotation"] == {
        "tool": "terminal",
        "tool_call_id": "call_terminal",
        "result_chars": len(tool_end["data"]),
    }
    tool_mark = next(e for e in events if e["name"] == "example.tool_observed")
    assert tool_mark["parent_uuid"] == tool_end["uuid"]
    assert (
        parse_timestamp_ns(tool_mark["timestamp"])
        == parse_timestamp_ns(tool_end["timestamp"]) + 1_000
    )
    step = next(s for s in r["atif"]["steps"] if s.get("tool_calls"))
    extra = step["observation"]["results"][0]["extra"]
    assert extra["tool_result_annotation"]["tool_call_id"] == "call_terminal"


def test_parallel_read_file_batch_in_managed_mode(scripted_server, tmp_path: Path) -> None:
    """Two parallel read_file calls under adaptive execution: one span each, nothing twice."""
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
    r = _run(tmp_path, srv.base_url, "Read both files.", "file", mode="schedule")
    assert r["stdout"] == "parallel tools complete.\n"
    events = r["events"]
    _assert_no_duplicates(events, llm_calls=len(srv.requests), tool_calls=2)
    ends = {e["metadata"]["tool_call_id"]: e for e in _spans(events, "tool", "end")}
    assert sorted(ends) == ["call_alpha", "call_beta"]
    assert all(e["metadata"]["scheduled_by"] == "wayline" for e in ends.values())
    assert "alpha_function" in ends["call_alpha"]["data"]
    assert "beta_function" in ends["call_beta"]["data"]
    step = next(s for s in r["atif"]["steps"] if s.get("tool_calls"))
    assert [c["tool_call_id"] for c in step["tool_calls"]] == ["call_alpha", "call_beta"]
    by_id = {res["source_call_id"]: res["content"] for res in step["observation"]["results"]}
    assert by_id == {k: ends[k]["data"] for k in ("call_alpha", "call_beta")}


def test_inject_hints_mode_sends_agent_hints(scripted_server, tmp_path: Path) -> None:
    """inject_hints adds nvext.agent_hints to the (streamed) request body the server receives,
    and the llm span records exactly that body."""
    srv = scripted_server({"default": {"content": "hinted"}})
    r = _run(tmp_path, srv.base_url, "hello", "terminal", mode="inject_hints", stream=True)
    assert srv.requests[0].stream is True
    assert r["stdout"] == "hinted\n"
    hints = srv.requests[0].body["nvext"]["agent_hints"]
    assert hints["tool_parallelism"] == "parallel_safe_batches"
    assert hints["session_id"] == r["session"]
    start = _spans(r["events"], "llm", "start")[0]
    assert start["data"]["content"] == srv.requests[0].body
    assert start["metadata"]["mode"] == "inject_hints"


def test_delegation_in_managed_mode_keeps_subagent_marks(scripted_server, tmp_path: Path) -> None:
    """A delegated child's llm/tool spans are managed too, under the child's session scope;
    subagent start/stop marks still come from the observer hooks; nothing is recorded twice."""
    goal = "Run the command `printf nested_leaf` using the terminal tool."
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {"first_user_contains": "printf nested_leaf"},
                    "turns": [
                        {
                            "tool_calls": [
                                {
                                    "name": "terminal",
                                    "id": "call_child_terminal",
                                    "arguments": {"command": "printf nested_leaf"},
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
                                    "arguments": {"goal": goal, "toolsets": ["terminal"]},
                                }
                            ]
                        },
                        {"content": "parent done."},
                    ],
                },
            ]
        }
    )
    r = _run(tmp_path, srv.base_url, "Use delegate_task exactly once.", "delegation,terminal")
    assert r["stdout"] == "parent done.\n"
    events = r["events"]
    _assert_no_duplicates(events, llm_calls=len(srv.requests), tool_calls=2)
    marks = [e["name"] for e in events if e["kind"] == "mark"]
    assert marks.count("hermes.subagent.start") == 1 and marks.count("hermes.subagent.stop") == 1
    sessions = {
        e["uuid"]: e["metadata"]["session_id"]
        for e in events
        if e["kind"] == "scope" and e["category"] == "agent" and e["scope_category"] == "start"
    }
    child = next(s for s in sessions.values() if s != r["session"])
    terminal = next(e for e in _spans(events, "tool", "start") if e["name"] == "terminal")
    assert sessions[terminal["parent_uuid"]] == child
    child_llm = [e for e in _spans(events, "llm", "start") if sessions[e["parent_uuid"]] == child]
    assert len(child_llm) == 2
    sub = r["atif"]["subagent_trajectories"][0]
    assert sub["session_id"] == child
