"""Benchmark I: the session index (``wayline sessions``) at 10,000 sessions and 1,000,000 steps.

One real session is recorded first: ``wayline.Agent`` with the relay plugin against the scripted
model server, ten user turns, each a ``lookup`` tool call and an answer (30 steps, ATIF and
ATOF). From it, N sessions of S steps are generated as ATIF files: its steps repeated to S, each
session with its own id, start time (spread over 30 days), model (one of four), tool name (one
of three), a unique ``ticket-NNNNN`` in its first message, and every 20th ending in a failed
model call; ``final_metrics`` are summed again. Figures:

- index from scratch: ``wayline sessions index DIR`` as a fresh process (start-up included),
  wall time and peak RSS (goal <= 120 s);
- one new session added: a new ATIF file, then :meth:`SessionStore.update` (goal <= 200 ms,
  the largest of the rounds); the same for one session appended to an ATOF file of 1,000
  sessions (copies of the recorded events with new ids);
- ``list`` with a filter (status, model, tool, a time window, errors, cost) and ``search``
  (three characters or more; a unique ticket, common words, Chinese), each an update plus the
  question as a command does it, p95 over the rounds (goal <= 300 ms); ``stats`` by each key
  (goal <= 1 s). A two-character Chinese search no step matches reads every step's text
  (information);
- a home holds each session twice, as ATOF events and an ATIF file: the first index of the
  1,000 sessions' ATOF and ATIF files (the recorded session under new ids) against the ATIF
  files alone (information).

    .venv/bin/python -m bench.sessions [--sessions 10000] [--steps 100] [--rounds 20] [--json]

Prints measured/goal lines (``--json``: one JSON list of rows for ``python -m bench``); it
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.rows import print_rows

MODELS = ("gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "o4-mini")
TOOLS = ("lookup", "terminal", "read_file")
TOPICS = (
    "deploy pipeline",
    "rollback",
    "on-call",
    "database failover",
    "cache warm-up",
    "release notes",
    "incident review",
    "load test",
    "feature flags",
    "backups",
)
DAY = 86_400.0
START = datetime(2026, 10, 1, tzinfo=UTC).timestamp()
GOALS = {"index": 120.0, "add": 200.0, "list": 300.0, "search": 300.0, "stats": 1000.0}
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

JsonDict = dict[str, Any]


def lookup(query: str) -> str:
    """Look a topic up in the team wiki."""
    return (
        f"Wiki results for {query}: the deploy pipeline runs nightly at 02:00 UTC; rollbacks use "
        "the previous image tag; on-call rotates weekly; see runbook section 4.2 for the database "
        "failover steps and section 7 for cache warm-up after a restart."
    )


def record(home: Path) -> tuple[JsonDict, bytes]:
    """One real session (ten turns of a tool call and an answer): its ATIF and ATOF."""
    import wayline
    from wayline.testing import ScriptedServer

    rules = [
        {
            "scope": "user_turn",
            "match": {"last_user_contains": f"question {i}:"},
            "turns": [
                {"tool_calls": [{"name": "lookup", "arguments": {"query": topic}}]},
                {
                    "content": f"About {topic}: the platform team owns it; the runbook has the "
                    f"details and the weekly sync reviewed the last change. 部署流程第{i}步"
                },
            ],
        }
        for i, topic in enumerate(TOPICS)
    ]
    script = {"model": list(MODELS), "default": {"content": "ok"}, "rules": rules}
    with (
        ScriptedServer(script) as server,
        wayline.Agent(
            model=MODELS[0],
            base_url=server.base_url,
            tools=[lookup],
            home=home,
            plugins=["observability/relay"],
            yolo=True,
        ) as agent,
    ):
        for i, topic in enumerate(TOPICS):
            result = agent.run(f"question {i}: how does our {topic} work?")
            if not result.completed:
                raise RuntimeError(f"the template session did not complete: {result}")
    (atif,) = (home / "relay" / "atif").glob("*.json")
    (atof,) = (home / "relay" / "atof").glob("*.jsonl")
    return json.loads(atif.read_text(encoding="utf-8")), atof.read_bytes()


def _ns(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


class Generator:
    """Sessions of ``steps`` steps made from the template's steps (see the module doc)."""

    def __init__(self, template: JsonDict, steps: int, count: int) -> None:
        self.template = template
        self.steps = steps
        self.count = count
        base = template["steps"]
        self.origin = _ns(base[0]["timestamp"])
        self.span = _ns(base[-1]["timestamp"]) - self.origin + 1.0

    def document(self, index: int) -> JsonDict:
        """Session ``index``."""
        base = self.template["steps"]
        model = MODELS[index % len(MODELS)]
        tool = TOOLS[index % len(TOOLS)]
        shift = START + index * (30 * DAY / max(1, self.count)) - self.origin
        steps: list[JsonDict] = []
        for number in range(self.steps):
            source = base[number % len(base)]
            offset = shift + (number // len(base)) * self.span
            step = dict(source, step_id=number + 1)
            step["timestamp"] = _iso(_ns(source["timestamp"]) + offset)
            if "model_name" in step:
                step["model_name"] = model
            if step.get("tool_calls"):
                step["tool_calls"] = [dict(c, function_name=tool) for c in step["tool_calls"]]
            extra = source.get("extra")
            if isinstance(extra, dict) and "invocation" in extra:
                extra = dict(extra)
                extra["invocation"] = _shifted(extra["invocation"], offset)
                if "tool_invocations" in extra:
                    extra["tool_invocations"] = [
                        _shifted(i, offset) for i in extra["tool_invocations"]
                    ]
                step["extra"] = extra
            steps.append(step)
        steps[0] = dict(steps[0], message=f"ticket-{index:05d} {steps[0]['message']}")
        if index % 20 == 19:
            steps[-1] = _failed(steps[-1], model)
        session = f"bench-{index:05d}"
        document = dict(self.template, session_id=session, trajectory_id=session, steps=steps)
        document["agent"] = dict(self.template["agent"], model_name=model)
        document["final_metrics"] = _totals(steps)
        return document


def _shifted(invocation: JsonDict, offset: float) -> JsonDict:
    out = dict(invocation)
    for key in ("start_timestamp", "end_timestamp"):
        if isinstance(out.get(key), float | int):
            out[key] = round(out[key] + offset, 3)
    return out


def _failed(step: JsonDict, model: str) -> JsonDict:
    """An agent step whose model call failed (as wayline records a provider's 500)."""
    error = {"message": "Error code: 500", "reason": "server_error", "type": "InternalServerError"}
    invocation = dict((step.get("extra") or {}).get("invocation") or {}, status="error")
    return {
        "step_id": step["step_id"],
        "timestamp": step["timestamp"],
        "source": "agent",
        "model_name": model,
        "message": "",
        "llm_call_count": 1,
        "extra": {"llm_response": {"error": error}, "invocation": invocation},
    }


def _totals(steps: list[JsonDict]) -> JsonDict:
    totals: JsonDict = {}
    metered = [s["metrics"] for s in steps if isinstance(s.get("metrics"), dict)]
    for key, total in (
        ("prompt_tokens", "total_prompt_tokens"),
        ("completion_tokens", "total_completion_tokens"),
        ("cost_usd", "total_cost_usd"),
    ):
        values = [m[key] for m in metered if key in m]
        if values and (key != "cost_usd" or len(values) == len(metered)):
            totals[total] = sum(values)
    totals["total_steps"] = len(steps)
    return totals


def atof_copy(events: bytes, template_session: str, index: int) -> bytes:
    """The recorded ATOF events as session ``atof-NNNNN``, every uuid made new."""
    prefix = f"{index:08x}".encode()
    text = events.replace(template_session.encode(), f"atof-{index:05d}".encode())
    return _UUID.sub(lambda m: prefix + m.group(0)[8:], text)


def write_sessions(folder: Path, generator: Generator, indexes: range) -> int:
    """Write sessions ``indexes`` as ATIF files into ``folder``; returns the bytes written."""
    written = 0
    for index in indexes:
        text = json.dumps(generator.document(index), ensure_ascii=False, separators=(",", ":"))
        path = folder / f"wayline-atif-bench-{index:05d}.json"
        path.write_text(text, encoding="utf-8")
        written += len(text)
    return written


def index_process(folder: Path, index: Path) -> tuple[float, float, str]:
    """``wayline sessions index FOLDER`` as a fresh process: seconds, peak RSS (MB), stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env["WAYLINE_HOME"] = str(index.parent / "home")
    out = index.parent / "index-stdout.txt"
    with out.open("wb") as stdout:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wayline",
                "sessions",
                "index",
                str(folder),
                "--index",
                str(index),
            ],
            env=env,
            stdout=stdout,
            stderr=subprocess.PIPE,
        )
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"sessions index failed: {err.decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, out.read_text()


def timed(call: Callable[[], Any]) -> float:
    """Milliseconds one call takes."""
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(1, -(-len(ordered) * 95 // 100)) - 1]


def _row(name: str, value: float, unit: str, goal: float | None, **extra: Any) -> JsonDict:
    row: JsonDict = {"line": "I", "name": name, "wayline": round(value, 1), "unit": unit}
    if goal is not None:
        row["goal"] = f"<= {goal:g} {unit}"
        row["passed"] = value <= goal
    row.update(extra)
    return row


def _questions(store: Any, generator: Generator, count: int) -> Iterator[tuple[str, str, Any]]:
    from wayline.store import SessionFilter

    middle = datetime.fromtimestamp(START + 15 * DAY, UTC).isoformat()
    week = datetime.fromtimestamp(START + 22 * DAY, UTC).isoformat()
    filters: dict[str, dict[str, Any]] = {
        "status=failed": {"status": "failed"},
        "model=gpt-4o": {"model": "gpt-4o"},
        "tool=terminal": {"tool": "terminal"},
        "since..until (a week)": {"since": middle, "until": week},
        "errors": {"errors": True},
        "min_cost=0.006": {"min_cost": "0.006"},
    }
    for label, params in filters.items():
        where = SessionFilter.parse(params)
        yield "list", label, lambda w=where: store.sessions(w, limit=50)
    ticket = f"ticket-{count // 2:05d}"
    for text in (ticket, "database failover", "部署流程第7步", "rollback", "no such phrase here"):
        yield "search", text, lambda t=text: store.search(t, limit=20)
    for by in ("model", "day", "tool", "status"):
        yield "stats", by, lambda b=by: store.stats(b)


def run(count: int, steps: int, rounds: int, atof_sessions: int) -> list[JsonDict]:
    """Every row of line I (see the module doc)."""
    from wayline.store import Scope, SessionStore

    rows: list[JsonDict] = []
    with tempfile.TemporaryDirectory(prefix="wayline-bench-sessions-") as name:
        work = Path(name)
        template, events = record(work / "template")
        generator = Generator(template, steps, count)
        folder = work / "atif"
        folder.mkdir()
        size = write_sessions(folder, generator, range(count))
        index = work / "index.sqlite"
        seconds, rss, said = index_process(folder, index)
        total = f"{count:,} sessions, {count * steps:,} steps, {size / 1e9:.2f} GB of ATIF"
        rows.append(
            _row(
                f"index from scratch ({total})",
                seconds,
                "s",
                GOALS["index"],
                detail=f"peak RSS {rss:.0f} MB; {said.strip()}",
            )
        )
        rows.append(_row("index size on disk", index.stat().st_size / 1e6, "MB", None))
        store = SessionStore(index, Scope(folders=(folder,)))
        try:
            store.update()
            added: list[float] = []
            for extra in range(count, count + min(rounds, 10)):
                write_sessions(folder, generator, range(extra, extra + 1))
                added.append(timed(store.update))
            rows.append(
                _row(
                    f"one new ATIF session ({steps} steps) added: update",
                    max(added),
                    "ms",
                    GOALS["add"],
                    detail=f"largest of {len(added)}; median {statistics.median(added):.1f} ms",
                )
            )
            measured: dict[str, list[float]] = {"list": [], "search": [], "stats": []}
            asked: dict[str, list[float]] = {"list": [], "search": [], "stats": []}
            slowest: dict[str, tuple[float, str]] = {}
            for _ in range(rounds):
                for kind, label, question in _questions(store, generator, count):
                    update = timed(store.update)
                    answer = timed(question)
                    measured[kind].append(update + answer)
                    asked[kind].append(answer)
                    if answer > slowest.get(kind, (0.0, ""))[0]:
                        slowest[kind] = (answer, label)
            for kind in ("list", "search", "stats"):
                name = {
                    "list": "list with a filter (update + query), p95",
                    "search": "search, 3+ characters (update + query), p95",
                    "stats": "stats by model/day/tool/status (update + query), p95",
                }[kind]
                rows.append(
                    _row(
                        name,
                        p95(measured[kind]),
                        "ms",
                        GOALS[kind],
                        detail=f"query alone p95 {p95(asked[kind]):.1f} ms; slowest "
                        f"query {slowest[kind][1]!r} {slowest[kind][0]:.1f} ms",
                    )
                )
            # Two characters are below a trigram: the text is read until 20 hits are found,
            # so a word no step holds reads every step (the worst case).
            common = [timed(lambda: store.search("部署", limit=20)) for _ in range(3)]
            absent = [timed(lambda: store.search("缺席", limit=20)) for _ in range(3)]
            rows.append(
                _row(
                    "search, 2 Chinese characters no step holds (reads every step's "
                    "text; information)",
                    statistics.median(absent),
                    "ms",
                    None,
                    detail=f"a common one: {statistics.median(common):.1f} ms",
                )
            )
        finally:
            store.close()
        rows.extend(_atof_rows(work, template, events, atof_sessions, rounds))
    return rows


def _atof_rows(
    work: Path, template: JsonDict, events: bytes, sessions: int, rounds: int
) -> list[JsonDict]:
    """One session appended to an ATOF file of ``sessions`` sessions: the update's time."""
    from wayline.store import Scope, SessionStore

    folder = work / "atof"
    folder.mkdir()
    path = folder / "wayline-atof.jsonl"
    with path.open("wb") as out:
        for index in range(sessions):
            out.write(atof_copy(events, template["session_id"], index))
    store = SessionStore(work / "atof-index.sqlite", Scope(folders=(folder,)))
    try:
        first = timed(store.update)
        appended: list[float] = []
        for index in range(sessions, sessions + min(rounds, 10)):
            with path.open("ab") as out:
                out.write(atof_copy(events, template["session_id"], index))
            appended.append(timed(store.update))
        found = len(store.sessions(limit=None))
    finally:
        store.close()
    if found != sessions + len(appended):
        raise RuntimeError(f"ATOF index holds {found} sessions, not {sessions + len(appended)}")
    megabytes = path.stat().st_size / 1e6
    return [
        _row(
            f"one session appended to an ATOF file of {sessions:,} sessions ({megabytes:.0f} MB)"
            ": update",
            max(appended),
            "ms",
            GOALS["add"],
            detail=f"largest of {len(appended)}; reading the file whole first took "
            f"{first / 1000:.1f} s",
        ),
        _home_row(work, template, folder, sessions + len(appended)),
    ]


def _home_row(work: Path, template: JsonDict, atof: Path, sessions: int) -> JsonDict:
    """A home holds each session twice (ATOF events and an ATIF file): its first index
    against the ATIF files' alone (information)."""
    from wayline.store import Scope, SessionStore

    atif = work / "home-atif"
    atif.mkdir()
    for index in range(sessions):
        session = f"atof-{index:05d}"
        document = dict(template, session_id=session, trajectory_id=session)
        (atif / f"wayline-atif-{session}.json").write_text(json.dumps(document), encoding="utf-8")
    seconds: dict[str, float] = {}
    for name, folders in (("atif", (atif,)), ("home", (atif, atof))):
        with SessionStore(work / f"{name}.sqlite", Scope(folders=folders)) as store:
            seconds[name] = timed(store.update) / 1000
            found = len(store.sessions(limit=None))
        if found != sessions:
            raise RuntimeError(f"{name}: {found} sessions, not {sessions}")
    return _row(
        f"a home of {sessions:,} sessions (ATOF + ATIF of each): first index / ATIF alone",
        seconds["home"] / seconds["atif"],
        "x",
        None,
        detail=f"{seconds['home']:.1f} s / {seconds['atif']:.1f} s",
    )


def main() -> None:
    """Command line: sizes and rounds; ``--json`` prints the rows for ``python -m bench``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--atof-sessions", type=int, default=1_000)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON line")
    args = parser.parse_args()
    rows = run(args.sessions, args.steps, args.rounds, args.atof_sessions)
    print_rows(rows, args.json)


if __name__ == "__main__":
    main()
