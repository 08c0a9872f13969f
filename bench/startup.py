"""Start-up: a one-shot ``wayline chat -q`` vs a plain 10-line openai SDK script.

What this measures is one-shot CLI start-up included: the wall time of a fresh process that
asks a zero-latency model (the scripted server, in its own process, answering at once) one
question and exits. For ``wayline chat -q ... -Q`` that is interpreter start, the CLI, config
and plugins, the SDK, the call, the transcript, the hooks and exporters, and exit. The
reference is the least a Python program can do to make the same call: the script below, with
the same interpreter. Three arms: the plain script, wayline with no plugins, and wayline with
``observability/relay`` (ATOF + ATIF) and ``observability/otel`` (file exporter). Rounds run
the arms back to back in rotating order; each line is the median of the rounds' ratios
(this machine's speed drifts within minutes). The first run of each arm is a warm-up
(bytecode and page cache), and it is checked: both answers arrive, and the plugin arm wrote
its files. The arms run without ``PYTHONDONTWRITEBYTECODE``, so that the warm-up writes the
bytecode an installed wayline has: with it set, every module edited since its last ``.pyc``
was written would be compiled from source again in every timed run. Likewise the warm-up
fills a user cache of the run's own (``XDG_CACHE_HOME`` in its temporary directory: parsed
YAML, price lookups), as any earlier run fills an installed wayline's, and nothing else
(tests, other runs) can change it between rounds.

    .venv/bin/python -m bench.startup [--rounds 15] [--json]

Prints the rows; never asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.cli_session import timed_run, write_home

ANSWER = "ready"
SCRIPT: dict[str, Any] = {"model": "bench-model", "default": {"content": ANSWER}}
PLUGINS = ("observability/relay", "observability/otel")
GOALS = {"plain": 1.10, "plugins": 1.20}

PLAIN_SCRIPT = """\
import sys

import openai

client = openai.OpenAI(base_url=sys.argv[1], api_key="bench", max_retries=0)
reply = client.chat.completions.create(
    model="bench-model", messages=[{"role": "user", "content": "hi"}]
)
print(reply.choices[0].message.content)
"""


def _wayline(url: str, workdir: Path) -> list[str]:
    script = Path(sys.executable).with_name("wayline")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "wayline"]
    return [
        *head,
        "chat",
        "-q",
        "hi",
        "--base-url",
        url,
        "-m",
        "bench-model",
        "-Q",
        "--workdir",
        str(workdir),
    ]


def _check(traced: Path) -> None:
    """After the warm-up: the plugin arm wrote ATOF, ATIF and span files."""
    found = [str(p.relative_to(traced)) for p in traced.rglob("*") if p.is_file()]
    for kind, ok in {
        "ATOF": any("atof" in f and f.endswith(".jsonl") for f in found),
        "ATIF": any("atif" in f and f.endswith(".json") for f in found),
        "spans": any(f.endswith("spans.jsonl") for f in found),
    }.items():
        if not ok:
            raise RuntimeError(f"the plugin arm wrote no {kind} file (found {found})")


def run(rounds: int = 15) -> list[dict[str, Any]]:
    """All three arms, rotating; returns the suite rows."""
    from bench.model_server import ModelServer

    # This process's children only (the suite runs each line in a process of its own).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    tmp = Path(tempfile.mkdtemp(prefix="wayline-bench-startup-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    try:
        workdir = tmp / "work"
        workdir.mkdir()
        plain_script = tmp / "plain_call.py"
        plain_script.write_text(PLAIN_SCRIPT)
        homes = {
            "sdk": write_home(tmp / "sdk", ()),
            "plain": write_home(tmp / "plain", ()),
            "plugins": write_home(tmp / "plugins", PLUGINS),
        }
        times: dict[str, list[float]] = {arm: [] for arm in homes}
        with ModelServer(SCRIPT, tmp) as server:
            commands = {
                "sdk": [sys.executable, str(plain_script), server.base_url],
                "plain": _wayline(server.base_url, workdir),
                "plugins": _wayline(server.base_url, workdir),
            }
            for arm in homes:
                timed_run(commands[arm], homes[arm], ANSWER)
            _check(homes["plugins"])
            arms = list(homes)
            for index in range(rounds):
                shift = index % len(arms)
                for arm in arms[shift:] + arms[:shift]:
                    times[arm].append(timed_run(commands[arm], homes[arm], ANSWER))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sdk_s = statistics.median(times["sdk"])
    rows = []
    for arm, label in (("plain", "no plugins"), ("plugins", "relay+otel")):
        ratios = sorted(w / s for w, s in zip(times[arm], times["sdk"], strict=True))
        ratio = statistics.median(ratios)
        limit = GOALS[arm]
        rows.append(
            {
                "line": "S",
                "name": f"start-up: one-shot `wayline chat -q`, zero-latency model, {label} "
                "/ a 10-line openai SDK script (CLI start-up included)",
                "wayline": round(statistics.median(times[arm]), 3),
                "reference": round(sdk_s, 3),
                "reference_is": "the same call from a plain openai SDK script, same interpreter",
                "unit": "s",
                "ratio": round(ratio, 3),
                "goal": f"<= {limit:.2f}x",
                "passed": ratio <= limit,
                "detail": f"median of {rounds} rotating rounds' ratios (rounds "
                f"{ratios[0]:.3f}-{ratios[-1]:.3f}x); whole processes, start to exit; model "
                "server in its own process",
            }
        )
    return rows


def main() -> None:
    """Print the rows (``--json``: one JSON document, for ``python -m bench``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run(args.rounds)
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(
            f"{row['name']}: {row['wayline']} s vs {row['reference']} s = {row['ratio']}x "
            f"(goal {row['goal']}; {row['detail']})"
        )


if __name__ == "__main__":
    main()
