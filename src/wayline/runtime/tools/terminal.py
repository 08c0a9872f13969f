"""The ``terminal`` tool: run one shell command in its own process group.

The command runs under ``bash -c`` (``/bin/sh -c`` when bash is missing) with stdin
closed and stderr merged into stdout. One thread polls the output pipe, the process,
the timeout and ``ctx.cancel`` every 50 ms, so Ctrl-C stops the whole process group
promptly and a chatty command cannot deadlock on a full pipe.

Background jobs the command leaves behind (``server &``) are not killed; once the shell
has exited the tool reads for a short grace period, then returns without waiting for
them to close the pipe.
"""

from __future__ import annotations

import collections
import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wayline.runtime.tools.base import (
    ToolArgumentError,
    ToolCallContext,
    ToolCancelled,
    bound_output,
    optional_number,
    optional_str,
    require_str,
    resolve_path,
    strip_ansi,
    tool_error,
    tool_result,
)

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "TERMINAL_SCHEMA", "terminal_tool"]

DEFAULT_TIMEOUT = 180.0
MAX_TIMEOUT = 600.0
_POLL = 0.05
_DRAIN_GRACE = 0.5
_READ_CHUNK = 65536
_MAX_READS_PER_POLL = 64  # keeps a firehose (``yes``) from starving the cancel check
_MIN_CAPTURE = 2_000_000

TERMINAL_SCHEMA: dict[str, Any] = {
    "name": "terminal",
    "description": (
        "Run a shell command (bash -c) and return its combined stdout+stderr and exit code. "
        "Non-interactive: stdin is closed, so never run commands that wait for input. "
        "Long output is truncated (the head and tail are kept). Relative paths are resolved "
        "against the session's working directory unless workdir is given. "
        f"Default timeout {DEFAULT_TIMEOUT:g} s, maximum {MAX_TIMEOUT:g} s."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The shell command to run."},
            "workdir": {
                "type": "string",
                "description": "Directory to run in (absolute, or relative to the session's "
                "working directory).",
            },
            "timeout": {
                "type": "integer",
                "description": f"Seconds before the command is killed (default "
                f"{DEFAULT_TIMEOUT:g}, max {MAX_TIMEOUT:g}).",
                "minimum": 1,
                "maximum": int(MAX_TIMEOUT),
            },
        },
        "required": ["command"],
    },
}


def _error(message: str) -> str:
    return tool_error(message, output="", exit_code=-1, status="error")


def terminal_tool(args: dict[str, Any], *, ctx: ToolCallContext) -> str:
    """Run ``args["command"]`` and return ``{"output", "exit_code", "error"}`` JSON."""
    if not isinstance(args, dict):
        return _error("terminal arguments must be a JSON object")
    try:
        command = require_str(args, "command")
        workdir_arg = optional_str(args, "workdir")
        timeout = optional_number(args, "timeout", DEFAULT_TIMEOUT)
    except ToolArgumentError as exc:
        return _error(str(exc))
    if not 0 < timeout <= MAX_TIMEOUT:
        return _error(f"timeout must be between 1 and {MAX_TIMEOUT:g} seconds, got {timeout:g}")
    workdir = resolve_path(ctx, workdir_arg) if workdir_arg else Path(ctx.cwd)
    if not workdir.is_dir():
        return _error(f"workdir does not exist or is not a directory: {workdir}")
    if ctx.cancel.is_set():
        raise ToolCancelled("terminal: cancelled before the command started")

    capture_cap = max(_MIN_CAPTURE, 10 * ctx.max_output_chars)
    run = _run(command, workdir, timeout, ctx, capture_cap)
    returncode = -1 if run.timed_out else run.returncode
    output = run.text
    dropped = run.dropped
    if ctx.transform_terminal_output is not None:
        replaced = ctx.transform_terminal_output(command, output, returncode)
        if isinstance(replaced, str):
            output, dropped = replaced, 0
    output = strip_ansi(output).strip()
    output = bound_output(output, ctx.max_output_chars, extra_omitted=dropped)
    if run.timed_out:
        return tool_result(
            {
                "output": output,
                "exit_code": -1,
                "error": f"command timed out after {timeout:g}s",
                "status": "timeout",
            }
        )
    return tool_result({"output": output, "exit_code": returncode, "error": None})


@dataclass(frozen=True)
class _RunResult:
    text: str
    dropped: int
    returncode: int
    timed_out: bool


class _Capture:
    """Keeps the first 40% and the last 60% of ``cap`` bytes; counts what fell between."""

    def __init__(self, cap: int) -> None:
        self.head_cap = int(cap * 0.4)
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_len = 0
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_len += len(chunk)
        # Drop whole chunks only; the final join trims the partial excess once.
        while self.tail and self.tail_len - len(self.tail[0]) >= self.tail_cap:
            first = self.tail.popleft()
            self.tail_len -= len(first)
            self.dropped += len(first)

    def result(self) -> tuple[bytes, int]:
        tail = b"".join(self.tail)
        excess = max(0, len(tail) - self.tail_cap)
        return bytes(self.head) + tail[excess:], self.dropped + excess


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """TERM the whole group, give it 0.1 s, then KILL whatever is left."""
    for sig, grace in ((signal.SIGTERM, 0.1), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:
            # The leader is gone but members that ignore TERM may remain in the group.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return


def _read_available(fd: int, capture: _Capture) -> bool:
    """Read what the pipe holds now; False at end of file."""
    for _ in range(_MAX_READS_PER_POLL):
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        capture.feed(chunk)
    return True


def _run(
    command: str, cwd: Path, timeout: float, ctx: ToolCallContext, capture_cap: int
) -> _RunResult:
    proc = subprocess.Popen(
        [_shell(), "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        close_fds=True,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    capture = _Capture(capture_cap)
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    eof = False
    exited_at: float | None = None
    timed_out = False
    try:
        while True:
            if ctx.cancel.is_set():
                _kill_group(proc)
                raise ToolCancelled("terminal: command cancelled")
            now = time.monotonic()
            if now >= deadline:
                _kill_group(proc)
                timed_out = True
                if not eof:
                    _read_available(fd, capture)
                break
            if not eof:
                if selector.select(_POLL):
                    eof = not _read_available(fd, capture)
            elif proc.poll() is None:
                # Output closed but the process lives on (``exec >&-; sleep``), or is a moment
                # from exiting: EOF arrives just before the exit status, and sleeping a whole
                # poll period there made most short commands take 50 ms. Popen.wait polls
                # from 0.5 ms up, so it returns as soon as the process is gone.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(_POLL)
            if proc.poll() is not None:
                if eof:
                    break
                exited_at = exited_at or time.monotonic()
                if time.monotonic() - exited_at > _DRAIN_GRACE:
                    break
    finally:
        selector.close()
        proc.stdout.close()
        if proc.poll() is None and not timed_out:
            _kill_group(proc)
    raw, dropped = capture.result()
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    returncode = proc.returncode if proc.returncode is not None else -1
    if returncode < 0:
        returncode = 128 - returncode  # report signals the way a shell does (SIGKILL -> 137)
    return _RunResult(text, dropped, returncode, timed_out)
