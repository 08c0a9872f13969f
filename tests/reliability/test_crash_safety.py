"""Crash safety: ``wayline chat`` killed with SIGKILL at random points of a long session.

Every run is a real ``python -m wayline chat`` REPL (several user turns, each delegating to two
children and reading files in parallel) in one shared ``$WAYLINE_HOME`` with
``observability/relay`` enabled (ATIF sub-agent files too, so files are written mid-run). A
watcher thread reads every ATIF file the moment it appears or changes. After each kill: the
run's ATOF file holds only whole lines (or one torn tail the reader skips), converting it
rebuilds valid trajectories, the session store still loads, and every ATIF file ever seen was
complete JSON. Every tenth run, and after the last, a fresh run and a ``--resume`` of the
killed session in the same home must succeed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rel_support import record, scaled, write_config

from wayline.relay.atif.convert import convert_file
from wayline.relay.atif.validate import validate_trajectory
from wayline.relay.atof import AtofTornLineWarning, iter_events
from wayline.runtime.sessions import SessionStore

WAYLINE = [sys.executable, "-m", "wayline"]
TURNS = 10

SCRIPT: dict[str, Any] = {
    "model": "scripted-model",
    "rules": [
        {
            "match": {"first_user_contains": "CHILD", "last_role": "user"},
            "respond": {
                "tool_calls": [
                    {"name": "terminal", "arguments": {"command": "echo child"}},
                    {"name": "read_file", "arguments": {"path": "a.txt"}},
                ],
                "delay": 0.02,
            },
        },
        {
            "match": {"first_user_contains": "CHILD", "last_role": "tool"},
            "respond": {"content": "child done", "delay": 0.02},
        },
        {
            "match": {"last_role": "user"},
            "respond": {
                "tool_calls": [
                    {
                        "name": "delegate_task",
                        "arguments": {"tasks": [{"goal": "CHILD one"}, {"goal": "CHILD two"}]},
                    },
                    {"name": "read_file", "arguments": {"path": "a.txt"}},
                    {"name": "read_file", "arguments": {"path": "b.txt"}},
                ],
                "delay": 0.02,
            },
        },
        {"match": {"last_role": "tool"}, "respond": {"content": "turn done", "delay": 0.02}},
    ],
}


@dataclass
class Watcher:
    """Reads every ATIF file whenever it appears or changes; remembers incomplete ones."""

    directory: Path
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    reads: int = 0
    broken: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        """Poll until stopped."""
        while not self.stop.wait(0.005):
            self.scan()

    def scan(self) -> None:
        """One pass over the directory (dot files are the writer's temporaries)."""
        try:
            names = [n for n in os.listdir(self.directory) if n.endswith(".json")]
        except FileNotFoundError:
            return
        for name in names:
            if name.startswith("."):
                continue
            path = self.directory / name
            try:
                stat = path.stat()
                key = (stat.st_mtime_ns, stat.st_size)
                if self.seen.get(name) == key:
                    continue
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            self.seen[name] = key
            self.reads += 1
            try:
                json.loads(text)
            except ValueError as exc:
                self.broken.append(f"{name} ({len(text)} bytes): {exc}")


@dataclass
class Tally:
    """What the kills left behind."""

    runs: int = 0
    killed: int = 0
    bad_atof: list[str] = field(default_factory=list)
    bad_convert: list[str] = field(default_factory=list)
    bad_store: list[str] = field(default_factory=list)
    bad_next_run: list[str] = field(default_factory=list)
    converted: int = 0
    torn: int = 0


def _env(home: Path, out: Path, run: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env.update(
        {
            "WAYLINE_HOME": str(home),
            "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
            "WAYLINE_RELAY_ATOF_FILENAME": f"run-{run:03d}.jsonl",
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
            "WAYLINE_RELAY_ATIF_SUBAGENT_EXPORT_MODE": "all",
        }
    )
    return env


def _check_atof(path: Path, tally: Tally, run: int) -> None:
    if not path.exists():
        return
    lines = path.read_bytes().split(b"\n")
    for n, line in enumerate(lines[:-1], 1):
        try:
            json.loads(line)
        except ValueError:
            tally.bad_atof.append(f"run {run}: line {n} is not whole JSON")
    if lines[-1]:
        tally.torn += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AtofTornLineWarning)
        try:
            events = list(iter_events(path))
        except Exception as exc:
            tally.bad_atof.append(f"run {run}: the reader failed: {exc}")
            return
    out = path.parent.parent / "converted" / path.stem
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AtofTornLineWarning)
            report = convert_file(path, out)
    except Exception as exc:
        tally.bad_convert.append(f"run {run}: {type(exc).__name__}: {exc}")
        return
    for written in report.written:
        problems = validate_trajectory(json.loads(written.read_text(encoding="utf-8")))
        if problems:
            tally.bad_convert.append(f"run {run}: {written.name}: {problems[:2]}")
    llm_done = any(e.get("category") == "llm" and e.get("scope_category") == "end" for e in events)
    if llm_done and not report.written:
        tally.bad_convert.append(f"run {run}: a completed model call but no trajectory")
    tally.converted += len(report.written)


