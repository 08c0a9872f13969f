"""P3 (information): a zero-latency 100-turn session with relay + otel vs no plugins, in-process.

Every user turn runs ``terminal`` (``echo``), then four parallel ``read_file`` calls, then
answers; every tenth turn also delegates one child (which reads two files). The same script,
server, working directory and settings serve both arms; the only difference is that one
runtime has ``observability/relay`` (ATOF + ATIF files) and ``observability/otel`` (JSON-lines
file exporter) enabled. The arms alternate, in rounds (which one goes first alternates too),
and the figure is the median of the rounds' ratios. The plugin arm's time includes
``finalize()`` waiting for the relay's files and flushing the OpenTelemetry exporter.

The model answers in microseconds here, so the hook thread competes with the agent for the
interpreter and the CPU all the time: no user runs this session, which is why it is an
information row (the goal line is ``bench/cli_session.py``). The CPU seconds of the agent's
process per session are printed too: they swing less than wall time.

The model server runs in its own process (``bench/model_server.py``), as a real one would.

    .venv/bin/python -m bench.session [--rounds 9] [--turns 100] [--plugins a,b] [--json]
                                      [--inline-server]

Prints the ratio; never asserts on time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TURNS = 100
DELEGATE_EVERY = 10
READS = 4

FILE_TEXT = "READMARK alpha\nsecond line\nthird line\n"


def _reads(n: int) -> list[dict[str, Any]]:
    return [{"name": "read_file", "arguments": {"path": f"f{i % 4}.txt"}} for i in range(n)]


SCRIPT: dict[str, Any] = {
    "model": "bench-model",
    "rules": [
        # A child's conversation starts with its goal; it reads two files and answers.
        {
            "match": {"first_user_contains": "CHILDTASK", "last_role": "user"},
            "respond": {"tool_calls": _reads(2)},
        },
        {
            "match": {"first_user_contains": "CHILDTASK", "last_role": "tool"},
            "respond": {"content": "child done"},
        },
        # The parent: terminal, then parallel reads, then (every tenth turn) a delegation.
        {
            "match": {"last_role": "user"},
            "respond": {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo T1"}}]},
        },
        {
            "match": {"last_role": "tool", "last_contains": "T1"},
            "respond": {"tool_calls": _reads(READS)},
        },
        {
            "match": {
                "last_role": "tool",
                "last_user_contains": "DELEGATE",
                "last_contains": "READMARK",
            },
            "respond": {
                "tool_calls": [
                    {
                        "name": "delegate_task",
                        "arguments": {"goal": "CHILDTASK read two files", "toolsets": ["file"]},
                    }
                ]
            },
        },
        {"match": {"last_role": "tool"}, "respond": {"content": "turn done"}},
    ],
}


def prompt(turn: int) -> str:
    """The user message of turn ``turn`` (1-based): every tenth one asks for a delegation."""
    kind = "DELEGATE" if turn % DELEGATE_EVERY == 0 else "WORK"
    return f"{kind} turn {turn}: run the command, read the files"


def _session(runtime: Any, workdir: Path, turns: int) -> int:
    """One whole session; returns the number of API calls it made (children's included)."""
    agent = runtime.agent(cwd=workdir)
    for turn in range(1, turns + 1):
        result = agent.run_turn(prompt(turn))
        if not result.completed:
            raise RuntimeError(f"turn {turn} did not complete: {result.reason} {result.text}")
    agent.finalize()
    children = (turns // DELEGATE_EVERY) * 2  # each child: the read call, then its answer
    return agent.api_calls + children


PLUGINS = ("observability/relay", "observability/otel")


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "-"


def _write_config(home: Path, plugins: tuple[str, ...], otel_file: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    lines = ["approvals:", '  mode: "off"', "delegation:", "  max_concurrent_children: 16"]
    if plugins:
        lines += [
            "plugins:",
            f"  enabled: [{', '.join(plugins)}]",
            "  entries:",
            "    observability/otel:",
            "      exporter: file",
            f"      file: {otel_file}",
        ]
    (home / "config.yaml").write_text("\n".join(lines) + "\n")


def run(
    rounds: int = 5,
    turns: int = TURNS,
    plugins: tuple[str, ...] = PLUGINS,
    inline_server: bool = False,
) -> list[dict[str, Any]]:
    """Measure both arms; returns the suite row."""
    from bench.model_server import ModelServer
    from wayline.runtime import build_runtime

    tmp = Path(tempfile.mkdtemp(prefix="wayline-bench-session-"))
    workdir = tmp / "work"
    workdir.mkdir()
    for i in range(4):
        (workdir / f"f{i}.txt").write_text(FILE_TEXT)
    out = tmp / "out"
    os.environ["WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY"] = str(out / "atof")
    os.environ["WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY"] = str(out / "atif")
    os.environ["WAYLINE_RELAY_ATOF_MODE"] = "overwrite"
    plain_home, plugin_home = tmp / "plain", tmp / "plugins"
    _write_config(plain_home, (), out / "spans.jsonl")
    _write_config(plugin_home, plugins, out / "spans.jsonl")
    times: dict[str, list[float]] = {"plain": [], "plugins": []}
    agent_cpu: dict[str, list[float]] = {"plain": [], "plugins": []}
    calls = 0
    server: Any
    if inline_server:
        from wayline.testing.server import ScriptedServer

        server = ScriptedServer(SCRIPT)
    else:
        server = ModelServer(SCRIPT, tmp)
    with server as srv:
        os.environ["WAYLINE_HOME"] = str(plain_home)
        plain = build_runtime(plain_home, base_url=srv.base_url, model="bench-model")
        os.environ["WAYLINE_HOME"] = str(plugin_home)
        traced = build_runtime(plugin_home, base_url=srv.base_url, model="bench-model")
        loaded = {key for key, p in traced.manager.plugins.items() if p.loaded}
        missing = set(plugins) - loaded
        if missing:
            raise RuntimeError(f"plugins failed to load: {sorted(missing)}")
        otel: Any = traced.manager.instance("observability/otel")
        arms: tuple[tuple[str, Any], ...] = (("plain", plain), ("plugins", traced))
        for _, runtime in arms:  # warm up imports, connection pools, caches
            _session(runtime, workdir, 3)
        for index in range(rounds):
            # Alternate the order: a slow start of a round hits each arm alike.
            for label, runtime in arms if index % 2 == 0 else arms[::-1]:
                gc.collect()  # the arms start alike, outside the timing
                c0, t0 = time.process_time(), time.perf_counter()
                calls = _session(runtime, workdir, turns)
                if label == "plugins" and otel is not None:
                    otel.force_flush()
                times[label].append(time.perf_counter() - t0)
                agent_cpu[label].append(time.process_time() - c0)
        traced.manager.close_instances()
    ratios = sorted(p / q for p, q in zip(times["plugins"], times["plain"], strict=True))
    ratio = statistics.median(ratios)
    return [
        _row(
            f"{turns}-turn session in-process, zero-latency model, relay+otel / no plugins "
            "(information)",
            times["plugins"],
            times["plain"],
            "same session, no plugins",
            ratio,
            f"{calls} API calls per session; median of {rounds} alternating rounds' "
            f"ratios (rounds {ratios[0]:.3f}-{ratios[-1]:.3f}x); "
            f"model server {'in this process' if inline_server else 'in its own process'}; "
            f"CPU-s per session of the agent's process (medians, all its threads): "
            f"{_median(agent_cpu['plain'])} plain, {_median(agent_cpu['plugins'])} with plugins",
        ),
    ]


def _row(
    name: str,
    arm: list[float],
    base: list[float],
    reference_is: str,
    ratio: float,
    detail: str,
    *,
    goal: str = "",
    passed: bool | None = None,
) -> dict[str, Any]:
    """One suite row: the arms' median seconds and their ratio."""
    return {
        "line": "P3",
        "name": name,
        "wayline": round(statistics.median(arm), 3),
        "reference": round(statistics.median(base), 3),
        "reference_is": reference_is,
        "unit": "s",
        "ratio": round(ratio, 3),
        "goal": goal,
        "passed": passed,
        "detail": detail,
    }


def main() -> None:
    """Print the rows (``--json``: one JSON document, for ``python -m bench``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--plugins", default=",".join(PLUGINS))
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--inline-server",
        action="store_true",
        help="run the scripted server in this process (as bench/otel.py does)",
    )
    args = parser.parse_args()
    plugins = tuple(p for p in args.plugins.split(",") if p)
    rows = run(args.rounds, args.turns, plugins, args.inline_server)
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
