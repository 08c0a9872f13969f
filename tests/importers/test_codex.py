"""``wayline import`` of Codex CLI rollout JSONL: public samples (SOURCES.md) read
independently here and compared with the ATIF written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, calls, check_valid, results, run_import, steps, written

CODEX = DATA / "codex"
SAMPLES = sorted(CODEX.glob("rollout-*.jsonl"))
REAL = sorted((CODEX / "real").glob("rollout-*.jsonl"))  # Codex CLI's own (SOURCES.md)


def _meta(path: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(path.read_text().splitlines()[0])["payload"]
    return meta


def _real() -> tuple[Path, Path]:
    """The real parent rollout and its spawned agent's."""
    (parent,) = [p for p in REAL if not isinstance(_meta(p).get("source"), dict)]
    (child,) = [p for p in REAL if isinstance(_meta(p).get("source"), dict)]
    return parent, child


def _source(path: Path) -> dict[str, Any]:
    """Messages, calls and outputs the rollout holds (a message logged both as an event and
    as a response item counted once)."""
    users: list[str] = []
    agents: list[str] = []
    system: list[str] = []
    summaries: list[str] = []
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
            {"user": users, "assistant": agents}.get(p["role"], system).append(text)
        elif line["type"] == "response_item" and p["type"] == "reasoning":
            summaries += [part["text"] for part in p.get("summary") or []]
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
        "system": sorted(system),
        "summaries": summaries,
        "calls": tool_calls,
        "outputs": outputs,
    }


@pytest.mark.parametrize("sample", SAMPLES + REAL, ids=lambda p: p.stem[-12:])
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
    assert sorted(s["message"] for s in all_steps if s["source"] == "system") == source["system"]
    assert calls(document) == source["calls"]
    assert results(document) == source["outputs"]
    meta = json.loads(sample.read_text().splitlines()[0])["payload"]
    assert document["session_id"] == meta["id"]
    assert document["agent"]["version"] == meta["cli_version"]
    reasoning = "\n".join(s["reasoning_content"] for s in all_steps if s.get("reasoning_content"))
    assert all(summary in reasoning for summary in source["summaries"])
    assert bool(reasoning) == bool(source["summaries"])


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


