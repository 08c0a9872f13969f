"""The store over real recordings: listed, filtered, searched and totalled exactly.

Expected values are read from the ATIF files the relay plugin wrote (each trajectory's steps
and ``final_metrics``), not from the index.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from store_support import PRICED, PRICED_TOO, UNPRICED, Recorded, trajectories

from wayline.store import FilterError, SessionFilter, SessionStore

STATUS = {
    "tools": "completed",
    "delegate": "completed",
    "child": "completed",
    "failed": "failed",
    "max_turns": "max_turns",
    "cancelled": "interrupted",
    "chat": "completed",
}
ERRORS = {"tools": 1, "failed": 1}


def _store(recorded: Recorded, tmp_path: Path) -> SessionStore:
    store = SessionStore.open([], recorded.home, index=tmp_path / "index.sqlite")
    store.update()
    return store


def _expected(recorded: Recorded) -> dict[str, dict[str, Any]]:
    """Per session id, what its ATIF trajectory says."""
    out: dict[str, dict[str, Any]] = {}
    for path in recorded.atif_files:
        document = json.loads(path.read_text(encoding="utf-8"))
        for traj in trajectories(document):
            totals = traj["final_metrics"]
            calls = Counter(
                call["function_name"]
                for step in traj["steps"]
                for call in step.get("tool_calls", [])
            )
            out[traj["session_id"]] = {
                "steps": len(traj["steps"]),
                "input_tokens": totals.get("total_prompt_tokens"),
                "output_tokens": totals.get("total_completion_tokens"),
                "cost_usd": totals.get("total_cost_usd"),
                "tool_calls": sum(calls.values()),
                "tools": dict(calls),
                "model": traj["agent"]["model_name"],
                "agent": traj["agent"]["name"],
                "path": str(path),
            }
    return out


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["session_id"]: row for row in rows}


def _ids(recorded: Recorded, *names: str) -> set[str]:
    return {recorded.ids[name] for name in names}


def test_every_session_is_listed_once_with_what_its_file_says(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Each recorded session (the delegated child too) is one row, although its ATOF events
    and its ATIF file both hold it, with the steps, tools, tokens, cost, model, file, status
    and errors of its trajectory."""
    expected = _expected(recorded)
    with _store(recorded, tmp_path) as store:
        rows = store.sessions(limit=None)
    assert len(rows) == len(expected) == 7
    by_id = _by_id(rows)
    for name, session_id in recorded.ids.items():
        row, want = by_id[session_id], expected[session_id]
        for key, value in want.items():
            assert row[key] == value, (name, key)
        assert row["status"] == STATUS[name], name
        assert row["errors"] == ERRORS.get(name, 0), name
        assert row["duration_ms"] is not None and row["duration_ms"] >= 0
        assert row["started_at"].endswith("Z")
    assert by_id[recorded.ids["child"]]["parent_id"] == recorded.ids["delegate"]
    assert by_id[recorded.ids["delegate"]]["children"] == [recorded.ids["child"]]
    assert by_id[recorded.ids["failed"]]["cost_usd"] is None  # unpriced: unknown, never $0
    assert by_id[recorded.ids["tools"]]["cost_usd"] > 0
    started = [row["started_at"] for row in rows]
    assert started == sorted(started, reverse=True)


@pytest.mark.parametrize(
    ("params", "names"),
    [
        ({"status": "failed"}, {"failed"}),
        ({"status": "interrupted"}, {"cancelled"}),
        ({"status": "max_turns"}, {"max_turns"}),
        ({"model": PRICED_TOO}, {"delegate", "child"}),
        ({"model": "gpt-4o*"}, {"tools", "delegate", "child", "max_turns", "cancelled", "chat"}),
        ({"model": UNPRICED}, {"failed"}),
        ({"tool": "boom"}, {"tools"}),
        ({"tool": "add"}, {"tools", "child", "max_turns"}),
        ({"tool": "terminal", "model": PRICED}, {"chat"}),
        ({"errors": True}, {"tools", "failed"}),
        ({"errors": "true", "status": "completed"}, {"tools"}),
    ],
)
def test_filters_select_exactly(
    recorded: Recorded, tmp_path: Path, params: dict[str, Any], names: set[str]
) -> None:
    """Status, model (exact or a glob), tool and errors filters keep exactly the sessions
    they name."""
    with _store(recorded, tmp_path) as store:
        rows = store.sessions(SessionFilter.parse(params), limit=None)
    assert {row["session_id"] for row in rows} == _ids(recorded, *names)


