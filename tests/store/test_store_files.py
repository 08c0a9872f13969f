"""The index follows the files: deleted, rewritten and growing files, ATOF alone, foreign ATIF,
and the index itself deleted, rebuilt, damaged; it is private."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from store_support import Recorded, harbor_trajectory, wayline_env

from wayline.store import SessionStore

DATA = Path(__file__).resolve().parents[1] / "data"
SECRET = "sk-proj-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d"
COMPARED = ("status", "steps", "tool_calls", "input_tokens", "output_tokens", "cost_usd", "errors")


def _rows(store: SessionStore) -> dict[str, dict[str, Any]]:
    store.update()
    return {row["session_id"]: row for row in store.sessions(limit=None)}


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def test_a_deleted_or_rewritten_file_shows_on_the_next_update(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Deleting an ATIF file drops its session; rewriting one replaces what its session says
    and what search finds in it; the rest is left as it was."""
    folder = _copy(recorded.home / "relay" / "atif", tmp_path / "atif")
    gone, changed = recorded.ids["failed"], recorded.ids["chat"]
    with SessionStore.open([folder], tmp_path) as store:
        before = _rows(store)
        assert store.search("scratch removed")
        (folder / f"wayline-atif-{gone}.json").unlink()
        path = folder / f"wayline-atif-{changed}.json"
        document = json.loads(path.read_text(encoding="utf-8"))
        document["steps"][-1]["message"] = "Swept the attic instead."
        document["steps"] = document["steps"][:1] + document["steps"][-1:]
        path.write_text(json.dumps(document), encoding="utf-8")
        after = _rows(store)
        assert set(after) == set(before) - {gone}
        assert after[changed]["steps"] == 2
        assert after[changed]["tool_calls"] == 0
        assert store.search("scratch removed") == []
        assert [r["session_id"] for r in store.search("attic")] == [changed]
        for session_id in set(after) - {changed}:
            assert after[session_id] == before[session_id]


def test_atof_alone_gives_the_same_sessions_as_atif(recorded: Recorded, tmp_path: Path) -> None:
    """A folder with only the ATOF events lists every session with the same status, steps,
    tools, tokens, cost and errors as the ATIF files give (converted as `atif convert` would),
    and shows the same step lines."""
    atof = _copy(recorded.home / "relay" / "atof", tmp_path / "atof")
    atif = recorded.home / "relay" / "atif"
    with (
        SessionStore.open([atof], tmp_path) as events,
        SessionStore.open([atif], tmp_path / "x") as files,
    ):
        from_events, from_files = _rows(events), _rows(files)
        shown_events = events.session(recorded.ids["tools"])
        shown_files = files.session(recorded.ids["tools"])
    assert set(from_events) == set(from_files)
    for session_id, row in from_files.items():
        assert {k: from_events[session_id][k] for k in COMPARED} == {k: row[k] for k in COMPARED}
        assert from_events[session_id]["path"].endswith(".jsonl")
    assert shown_events is not None and shown_files is not None
    assert shown_events["steps"] == shown_files["steps"]


