"""Benchmark J: peak memory of every file command given a 400 MB file that is no trajectory.

Two junk files are written to a temporary directory: log-like text lines (not JSON) and JSON
lines that are neither ATIF nor ATOF (``{"level": …, "msg": …}``), both named ``*.json``. Each
file command runs on each as a fresh process; its peak RSS (``ru_maxrss`` from ``os.wait4``)
is compared with the same command's on a 1 KB file of the same junk, so the figure is what the
input's size added. Every command must refuse both with one ``error:`` line and exit 2.

    .venv/bin/python -m bench.junk [--megabytes 400] [--json]

Prints measured/goal lines; nothing here asserts on time or memory in a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

GOAL_MB = 100.0
REFERENCE = Path(__file__).resolve().parent.parent / "tests" / "data" / "hermes_relay.atif.json"
COMMANDS: dict[str, list[str]] = {
    "view": ["view", "-o", "{out}/page.html"],
    "replay": ["replay", "-o", "{out}/new.json"],
    "diff": ["diff", str(REFERENCE)],
    "export sft": ["export", "sft", "-o", "{out}/sft.jsonl"],
    "export otlp": ["export", "otlp", "--endpoint", "http://127.0.0.1:9"],
    "atif convert": ["atif", "convert", "-o", "{out}/converted"],
    "atif validate": ["atif", "validate"],
    "atof validate": ["atof", "validate"],
}
_LINES = {
    "text": b"2026-11-28 12:00:00 INFO worker 17 served a request in 12 ms from 10.0.0.7\n",
    "json-lines": b'{"level": "info", "msg": "served a request", "ms": 12, "worker": 17}\n',
}


def write_junk(path: Path, line: bytes, size: int) -> None:
    """``size`` bytes (rounded down to whole lines) of ``line`` repeated."""
    block = line * max(1, (1 << 20) // len(line))
    with path.open("wb") as handle:
        written = 0
        while written + len(block) <= size:
            handle.write(block)
            written += len(block)
        handle.write(line * ((size - written) // len(line)))


def peak_rss_mb(args: list[str], cwd: Path) -> tuple[float, int, str]:
    """Peak RSS (MB) of ``wayline ARGS`` as a fresh process, its exit status and stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env["WAYLINE_HOME"] = str(cwd / "home")
    with open(cwd / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "wayline", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, proc.returncode, (cwd / "stderr.txt").read_text()


def run(megabytes: int) -> list[dict[str, Any]]:
    """One row per command: the most its peak RSS grew with the input, over both junk kinds."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wayline-bench-junk-") as name:
        directory = Path(name)
        files: dict[str, tuple[Path, Path]] = {}
        for kind, line in _LINES.items():
            big, small = directory / f"{kind}-big.json", directory / f"{kind}-small.json"
            write_junk(big, line, megabytes << 20)
            write_junk(small, line, 1024)
            files[kind] = (big, small)
        for command, template in COMMANDS.items():
            args = [a.replace("{out}", str(directory / "out")) for a in template]
            grown: dict[str, float] = {}
            refused = True
            for kind, (big, small) in files.items():
                base, base_code, _ = peak_rss_mb([*args, str(small)], directory)
                peak, code, stderr = peak_rss_mb([*args, str(big)], directory)
                grown[kind] = peak - base
                lines = stderr.strip().splitlines()
                one_error = bool(lines) and lines[-1].startswith("error: ")
                refused = refused and code == base_code == 2 and one_error
            worst = max(0.0, *grown.values())  # below zero is the runs' noise
            detail = ", ".join(f"{kind} +{mb:.1f} MB" for kind, mb in grown.items())
            rows.append(
                {
                    "line": "J",
                    "name": f"{command}: peak RSS added by a {megabytes} MB non-trajectory file",
                    "wayline": round(worst, 1),
                    "unit": "MB",
                    "goal": f"<= {GOAL_MB:g} MB, one error line, exit 2",
                    "passed": worst <= GOAL_MB and refused,
                    "detail": f"{detail}; refused with one error line and exit 2: {refused}",
                }
            )
    return rows


def main() -> None:
    """Command line: the junk's size; ``--json`` prints the rows for ``python -m bench``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=400)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON line")
    args = parser.parse_args()
    rows = run(args.megabytes)
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        verdict = "pass" if row["passed"] else "MISS"
        print(
            f"{row['name']}: +{row['wayline']} MB / goal {row['goal']}  {verdict} ({row['detail']})"
        )


if __name__ == "__main__":
    main()
