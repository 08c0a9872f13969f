"""``wayline mcp``'s command line: its errors are one ``error:`` line each."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from mcp_support import Recorded, mcp_command, wayline_env


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        env=wayline_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_without_the_sdk_one_error_line_says_what_to_install(tmp_path: Path) -> None:
    """Without the mcp package the command prints one error line naming the extra, exit 2."""
    hide = "import sys; sys.modules['mcp'] = None; from wayline.cli.main import main; main()"
    proc = _run([sys.executable, "-c", hide, "mcp", str(tmp_path)], tmp_path / "home")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "error: wayline mcp needs the MCP SDK: pip install 'wayline[mcp]'"
    ]
    assert proc.stdout == ""


def test_a_missing_path_is_one_error_line(tmp_path: Path) -> None:
    """A PATH that does not exist: one error line naming it, exit 2, nothing on stdout."""
    missing = tmp_path / "nowhere"
    proc = _run(mcp_command(missing), tmp_path / "home")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"error: {missing}: no such file or directory"]
    assert proc.stdout == ""


def test_a_port_in_use_is_one_error_line(recorded: Recorded, tmp_path: Path) -> None:
    """--http on a port another socket holds: one error line naming the port, exit 2."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        proc = _run(mcp_command(tmp_path, "--http", str(port)), recorded.home)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: --http {port}: cannot listen on 127.0.0.1:{port}")


def test_stdio_ends_when_the_client_closes_stdin(recorded: Recorded) -> None:
    """Over stdio the server ends with status 0 when its client closes stdin, printing
    nothing on stdout (the protocol's channel)."""
    proc = subprocess.run(
        mcp_command(recorded.folder),
        env=wayline_env(recorded.home),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
