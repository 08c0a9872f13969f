"""Ctrl-C in a real ``wayline chat -q`` process while the model hangs.

The model would answer after a minute and the test's timeout is far shorter: the process
must stop on SIGINT, close the request (the server sees the client go), report the turn
interrupted to the plugins and exit 130 with no traceback.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from chat_cli_support import make_home, records

from wayline.testing import ScriptedServer

WAYLINE = Path(sys.executable).with_name("wayline")


@pytest.mark.timeout(60)
def test_sigint_during_a_hanging_model_call_ends_the_cli_run_at_once(tmp_path: Path) -> None:
    """SIGINT while ``wayline chat -q`` waits for a hanging model: exit 130, one
    ``interrupted`` line, the connection closed, ``api_request_error`` and ``on_session_end``
    report the interruption, and the session is finalized."""
    with ScriptedServer({"default": {"content": "too late", "delay": 60}}) as srv:
        _, env = make_home(tmp_path, srv.base_url)
        proc = subprocess.Popen(
            [str(WAYLINE), "chat", "-q", "hi", "-Q"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            srv.wait_for_requests(1, timeout=30)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        srv.wait_for_disconnect(0, timeout=10)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert out == ""
    rows = records(tmp_path)
    assert [(r["hook"], r["reason"]) for r in rows if r["hook"] == "api_request_error"] == [
        ("api_request_error", "interrupted")
    ]
    ends = [r for r in rows if r["hook"] == "on_session_end"]
    assert [(r["interrupted"], r["reason"]) for r in ends] == [(True, "interrupted")]
    assert rows[-1]["hook"] == "on_session_finalize"