def test_cost_and_time_filters(recorded: Recorded, tmp_path: Path) -> None:
    """``min_cost`` keeps the sessions that cost at least that much (unknown costs never);
    ``since`` includes its instant and ``until`` excludes it."""
    with _store(recorded, tmp_path) as store:
        every = store.sessions(limit=None)
        by_id = _by_id(every)
        threshold = by_id[recorded.ids["child"]]["cost_usd"]
        costly = store.sessions(SessionFilter.parse({"min_cost": str(threshold)}), limit=None)
        want = {r["session_id"] for r in every if (r["cost_usd"] or -1) >= threshold}
        assert {r["session_id"] for r in costly} == want
        assert recorded.ids["child"] in want and recorded.ids["failed"] not in want
        pivot = by_id[recorded.ids["max_turns"]]["started_at"]
        since = store.sessions(SessionFilter.parse({"since": pivot}), limit=None)
        until = store.sessions(SessionFilter.parse({"until": pivot}), limit=None)
    assert {r["session_id"] for r in since} == {
        r["session_id"] for r in every if r["started_at"] >= pivot
    }
    assert {r["session_id"] for r in until} == {
        r["session_id"] for r in every if r["started_at"] < pivot
    }
    assert recorded.ids["max_turns"] in {r["session_id"] for r in since}
    assert len(since) + len(until) == len(every)


def test_limit_keeps_the_newest(recorded: Recorded, tmp_path: Path) -> None:
    """``limit`` keeps that many rows, the newest first."""
    with _store(recorded, tmp_path) as store:
        assert store.sessions(limit=3) == store.sessions(limit=None)[:3]


@pytest.mark.parametrize(
    "params",
    [
        {"status": "done"},
        {"since": "yesterday-ish"},
        {"until": "2026-13-45"},
        {"min_cost": "cheap"},
        {"min_cost": "-1"},
        {"errors": "maybe"},
    ],
)
def test_bad_filter_values_name_their_parameter(params: dict[str, str]) -> None:
    """A filter value that cannot be used is a FilterError naming the parameter."""
    (name,) = params
    with pytest.raises(FilterError, match=rf"^{name}: "):
        SessionFilter.parse(params)


def _step_ids(recorded: Recorded, session_id: str) -> dict[int, Mapping[str, Any]]:
    for path in recorded.atif_files:
        for traj in trajectories(json.loads(path.read_text(encoding="utf-8"))):
            if traj["session_id"] == session_id:
                return {step["step_id"]: step for step in traj["steps"]}
    raise AssertionError(session_id)


@pytest.mark.parametrize(
    ("text", "name", "hits"),
    [
        ("答案是三", "tools", {(3, "agent")}),
        ("答案", "tools", {(3, "agent")}),  # two characters: below a trigram, found by reading
        ("ありがとう", "tools", {(3, "agent")}),
        ("مرحبا", "tools", {(1, "user")}),
        ("بالعالم", "child", {(3, "agent")}),
        ("KAPUT-MARKER", "tools", {(2, "args:boom"), (2, "result:boom")}),
        ("scratch removed", "chat", {(2, "args:terminal"), (2, "result:terminal")}),
        ("child task", "delegate", {(2, "args:delegate_task")}),
    ],
)
def test_search_finds_text_in_any_script_at_the_viewers_step(
    recorded: Recorded, tmp_path: Path, text: str, name: str, hits: set[tuple[int, str]]
) -> None:
    """Search finds Chinese, Japanese and Arabic text, ignores case, names the step as the
    viewer numbers it (the ATIF step_id) and the field, and marks the match in the snippet."""
    with _store(recorded, tmp_path) as store:
        rows = [r for r in store.search(text, limit=None) if r["session_id"] == recorded.ids[name]]
    assert {(r["step"], r["field"]) for r in rows} == hits
    steps = _step_ids(recorded, recorded.ids[name])
    for row in rows:
        assert row["step"] in steps
        assert text.lower() in row["snippet"].lower()
        assert "«" in row["snippet"] and "»" in row["snippet"]


def test_search_of_text_nowhere_finds_nothing(recorded: Recorded, tmp_path: Path) -> None:
    """Text no session holds gives no rows (the match is a substring, not a near miss)."""
    with _store(recorded, tmp_path) as store:
        assert store.search("答案是四") == []
        assert store.search("scratch remover") == []


def _metrics_sums(recorded: Recorded) -> dict[str, float]:
    sums: Counter[str] = Counter()
    for path in recorded.atif_files:
        for traj in trajectories(json.loads(path.read_text(encoding="utf-8"))):
            for key, value in traj["final_metrics"].items():
                sums[key] += value
    return dict(sums)


