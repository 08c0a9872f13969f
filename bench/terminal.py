"""The terminal tool's latency on a short command, against a bare ``subprocess.run``.

    .venv/bin/python -m bench.terminal [--calls 100]

Both run ``echo T1`` through ``sh -c``, alternating call by call, in one process; prints
the medians and their ratio. The tool used to sleep a whole 50 ms poll period when the
command's output closed a moment before its exit status was ready (most short commands:
a 52 ms median); it now waits for the exit itself. Never asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace


def main() -> None:
    """Print ``terminal tool / bare subprocess`` median latencies and their ratio."""
    from wayline.runtime.tools import terminal

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    ctx = SimpleNamespace(cancel=threading.Event())
    cwd = Path.cwd()
    tool: list[float] = []
    bare: list[float] = []
    for _ in range(args.calls):
        t0 = time.perf_counter()
        terminal._run("echo T1", cwd, 30.0, ctx, 100_000)  # type: ignore[arg-type]
        tool.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run(["sh", "-c", "echo T1"], capture_output=True, check=True)
        bare.append(time.perf_counter() - t0)
    t, b = statistics.median(tool) * 1000, statistics.median(bare) * 1000
    print(
        f"terminal tool {t:.2f} ms, bare subprocess {b:.2f} ms (medians of {args.calls}): "
        f"tool/bare = {t / b:.2f}x"
    )


if __name__ == "__main__":
    main()
