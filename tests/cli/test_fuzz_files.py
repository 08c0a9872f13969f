"""Every command that reads files, fed hostile and mutated files: one `error:` line, never a crash.

The fixed set holds what broke the commands before (10,000-deep JSON, integers of 5,000 digits,
``1e308`` timestamps, invalid UTF-8, NUL bytes); Hypothesis then mutates a real Hermes + Relay
ATIF trajectory and its ATOF events. Commands run in-process through click's runner (the real
command objects), and one real subprocess checks the installed entry point.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .support import HERMES_ATIF, HERMES_ATOF, invoke

Command = Callable[[Path, Path, str], list[str | Path]]

#: Each command that reads a file: its arguments for one input file, a scratch directory and
#: the URL of a loopback OTLP receiver.
COMMANDS: dict[str, Command] = {
    "view": lambda f, out, otlp: ["view", f, "-o", out / "page.html"],
    "view --tree": lambda f, out, otlp: ["view", f, "--tree"],
    "replay": lambda f, out, otlp: ["replay", f, "-o", out / "replayed.json"],
    "diff": lambda f, out, otlp: ["diff", f, HERMES_ATIF],
    "export sft": lambda f, out, otlp: ["export", "sft", f, "-o", out / "sft.jsonl"],
    "export otlp": lambda f, out, otlp: ["export", "otlp", f, "--endpoint", otlp],
    "atif validate": lambda f, out, otlp: ["atif", "validate", f],
    "atif convert": lambda f, out, otlp: ["atif", "convert", f, "-o", out / "atif"],
    "atof validate": lambda f, out, otlp: ["atof", "validate", f],
}


class _Accept(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that takes every export (200, empty body) and keeps nothing."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the command's output, not the receiver's."""


@pytest.fixture(scope="module")
def otlp() -> Iterator[str]:
    """The base URL of a loopback OTLP receiver for `export otlp`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Accept)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


ATIF = HERMES_ATIF.read_bytes()
ATOF = HERMES_ATOF.read_bytes()
DEEP = b"[" * 10_000 + b"]" * 10_000
HUGE = b"9" * 5_000


def _atif_with(path: str, value: object) -> bytes:
    """The Hermes ATIF trajectory with one field replaced (``steps.0.timestamp``…)."""
    document = json.loads(ATIF)
    *parents, last = path.split(".")
    holder = document
    for key in parents:
        holder = holder[int(key)] if key.isdigit() else holder[key]
    holder[int(last) if last.isdigit() else last] = value
    return json.dumps(document).encode()


def _atof_with(line: int, key: str, raw: bytes) -> bytes:
    """The Hermes ATOF events with one event's field set to a raw JSON text."""
    lines = ATOF.splitlines()
    event = json.loads(lines[line])
    event[key] = "@@"
    lines[line] = json.dumps(event).encode().replace(b'"@@"', raw)
    return b"\n".join(lines) + b"\n"


