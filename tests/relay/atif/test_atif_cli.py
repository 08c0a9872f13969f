"""``wayline atif`` / ``wayline atof`` as real subprocesses: outputs, messages, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from atif_events import Atof, hermes_delegation

from wayline.relay.atif import validate_atif_file

_SCRIPT = Path(sys.executable).with_name("wayline")
WAYLINE = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "wayline"]


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the wayline CLI and capture its output."""
    return subprocess.run(
        [*WAYLINE, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr
    assert "Traceback" not in result.stdout


def test_convert_writes_files_and_skips_a_torn_last_line(atof: Atof, tmp_path: Path) -> None:
    """A torn last line is reported as a warning; the complete trajectory is still written."""
    ids = hermes_delegation(atof)
    events = atof.write(tmp_path / "events.jsonl")
    line_count = len(atof.events)
    with events.open("a", encoding="utf-8") as handle:
        handle.write('{"atof_version":"0.1","kind":"sco')
    result = run("atif", "convert", events, "-o", "out", "--subagents", "all", cwd=tmp_path)
    _no_traceback(result)
    assert result.returncode == 0, result.stderr
    written = [tmp_path / line for line in result.stdout.splitlines()]
    # The session names its trajectory ("P"): the file keeps that id, not the scope UUID.
    assert ids["parent"] != "P"
    assert [p.name for p in written] == ["trajectory-P.json", "trajectory-C.json"]
    assert f"events.jsonl:{line_count + 1}: skipped incomplete last line" in result.stderr
    for path in written:
        assert validate_atif_file(path) == []
    parent = json.loads(written[0].read_text(encoding="utf-8"))
    assert parent["subagent_trajectories"][0]["trajectory_id"] == "C"


def test_convert_rejects_a_malformed_middle_line(atof: Atof, tmp_path: Path) -> None:
    """A bad line before the last is an error naming file and line, exit 2, no traceback."""
    agent = atof.start("a", "agent")
    atof.llm(agent, [{"role": "user", "content": "x"}], "y")
    atof.end(agent)
    events = atof.write(tmp_path / "events.jsonl")
    lines = events.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(2, "not json\n")
    events.write_text("".join(lines), encoding="utf-8")
    result = run("atif", "convert", events, "-o", "out", cwd=tmp_path)
    _no_traceback(result)
    assert result.returncode == 2
    assert "events.jsonl:3: invalid JSON" in result.stderr


def test_convert_unreadable_input_and_bad_template(tmp_path: Path) -> None:
    """A missing input exits 2 with one line; a bad template is a usage error (exit 2)."""
    missing = run("atif", "convert", "missing.jsonl", cwd=tmp_path)
    _no_traceback(missing)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "error: missing.jsonl: cannot read: No such file or directory"
    (tmp_path / "e.jsonl").write_text("", encoding="utf-8")
    template = run("atif", "convert", "e.jsonl", "--filename-template", "{x}.json", cwd=tmp_path)
    _no_traceback(template)
    assert template.returncode == 2
    assert "--filename-template" in template.stderr


def test_convert_with_no_steps_exits_1(atof: Atof, tmp_path: Path) -> None:
    """A file whose events hold no LLM or tool work produces no file and exits 1."""
    agent = atof.start("a", "agent")
    atof.mark("hello", agent)
    atof.end(agent)
    events = atof.write(tmp_path / "events.jsonl")
    result = run("atif", "convert", events, "-o", "out", cwd=tmp_path)
    _no_traceback(result)
    assert result.returncode == 1
    assert "no trajectory with steps found" in result.stderr
    assert list((tmp_path / "out").iterdir()) == []


def test_atif_validate_exit_codes_and_messages(
    data_dir: Path, tmp_path: Path, plugin_atif: dict[str, object]
) -> None:
    """0 when all files are valid, 1 with path-qualified problems, 2 when a file is unreadable."""
    good = data_dir / "relay_plugin.atif.json"
    bad = tmp_path / "bad.json"
    broken = dict(plugin_atif)
    broken["steps"] = []
    broken["surprise"] = 1
    bad.write_text(json.dumps(broken), encoding="utf-8")

    ok = run("atif", "validate", good, cwd=tmp_path)
    assert (ok.returncode, ok.stdout) == (0, f"{good}: ok\n")

    invalid = run("atif", "validate", good, "bad.json", cwd=tmp_path)
    _no_traceback(invalid)
    assert invalid.returncode == 1
    assert invalid.stdout.splitlines() == [
        f"{good}: ok",
        "bad.json: $.surprise: unknown field (ATIF forbids extra fields; "
        "put custom data under 'extra')",
        "bad.json: $.steps: must contain at least 1 step",
    ]

    unreadable = run("atif", "validate", "bad.json", "nope.json", cwd=tmp_path)
    _no_traceback(unreadable)
    assert unreadable.returncode == 2
    assert unreadable.stderr.strip() == "error: nope.json: cannot read: No such file or directory"


def test_atof_validate_exit_codes(data_dir: Path, tmp_path: Path) -> None:
    """atof validate: 0 for Relay's sample, 1 with line numbers for a bad file, 2 if missing."""
    good = data_dir / "relay_plugin.atof.jsonl"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind":"mark"}\n', encoding="utf-8")
    result = run("atof", "validate", good, "bad.jsonl", "nope.jsonl", cwd=tmp_path)
    _no_traceback(result)
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0] == f"{good}: ok"
    assert lines[1].startswith("bad.jsonl: line 1: ")
    assert result.stderr.strip() == "error: nope.jsonl: cannot read: No such file or directory"
    invalid_only = run("atof", "validate", "bad.jsonl", cwd=tmp_path)
    assert invalid_only.returncode == 1
