"""The live tail in Debian's Chromium: a session running in another process appears
``running``, its steps stream in, and it turns ``completed``, each within 1 s of the event
that made it so being written (the issue's latency target).

Times are compared on one clock: the browser records when it first drew each state (a
MutationObserver, ``Date.now()``), and the file says when each ATOF event happened (its
``timestamp``). Which event made a state is found by reading the finished ATOF file back
one event at a time through the store, the way the server reads it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from serve_support import Served, wayline_env
from test_serve_browser import screenshot

from wayline.store import Scope, SessionStore
from wayline.testing import ScriptedServer

TURNS = 3
DELAY = 1.2  # seconds the model takes to answer: steps are written one by one
TARGET = 1.0  # the target: within 1 s of the event being written
WAIT_MS = 60_000  # bounded waits; the latency is measured, not waited for

SCRIPT: dict[str, Any] = {
    "model": ["gpt-4o-mini"],
    "default": {"content": "ok"},
    "rules": [
        {
            "scope": "user_turn",
            "match": {"last_user_contains": "question"},
            "turns": [
                {
                    "tool_calls": [{"name": "lookup", "arguments": {"topic": "deploys"}}],
                    "delay": DELAY,
                },
                {"content": "Deploys run nightly; rollbacks use the previous tag.", "delay": DELAY},
            ],
        }
    ],
}

# Records, in the page, when each state was first drawn (ms since the epoch).
RECORDER = """
window.__rec = {rows: {}, steps: {}, status: {}};
new MutationObserver(function () {
  var now = Date.now(), rec = window.__rec;
  document.querySelectorAll("#rows tr[data-session]").forEach(function (tr) {
    var key = tr.dataset.session + "|" + tr.dataset.status;
    if (!(key in rec.rows)) rec.rows[key] = now;
  });
  var main = document.getElementById("session");
  if (main && main.dataset.status) {
    var n = main.querySelectorAll("#steps tr").length;
    for (var i = 1; i <= n; i++) if (!(i in rec.steps)) rec.steps[i] = now;
    var key = main.dataset.status + "|" + n;
    if (!(key in rec.status)) rec.status[key] = now;
    if (!rec.opened) rec.opened = now;
  }
}).observe(document, {subtree: true, childList: true, attributes: true});
"""


def _seconds(timestamp: str) -> float:
    """An ATOF timestamp (ISO 8601 with nanoseconds) as epoch seconds."""
    found = re.fullmatch(r"([^.]+?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?", timestamp)
    assert found is not None, timestamp
    head, digits, zone = found.groups()
    base = datetime.fromisoformat(head + (zone or "+00:00").replace("Z", "+00:00")).timestamp()
    return base + (int(digits) / 10 ** len(digits) if digits else 0.0)


def _states(atof: Path, session: str, work: Path) -> list[tuple[float, str | None, int]]:
    """(event time, status, steps) after each event of the finished ATOF file, as the store
    reads the file when it has grown to that event."""
    lines = [line for line in atof.read_bytes().splitlines(keepends=True) if line.strip()]
    folder = work / "prefix"
    folder.mkdir()
    out: list[tuple[float, str | None, int]] = []
    with SessionStore(work / "prefix.sqlite", Scope(folders=(folder,))) as store:
        for count in range(1, len(lines) + 1):
            (folder / "events.jsonl").write_bytes(b"".join(lines[:count]))
            store.update()
            found = store.session(session)
            event = json.loads(lines[count - 1])
            if found is None:
                out.append((_seconds(event["timestamp"]), None, 0))
            else:
                out.append(
                    (_seconds(event["timestamp"]), found["session"]["status"], len(found["steps"]))
                )
    return out


def test_live_tail_running_steps_completed(browser: Any, tmp_path: Path) -> None:
    """A slow multi-turn session in another process shows as running in the list, its steps
    stream into its page, and it shows completed, each within 1 s of its ATOF event."""
    home = tmp_path / "home"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORDER)
    errors: list[str] = []
    server = Served(home=home, cwd=tmp_path)
    proc: subprocess.Popen[str] | None = None
    try:
        listing = context.new_page()
        listing.on("pageerror", lambda exc: errors.append(str(exc)))
        listing.goto(server.base + "/")
        listing.wait_for_selector("html[data-ready='1']")
        with ScriptedServer(SCRIPT) as model:
            proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("live_session.py")), str(home),
                 model.base_url, str(TURNS)],
                env=wayline_env(home),
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            assert proc.stdout is not None
            session = proc.stdout.readline().strip()
            assert session, proc.stderr.read() if proc.stderr else ""
            listing.wait_for_function(
                "id => (id + '|running') in window.__rec.rows", arg=session, timeout=WAIT_MS
            )
            running_seen = listing.evaluate("id => window.__rec.rows[id + '|running']", session)
            tail = context.new_page()
            tail.on("pageerror", lambda exc: errors.append(str(exc)))
            tail.goto(f"{server.base}/sessions/{session}")
            tail.wait_for_selector("html[data-ready='1']")
            tail.wait_for_function(
                "() => document.querySelectorAll('#steps tr').length >= 3", timeout=WAIT_MS
            )
            screenshot(tail, "serve-live.png")
            _, stderr = proc.communicate(timeout=120)
            assert proc.returncode == 0, stderr
        (atof,) = (home / "relay" / "atof").glob("*.jsonl")
        states = _states(atof, session, tmp_path)
        final_steps = states[-1][2]
        assert states[-1][1] == "completed" and final_steps == 3 * TURNS
        tail.wait_for_function(
            "n => ('completed|' + n) in window.__rec.status", arg=final_steps, timeout=WAIT_MS
        )
        record = tail.evaluate("() => window.__rec")
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        context.close()
        server.stop()
    assert not errors, errors
    late: list[str] = []
    first_event = states[0][0]
    if running_seen / 1000 - first_event > TARGET:
        late.append(
            f"running shown {running_seen / 1000 - first_event:.3f} s after the first event"
        )
    measured = 0
    for n in range(1, final_steps + 1):
        written = next(at for at, _status, steps in states if steps >= n)
        if written * 1000 <= record["opened"]:
            continue  # drawn when the page opened, not streamed
        measured += 1
        if record["steps"][str(n)] / 1000 - written > TARGET:
            late.append(f"step {n} shown {record['steps'][str(n)] / 1000 - written:.3f} s late")
    done = next(
        at for at, status, steps in states if status == "completed" and steps == final_steps
    )
    shown = record["status"][f"completed|{final_steps}"] / 1000
    if shown - done > TARGET:
        late.append(f"completed shown {shown - done:.3f} s after its event")
    assert measured >= 3, f"only {measured} steps streamed while the page was open"
    assert not late, late
