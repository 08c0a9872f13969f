"""P3-efficiency: what each observer costs per hook, replaying one captured hook stream.

One hook stream is captured from a real wayline session (``bench/hookstream.py``: tools,
parallel batches, a subagent) and replayed, in rounds, into four observers, each in a fresh
process of its own (``bench/replay.py``) so one arm's threads never share a process with
another's:

* (a) wayline's ``observability/relay`` against (b) Hermes Agent 0.19.0's bundled
  ``plugins.observability.nemo_relay`` with nemo-relay 0.10.4 (in ``.venv-bench``), both
  writing ATOF and ATIF;
* (c) wayline's ``observability/otel`` against (d) a plain OTel-SDK observer
  (``bench/plain_otel.py``), both through a ``BatchSpanProcessor`` into the same JSON-lines
  file exporter.

Each process replays the stream ``REPEAT`` times with a 1 ms gap after every hook call (the
agent would be waiting for its model or tools there, which is when a background thread
runs). Per arm: the mean µs a hook call blocks its caller, and the process CPU µs per hook
call from the first hook until everything is written. A fifth arm with no observer measures
the replay loop itself (its timer calls, the 1 ms sleeps), which every other arm pays too;
it is subtracted, round by round, so the figures are what the observer costs. The arms'
order alternates round by round; each line is the median of the rounds' ratios, and the
columns give each arm's median net figure.

The (a), (c) and (d) arms run behind wayline's hook bus semantics: the API hooks' request
and response arrive unsanitized, a queued observer sanitizes them on its own thread and a
plain one (d) gets them sanitized on the calling thread, as the bus does. Tool definitions
and conversation messages are the same objects call after call, as in a live agent.

    .venv/bin/python -m bench.efficiency [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import env

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 4
GAP_MS = 1.0
ARMS = ("relay", "hermes", "otel", "plain-otel", "none")
BLOCK = "µs a hook call blocks its caller"
PAIRS: tuple[tuple[str, str, str, tuple[tuple[str, str, float], ...]], ...] = (
    # (wayline arm, reference arm, what, ((figure, label, goal), ...))
    (
        "relay",
        "hermes",
        "relay plugin / Hermes 0.19.0 nemo_relay plugin + Relay 0.10.4",
        (
            ("block_no_finalize_us", f"{BLOCK}, on_session_finalize excluded", 0.05),
            ("finalize_us", "µs on_session_finalize waits for the session's files", 1.0),
            ("cpu_us", "process CPU µs per hook call until written", 0.5),
        ),
    ),
    (
        "otel",
        "plain-otel",
        "otel plugin / plain OTel-SDK observer",
        (
            ("block_us", BLOCK, 0.1),
            ("cpu_us", "process CPU µs per hook call until written", 1.1),
        ),
    ),
)
SAME_RECORD = ("otel", "plain-otel")  # arms whose files must record the same shape


def _python(arm: str) -> str:
    return str(env.python()) if arm == "hermes" else sys.executable


def _replay(arm: str, stream: Path, out: Path) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.run(
        [
            _python(arm),
            "-m",
            "bench.replay",
            arm,
            str(stream),
            str(out),
            "--repeat",
            str(REPEAT),
            "--gap-ms",
            str(GAP_MS),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"replay {arm} failed:\n{proc.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    if arm != "none" and not figures["files"]:
        raise RuntimeError(f"replay {arm} wrote no files")
    if arm in SAME_RECORD:
        from bench.plain_otel import record_shape

        figures["shape"] = record_shape(out / "spans.jsonl")
    return figures


def capture(path: Path) -> int:
    """Capture the hook stream into ``path`` (a fresh process); returns its hook count."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.hookstream", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"hook stream capture failed:\n{proc.stderr[-2000:]}")
    return len(json.loads(path.read_text())["hooks"])


def run(rounds: int = 5) -> list[dict[str, Any]]:
    """Capture, replay every arm ``rounds`` times in alternating order; the suite rows."""
    tmp = Path(tempfile.mkdtemp(prefix="wayline-bench-eff-"))
    try:
        stream = tmp / "hook-stream.json"
        captured = capture(stream)
        results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
        for index in range(rounds):
            for arm in ARMS if index % 2 == 0 else ARMS[::-1]:
                results[arm].append(_replay(arm, stream, tmp / arm))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows(results, rounds, captured)


