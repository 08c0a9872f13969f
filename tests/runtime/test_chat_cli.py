"""``wayline chat`` as a real subprocess: quiet output, finalize, SIGINT, resume, bad config."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_cli_support import make_home
from chat_cli_support import records as read_records

WAYLINE = [sys.executable, "-m", "wayline"]


def _wait_for(what: str, holds: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll until ``holds()`` (a condition, not a duration); fail naming ``what`` at the
    deadline."""
    deadline = time.monotonic() + timeout
    while not holds():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def _only_session(home: Path) -> str:
    """The id of the one session stored under ``home`` (``-Q`` prints no session id)."""
    (transcript,) = (home / "sessions").glob("*.jsonl")
    return transcript.stem


def test_quiet_one_shot_prints_only_the_answer(scripted_server, tmp_path: Path) -> None:
    """--quiet: the answer on stdout and nothing at all on stderr; one-shot finalizes."""
    srv = scripted_server({"default": {"content": "the answer"}})
    _, env = make_home(tmp_path, srv.base_url)
    proc = subprocess.run(
        [*WAYLINE, "chat", "--query", "hi", "--quiet", "--accept-hooks"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == ("the answer\n", "")
    hooks = [r["hook"] for r in read_records(tmp_path)]
    assert hooks[0] == "on_session_start" and hooks[-1] == "on_session_finalize"


def test_without_quiet_the_session_id_is_on_stderr(scripted_server, tmp_path: Path) -> None:
    """Without -Q the session id (for --resume) is printed on stderr, never on stdout."""
    srv = scripted_server({"default": {"content": "the answer"}})
    home, env = make_home(tmp_path, srv.base_url)
    proc = subprocess.run(
        [*WAYLINE, "chat", "-q", "hi"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "the answer\n"
    assert proc.stderr.startswith(f"session_id: {_only_session(home)}\n")


def _resume(
    env: dict[str, str], cwd: Path, session: str, query: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WAYLINE, "chat", "-q", query, "-Q", "--resume", session],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def test_resume_continues_stored_session(scripted_server, tmp_path: Path) -> None:
    """--resume ID sends the stored transcript and does not fire on_session_start again."""
    srv = scripted_server({"default": {"content": "noted"}})
    home, env = make_home(tmp_path, srv.base_url)
    first = subprocess.run(
        [*WAYLINE, "chat", "-q", "remember 42", "-Q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    second = _resume(env, tmp_path, _only_session(home), "what number?")
    assert second.returncode == 0, second.stderr
    sent = srv.requests[-1].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["remember 42", "what number?"]
    starts = [r for r in read_records(tmp_path) if r["hook"] == "on_session_start"]
    assert len(starts) == 1


def test_bad_config_is_one_clear_error(tmp_path: Path) -> None:
    """A malformed config.yaml exits 2 with file:line and no traceback."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("model:\n  base_url: [unclosed\n")
    proc = subprocess.run(
        [*WAYLINE, "chat", "-q", "hi"],
        env={**os.environ, "WAYLINE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert f"{home / 'config.yaml'}:" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.timeout(120)
def test_sigint_cancels_running_tools_cleanly(scripted_server, tmp_path: Path) -> None:
    """SIGINT mid-tool: cancelled status, interrupted=True, exit 130, no traceback."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {},
                    "turns": [
                        {
                            "tool_calls": [
                                {
                                    "name": "terminal",
                                    "arguments": {"command": "touch started && sleep 30"},
                                }
                            ]
                        },
                        {"content": "never"},
                    ],
                }
            ]
        }
    )
    _, env = make_home(tmp_path, srv.base_url)
    proc = subprocess.Popen(
        [*WAYLINE, "chat", "-q", "sleep", "-Q", "--yolo"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The tool's own marker file says it is running: the signal lands mid-tool.
    _wait_for("the terminal tool to start", (tmp_path / "started").exists)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    records = read_records(tmp_path)
    post = [r for r in records if r["hook"] == "post_tool_call"]
    assert post and post[0]["status"] == "cancelled"
    end = [r for r in records if r["hook"] == "on_session_end"]
    assert end and end[0]["interrupted"] is True
    assert records[-1]["hook"] == "on_session_finalize"


def test_resume_of_a_session_that_stored_nothing(scripted_server, tmp_path: Path) -> None:
    """A REPL that printed its session id and ended before the first message (a kill, or EOF
    at once) left a transcript: --resume of that id works and starts the session afresh."""
    srv = scripted_server({"default": {"content": "fresh"}})
    _, env = make_home(tmp_path, srv.base_url)
    first = subprocess.run(
        [*WAYLINE, "chat"], env=env, input="", capture_output=True, text=True, timeout=60
    )
    assert first.returncode == 0, first.stderr
    session = first.stderr.split("session_id: ")[1].split()[0]
    second = _resume(env, tmp_path, session, "hello")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "fresh\n"
    sent = srv.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
