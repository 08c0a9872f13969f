"""Benchmark W: ``wayline serve``'s first screen over 10,000 sessions, and its memory.

The sessions are line I's (``bench/sessions.py``): one real session recorded with
``wayline.Agent`` and the relay plugin against the scripted model server, then N sessions of S
steps generated from it as ATIF files (their own ids, start times over 30 days, four models,
three tools, every 20th ending in a failed model call). By default S is 10, not line I's 100:
the first screen asks the index about sessions (its list and its charts), not about their
steps, and 10,000 sessions of 10 steps index in seconds instead of a minute. ``--steps 100``
serves line I's full million steps.

The index is built first (``wayline sessions index``), then ``wayline serve DIR`` starts as
a fresh process on a free port of 127.0.0.1. Figures:

- first screen: ``GET /`` (the list page, with its charts drawn from ``stats`` by day, model
  and tool) then ``GET /api/sessions`` (the list's first request), back to back as the page
  makes them; the first after start and the p95 of the rounds (goal <= 1,000 ms each). A
  request updates the index first (what changed only) when its last update is older than
  ``FRESH_SECONDS``, so most back-to-back rounds answer from the index as it is;
- the first screen when an update is due: the same after a pause of ``FRESH_SECONDS``, so
  its page request walks the folder first (p95; goal <= 1,000 ms);
- the server's peak RSS after the rounds, a search, ``stats`` and a live stream (goal <= 300
  MB);
- the server's CPU while one live page listens (information): the index is updated every
  quarter of a second then.

    .venv/bin/python -m bench.serve [--sessions 10000] [--steps 10] [--rounds 20] [--json]

Prints measured/goal lines (``--json``: one JSON list of rows for ``python -m bench``); it
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.rows import print_rows
from bench.sessions import Generator, index_process, p95, record, write_sessions
from wayline.serve.hub import FRESH_SECONDS

GOALS = {"first": 1000.0, "rss": 300.0}
LISTEN_SECONDS = 5.0

JsonDict = dict[str, Any]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as answer:
        body: bytes = answer.read()
        return body


def _status(pid: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def _first_screen(base: str) -> tuple[float, float, float]:
    """Milliseconds for the page, then for its list request, and both."""
    started = time.perf_counter()
    page = _get(base + "/")
    middle = time.perf_counter()
    rows = json.loads(_get(base + "/api/sessions"))
    done = time.perf_counter()
    if b'id="charts"' not in page or len(rows) != 50:
        raise RuntimeError(f"unexpected first screen: {len(page)} bytes, {len(rows)} rows")
    return (middle - started) * 1000, (done - middle) * 1000, (done - started) * 1000


def _row(name: str, value: float, unit: str, goal: float | None, **extra: Any) -> JsonDict:
    row: JsonDict = {"line": "W", "name": name, "wayline": round(value, 1), "unit": unit}
    if goal is not None:
        row["goal"] = f"<= {goal:g} {unit}"
        row["passed"] = value <= goal
    row.update(extra)
    return row


def _listen(base: str, stop: threading.Event) -> None:
    """Hold one live stream open (as a list page does) until ``stop``."""
    with urllib.request.urlopen(base + "/api/live", timeout=120) as stream:
        while not stop.is_set():
            if not stream.readline():
                return


def run(count: int, steps: int, rounds: int) -> list[JsonDict]:
    """Every row of line W (see the module doc)."""
    rows: list[JsonDict] = []
    with tempfile.TemporaryDirectory(prefix="wayline-bench-serve-") as name:
        work = Path(name)
        template, _events = record(work / "template")
        folder = work / "atif"
        folder.mkdir()
        size = write_sessions(folder, Generator(template, steps, count), range(count))
        index = work / "index.sqlite"
        seconds, _rss, _said = index_process(folder, index)
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
        env["WAYLINE_HOME"] = str(work / "home")
        log = (work / "serve.log").open("wb")
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "wayline", "serve", str(folder), "--index", str(index),
             "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            while True:
                try:
                    first = _first_screen(base)
                    break
                except OSError:
                    if proc.poll() is not None or time.perf_counter() - started > 300:
                        raise RuntimeError((work / "serve.log").read_text()[-2000:]) from None
                    time.sleep(0.05)
            up = (time.perf_counter() - started) * 1000
            measured = [_first_screen(base) for _ in range(rounds)]
            due: list[tuple[float, float, float]] = []
            for _ in range(max(3, rounds // 4)):
                time.sleep(FRESH_SECONDS + 0.05)
                due.append(_first_screen(base))
            _get(base + "/api/search?q=database%20failover")
            _get(base + "/api/stats?by=tool")
            stop = threading.Event()
            listener = threading.Thread(target=_listen, args=(base, stop), daemon=True)
            cpu_before = _cpu_seconds(proc.pid)
            listener.start()
            time.sleep(LISTEN_SECONDS)
            cpu = (_cpu_seconds(proc.pid) - cpu_before) / LISTEN_SECONDS
            status = _status(proc.pid)
            stop.set()
        finally:
            proc.terminate()
            proc.wait(timeout=60)
            log.close()
        total = f"{count:,} sessions of {steps} steps ({size / 1e6:,.0f} MB of ATIF)"
        pages = sorted(m[0] for m in measured)
        lists = sorted(m[1] for m in measured)
        rows.append(
            _row(
                f"serve first screen, p95 of {rounds}: GET / (charts) + GET /api/sessions, {total}",
                p95([m[2] for m in measured]),
                "ms",
                GOALS["first"],
                detail=f"page p95 {p95(pages):.1f} ms, list p95 {p95(lists):.1f} ms; "
                f"index built beforehand in {seconds:.1f} s",
            )
        )
        rows.append(
            _row(
                f"serve first screen with an index update due (after {FRESH_SECONDS:g} s), "
                f"p95 of {len(due)}",
                p95([m[2] for m in due]),
                "ms",
                GOALS["first"],
                detail=f"page p95 {p95(sorted(m[0] for m in due)):.1f} ms, "
                f"list p95 {p95(sorted(m[1] for m in due)):.1f} ms",
            )
        )
        rows.append(
            _row(
                "serve first screen, the first after start (page + list)",
                first[2],
                "ms",
                GOALS["first"],
                detail=f"page {first[0]:.1f} ms, list {first[1]:.1f} ms; start to first screen "
                f"{up:.0f} ms (the process's start-up and its first index update included)",
            )
        )
        peak = float(status["VmHWM"].split()[0]) / 1024
        rows.append(
            _row(
                "serve peak RSS (first screens, a search, stats, a live stream)",
                peak,
                "MB",
                GOALS["rss"],
                detail=f"RSS at the end {float(status['VmRSS'].split()[0]) / 1024:.0f} MB",
            )
        )
        rows.append(
            _row(
                "serve CPU with one live page open (index updated every 0.25 s; information)",
                cpu * 100,
                "% of a core",
                None,
            )
        )
    return rows


def main() -> None:
    """Command line: sizes and rounds; ``--json`` prints the rows for ``python -m bench``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON line")
    args = parser.parse_args()
    rows = run(args.sessions, args.steps, args.rounds)
    print_rows(rows, args.json)


if __name__ == "__main__":
    main()