HOSTILE: dict[str, tuple[str, bytes]] = {
    "deep array": (".json", DEEP),
    "deep steps": (".json", b'{"steps": ' + DEEP + b"}"),
    "deep in a step": (".json", ATIF.replace(b'"steps":[', b'"steps":[{"source":"user","message":'
                                             + DEEP + b"},", 1)),
    "huge integer": (".json", b'{"steps": [], "n": ' + HUGE + b"}"),
    "huge step id": (".json", ATIF.replace(b'"step_id":1', b'"step_id":' + HUGE, 1)),
    "1e308 timestamp text": (".json", _atif_with("steps.0.timestamp", "1e308")),
    "1e308 timestamp number": (".json", _atif_with("steps.0.timestamp", 1e308)),
    "1e400": (".json", ATIF.replace(b'"step_id":1', b'"step_id":1e400', 1)),
    "NaN": (".json", ATIF.replace(b'"step_id":1', b'"step_id":NaN', 1)),
    "invalid UTF-8": (".json", ATIF.replace(b"Read alpha", b"Read \xff\xfe alpha", 1)),
    "NUL bytes": (".json", b"\x00" * 64),
    "empty": (".json", b""),
    "blank lines": (".jsonl", b"\n\n  \n"),
    "a JSON string": (".json", b'"steps"'),
    "null": (".json", b"null"),
    "truncated ATIF": (".json", ATIF[: len(ATIF) // 2]),
    "ATOF deep payload": (".jsonl", _atof_with(0, "data", DEEP)),
    "ATOF huge integer": (".jsonl", _atof_with(1, "data", HUGE)),
    "ATOF 1e308 timestamp": (".jsonl", _atof_with(2, "timestamp", b"1e308")),
    "ATOF numeric timestamp": (".jsonl", _atof_with(2, "timestamp", b"-1e308")),
    "ATOF invalid UTF-8": (".jsonl", ATOF.replace(b"alpha", b"al\xffpha", 1)),
    "ATOF cut mid-line": (".jsonl", ATOF[: len(ATOF) // 2]),
    "ATOF as .json": (".json", ATOF),
    "ATIF as .jsonl": (".jsonl", ATIF),
}  # fmt: skip


def check(result: Result, what: str) -> None:
    """The invariants: exit 0, 1 or 2; no traceback or internal error; exit 2 is one error line."""
    said = result.stdout + result.stderr
    context = (
        f"{what}\n--- stdout ---\n{result.stdout[-1500:]}\n--- stderr ---\n{result.stderr[-1500:]}"
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), context
    assert "Traceback" not in said, context
    assert "internal error" not in said, context
    assert result.exit_code in (0, 1, 2), context
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    if result.exit_code == 2:
        assert len(errors) == 1, context
    stray = [
        line
        for line in result.stderr.splitlines()
        if line.lower().startswith("error") and not line.startswith("error: ")
    ]
    assert stray == [], context


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_files_give_one_line_never_a_crash(case: str, tmp_path: Path, otlp: str) -> None:
    """Each file-reading command on each hostile file: exit 0/1/2, one error line when 2."""
    suffix, content = HOSTILE[case]
    path = tmp_path / f"input{suffix}"
    path.write_bytes(content)
    for name, command in COMMANDS.items():
        out = tmp_path / name.replace(" ", "_")
        out.mkdir()
        check(invoke(*command(path, out, otlp), home=tmp_path / "home"), f"{case}: wayline {name}")


def test_the_fixed_set_includes_the_reported_breakers(tmp_path: Path) -> None:
    """Deep JSON and a huge integer are refused by diff, export and atif validate with exit 2."""
    for case in ("deep array", "huge integer"):
        path = tmp_path / f"{case.replace(' ', '_')}.json"
        path.write_bytes(HOSTILE[case][1])
        for name in ("diff", "export sft", "atif validate"):
            result = invoke(*COMMANDS[name](path, tmp_path, ""), home=tmp_path / "home")
            assert result.exit_code == 2, (case, name, result.stderr)
            assert result.stderr.count("\n") == 1, (case, name, result.stderr)


TOKENS = [
    b"[" * 3_000,
    HUGE,
    b"1e308",
    b"-1e400",
    b"NaN",
    b"\xff",
    b"\x00",
    b"{",
    b"}",
    b'"',
    b"\n",
]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    """A real ATIF or ATOF file with a few splices: hostile tokens, random bytes, a cut."""
    suffix, data = draw(st.sampled_from([(".json", ATIF), (".jsonl", ATOF)]))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        width = draw(st.integers(0, 8))
        piece = draw(st.one_of(st.sampled_from(TOKENS), st.binary(min_size=1, max_size=12)))
        data = data[:at] + piece + data[at + width :]
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return suffix, data


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sample=mutated(), name=st.sampled_from(sorted(COMMANDS)))
def test_mutated_trajectories_never_crash_a_command(
    sample: tuple[str, bytes], name: str, tmp_path_factory: pytest.TempPathFactory, otlp: str
) -> None:
    """Random splices into real trajectories: every command keeps the invariants."""
    suffix, content = sample
    work = tmp_path_factory.mktemp("fuzz")
    path = work / f"input{suffix}"
    path.write_bytes(content)
    result = invoke(*COMMANDS[name](path, work, otlp), home=work / "home")
    check(result, f"wayline {name} on a mutated {suffix} file")


def test_the_installed_command_refuses_deep_json_in_one_line(tmp_path: Path) -> None:
    """The real entry point, as a subprocess: 10,000-deep JSON to diff is one line, exit 2."""
    path = tmp_path / "deep.json"
    path.write_bytes(DEEP)
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "diff", str(path), str(HERMES_ATIF)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "WAYLINE_HOME": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: {path}: JSON nested too deeply (over 128 levels)\n"