def _median(results: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(r[key]) for r in results)


def _net(result: dict[str, Any], loop: dict[str, Any], key: str) -> float:
    """``result[key]`` minus the replay loop's own cost in the same round (at least 0.01)."""
    return max(float(result[key]) - float(loop[key]), 0.01)


def _net_median(results: list[dict[str, Any]], loop: list[dict[str, Any]], key: str) -> float:
    return statistics.median(_net(r, n, key) for r, n in zip(results, loop, strict=True))


def rows(results: dict[str, list[dict[str, Any]]], rounds: int, captured: int) -> list[Any]:
    """The same-record check, then one row per figure of each pair: the median of the
    rounds' ratios."""
    loop = results["none"]
    out = [_same_record(results)]
    for mine, ref, what, figures in PAIRS:
        calls = {results[mine][0]["hook_calls"], results[ref][0]["hook_calls"]}
        for key, label, goal in figures:
            ratios = sorted(
                _net(a, none, key) / _net(b, none, key)
                for a, b, none in zip(results[mine], results[ref], loop, strict=True)
            )
            ratio = statistics.median(ratios)
            hooks = ", ".join(
                f"{name} {us:.0f}/{results[ref][0]['per_hook_block_us'].get(name, 0):.0f}"
                for name, us in results[mine][0]["per_hook_block_us"].items()
            )
            detail = (
                f"{sorted(calls)} hook calls per process ({REPEAT} replays of a "
                f"{captured}-hook stream, {GAP_MS:g} ms gap after each call); median of "
                f"{rounds} alternating rounds' ratios (rounds {ratios[0]:.3f}-"
                f"{ratios[-1]:.3f}x); replay loop alone: {_median(loop, key):.1f} µs "
                f"(subtracted); gross {_median(results[mine], key):.1f} vs "
                f"{_median(results[ref], key):.1f} µs"
            )
            if key.startswith("block"):
                detail += f"; first round µs per hook ({mine}/{ref}): {hooks}"
            out.append(
                {
                    "line": "P3-eff",
                    "name": f"{what}: {label}",
                    "wayline": round(_net_median(results[mine], loop, key), 1),
                    "reference": round(_net_median(results[ref], loop, key), 1),
                    "reference_is": ref,
                    "unit": "µs",
                    "ratio": round(ratio, 3),
                    "goal": f"<= {goal:g}x",
                    "passed": ratio <= goal,
                    "detail": detail,
                }
            )
    return out


def _same_record(results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Whether the otel plugin and the plain observer recorded the same attribute keys on
    each kind of span and the same metric points (so the CPU line compares equal work)."""
    mine, ref = SAME_RECORD
    shapes = [r["shape"] for r in (*results[mine], *results[ref])]
    differ = sorted(
        {
            f"{name}: {key}"
            for shape in shapes
            for other in shapes
            for name in set(shape) | set(other)
            for key in set(shape.get(name, ())) ^ set(other.get(name, ()))
        }
    )
    kinds = sum(1 for name in shapes[0] if name.startswith("span "))
    metrics = len(shapes[0]) - kinds
    return {
        "line": "P3-eff",
        "name": "otel plugin / plain OTel-SDK observer: attribute keys and metric points "
        "that differ (every round)",
        "wayline": len(differ),
        "reference": None,
        "unit": "keys",
        "ratio": None,
        "goal": "0",
        "passed": not differ,
        "detail": (
            f"{kinds} kinds of span, {metrics} metrics, "
            f"{sum(len(keys) for keys in shapes[0].values())} keys compared"
            + (f"; differing: {', '.join(differ[:12])}" if differ else "")
        ),
    }


def main() -> None:
    """Print the rows (``--json``: one JSON document, for ``python -m bench``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env.ensure()
    result = run(args.rounds)
    if args.json:
        print(json.dumps(result))
        return
    for row in result:
        print(row)


if __name__ == "__main__":
    main()
