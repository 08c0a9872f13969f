"""Benchmark D: ``wayline diff`` at 1,000 and 50,000 steps (the step alignment is n log n).

The old trajectory is ``bench/viewer.py``'s synthetic coding-agent session; the new one is
the same session edited as a replay that diverged would be: about one step in 200 dropped,
one in 200 with other arguments and one in 200 followed by an extra step. Lines:

- per-step cost at 50,000 against 1,000 steps: reading both files, comparing and rendering
  every difference, in this process (CPU seconds, best of ``--rounds``; the small pair is
  compared enough times per round to take about as long as the large one);
- ``wayline diff`` of the 50,000-step pair as a command (a fresh process, start-up included),
  wall seconds, best of ``--rounds``;
- information: two unrelated 10,000-step sessions (no step in common), the alignment's worst
  case, as a command.

    .venv/bin/python -m bench.diff [--sizes 1000,50000] [--rounds 3] [--json]

Prints measured/goal lines; nothing here asserts on time in a test.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.rows import print_rows
from bench.viewer import trajectory

GOAL_RATIO = 1.5
GOAL_SECONDS = 10.0


def edited(old: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    """``old`` with about 1.5% of its steps dropped, changed or followed by an extra step."""
    rng = random.Random(seed)
    new = copy.deepcopy(old)
    steps: list[dict[str, Any]] = []
    for n, step in enumerate(new["steps"]):
        roll = rng.random()
        if n and roll < 0.005:
            continue
        if n and roll < 0.01:
            step["tool_calls"][0]["arguments"] = {"path": "src/app/changed.py"}
        steps.append(step)
        if n and 0.01 <= roll < 0.015:
            extra = copy.deepcopy(step)
            extra["message"] = "One more look before the change."
            steps.append(extra)
    new["steps"] = steps
    return new


def _pair(directory: Path, size: int) -> tuple[Path, Path]:
    old = trajectory(size)
    a, b = directory / f"old-{size}.json", directory / f"new-{size}.json"
    a.write_text(json.dumps(old))
    b.write_text(json.dumps(edited(old)))
    return a, b


def _in_process(a: Path, b: Path) -> int:
    """What ``wayline diff`` does between start-up and exit; the number of differences."""
    from wayline.trajectory.compare import CompareOptions, compare
    from wayline.trajectory.load import load_trajectory

    found = compare(load_trajectory(a), load_trajectory(b), CompareOptions())
    text = "\n".join(d.describe() for d in found)
    return len(found) if text or not found else 0


def _cpu_per_step(a: Path, b: Path, size: int, repeat: int) -> tuple[float, int]:
    began = time.process_time()
    count = 0
    for _ in range(repeat):
        count = _in_process(a, b)
    return (time.process_time() - began) / (repeat * size), count


def _command(a: Path, b: Path) -> float:
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "diff", str(a), str(b)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - began
    if proc.returncode != 1:
        raise RuntimeError(f"wayline diff exited {proc.returncode}: {proc.stderr[-500:]}")
    return seconds


def run(sizes: tuple[int, int], rounds: int) -> list[dict[str, Any]]:
    """The D rows: per-step cost ratio, the large pair as a command, unrelated sessions."""
    small, large = sizes
    with tempfile.TemporaryDirectory(prefix="wayline-bench-diff-") as name:
        directory = Path(name)
        pairs = {size: _pair(directory, size) for size in sizes}
        repeat = max(1, large // small)
        best = {small: float("inf"), large: float("inf")}
        counts: dict[int, int] = {}
        command = float("inf")
        for _ in range(rounds):
            for size in sizes:
                cost, counts[size] = _cpu_per_step(
                    *pairs[size], size, repeat if size == small else 1
                )
                best[size] = min(best[size], cost)
            command = min(command, _command(*pairs[large]))
        unrelated_a = directory / "unrelated-a.json"
        unrelated_b = directory / "unrelated-b.json"
        unrelated_a.write_text(json.dumps(trajectory(10_000, seed=7)))
        unrelated_b.write_text(json.dumps(trajectory(10_000, seed=8)))
        unrelated = _command(unrelated_a, unrelated_b)
    ratio = best[large] / best[small]
    return [
        {
            "line": "D",
            "name": f"diff: CPU µs/step at {large:,} vs {small:,} steps (read, align, describe)",
            "wayline": round(best[large] * 1e6, 1),
            "reference": round(best[small] * 1e6, 1),
            "reference_is": f"the same diff at {small:,} steps",
            "unit": "µs/step",
            "ratio": round(ratio, 3),
            "goal": f"<= {GOAL_RATIO}x",
            "passed": ratio <= GOAL_RATIO,
            "detail": f"{counts[small]} and {counts[large]} differences; best of {rounds}",
        },
        {
            "line": "D",
            "name": f"`wayline diff` of two {large:,}-step trajectories (one process)",
            "wayline": round(command, 2),
            "unit": "s",
            "goal": f"<= {GOAL_SECONDS:g} s",
            "passed": command <= GOAL_SECONDS,
        },
        {
            "line": "D",
            "name": "`wayline diff` of two unrelated 10,000-step sessions (information)",
            "wayline": round(unrelated, 2),
            "unit": "s",
        },
    ]


def main() -> None:
    """Command line: the two sizes and the rounds; ``--json`` prints the rows for the suite."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,50000", help="small,large")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON line")
    args = parser.parse_args()
    small, large = (int(s) for s in args.sizes.split(","))
    rows = run((small, large), args.rounds)
    print_rows(rows, args.json)


if __name__ == "__main__":
    main()
