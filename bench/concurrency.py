"""P5: 64 concurrent tool calls and 16 concurrent subagents under observability/relay.

Two turns against the scripted server (in its own process), with ``observability/relay``
writing ATOF: one assistant message asking for 64 parallel-safe calls (``read_file`` and
``search_files``, run by the tool pool), and one ``delegate_task`` with 16 tasks run at once
(``delegation.max_concurrent_children: 16``), each child reading two files. The ATOF file is
then checked: every scope start has its end (nothing lost, against the expected counts), and
every span sits where its correlation ids say (nothing misparented): an llm/tool span under the
agent scope of the session named in its metadata, a child's agent scope under its parent's.
Throughput (calls or subagents per second of turn wall time, the best of :data:`ROUNDS` turns)
is printed; time is never asserted.

    .venv/bin/python -m bench.concurrency [--json]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

TOOL_CALLS = 64
SUBAGENTS = 16
CHILD_READS = 2
ROUNDS = 5
"""Turns per scenario: one turn lasts tens of milliseconds, so throughput is the best of
several, as P1, P2 and P4 are best-of-N (every turn's ATOF is checked)."""


def _batch() -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for i in range(TOOL_CALLS):
        if i % 2:
            calls.append({"name": "search_files", "arguments": {"pattern": f"line {i % 8}"}})
        else:
            calls.append({"name": "read_file", "arguments": {"path": f"f{i % 8}.txt"}})
    return calls


SCRIPT: dict[str, Any] = {
    "model": "bench-model",
    "rules": [
        {
            "match": {"first_user_contains": "CHILDTASK", "last_role": "user"},
            "respond": {
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": f"f{i}.txt"}}
                    for i in range(CHILD_READS)
                ]
            },
        },
        {
            "match": {"first_user_contains": "CHILDTASK", "last_role": "tool"},
            "respond": {"content": "child done"},
        },
        {
            "match": {"first_user_contains": "FANOUT", "last_role": "user"},
            "respond": {"tool_calls": _batch()},
        },
        {
            "match": {"first_user_contains": "DELEGATE", "last_role": "user"},
            "respond": {
                "tool_calls": [
                    {
                        "name": "delegate_task",
                        "arguments": {
                            "tasks": [
                                {"goal": f"CHILDTASK {i}: read two files", "toolsets": ["file"]}
                                for i in range(SUBAGENTS)
                            ]
                        },
                    }
                ]
            },
        },
        {"match": {"last_role": "tool"}, "respond": {"content": "done"}},
        {"match": {"first_user_contains": "WARMUP"}, "respond": {"tool_calls": _batch()[:8]}},
    ],
}


