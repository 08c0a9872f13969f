"""Every file command refuses input it cannot use the same way: one `error:` line, exit 2,
saying what the file is, told from its first bytes (so size, FIFOs and junk cost nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .support import HERMES_ATIF, HERMES_ATOF, invoke

# Each file command, with what it needs besides the file (written under {out}).
COMMANDS: dict[str, tuple[str, ...]] = {
    "view": ("view", "-o", "{out}/page.html"),
    "replay": ("replay", "-o", "{out}/new.json"),
    "diff": ("diff", str(HERMES_ATIF)),
    "export sft": ("export", "sft", "-o", "{out}/sft.jsonl"),
    "export otlp": ("export", "otlp", "--endpoint", "http://127.0.0.1:9"),
    "atif convert": ("atif", "convert", "-o", "{out}/converted"),
    "atif validate": ("atif", "validate"),
    "atof validate": ("atof", "validate"),
}
ATOF_LINES = HERMES_ATOF.read_bytes().splitlines(keepends=True)
SPAN = {
    "name": "chat scripted-model",
    "context": {"trace_id": "0x6b18", "span_id": "0x96df", "trace_state": "[]"},
    "kind": "SpanKind.CLIENT",
    "attributes": {"gen_ai.operation.name": "chat"},
}
# name -> (file name, bytes, what the one error line must say)
INPUTS: dict[str, tuple[str, bytes, str]] = {
    "empty": ("empty.json", b"", "the file is empty"),
    "blank": ("blank.jsonl", b"\n  \n\t\n", "the file is empty"),
    "not UTF-8": ("latin1.json", '{"steps": ["café"]}'.encode("latin-1"), "not UTF-8"),
    "UTF-16": ("utf16.json", HERMES_ATIF.read_text().encode("utf-16"), "not UTF-8"),
    "log text": ("app.json", b"2026-11-28 INFO started\n2026-11-28 INFO ok\n", "not JSON"),
    "OTel spans": ("spans.jsonl", (json.dumps(SPAN) + "\n").encode() * 3, "OpenTelemetry spans"),
    "OTel spans as .json": ("spans.json", (json.dumps(SPAN) + "\n").encode(), "OpenTelemetry"),
    "transcript": (
        "20261127_000000_abcdef.jsonl",
        b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n',
        "session transcript",
    ),
    "JSON lines": ("log.json", b'{"level": "info"}\n{"level": "warn"}\n', "JSON lines"),
    "a JSON list": ("list.json", b"[1, 2, 3]", "a JSON list"),
}


def _args(command: str, path: Path, out: Path) -> list[str]:
    return [a.replace("{out}", str(out)) for a in COMMANDS[command]] + [str(path)]


def _one_error(stderr: str) -> str:
    """The stderr of a refused file: exactly one line, an `error:` line (returned)."""
    lines = [line for line in stderr.splitlines() if not line.startswith("warning: directory")]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("name", list(INPUTS))
def test_unusable_input_is_one_line_exit_2(tmp_path: Path, command: str, name: str) -> None:
    """Empty, non-UTF-8, non-JSON and other-kind files: exit 2, one line naming what it is."""
    file_name, content, says = INPUTS[name]
    path = tmp_path / file_name
    path.write_bytes(content)
    result = invoke(*_args(command, path, tmp_path / "out"), home=tmp_path / "home")
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    line = _one_error(result.stderr)
    assert str(path) in line and says in line, line


@pytest.mark.parametrize("command", ["view", "replay", "diff", "export sft", "atif validate"])
def test_truncated_atif_is_bad_input(tmp_path: Path, command: str) -> None:
    """An ATIF file cut off mid-way: exit 2 and one line with where the JSON stops."""
    path = tmp_path / "cut.json"
    path.write_bytes(HERMES_ATIF.read_bytes()[:2000])
    result = invoke(*_args(command, path, tmp_path / "out"), home=tmp_path / "home")
    assert result.exit_code == 2, result.stderr
    assert "invalid JSON" in _one_error(result.stderr)


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "export otlp"])
def test_atof_cut_before_any_trajectory_is_bad_input(tmp_path: Path, command: str) -> None:
    """ATOF events cut off mid-line before a trajectory is complete: exit 2 (truncated or
    no trajectory), never 0 or 1, in one line."""
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(ATOF_LINES[:2]) + ATOF_LINES[2][:60])
    result = invoke(*_args(command, path, tmp_path / "out"), home=tmp_path / "home")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    line = _one_error(result.stderr)
    assert str(path) in line and ("truncated" in line or "ATOF events, not" in line), line


def test_export_otlp_of_atof_cut_inside_its_first_event_sends_nothing(tmp_path: Path) -> None:
    """`export otlp` of ATOF cut off inside its first line: exit 2, one `truncated` line, and
    no raw Python warning on stderr."""
    path = tmp_path / "cut.jsonl"
    path.write_bytes(ATOF_LINES[0][:80])
    result = invoke(*_args("export otlp", path, tmp_path), home=tmp_path / "home")
    assert (result.exit_code, result.stdout) == (2, "")
    line = _one_error(result.stderr)
    assert "truncated" in line and "Warning" not in result.stderr


def test_atof_validate_of_an_empty_file_is_not_ok(tmp_path: Path) -> None:
    """`atof validate` of an empty file: exit 2 and no `ok` line (it used to say ok)."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"")
    result = invoke("atof", "validate", path, home=tmp_path / "home")
    assert (result.exit_code, result.stdout) == (2, "")
    assert "the file is empty" in _one_error(result.stderr)


