"""M: many agents in one process, against the plain async ``openai`` client on the same server.

64 ``wayline.Agent``s each run one turn whose single model call takes 0.5 s (the scripted
server in its own process, ``delay: 0.5``), all at once; the reference is 64 concurrent
``chat.completions.create`` calls of one plain ``openai.AsyncOpenAI`` client against the same
server, measured in the same round. Arms:

- **threads**: one ``threading.Thread`` per agent calling ``Agent.run``;
- **asyncio**: ``asyncio.gather`` of every agent's ``Agent.arun``;
- **plugins**: as asyncio, each agent with ``observability/relay`` and ``observability/otel``
  and a ``home=`` of its own (OTel to a JSON-lines file); after the round every home must
  hold its ATOF and span files.

The agents are built before the clock starts and closed after it stops (the CPU to build one
and the time to close them are in the row's detail). Every answer is checked. Rounds run the
arms in a rotating order; each line is the median of the rounds' ratios (arm seconds / plain
seconds of that round), the columns the arms' median seconds. An arm that fails reports its
error in its row.

    .venv/bin/python -m bench.many_agents [--rounds 5] [--agents 64] [--json]

Prints the rows; never asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

AGENTS = 64
DELAY = 0.5
PLUGINS = ("observability/relay", "observability/otel")
SCRIPT: dict[str, Any] = {"model": "bench-model", "default": {"content": "ok", "delay": DELAY}}
GOALS = {"threads": 1.2, "asyncio": 1.2, "plugins": 1.3}
NAMES = {
    "threads": "threads (Agent.run on a thread each)",
    "asyncio": "asyncio (gather of Agent.arun)",
    "plugins": "asyncio + relay + otel (an own home each)",
}


def _prompt(i: int) -> str:
    return f"agent {i}: one question"


def _plain(base_url: str, n: int) -> float:
    """Seconds for ``n`` concurrent calls of one plain async client (answers checked)."""
    import openai

    async def main() -> float:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        try:

            def one(i: int) -> Any:
                messages: Any = [{"role": "user", "content": _prompt(i)}]
                return client.chat.completions.create(model="bench-model", messages=messages)

            await one(-1)  # the client's connection and first-call set-up, untimed
            started = time.perf_counter()
            replies = await asyncio.gather(*(one(i) for i in range(n)))
            seconds = time.perf_counter() - started
        finally:
            await client.close()
        if [r.choices[0].message.content for r in replies] != ["ok"] * n:
            raise RuntimeError("the plain client got a wrong answer")
        return seconds

    return asyncio.run(main())


def _write_home(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(
        "plugins:\n  entries:\n    observability/otel:\n      exporter: file\n"
        f"      file: {path / 'otel' / 'spans.jsonl'}\n"
    )
    return path


class Arm:
    """One round of one wayline arm: agents built, their turns timed, then closed."""

    def __init__(self, kind: str, base_url: str, n: int, scratch: Path) -> None:
        import wayline

        self.kind = kind
        self.homes: list[Path] = []
        self.agents: list[Any] = []
        plugins = PLUGINS if kind == "plugins" else ()
        started = time.process_time()
        for i in range(n):
            home = _write_home(scratch / f"{kind}-{i}")
            self.homes.append(home)
            self.agents.append(
                wayline.Agent(model="bench-model", base_url=base_url, home=home, plugins=plugins)
            )
        # CPU, not wall: what building one agent costs a server that builds one per request.
        self.build_cpu = (time.process_time() - started) / n
        self.close_seconds = 0.0

    def turns(self) -> float:
        """Seconds for every agent's turn, all at once (answers checked)."""
        if self.kind == "threads":
            results: list[Any] = [None] * len(self.agents)

            def run(i: int) -> None:
                results[i] = self.agents[i].run(_prompt(i))

            threads = [threading.Thread(target=run, args=(i,)) for i in range(len(self.agents))]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            seconds = time.perf_counter() - started
        else:

            async def main() -> tuple[float, list[Any]]:
                started = time.perf_counter()
                done = await asyncio.gather(
                    *(a.arun(_prompt(i)) for i, a in enumerate(self.agents))
                )
                return time.perf_counter() - started, list(done)

            seconds, results = asyncio.run(main())
        wrong = [i for i, r in enumerate(results) if r is None or not r.completed or r.text != "ok"]
        if wrong:
            raise RuntimeError(f"{len(wrong)} of {len(results)} agents did not answer 'ok'")
        return seconds

    def close(self) -> None:
        """Close every agent (timed into ``close_seconds``); plugin homes are checked."""
        started = time.perf_counter()
        for agent in self.agents:
            agent.close()
        self.close_seconds = time.perf_counter() - started
        if self.kind == "plugins":
            missing = [str(h) for h in self.homes if not _wrote_records(h)]
            if missing:
                raise RuntimeError(f"{len(missing)} of {len(self.homes)} homes lack ATOF/spans")


