"""``wayline sessions`` as a real subprocess: tables for people, JSON for scripts, one error
line and exit 2 for bad input, and the index where the docs say."""

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
from store_support import Recorded, run_wayline, wayline_env

from wayline.store import SessionStore

LIST_FIELDS = {
    "session_id",
    "agent",
    "model",
    "started_at",
    "duration_ms",
    "status",
    "steps",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "errors",
    "path",
}
SEARCH_FIELDS = {"session_id", "step", "field", "snippet"}
STATS_FIELDS = {
    "key",
    "sessions",
    "steps",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "errors",
    "p50_ms",
    "p95_ms",
}


@pytest.fixture
def home(recorded: Recorded, tmp_path: Path) -> Path:
    """A copy of the recorded home (commands write their index into it)."""
    return Path(shutil.copytree(recorded.home, tmp_path / "home"))


def _json(home: Path, cwd: Path, *args: str | Path) -> Any:
    proc = run_wayline("sessions", *args, "--json", home=home, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_list_json_is_the_stores_rows_and_the_index_sits_in_the_home(
    recorded: Recorded, home: Path, tmp_path: Path
) -> None:
    """``list --json`` prints the store's rows with every documented field; the index it made
    is ``$WAYLINE_HOME/index.sqlite``, 0600."""
    rows = _json(home, tmp_path, "list")
    assert isinstance(rows, list) and len(rows) == 7
    assert all(set(row) >= LIST_FIELDS for row in rows)
    with SessionStore.open([], recorded.home, index=tmp_path / "api.sqlite") as store:
        store.update()
        want = store.sessions(limit=None)
    for row in want:
        row["path"] = row["path"].replace(str(recorded.home), str(home))
    assert rows == want
    index = home / "index.sqlite"
    assert stat.S_IMODE(os.stat(index).st_mode) == 0o600


def test_list_table_and_filters(recorded: Recorded, home: Path, tmp_path: Path) -> None:
    """The table shows every session id; a filter leaves only what it selects."""
    proc = run_wayline("sessions", "list", home=home, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for session_id in recorded.ids.values():
        assert session_id in proc.stdout
    failed = run_wayline("sessions", "list", "--status", "failed", home=home, cwd=tmp_path)
    assert failed.returncode == 0, failed.stderr
    shown = {i for i in recorded.ids.values() if i in failed.stdout}
    assert shown == {recorded.ids["failed"]}
    rows = _json(home, tmp_path, "list", "--tool", "add", "--errors")
    assert [row["session_id"] for row in rows] == [recorded.ids["tools"]]


def test_search_stats_and_show(recorded: Recorded, home: Path, tmp_path: Path) -> None:
    """``search`` finds CJK text at its step, ``stats --by day`` totals every session, and
    ``show`` prints the summary and one line per step, a failed tool marked."""
    hits = _json(home, tmp_path, "search", "答案")
    assert isinstance(hits, list) and len(hits) == 1
    assert set(hits[0]) >= SEARCH_FIELDS
    assert (hits[0]["session_id"], hits[0]["step"]) == (recorded.ids["tools"], 3)
    rows = _json(home, tmp_path, "stats", "--by", "day")
    assert isinstance(rows, list) and all(set(row) == STATS_FIELDS for row in rows)
    assert sum(row["sessions"] for row in rows) == 7
    table = run_wayline("sessions", "stats", home=home, cwd=tmp_path)
    assert table.returncode == 0 and "total" in table.stdout
    shown = run_wayline("sessions", "show", recorded.ids["tools"], home=home, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert recorded.ids["tools"] in shown.stdout
    assert "boom ✗" in shown.stdout
    assert "3 — 答案是三" in shown.stdout
    found = _json(home, tmp_path, "show", recorded.ids["child"])
    assert isinstance(found, dict) and len(found["steps"]) == found["session"]["steps"] == 3


def test_index_command_and_a_folders_own_index(recorded: Recorded, tmp_path: Path) -> None:
    """``index FOLDER`` builds ``FOLDER/index.sqlite`` and says what it read; ``--rebuild``
    reads every file again; a second run reads nothing."""
    folder = Path(shutil.copytree(recorded.home / "relay", tmp_path / "recordings"))
    empty = tmp_path / "empty-home"
    first = run_wayline("sessions", "index", folder, home=empty, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (folder / "index.sqlite").exists() and not empty.exists()
    files = len(recorded.atif_files) + len(recorded.atof_files)
    assert f"{files} files in scope, {files} read, 0 gone" in first.stdout
    again = run_wayline("sessions", "index", folder, home=empty, cwd=tmp_path)
    assert f"{files} read" not in again.stdout and ", 0 read," in again.stdout
    rebuilt = run_wayline("sessions", "index", folder, "--rebuild", home=empty, cwd=tmp_path)
    assert f"{files} files in scope, {files} read" in rebuilt.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["list", "--since", "last tuesday"], "--since: 'last tuesday' is not a time"),
        (["list", "--min-cost", "cheap"], "--min-cost: 'cheap' is not a number"),
        (["list", "--status", "done"], "'done' is not one of"),
        (["list", "no/such/folder"], "no/such/folder: no such file or directory"),
        (["stats", "--by", "week"], "'week' is not one of"),
        (["search", "  "], "TEXT: empty"),
        (["show", "nope"], "nope: no such session"),
        (["show", "2026"], "'2026' starts several session ids"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(
    home: Path, tmp_path: Path, args: list[str], says: str
) -> None:
    """Each bad flag value, path or id is one ``error:`` line naming it, exit status 2."""
    proc = run_wayline("sessions", *args, home=home, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and says in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_store_reads_recordings_only(tmp_path: Path) -> None:
    """Importing the store and its command loads neither the runtime, the Python API nor the
    plugins (``wayline`` itself loads the host's light modules)."""
    code = (
        "import sys, wayline.store, wayline.cli.sessions_cmd\n"
        "bad = [m for m in sys.modules if m.startswith(('wayline.runtime', 'wayline.plugins',"
        " 'wayline.api'))]\n"
        "print(bad)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=wayline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout.strip() == "[]"
