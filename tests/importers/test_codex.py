"""``wayline import`` of Codex CLI rollout JSONL: public samples (SOURCES.md) read
independently here and compared with the ATIF written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, calls, check_valid, results, run_import, steps, written

CODEX = DATA / "codex"
SAMPLES = sorted(CODEX.glob("rollout-*.jsonl"))


def _source(path: Path) -> dict[str, Any]:
    """Messages, calls and outputs the rollout holds (a message logged both as an event and
    as a response item counted once)."""
    users: list[str] = []
    agents: list[str] = []
    tool_calls, outputs = [], []
    for raw in path.read_text().splitlines():
        line = json.loads(raw)
        p = line.get("payload") or {}
        if line["type"] == "event_msg" and p["type"] == "user_message":
            users.append(p["message"])
        elif line["type"] == "event_msg" and p["type"] == "agent_message":
            agents.append(p["message"])
        elif line["type"] == "response_item" and p["type"] == "message":
            text = "\n".join(c["text"] for c in p["content"])
            (users if p["role"] == "user" else agents).append(text)
        elif line["type"] == "response_item" and p["type"] in ("function_call", "custom_tool_call"):
            raw_args = p.get("arguments", p.get("input"))
            try:
                args = json.loads(raw_args)
            except ValueError:
                args = {"input": raw_args}
            tool_calls.append((p["call_id"], p["name"], args))
        elif line["type"] == "response_item" and p["type"].endswith("_output"):
            out = p["output"]
            text = out if isinstance(out, str) else "\n".join(c["text"] for c in out)
            outputs.append((p["call_id"], text))
    return {
        "users": sorted(set(users)),
        "agents": sorted(set(agents)),
        "calls": tool_calls,
        "outputs": outputs,
    }


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem[-12:])
def test_every_message_call_and_output_is_imported(sample: Path, home: Path) -> None:
    """User and assistant messages, function and custom tool calls (id, name, arguments) and
    their outputs equal the rollout's; reasoning summaries are kept; the file validates."""
    (document,) = written(run_import(sample, home=home))
    check_valid(document)
    source = _source(sample)
    all_steps = steps(document)
    assert sorted(s["message"] for s in all_steps if s["source"] == "user") == source["users"]
    texts = sorted(s["message"] for s in all_steps if s["source"] == "agent" and s["message"])
    assert texts == source["agents"]
    assert calls(document) == source["calls"]
    assert results(document) == source["outputs"]
    meta = json.loads(sample.read_text().splitlines()[0])["payload"]
    assert document["session_id"] == meta["id"]
    assert document["agent"]["version"] == meta["cli_version"]
    if "reasoning" in sample.read_text():
        assert any(s.get("reasoning_content") for s in all_steps)


def test_token_counts_become_step_metrics_once(tmp_path: Path, home: Path) -> None:
    """token_count events (added to the public sample in Codex's shape, one repeated) give the
    step of their response its usage; a repeated count is not counted twice."""
    lines = SAMPLES[0].read_text().splitlines()
    usage = {
        "input_tokens": 1200,
        "cached_input_tokens": 800,
        "output_tokens": 40,
        "reasoning_output_tokens": 8,
        "total_tokens": 1240,
    }
    count = json.dumps(
        {
            "timestamp": "2026-01-02T03:04:09.500Z",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": usage, "last_token_usage": usage},
            },
        }
    )
    at = next(i for i, line in enumerate(lines) if '"function_call"' in line) + 1
    lines[at:at] = [count, count]
    sample = tmp_path / "rollout-tokens.jsonl"
    sample.write_text("\n".join(lines) + "\n")
    (document,) = written(run_import(sample, home=home))
    check_valid(document)
    measured = [s for s in document["steps"] if s.get("metrics")]
    assert len(measured) == 1
    metrics = measured[0]["metrics"]
    assert (metrics["prompt_tokens"], metrics["completion_tokens"]) == (1200, 40)
    assert metrics["cached_tokens"] == 800
    assert measured[0]["tool_calls"][0]["tool_call_id"] == "call-structured-001"
    assert document["final_metrics"]["total_prompt_tokens"] == 1200


def test_broken_rollout_names_line_and_field(tmp_path: Path, home: Path) -> None:
    """A function call without its call_id: exit 2 and one error line naming file, line, field."""
    lines = SAMPLES[0].read_text().splitlines()
    call = json.loads(lines[5])
    del call["payload"]["call_id"]
    lines[5] = json.dumps(call)
    broken = tmp_path / "rollout-broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    proc = run_import(broken, "--format", "codex", home=home)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {broken}:6: payload.call_id: missing"]
    assert not (home / "imported").exists() or not any((home / "imported").iterdir())
