"""P3: a one-shot ``wayline chat -q`` with relay + otel vs none, against a model with latency.

What a user runs: a fresh ``wayline chat -q ... -Q`` process (start-up and exit count) against
the scripted model server in its own process, where every model response takes 150 ms
(``delay: 0.15``): twelve rounds of two parallel ``read_file`` calls, then the answer, i.e.
13 model calls. One arm's ``WAYLINE_HOME`` enables ``observability/relay`` (ATOF + ATIF files)
and ``observability/otel`` (JSON-lines file exporter); the other's enables nothing. The figure
is the wall time of the whole process; rounds run both arms back to back, the first arm
alternating, and the line is the median of the rounds' ratios (this VM's speed drifts within
minutes, which a best-of per arm would hide in each arm's luckiest moment).

The first run of each arm is a warm-up (bytecode and page cache) and is checked: the plugin
arm must have written ATOF, ATIF and span files, the plain arm nothing.

    .venv/bin/python -m bench.cli_session [--rounds 20] [--json]

Prints the rows; never asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = 12
DELAY = 0.15
GOAL = "<= 1.03x"
LIMIT = 1.03
PLUGINS = ("observability/relay", "observability/otel")
PROMPT = "Read the files, twice each round."
FILE_TEXT = "READMARK alpha\nsecond line\nthird line\n"

_READS = [{"name": "read_file", "arguments": {"path": f"f{i}.txt"}} for i in range(2)]
SCRIPT: dict[str, Any] = {
    "model": "bench-model",
    "rules": [
        {
            "match": {},
            "turns": [
                *({"tool_calls": _READS, "delay": DELAY} for _ in range(ROUNDS)),
                {"content": "all files read", "delay": DELAY},
            ],
        }
    ],
}


def _command(url: str, workdir: Path) -> list[str]:
    """The CLI as installed next to this interpreter (``python -m wayline`` otherwise)."""
    script = Path(sys.executable).with_name("wayline")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "wayline"]
    return [
        *head,
        "chat",
        "-q",
        PROMPT,
        "--base-url",
        url,
        "-m",
        "bench-model",
        "-Q",
        "--workdir",
        str(workdir),
    ]


def write_home(path: Path, plugins: tuple[str, ...]) -> Path:
    """A WAYLINE_HOME with approvals off and, when given, the plugins (OTel to a file)."""
    path.mkdir(parents=True)
    lines = ["approvals:", '  mode: "off"']
    if plugins:
        lines += [
            "plugins:",
            f"  enabled: [{', '.join(plugins)}]",
            "  entries:",
            "    observability/otel:",
            "      exporter: file",
            f"      file: {path / 'otel' / 'spans.jsonl'}",
        ]
    (path / "config.yaml").write_text("\n".join(lines) + "\n")
    return path


def timed_run(command: list[str], home: Path, expect: str) -> float:
    """Wall seconds of one process (it must print ``expect`` and exit 0)."""
    env = {**os.environ, "WAYLINE_HOME": str(home), "WAYLINE_RELAY_ATOF_MODE": "overwrite"}
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0 or expect not in proc.stdout:
        raise RuntimeError(f"{command[0]} failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return seconds


def _outputs(home: Path) -> list[str]:
    skip = ("config.yaml", "sessions")
    return sorted(
        str(p.relative_to(home))
        for p in home.rglob("*")
        if p.is_file() and p.stat().st_size and not str(p.relative_to(home)).startswith(skip)
    )


def _check(plain: Path, traced: Path) -> None:
    """After the warm-up: the plugin arm wrote its files, the plain arm none."""
    found = _outputs(traced)
    kinds = {
        "ATOF": any(f.endswith(".jsonl") and "atof" in f for f in found),
        "ATIF": any(f.endswith(".json") and "atif" in f for f in found),
        "spans": any(f.endswith("spans.jsonl") for f in found),
    }
    missing = [k for k, ok in kinds.items() if not ok]
    if missing:
        raise RuntimeError(f"the plugin arm wrote no {missing} files (found {found})")
    if _outputs(plain):
        raise RuntimeError(f"the plain arm wrote plugin output: {_outputs(plain)}")


def run(rounds: int = 20) -> list[dict[str, Any]]:
    """Both arms, alternating; returns the suite row."""
    from bench.model_server import ModelServer

    tmp = Path(tempfile.mkdtemp(prefix="wayline-bench-cli-"))
    try:
        workdir = tmp / "work"
        workdir.mkdir()
        for i in range(2):
            (workdir / f"f{i}.txt").write_text(FILE_TEXT)
        homes = {
            "plain": write_home(tmp / "plain", ()),
            "plugins": write_home(tmp / "plugins", PLUGINS),
        }
        times: dict[str, list[float]] = {"plain": [], "plugins": []}
        with ModelServer(SCRIPT, tmp) as server:
            command = _command(server.base_url, workdir)
            for label in ("plain", "plugins"):
                timed_run(command, homes[label], "all files read")
            _check(homes["plain"], homes["plugins"])
            for index in range(rounds):
                order = ("plain", "plugins") if index % 2 == 0 else ("plugins", "plain")
                for label in order:
                    times[label].append(timed_run(command, homes[label], "all files read"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratios = sorted(p / q for p, q in zip(times["plugins"], times["plain"], strict=True))
    ratio = statistics.median(ratios)
    plugin_s, plain_s = statistics.median(times["plugins"]), statistics.median(times["plain"])
    return [
        {
            "line": "P3",
            "name": f"one-shot `wayline chat -q`, {ROUNDS + 1} model calls at "
            f"{DELAY * 1000:.0f} ms, relay+otel / no plugins",
            "wayline": round(plugin_s, 3),
            "reference": round(plain_s, 3),
            "reference_is": "the same CLI process with no plugins",
            "unit": "s",
            "ratio": round(ratio, 3),
            "goal": GOAL,
            "passed": ratio <= LIMIT,
            "detail": f"median of {rounds} alternating rounds' ratios (rounds "
            f"{ratios[0]:.3f}-{ratios[-1]:.3f}x); median seconds: plugins {plugin_s:.3f}, "
            f"plain {plain_s:.3f}; {ROUNDS} rounds of 2 parallel read_file + answer; model "
            "server in its own process",
        }
    ]


def main() -> None:
    """Print the row (``--json``: one JSON document, for ``python -m bench``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run(args.rounds)
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