def test_a_growing_atof_file_is_read_from_where_it_stopped(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Appending a recording's lines one at a time shows each session ``running`` while its
    turn is open, then with its final status; the index read piecewise equals one read whole,
    and a line still being written (no newline yet) waits for the next update."""
    (source,) = recorded.atof_files
    lines = source.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "live"
    folder.mkdir()
    target = folder / "events.jsonl"
    seen_running: set[str] = set()
    with SessionStore.open([folder], tmp_path) as store, target.open("ab") as out:
        for line in lines:
            out.write(line)
            out.flush()
            for session_id, row in _rows(store).items():
                if row["status"] == "running":
                    seen_running.add(session_id)
        out.write(b'{"kind": "scope", "uuid": "half')
        out.flush()
        piecewise = _rows(store)
        assert store.last_update is not None and store.last_update.warnings == []
    os.unlink(folder / "index.sqlite")
    with SessionStore.open([folder], tmp_path) as fresh:
        whole = _rows(fresh)
    assert piecewise == whole
    assert set(recorded.ids.values()) <= seen_running
    assert {row["status"] for row in whole.values()} >= {"completed", "failed", "max_turns"}
    assert "running" not in {row["status"] for row in whole.values()}


def test_a_rewritten_atof_file_is_read_again_from_the_start(
    recorded: Recorded, tmp_path: Path
) -> None:
    """An ATOF file replaced by a shorter one (a writer in overwrite mode) is read again
    whole: sessions only the old file had are gone."""
    (source,) = recorded.atof_files
    lines = source.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "rewritten"
    folder.mkdir()
    target = folder / "events.jsonl"
    target.write_bytes(b"".join(lines))
    with SessionStore.open([folder], tmp_path) as store:
        assert len(_rows(store)) == 7
        first_root_end = next(
            i for i, line in enumerate(lines) if b'"hermes-session-' in line and b'"end"' in line
        )
        target.write_bytes(b"".join(lines[: first_root_end + 1]))
        assert set(_rows(store)) == {recorded.ids["tools"]}


def test_deleting_or_rebuilding_the_index_loses_nothing(recorded: Recorded, tmp_path: Path) -> None:
    """The index is a cache: deleted, rebuilt or damaged, it is made again with the same rows."""
    index = tmp_path / "index.sqlite"
    with SessionStore.open([], recorded.home, index=index) as store:
        first = _rows(store)
        rebuilt = store.rebuild()
        assert rebuilt.indexed == len(recorded.atif_files) + len(recorded.atof_files)
        assert _rows(store) == first
    index.unlink()
    with SessionStore.open([], recorded.home, index=index) as store:
        assert _rows(store) == first
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.write_bytes(b"this is not an SQLite database, and it is long enough to look" * 64)
    with SessionStore.open([], recorded.home, index=index) as store:
        assert _rows(store) == first


def test_the_index_is_private(recorded: Recorded, tmp_path: Path) -> None:
    """A new index is created 0600 (its WAL too) in a directory created 0700."""
    index = tmp_path / "made" / "here" / "index.sqlite"
    with SessionStore.open([], recorded.home, index=index) as store:
        store.update()
        assert stat.S_IMODE(os.stat(index).st_mode) == 0o600
        wal = Path(f"{index}-wal")
        assert wal.exists() and stat.S_IMODE(os.stat(wal).st_mode) == 0o600
    for folder in (tmp_path / "made", tmp_path / "made" / "here"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_foreign_atif_hermes_and_harbor(tmp_path: Path) -> None:
    """Hermes + Relay's ATIF and its ATOF are one session each (parent and child); a Harbor
    file gives its tokens, cached tokens and cost; text of a file wayline did not write is
    redacted before it is indexed, so its secret is not found."""
    folder = tmp_path / "foreign"
    folder.mkdir()
    for name in ("hermes_relay.atif.json", "hermes_relay.atof.jsonl"):
        shutil.copy(DATA / name, folder / name)
    (folder / "harbor.json").write_text(json.dumps(harbor_trajectory(SECRET)), encoding="utf-8")
    with SessionStore.open([folder], tmp_path) as store:
        rows = _rows(store)
        assert set(rows) == {"20261125_213220_495c3a", "20261125_213221_4003b2", "harbor-run-1"}
        hermes = rows["20261125_213220_495c3a"]
        assert hermes["path"].endswith("hermes_relay.atif.json")
        assert (hermes["agent"], hermes["status"], hermes["steps"]) == (
            "Hermes Agent",
            "completed",
            4,
        )
        assert rows["20261125_213221_4003b2"]["parent_id"] == "20261125_213220_495c3a"
        harbor = rows["harbor-run-1"]
        assert (harbor["input_tokens"], harbor["output_tokens"]) == (230, 25)
        assert (harbor["cached_tokens"], harbor["cost_usd"]) == (50, 0.015)
        assert (harbor["status"], harbor["steps"], harbor["tools"]) == ("completed", 4, {"bash": 1})
        assert store.search(SECRET[:20]) == []
        found = store.search("API_TOKEN")
        assert [(r["step"], r["field"]) for r in found] == [(3, "result:bash")]
        assert SECRET not in json.dumps(found) and "<redacted>" in found[0]["snippet"]
        assert [(r["step"], r["field"]) for r in store.search("cat works")] == [(3, "reasoning")]
        shown = store.session("harbor-run-1")
        assert shown is not None and SECRET not in json.dumps(shown)


def test_files_that_are_no_trajectory_are_said_once(tmp_path: Path) -> None:
    """In a folder, a file that is not a trajectory is one warning when first seen, then
    skipped quietly until it changes; a broken ATIF file names what is wrong."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "notes.json").write_text('{"title": "not a trajectory"}', encoding="utf-8")
    (folder / "broken.json").write_text('{"steps": [{"source": "robot"}]}', encoding="utf-8")
    (folder / "log.jsonl").write_text('{"level": "info", "msg": "hi"}\n', encoding="utf-8")
    with SessionStore.open([folder], tmp_path) as store:
        first = store.update()
        assert len(first.warnings) == 3
        assert any("broken.json" in w and "steps[0].source" in w for w in first.warnings)
        assert store.update().warnings == []
        (folder / "notes.json").write_text('{"title": "still not"}', encoding="utf-8")
        again = store.update().warnings
        assert len(again) == 1 and "notes.json" in again[0]
        assert store.sessions() == []


@pytest.mark.parametrize("pick", ["file", "subfolder"])
def test_a_scope_narrower_than_the_index_lists_only_its_files(
    recorded: Recorded, tmp_path: Path, pick: str
) -> None:
    """Given one file (or a subfolder) of an indexed folder, only its sessions are listed."""
    folder = _copy(recorded.home / "relay" / "atif", tmp_path / "all" / "atif")
    (tmp_path / "all" / "other").mkdir()
    shutil.copy(DATA / "hermes_relay.atif.json", tmp_path / "all" / "other" / "h.json")
    index = tmp_path / "index.sqlite"
    with SessionStore.open([tmp_path / "all"], tmp_path, index=index) as store:
        assert len(_rows(store)) == 9
    path = folder / f"wayline-atif-{recorded.ids['delegate']}.json"
    narrow = path if pick == "file" else tmp_path / "all" / "other"
    with SessionStore.open([narrow], tmp_path, index=index) as store:
        rows = _rows(store)
        assert store.last_update is not None and store.last_update.indexed == 0
    if pick == "file":
        assert set(rows) == {recorded.ids["delegate"], recorded.ids["child"]}
    else:
        assert set(rows) == {"20261125_213220_495c3a", "20261125_213221_4003b2"}


def test_two_commands_indexing_one_folder_at_once_agree(recorded: Recorded, tmp_path: Path) -> None:
    """Two processes that index the same folder into one index at the same time both succeed
    (one waits for the other's writes) and leave each session once."""
    folder = _copy(recorded.home / "relay", tmp_path / "relay")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "wayline", "sessions", "list", str(folder), "--json"],
            env=wayline_env(tmp_path / "home"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err for _, err in outputs]
    first, second = (json.loads(out) for out, _ in outputs)
    assert first == second
    assert sorted(row["session_id"] for row in first) == sorted(recorded.ids.values())


