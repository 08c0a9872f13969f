"""Trajectory commands take the files users have lying around: skip, convert or say so in a line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .support import HERMES_ATIF, HERMES_ATOF, invoke


def _folder(tmp_path: Path) -> Path:
    """A folder like the demo's --keep one: a trajectory, a session transcript, OTel spans."""
    folder = tmp_path / "keep"
    (folder / "sessions").mkdir(parents=True)
    shutil.copy(HERMES_ATIF, folder / "session.atif.json")
    transcript = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    (folder / "sessions" / "20261127_000000_abcdef.jsonl").write_text(
        "".join(json.dumps(m) + "\n" for m in transcript), encoding="utf-8"
    )
    (folder / "spans.jsonl").write_text('{"name": "chat", "trace_id": "ab"}\n', encoding="utf-8")
    (folder / "config.json").write_text('{"model": "x"}', encoding="utf-8")
    return folder


def test_view_of_a_folder_skips_what_is_not_a_trajectory(tmp_path: Path) -> None:
    """`view DIR` draws the trajectory and warns once per other file; exit 0."""
    folder = _folder(tmp_path)
    page = tmp_path / "page.html"
    result = invoke("view", folder, "-o", page, home=tmp_path / "home")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{page}\n" and page.stat().st_size > 0
    skipped = [line for line in result.stderr.splitlines() if line.startswith("warning: skipped")]
    assert len(skipped) == 3, result.stderr
    for name in ("20261127_000000_abcdef.jsonl", "spans.jsonl", "config.json"):
        assert sum(name in line for line in skipped) == 1, (name, skipped)
    assert "error" not in result.stderr


def test_view_of_a_named_non_trajectory_is_an_error(tmp_path: Path) -> None:
    """A file named on the command line must be a trajectory: one error line, exit 2."""
    folder = _folder(tmp_path)
    result = invoke("view", folder / "spans.jsonl", home=tmp_path / "home")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert "spans.jsonl" in result.stderr


def test_view_of_a_folder_without_trajectories_is_an_error(tmp_path: Path) -> None:
    """A folder where nothing is a trajectory: the warnings, then one error line, exit 2."""
    folder = _folder(tmp_path)
    (folder / "session.atif.json").unlink()
    result = invoke("view", folder, "-o", tmp_path / "p.html", home=tmp_path / "home")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith("error: ")
    assert "no trajectory found" in result.stderr
    assert not (tmp_path / "p.html").exists()


def test_diff_and_export_read_atof_in_memory(tmp_path: Path) -> None:
    """`diff` and `export sft` take an ATOF event file as they take its ATIF conversion."""
    same = invoke("diff", HERMES_ATOF, HERMES_ATOF, home=tmp_path / "home")
    assert (same.exit_code, same.stdout) == (0, "same\n"), same.stderr
    out = tmp_path / "sft.jsonl"
    exported = invoke("export", "sft", HERMES_ATOF, "-o", out, home=tmp_path / "home")
    assert exported.exit_code == 0, exported.stderr
    (sample,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sample["messages"][-1]["role"] == "assistant"
    converted = tmp_path / "converted"
    assert invoke("atif", "convert", HERMES_ATOF, "-o", converted, home=tmp_path).exit_code == 0
    (atif,) = converted.glob("*.json")
    against = invoke("diff", HERMES_ATOF, atif, home=tmp_path / "home")
    assert (against.exit_code, against.stdout) == (0, "same\n"), against.stdout


def test_replay_reads_atof(tmp_path: Path) -> None:
    """`replay` given ATOF events runs the session (no "invalid JSON" complaint)."""
    result = invoke("replay", HERMES_ATOF, "-o", tmp_path / "new.json", home=tmp_path / "home")
    assert result.exit_code in (0, 1), result.stderr  # reproduced or diverged: it ran
    assert (tmp_path / "new.json").is_file()
    assert "error:" not in result.stderr


def test_atof_events_that_are_no_trajectory_say_so(tmp_path: Path) -> None:
    """A JSONL file that holds no ATOF scope (a transcript) given to diff is one error line."""
    transcript = _folder(tmp_path) / "sessions" / "20261127_000000_abcdef.jsonl"
    result = invoke("diff", transcript, HERMES_ATIF, home=tmp_path / "home")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not a trajectory" in result.stderr


@pytest.mark.parametrize("compact", [False, True], ids=["indented", "one-line"])
def test_atof_validate_on_an_atif_file_says_so_in_one_line(tmp_path: Path, compact: bool) -> None:
    """`atof validate` given an ATIF trajectory prints one line naming the right command."""
    document = json.loads(HERMES_ATIF.read_text(encoding="utf-8"))
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(document, indent=None if compact else 2), encoding="utf-8")
    result = invoke("atof", "validate", path, home=tmp_path / "home")
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and "wayline atif validate" in line


def test_atif_commands_on_atof_say_so_in_one_line(tmp_path: Path) -> None:
    """`atif validate` on ATOF names `atof validate`; `atif convert` on ATIF has nothing to do."""
    validate = invoke("atif", "validate", HERMES_ATOF, home=tmp_path / "home")
    assert validate.exit_code == 2
    (line,) = validate.stderr.splitlines()
    assert "wayline atof validate" in line and "wayline atif convert" in line
    convert = invoke("atif", "convert", HERMES_ATIF, "-o", tmp_path / "o", home=tmp_path)
    assert convert.exit_code == 2
    (line,) = convert.stderr.splitlines()
    assert "an ATIF trajectory" in line and "nothing to convert" in line


def test_export_of_a_folder_takes_each_session_once(tmp_path: Path) -> None:
    """`export sft DIR` searches subfolders, skips non-trajectories with a warning, and takes a
    session recorded both as ATIF and as ATOF once (from the ATIF file)."""
    folder = _folder(tmp_path)
    (folder / "atof").mkdir()
    shutil.copy(HERMES_ATOF, folder / "atof" / "events.jsonl")
    out = tmp_path / "sft.jsonl"
    result = invoke("export", "sft", folder, "-o", out, home=tmp_path / "home")
    assert result.exit_code == 0, result.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    assert "events.jsonl: session 20261125_213220_495c3a already read from" in result.stderr
    skipped = [line for line in result.stderr.splitlines() if line.startswith("warning: skipped")]
    assert len(skipped) == 3, result.stderr


def test_atof_with_two_sessions_names_the_converter(tmp_path: Path) -> None:
    """ATOF events of two sessions: `diff` says in one line to run `wayline atif convert`;
    `export sft` takes both."""
    other = Path(__file__).resolve().parents[1] / "relay" / "atif" / "data"
    both = tmp_path / "both.jsonl"
    both.write_bytes(HERMES_ATOF.read_bytes() + (other / "relay_plugin.atof.jsonl").read_bytes())
    result = invoke("diff", both, both, home=tmp_path / "home")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "hold 2 trajectories" in line and f"wayline atif convert {both}" in line
    out = tmp_path / "sft.jsonl"
    exported = invoke("export", "sft", both, "-o", out, home=tmp_path / "home")
    assert exported.exit_code == 0, exported.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