def _check_store(home: Path, tally: Tally, run: int) -> None:
    store = SessionStore(home / "sessions")
    for sid in store.list():
        try:
            store.load(sid)
        except Exception as exc:
            tally.bad_store.append(f"run {run}: {sid}: {exc}")


def _first_session(atof: Path) -> str | None:
    """The top-level session a run recorded (--quiet prints only the answer): its first agent
    scope's session id; None when the run was killed before it wrote one."""
    try:
        lines = atof.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a torn tail
        if event.get("category") == "agent" and event.get("scope_category") == "start":
            session = (event.get("metadata") or {}).get("session_id")
            return session if isinstance(session, str) else None
    return None


def _next_run(env: dict[str, str], work: Path, resume: str | None, tally: Tally, run: int) -> None:
    for args in (["-q", "after the crash"], ["-q", "resumed", "--resume", resume or ""]):
        if args[-1] == "":
            continue
        proc = subprocess.run(
            [*WAYLINE, "chat", *args, "--quiet"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0 or proc.stdout.strip() != "turn done" or "Traceback" in proc.stderr:
            tally.bad_next_run.append(
                f"run {run} {args}: {proc.returncode} {proc.stdout[-200:]!r} {proc.stderr[-400:]}"
            )


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_sigkill_at_random_points(tmp_path: Path, scripted_server: Any) -> None:
    """SIGKILL anywhere: whole ATOF lines, convertible, no half ATIF, the next run works."""
    runs = scaled(5, 100)
    rng = random.Random(20261121)
    server = scripted_server(SCRIPT)
    home, work, out = tmp_path / "home", tmp_path / "work", tmp_path / "out"
    for d in (home, work, out / "atif"):
        d.mkdir(parents=True)
    (work / "a.txt").write_text("alpha\n")
    (work / "b.txt").write_text("beta\n")
    write_config(
        home,
        server.base_url,
        plugins=("observability/relay",),
        delegation={"max_concurrent_children": 2},
    )
    watcher = Watcher(out / "atif")
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    tally = Tally()
    stdin = "".join(f"please do step {k}\n" for k in range(TURNS))
    # A first, unkilled run measures how long a whole session takes here and now; the kills
    # then land anywhere from start-up to just before the end.
    began = time.monotonic()
    calibration = subprocess.run(
        [*WAYLINE, "chat"],
        env=_env(home, out, 999),
        cwd=work,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    duration = time.monotonic() - began
    assert calibration.returncode == 0, calibration.stderr
    assert calibration.stdout.count("turn done") == TURNS, calibration.stdout
    try:
        for run in range(runs):
            env = _env(home, out, run)
            err_path = tmp_path / f"stderr-{run}.txt"
            with err_path.open("w") as err:
                proc = subprocess.Popen(
                    [*WAYLINE, "chat"],
                    env=env,
                    cwd=work,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                    text=True,
                )
                assert proc.stdin is not None
                proc.stdin.write(stdin)
                proc.stdin.close()
                try:
                    proc.wait(timeout=rng.uniform(0.1, 0.9 * duration))
                except subprocess.TimeoutExpired:
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)
                    tally.killed += 1
            tally.runs += 1
            watcher.scan()
            stderr = err_path.read_text()
            if proc.returncode not in (0, -signal.SIGKILL) or "Traceback" in stderr:
                tally.bad_next_run.append(f"run {run} exited {proc.returncode}: {stderr[-400:]}")
            session = _first_session(out / "atof" / f"run-{run:03d}.jsonl")
            _check_atof(out / "atof" / f"run-{run:03d}.jsonl", tally, run)
            _check_store(home, tally, run)
            if run % 10 == 9 or run == runs - 1:
                _next_run(_env(home, out, 1000 + run), work, session, tally, run)
    finally:
        watcher.stop.set()
        thread.join(5)
    figures = [
        record(
            "crash_runs",
            "crash: SIGKILLed runs of a long session",
            tally.killed,
            ">=",
            runs * 3 // 4,
        ),
        record("crash_bad_atof", "crash: ATOF files with broken lines", len(tally.bad_atof)),
        record(
            "crash_bad_convert", "crash: conversions failing or invalid", len(tally.bad_convert)
        ),
        record("crash_half_atif", "crash: half-written ATIF files seen", len(watcher.broken)),
        record(
            "crash_next_run",
            "crash: failed next runs, resumes or stores",
            len(tally.bad_next_run) + len(tally.bad_store),
        ),
    ]
    print(
        f"\ncrash: a whole session takes {duration:.1f} s; "
        f"{tally.runs} runs, {tally.killed} killed, {tally.torn} torn tails, "
        f"{tally.converted} trajectories rebuilt, {watcher.reads} ATIF reads"
    )
    for problem in [
        *tally.bad_atof,
        *tally.bad_convert,
        *watcher.broken,
        *tally.bad_store,
        *tally.bad_next_run,
    ][:20]:
        print("  " + problem)
    assert watcher.reads > 0 and tally.converted > 0, "nothing was ever written"
    assert all(f.ok for f in figures), [f for f in figures if not f.ok]


def test_append_after_a_torn_tail_keeps_the_file_readable(
    tmp_path: Path, scripted_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run appending to an ATOF file whose last line was torn (power loss) keeps it readable."""
    from wayline.relay.atof import validate_atof
    from wayline.runtime import build_runtime

    server = scripted_server({"model": "scripted-model", "default": {"content": "fine"}})
    home, out = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    atof = out / "atof" / "events.jsonl"
    atof.parent.mkdir(parents=True)
    whole = (
        b'{"atof_version":"0.1","category":null,"category_profile":null,"data":null,'
        b'"data_schema":null,"kind":"mark","metadata":null,"name":"before","parent_uuid":null,'
        b'"timestamp":"2026-01-01T00:00:00Z","uuid":"01a20019-9490-77b0-81be-ceee9338b6b8"}\n'
    )
    atof.write_bytes(whole + b'{"atof_version":"0.1","kind":"scope","name":"hermes-sess')
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY", str(atof.parent))
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_FILENAME", atof.name)
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY", str(out / "atif"))
    write_config(home, server.base_url, plugins=("observability/relay",))
    runtime = build_runtime(home)
    agent = runtime.agent(cwd=tmp_path)
    assert agent.run_turn("hello").text == "fine"
    agent.finalize()
    from rel_support import shutdown_exporters

    shutdown_exporters(runtime)
    with pytest.warns(AtofTornLineWarning, match=":2: skipped incomplete line"):
        events = list(iter_events(atof))
    assert events[0]["name"] == "before"
    assert any(e.get("category") == "llm" for e in events)
    problems = validate_atof(atof)
    assert len(problems) == 1 and problems[0].startswith("line 2:"), problems
    with pytest.warns(AtofTornLineWarning):
        report = convert_file(atof, tmp_path / "converted")
    assert len(report.written) == 1