def _token_counts(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rollout's per-response usages (a repeated count once) and its last running total."""
    lasts: list[dict[str, Any]] = []
    total: dict[str, Any] = {}
    for raw in path.read_text().splitlines():
        line = json.loads(raw)
        p = line.get("payload") or {}
        counted = line["type"] == "event_msg" and p.get("type") == "token_count"
        if counted and p.get("info") and p["info"]["total_token_usage"] != total:
            total = p["info"]["total_token_usage"]
            lasts.append(p["info"]["last_token_usage"])
    return lasts, total


@pytest.mark.parametrize("sample", REAL, ids=lambda p: p.stem[-12:])
def test_real_token_counts_equal_the_rollouts(sample: Path, home: Path) -> None:
    """Each response's token_count (Codex's own, every response has one) is the metrics of
    the agent step it measured, in order, and the totals equal the rollout's last total."""
    lasts, total = _token_counts(sample)
    assert lasts and all(u["input_tokens"] > 0 for u in lasts)
    (document,) = written(run_import(sample, home=home))
    check_valid(document)
    measured = [s["metrics"] for s in document["steps"] if s.get("metrics")]
    got = [
        (m["prompt_tokens"], m["completion_tokens"], m.get("cached_tokens", 0)) for m in measured
    ]
    want = [(u["input_tokens"], u["output_tokens"], u["cached_input_tokens"]) for u in lasts]
    assert got == want
    reasoning = [m["extra"]["reasoning_output_tokens"] for m in measured]
    assert reasoning == [u["reasoning_output_tokens"] for u in lasts]
    final = document["final_metrics"]
    assert final["total_prompt_tokens"] == total["input_tokens"]
    assert final["total_completion_tokens"] == total["output_tokens"]
    assert final.get("total_cached_tokens", 0) == total["cached_input_tokens"]
    agent_steps = [s for s in document["steps"] if s["source"] == "agent"]
    assert all(s.get("metrics") for s in agent_steps)  # one response, one step, one count


def test_spawned_agent_alone_is_its_own_session(home: Path) -> None:
    """The real subagent's rollout imported without its parent's: its own session, naming the
    parent thread and its nickname."""
    parent, child = _real()
    (document,) = written(run_import(child, home=home))
    check_valid(document)
    spawn = _meta(child)["source"]["subagent"]["thread_spawn"]
    assert document["session_id"] == _meta(child)["id"]
    assert document["extra"]["source"]["parent_session_id"] == _meta(parent)["id"]
    assert document["extra"]["source"]["agent_nickname"] == spawn["agent_nickname"]
    assert "subagent_trajectories" not in document


def _check_embedded(document: dict[str, Any], parent: Path, child: Path, home: Path) -> None:
    check_valid(document)
    assert document["session_id"] == _meta(parent)["id"]
    (sub,) = document["subagent_trajectories"]
    assert sub["extra"]["source"]["session_id"] == _meta(child)["id"]
    (ref,) = [
        (r["source_call_id"], r["subagent_trajectory_ref"][0]["trajectory_id"])
        for s in document["steps"]
        for r in (s.get("observation") or {}).get("results") or []
        if r.get("subagent_trajectory_ref")
    ]
    spawn_calls = [c for c in calls(document) if c[1] == "spawn_agent"]
    assert ref == (spawn_calls[0][0], sub["trajectory_id"])
    child_source = _source(child)
    parent_source = _source(parent)
    assert calls(document) == parent_source["calls"] + child_source["calls"]
    assert results(document) == parent_source["outputs"] + child_source["outputs"]
    users = sorted(s["message"] for s in sub["steps"] if s["source"] == "user")
    assert users == child_source["users"]
    texts = sorted(s["message"] for s in sub["steps"] if s["source"] == "agent")
    assert texts == child_source["agents"]
    lasts, total = _token_counts(child)
    assert sub["final_metrics"]["total_prompt_tokens"] == total["input_tokens"]
    assert [s["metrics"]["prompt_tokens"] for s in sub["steps"] if s.get("metrics")] == [
        u["input_tokens"] for u in lasts
    ]
    assert sorted(p.name for p in (home / "imported").iterdir()) == [
        f"import-codex-{_meta(parent)['id']}.json"
    ]


def test_parent_and_child_in_one_folder_embed_the_child(tmp_path: Path, home: Path) -> None:
    """A folder holding the real parent and subagent rollouts gives one session: the child
    embedded, referenced from the spawn_agent call's result, its messages, calls, outputs
    and token counts equal to its rollout's; no file of its own."""
    parent, child = _real()
    (document,) = written(run_import(CODEX / "real", home=home))
    _check_embedded(document, parent, child, home)


def test_both_files_named_embed_the_child_and_drop_its_earlier_file(home: Path) -> None:
    """The child imported alone first, then both files named (child first): the child is
    embedded in the parent and its earlier separate file is gone (a re-import replaces)."""
    parent, child = _real()
    written(run_import(child, home=home))
    assert (home / "imported" / f"import-codex-{_meta(child)['id']}.json").exists()
    (document,) = written(run_import(child, parent, home=home))
    _check_embedded(document, parent, child, home)


def test_child_found_by_the_spawn_result_without_events(tmp_path: Path, home: Path) -> None:
    """The real parent without its item_completed events (as older versions write no such
    event): the child is still linked to the call whose result names its agent_id."""
    parent, child = _real()
    folder = tmp_path / "older"
    folder.mkdir()
    kept = [
        raw
        for raw in parent.read_text().splitlines()
        if json.loads(raw).get("payload", {}).get("type") != "item_completed"
    ]
    assert len(kept) < len(parent.read_text().splitlines())
    (folder / parent.name).write_text("\n".join(kept) + "\n")
    shutil.copyfile(child, folder / child.name)
    (document,) = written(run_import(folder, home=home))
    _check_embedded(document, folder / parent.name, child, home)