@pytest.mark.parametrize("by", ["model", "day", "status"])
def test_stats_totals_equal_the_sums_of_final_metrics(
    recorded: Recorded, tmp_path: Path, by: str
) -> None:
    """Grouped by model, day or status, the rows add up to the sums over every trajectory's
    ``final_metrics`` in the ATIF files (steps, prompt and completion tokens, cost)."""
    sums = _metrics_sums(recorded)
    with _store(recorded, tmp_path) as store:
        rows = store.stats(by)
    assert sum(r["sessions"] for r in rows) == 7
    assert sum(r["steps"] for r in rows) == sums["total_steps"]
    assert sum(r["input_tokens"] for r in rows) == sums["total_prompt_tokens"]
    assert sum(r["output_tokens"] for r in rows) == sums["total_completion_tokens"]
    cost = sum(r["cost_usd"] for r in rows if r["cost_usd"] is not None)
    assert cost == pytest.approx(sums["total_cost_usd"], rel=1e-12)
    assert sum(r["errors"] for r in rows) == 2


def _nearest_rank(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * p / 100)) - 1]


def test_stats_rows_per_key(recorded: Recorded, tmp_path: Path) -> None:
    """Each status row counts its sessions and their p50/p95 durations (nearest rank); each
    model row the sessions whose main model it is; each tool row the sessions that called it,
    its calls and its failed calls."""
    with _store(recorded, tmp_path) as store:
        sessions = store.sessions(limit=None)
        by_status = {r["key"]: r for r in store.stats("status")}
        by_model = {r["key"]: r for r in store.stats("model")}
        by_tool = {r["key"]: r for r in store.stats("tool")}
    assert {k: r["sessions"] for k, r in by_status.items()} == dict(Counter(STATUS.values()))
    done = [r["duration_ms"] for r in sessions if r["status"] == "completed"]
    assert by_status["completed"]["p50_ms"] == _nearest_rank(done, 50)
    assert by_status["completed"]["p95_ms"] == _nearest_rank(done, 95) == max(done)
    assert {k: r["sessions"] for k, r in by_model.items()} == {
        PRICED: 4,
        PRICED_TOO: 2,
        UNPRICED: 1,
    }
    assert by_model[UNPRICED]["cost_usd"] is None
    assert {k: (r["sessions"], r["calls"], r["errors"]) for k, r in by_tool.items()} == {
        "add": (3, 4, 0),
        "boom": (1, 1, 1),
        "delegate_task": (1, 1, 0),
        "terminal": (1, 1, 0),
    }


def test_show_gives_one_line_per_step(recorded: Recorded, tmp_path: Path) -> None:
    """``session`` returns the summary and one line per step of the file, with each step's
    tools (a failed one marked), model and tokens; a unique prefix finds the session too."""
    session_id = recorded.ids["tools"]
    steps = _step_ids(recorded, session_id)
    with _store(recorded, tmp_path) as store:
        found = store.session(session_id)
        by_prefix = store.session(session_id[:-2])
        assert store.session("no-such-session") is None
    assert found is not None and by_prefix == found
    assert found["session"]["session_id"] == session_id
    lines = found["steps"]
    assert [line["step"] for line in lines] == sorted(steps)
    assert [line["source"] for line in lines] == [steps[i]["source"] for i in sorted(steps)]
    assert lines[1]["tools"] == [
        {"name": "add", "error": False, "cancelled": False},
        {"name": "boom", "error": True, "cancelled": False},
    ]
    assert lines[1]["input_tokens"] == steps[2]["metrics"]["prompt_tokens"]
    assert lines[2]["text"].startswith("3 — 答案是三")
    assert lines[0]["at_ms"] is not None and lines[0]["at_ms"] >= 0


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        (None, "max_turns"),
        ({"reason": "interrupted", "completed": False, "interrupted": True}, "interrupted"),
        ({"reason": "api_error", "completed": False, "interrupted": False}, "failed"),
        ({"completed": True, "interrupted": False}, "completed"),
    ],
)
def test_the_outcome_a_turn_records_decides_its_status(
    recorded: Recorded, tmp_path: Path, outcome: dict[str, Any] | None, status: str
) -> None:
    """The ``extra.turn_outcome`` on the last turn's user step (the run's end mark) is the
    status; without it the steps tell (tools and no answer after them: ``max_turns``)."""
    source = recorded.home / "relay" / "atif" / f"wayline-atif-{recorded.ids['max_turns']}.json"
    document = json.loads(source.read_text(encoding="utf-8"))
    user = document["steps"][0]
    assert user["source"] == "user"
    user.setdefault("extra", {}).pop("turn_outcome", None)
    if outcome is not None:
        user["extra"]["turn_outcome"] = outcome
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "session.json").write_text(json.dumps(document), encoding="utf-8")
    with SessionStore.open([folder], tmp_path) as store:
        store.update()
        (row,) = store.sessions()
    assert row["status"] == status