def _wrote_records(home: Path) -> bool:
    spans = home / "otel" / "spans.jsonl"
    atof = [p for p in (home / "relay").rglob("*.jsonl") if p.stat().st_size]
    return spans.exists() and spans.stat().st_size > 0 and bool(atof)


def _round(kind: str, base_url: str, n: int, scratch: Path) -> tuple[float, float, float]:
    """One arm's (turn seconds, close seconds, CPU seconds to build one agent), in a scratch
    directory removed afterwards."""
    where = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=scratch))
    try:
        arm = Arm(kind, base_url, n, where)
        try:
            seconds = arm.turns()
        finally:
            arm.close()
        return seconds, arm.close_seconds, arm.build_cpu
    finally:
        shutil.rmtree(where, ignore_errors=True)


def run(rounds: int = 5, agents: int = AGENTS) -> list[dict[str, Any]]:
    """All arms, rotating; one row per wayline arm against the plain client."""
    from bench.model_server import ModelServer

    scratch = Path(tempfile.mkdtemp(prefix="wayline-bench-many-"))
    kinds = list(GOALS)
    times: dict[str, list[float]] = {k: [] for k in ["plain", *kinds]}
    ratios: dict[str, list[float]] = {k: [] for k in kinds}
    closes: dict[str, list[float]] = {k: [] for k in kinds}
    builds: dict[str, list[float]] = {k: [] for k in kinds}
    errors: dict[str, str] = {}
    try:
        with ModelServer(SCRIPT, scratch) as srv:
            # Imports (the SDK, both plugins and the OTel SDK) and first-call caches.
            _plain(srv.base_url, 2)
            for kind in kinds:
                try:
                    _round(kind, srv.base_url, 2, scratch)
                except Exception as exc:  # reported in the arm's row, the others go on
                    errors[kind] = f"{type(exc).__name__}: {exc}"
            for r in range(rounds):
                order = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
                plain = _plain(srv.base_url, agents)
                times["plain"].append(plain)
                for kind in order:
                    if kind in errors:
                        continue
                    try:
                        seconds, closing, build = _round(kind, srv.base_url, agents, scratch)
                    except Exception as exc:
                        errors[kind] = f"{type(exc).__name__}: {exc}"
                        continue
                    times[kind].append(seconds)
                    ratios[kind].append(seconds / plain)
                    closes[kind].append(closing)
                    builds[kind].append(build)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _rows(agents, times, ratios, closes, builds, errors)


def _rows(
    agents: int,
    times: dict[str, list[float]],
    ratios: dict[str, list[float]],
    closes: dict[str, list[float]],
    builds: dict[str, list[float]],
    errors: dict[str, str],
) -> list[dict[str, Any]]:
    median: Callable[[list[float]], float] = statistics.median
    plain = median(times["plain"]) if times["plain"] else None
    rows = []
    for kind, limit in GOALS.items():
        name = f"{agents} agents x one {DELAY} s model call, {NAMES[kind]} / plain async openai"
        row: dict[str, Any] = {
            "line": "M",
            "name": name,
            "reference": round(plain, 3) if plain is not None else None,
            "reference_is": f"{agents} concurrent calls of one openai.AsyncOpenAI client",
            "unit": "s",
            "goal": f"<= {limit}x",
        }
        if kind in errors or not ratios[kind]:
            row.update(passed=False, detail=f"error: {errors.get(kind, 'no round ran')}")
        else:
            ratio = median(ratios[kind])
            row.update(
                wayline=round(median(times[kind]), 3),
                ratio=round(ratio, 3),
                passed=ratio <= limit,
                detail=f"median of {len(ratios[kind])} rounds' ratios "
                f"({', '.join(f'{x:.2f}' for x in sorted(ratios[kind]))}); "
                f"building them beforehand {median(builds[kind]) * 1000:.1f} ms of CPU each, "
                f"closing them afterwards {median(closes[kind]):.2f} s",
            )
        rows.append(row)
    return rows


def main() -> None:
    """Print the rows (``--json``: one JSON document on the last line)."""
    parser = argparse.ArgumentParser(prog="python -m bench.many_agents")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--agents", type=int, default=AGENTS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run(args.rounds, args.agents)
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