def test_export_otlp_of_spans_sends_nothing_and_says_what_it_is(tmp_path: Path) -> None:
    """`export otlp` given the otel plugin's span file names it and exits 2 before sending."""
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(SPAN) + "\n", encoding="utf-8")
    result = invoke(*_args("export otlp", path, tmp_path), home=tmp_path / "home")
    assert (result.exit_code, result.stdout) == (2, "")
    assert "OpenTelemetry spans" in _one_error(result.stderr)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env["WAYLINE_HOME"] = str(cwd / "home")
    return subprocess.run(
        [sys.executable, "-m", "wayline", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # a read that blocks on the FIFO fails the test instead of hanging it
        check=False,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_fifo_is_refused_without_reading_it(tmp_path: Path, command: str) -> None:
    """A FIFO named like a trajectory (nothing ever writes to it): one line, exit 2."""
    fifo = tmp_path / "events.json"
    os.mkfifo(fifo)
    proc = _run(_args(command, fifo, tmp_path / "out"), tmp_path)
    assert proc.returncode == 2, proc.stderr
    line = _one_error(proc.stderr)
    assert str(fifo) in line and "FIFO" in line


def _peak_rss_mb(args: list[str], cwd: Path) -> tuple[float, int]:
    """Peak resident memory (MB) of ``wayline ARGS`` in a fresh process, and its exit status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env["WAYLINE_HOME"] = str(cwd / "home")
    proc = subprocess.Popen(
        [sys.executable, "-m", "wayline", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs os.wait4 for a child's peak RSS")
@pytest.mark.parametrize("command", ["view", "replay", "export sft", "atof validate"])
def test_a_huge_junk_file_costs_no_memory(tmp_path: Path, command: str) -> None:
    """A 400 MB file that is no trajectory (sparse: no disk used) is refused having read its
    head: the command's peak memory grows by far less than the file's size."""
    big, small = tmp_path / "junk.json", tmp_path / "small.json"
    with big.open("wb") as handle:
        handle.truncate(400 << 20)
    small.write_bytes(b"\0" * 1024)
    base, base_code = _peak_rss_mb(_args(command, small, tmp_path / "out"), tmp_path)
    peak, code = _peak_rss_mb(_args(command, big, tmp_path / "out"), tmp_path)
    assert (code, base_code) == (2, 2)
    assert peak - base < 100, (peak, base)
