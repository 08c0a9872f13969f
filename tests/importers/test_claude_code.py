"""``wayline import`` of Claude Code session JSONL: public samples (tests/importers/data,
SOURCES.md) read independently here and compared with the ATIF written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, calls, check_valid, results, run_import, steps, trajectories, written

CLAUDE = DATA / "claude-code"
SHOWCASE = CLAUDE / "showcase" / "55550000-0000-4000-8000-000000000001.jsonl"
SAMPLES = [
    CLAUDE / "simonw-sample_session.jsonl",
    CLAUDE / "daaain-representative_messages.jsonl",
    CLAUDE / "daaain-sidechain_integrated.jsonl",
    SHOWCASE,
]


def _lines(path: Path) -> list[dict[str, Any]]:
    files = [path, *sorted(path.with_suffix("").glob("subagents/**/agent-*.jsonl"))]
    return [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]


def _source_counts(path: Path) -> dict[str, Any]:
    """What the transcript holds, counted from its lines (and its subagent files)."""
    users, assistants, tool_uses, tool_results, usage = 0, set(), [], [], {}
    for line in _lines(path):
        message = line.get("message") or {}
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        if line.get("type") == "user":
            if any(not (isinstance(b, dict) and b.get("type") == "tool_result") for b in blocks):
                users += 1
            for b in blocks:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    text = b["content"]
                    if isinstance(text, list):
                        text = "\n".join(part["text"] for part in text)
                    tool_results.append((b["tool_use_id"], text))
        elif line.get("type") == "assistant":
            assistants.add(message["id"] if "id" in message else line["uuid"])
            for b in blocks:
                if b.get("type") == "tool_use":
                    tool_uses.append((b["id"], b["name"], b["input"]))
            if "usage" in message:
                usage[message.get("id")] = message["usage"]
    return {
        "users": users,
        "assistants": len(assistants),
        "tool_uses": tool_uses,
        "tool_results": tool_results,
        "usage": usage,
    }


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_every_message_call_result_and_usage_is_imported(sample: Path, home: Path) -> None:
    """Counts of user and assistant messages, every tool call (id, name, arguments) and result,
    and the token usage of every response equal the transcript's; the file validates."""
    (document,) = written(run_import(sample, home=home))
    check_valid(document)
    source = _source_counts(sample)
    all_steps = steps(document)
    assert sum(s["source"] == "user" for s in all_steps) == source["users"]
    assert sum(s["source"] == "agent" for s in all_steps) == source["assistants"]
    assert sorted(calls(document), key=str) == sorted(source["tool_uses"], key=str)
    assert sorted(results(document), key=str) == sorted(source["tool_results"], key=str)
    by_id = {s["extra"].get("message_id"): s for s in all_steps if s["source"] == "agent"}
    for message_id, usage in source["usage"].items():
        metrics = by_id[message_id]["metrics"]
        cached = usage.get("cache_read_input_tokens", 0) + usage.get(
            "cache_creation_input_tokens", 0
        )
        assert metrics["prompt_tokens"] == usage["input_tokens"] + cached
        assert metrics["completion_tokens"] == usage["output_tokens"]
        assert metrics.get("cached_tokens", 0) == cached
    assert document["extra"]["source"]["format"] == "claude-code"
    session = next(line["sessionId"] for line in _lines(sample) if "sessionId" in line)
    assert document["session_id"] == session
    assert all("uuid" in s["extra"] for s in all_steps)


def test_task_subagents_and_sidechains_are_embedded_and_referenced(home: Path) -> None:
    """Subagent files and inline sidechains become embedded trajectories, each referenced from
    the result of the Agent/Task call that started it."""
    for sample, expected in (
        (SHOWCASE, {"agent-showcol1", "agent-showcol2"}),
        (CLAUDE / "daaain-sidechain_integrated.jsonl", {"agent-e1c84ba5"}),
    ):
        (document,) = written(run_import(sample, home=home))
        children = {t["trajectory_id"] for t in trajectories(document)} - {
            document["trajectory_id"]
        }
        assert children == expected
        refs = {
            (r["source_call_id"], ref["trajectory_id"])
            for s in document["steps"]
            for r in (s.get("observation") or {}).get("results") or []
            for ref in r.get("subagent_trajectory_ref") or []
        }
        assert {ref for _, ref in refs} == expected
        delegating = {c[0] for c in calls(document) if c[1] in ("Agent", "Task")}
        assert {call for call, _ in refs} == delegating