def check_atof(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Lost and misparented events of a relay-plugin ATOF stream, and what was found."""
    starts: dict[str, dict[str, Any]] = {}
    ends: Counter[str] = Counter()
    for event in events:
        if event.get("kind") != "scope":
            continue
        if event.get("scope_category") == "start":
            starts[event["uuid"]] = event
        else:
            ends[event["uuid"]] += 1
    unclosed = [u for u in starts if ends[u] != 1]
    orphan_ends = [u for u in ends if u not in starts]
    agents = {
        (e.get("metadata") or {}).get("session_id"): e
        for e in starts.values()
        if e.get("category") == "agent"
    }
    misparented: list[str] = []
    counts: Counter[str] = Counter()
    for uuid, event in starts.items():
        category = event.get("category")
        meta = event.get("metadata") or {}
        if category in ("llm", "tool"):
            counts[f"{category}:{event.get('name')}"] += 1
            owner = agents.get(meta.get("session_id"))
            if owner is None or event.get("parent_uuid") != owner["uuid"]:
                misparented.append(uuid)
        elif category == "agent":
            parent_session = meta.get("parent_session_id")
            if parent_session is None:
                counts["agent:root"] += 1
                continue
            counts["agent:child"] += 1
            parent = agents.get(parent_session)
            if parent is None or event.get("parent_uuid") != parent["uuid"]:
                misparented.append(uuid)
    return {
        "lost": len(unclosed) + len(orphan_ends),
        "misparented": len(misparented),
        "counts": dict(counts),
    }


def _expected() -> dict[str, dict[str, int]]:
    batch = Counter(f"tool:{c['name']}" for c in _batch())
    fanout = {**batch, "llm:custom": 2, "agent:root": 1}
    delegate = {
        "agent:root": 1,
        "agent:child": SUBAGENTS,
        "tool:delegate_task": 1,
        "tool:read_file": SUBAGENTS * CHILD_READS,
        "llm:custom": 2 + SUBAGENTS * 2,
    }
    return {"fanout": dict(fanout), "delegate": delegate}


def _lost_against(expected: dict[str, int], found: dict[str, int]) -> int:
    return sum(max(0, n - found.get(key, 0)) for key, n in expected.items())


def run() -> list[dict[str, Any]]:
    """Both scenarios; one row per check (lost + misparented) and per throughput."""
    from bench.model_server import ModelServer
    from wayline.relay.atof import read_events
    from wayline.runtime import build_runtime

    tmp = Path(tempfile.mkdtemp(prefix="wayline-bench-p5-"))
    work, home, out = tmp / "work", tmp / "home", tmp / "out"
    work.mkdir()
    home.mkdir()
    for i in range(8):
        (work / f"f{i}.txt").write_text("".join(f"line {j}\n" for j in range(20)))
    (home / "config.yaml").write_text(
        'approvals:\n  mode: "off"\n'
        f"delegation:\n  max_concurrent_children: {SUBAGENTS}\n"
        "plugins:\n  enabled: [observability/relay]\n"
    )
    os.environ["WAYLINE_HOME"] = str(home)
    rows: list[dict[str, Any]] = []
    expected = _expected()
    with ModelServer(SCRIPT, tmp) as srv:
        # Imports, connection pool, first-call caches: paid before anything is timed.
        os.environ["WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY"] = str(out / "warmup")
        os.environ["WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY"] = str(out / "warmup-atif")
        warm_runtime = build_runtime(home, base_url=srv.base_url, model="bench-model")
        warm = warm_runtime.agent(cwd=work)
        warm.run_turn("WARMUP")
        warm.finalize()
        warm_runtime.manager.close_instances()
        for scenario, prompt, unit, amount in (
            ("fanout", "FANOUT: read everything", "tool calls/s", TOOL_CALLS),
            ("delegate", "DELEGATE: split the work", "subagents/s", SUBAGENTS),
        ):
            lost = misparented = 0
            counts: dict[str, Any] = {}
            times: list[float] = []
            for round_ in range(ROUNDS):
                directory = out / f"{scenario}-{round_}"
                os.environ["WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY"] = str(directory)
                os.environ["WAYLINE_RELAY_ATOF_FILENAME"] = "events.jsonl"
                os.environ["WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY"] = str(directory / "atif")
                runtime = build_runtime(home, base_url=srv.base_url, model="bench-model")
                agent = runtime.agent(cwd=work)
                started = time.perf_counter()
                result = agent.run_turn(prompt)
                times.append(time.perf_counter() - started)
                agent.finalize()
                runtime.manager.close_instances()  # the relay plugin's files are complete
                if not result.completed:
                    raise RuntimeError(f"{scenario} turn failed: {result.reason} {result.text}")
                report = check_atof(read_events(directory / "events.jsonl", sort=False))
                lost += report["lost"] + _lost_against(expected[scenario], report["counts"])
                misparented += report["misparented"]
                counts = report["counts"]
            label = (
                f"{TOOL_CALLS} concurrent tool calls"
                if scenario == "fanout"
                else f"{SUBAGENTS} concurrent subagents"
            )
            rows.append(
                {
                    "line": "P5",
                    "name": f"{label}: lost / misparented events (ATOF)",
                    "wayline": f"{lost} / {misparented}",
                    "unit": "events",
                    "goal": "0 / 0",
                    "passed": lost == 0 and misparented == 0,
                    "detail": f"{ROUNDS} turns; one's counts: {json.dumps(counts, sort_keys=True)}",
                }
            )
            best, worst = min(times), max(times)
            rows.append(
                {
                    "line": "P5",
                    "name": f"{label}: throughput",
                    "wayline": round(amount / best, 1),
                    "unit": unit,
                    "detail": f"best of {ROUNDS} turns ({best * 1000:.0f}-{worst * 1000:.0f} ms)",
                }
            )
    return rows


def main() -> None:
    """Print the rows (``--json``: one JSON document)."""
    rows = run()
    if "--json" in sys.argv[1:]:
        print(json.dumps(rows))
        return
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