def test_a_home_without_an_atif_file_lists_the_session_from_its_events(
    recorded: Recorded, tmp_path: Path
) -> None:
    """In a home, a finished session is shown from its ATIF file; when that file is deleted,
    the next update shows it from its ATOF events with the same figures, and a scope holding
    only the ATOF file (on the same index) lists every session from the events."""
    home = _copy(recorded.home, tmp_path / "home")
    index = tmp_path / "index.sqlite"
    gone = recorded.ids["max_turns"]
    with SessionStore.open([], home, index=index) as store:
        before = _rows(store)
        assert all(row["path"].endswith(".json") for row in before.values())
        (home / "relay" / "atif" / f"wayline-atif-{gone}.json").unlink()
        after = _rows(store)
    assert set(after) == set(before)
    assert after[gone]["path"].endswith(".jsonl")
    assert {k: after[gone][k] for k in COMPARED} == {k: before[gone][k] for k in COMPARED}
    (events,) = (home / "relay" / "atof").glob("*.jsonl")
    with SessionStore.open([events], home, index=index) as narrow:
        rows = _rows(narrow)
    assert set(rows) == set(before)
    assert all(row["path"] == str(events) for row in rows.values())
    for session_id, row in rows.items():
        assert {k: row[k] for k in COMPARED} == {k: before[session_id][k] for k in COMPARED}