def test_thinking_becomes_reasoning_content(tmp_path: Path, home: Path) -> None:
    """A thinking block (the public sample with one added, in the Messages API's shape) is the
    agent step's reasoning_content, apart from its text."""
    lines = (CLAUDE / "simonw-sample_session.jsonl").read_text().splitlines()
    reply = json.loads(lines[-1])
    reply["message"]["content"].insert(0, {"type": "thinking", "thinking": "Say it is done."})
    lines[-1] = json.dumps(reply)
    sample = tmp_path / "thinking.jsonl"
    sample.write_text("\n".join(lines) + "\n")
    (document,) = written(run_import(sample, home=home))
    last = document["steps"][-1]
    assert last["reasoning_content"] == "Say it is done."
    assert last["message"] == "Done! The hello function is ready."
    check_valid(document)


def test_planted_secret_is_redacted(tmp_path: Path, home: Path) -> None:
    """A secret in a user message and a credential argument never reach the ATIF file."""
    token = "sk-proj-" + "Zq8vN3xR7tK2mW9pL4sB6yH1cF5gJ0dA"
    lines = (CLAUDE / "simonw-sample_session.jsonl").read_text().splitlines()
    user = json.loads(lines[1])
    user["message"]["content"] = f"Use my key {token} please"
    call = json.loads(lines[2])
    call["message"]["content"][1]["input"]["api_key"] = "hunter2-horse-battery"
    lines[1], lines[2] = json.dumps(user), json.dumps(call)
    sample = tmp_path / "secret.jsonl"
    sample.write_text("\n".join(lines) + "\n")
    proc = run_import(sample, home=home)
    text = Path(proc.stdout.strip()).read_text()
    assert token not in text and "hunter2-horse-battery" not in text
    assert "<redacted>" in text
    check_valid(json.loads(text))


def test_reimport_replaces_the_session(tmp_path: Path, home: Path) -> None:
    """Importing the same session twice leaves one file, holding the newer content."""
    sample = tmp_path / "s.jsonl"
    shutil.copy(CLAUDE / "simonw-sample_session.jsonl", sample)
    first = run_import(sample, home=home)
    with sample.open("a") as handle:
        handle.write(
            json.dumps(
                {
                    "type": "user",
                    "timestamp": "2025-12-24T10:02:00.000Z",
                    "uuid": "msg-008",
                    "sessionId": "test-session-id",
                    "message": {"role": "user", "content": "Thanks"},
                }
            )
            + "\n"
        )
    second = run_import(sample, home=home)
    assert first.stdout == second.stdout
    files = list((home / "imported").iterdir())
    assert [f.name for f in files] == ["import-claude-code-test-session-id.json"]
    assert json.loads(files[0].read_text())["steps"][-1]["message"] == "Thanks"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("{not json", "line: not JSON"),
        ('{"type": "assistant", "uuid": "x"}', "message: missing or not an object"),
        (
            '{"type": "assistant", "message": {"id": "m", "content": '
            '[{"type": "tool_use", "name": "Bash", "input": {}}]}}',
            "message.content[0].id: missing",
        ),
    ],
)
def test_broken_line_is_one_error_naming_file_line_and_field(
    tmp_path: Path, home: Path, line: str, field: str
) -> None:
    """A broken record: exit 2, one error line with file:line: field, and what an earlier
    import wrote stays as it was."""
    good = run_import(CLAUDE / "simonw-sample_session.jsonl", home=home)
    before = Path(good.stdout.strip()).read_bytes()
    lines = (CLAUDE / "simonw-sample_session.jsonl").read_text().splitlines()
    lines.insert(3, line)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    proc = run_import(broken, home=home)
    assert proc.returncode == 2
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1
    assert errors[0].startswith(f"error: {broken}:4: {field}")
    assert Path(good.stdout.strip()).read_bytes() == before
    assert [p.name for p in (home / "imported").iterdir()] == [Path(good.stdout.strip()).name]
