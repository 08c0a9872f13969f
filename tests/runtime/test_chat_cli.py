"""``wayline chat`` as a real subprocess: quiet output, finalize, SIGINT, resume, bad config."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chat_cli_support import make_home
from chat_cli_support import records as read_records

WAYLINE = [sys.executable, "-m", "wayline"]


def test_quiet_one_shot_prints_session_and_answer(scripted_server, tmp_path: Path) -> None:
    """--quiet: session_id on stderr, only the answer on stdout; one-shot finalizes."""
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
    assert proc.stdout == "the answer\n"
    assert proc.stderr.startswith("session_id: ")
    hooks = [r["hook"] for r in read_records(tmp_path)]
    assert hooks[0] == "on_session_start" and hooks[-1] == "on_session_finalize"


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
    _, env = make_home(tmp_path, srv.base_url)
    first = subprocess.run(
        [*WAYLINE, "chat", "-q", "remember 42", "-Q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    session = first.stderr.split("session_id: ")[1].split()[0]
    second = _resume(env, tmp_path, session, "what number?")
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
                                {"name": "terminal", "arguments": {"command": "sleep 30"}}
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
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(r["hook"] == "pre_tool_call" for r in read_records(tmp_path)):
            break
        time.sleep(0.05)
    time.sleep(0.3)
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
