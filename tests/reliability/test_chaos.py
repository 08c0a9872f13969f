"""Chaos: hostile plugins at every hook and middleware point across randomized sessions.

Each session builds a fresh runtime with ``observability/relay``, ``observability/otel`` and two
chaos plugins enabled, runs a seeded scenario (tools, parallel batches, delegation, refused
approvals, a transient fault) against the scripted server, and checks what it left behind.
Batches share one output directory; each session's runtime closes its relay and otel exporters
when the session ends, and after each batch the files are checked. A failing session prints its
seed; replay it alone with
``WAYLINE_CHAOS_FIRST_SEED=<seed> WAYLINE_CHAOS_SESSIONS=1 pytest tests/reliability/test_chaos.py``
(the scenario and both chaos plugins are seeded from it).
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from chaos_scenarios import Scenario, batch_script, make_scenario
from rel_support import (
    Probe,
    check_atif_dir,
    check_atof,
    install_chaos,
    orphan_spans,
    pairing_problems,
    read_spans,
    record,
    run_with_deadline,
    scaled,
    shutdown_exporters,
    store_messages,
    unfinished_spans,
)

from wayline.runtime import Runtime, build_runtime
from wayline.runtime.approvals import Approver
from wayline.testing.server import ScriptedServer

CHAOS = ("chaos", "chaos2")
BATCH = 25
SESSION_DEADLINE = 120.0


class _FormatCheck(logging.Handler):
    """Counts log records whose message cannot be formatted (a host logging a hostile value)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.failures: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Format the record; remember the ones that raise."""
        try:
            record.getMessage()
        except Exception as exc:
            self.failures.append(f"{record.name}: {record.msg!r}: {type(exc).__name__}")


@dataclass
class Tally:
    """Problems found, by figure, with the seed of each."""

    sessions: int = 0
    problems: dict[str, list[str]] = field(default_factory=dict)
    coverage: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, seed: int | str, message: str) -> None:
        """Record one problem of ``kind``."""
        self.problems.setdefault(kind, []).append(f"seed {seed}: {message}")

    def count(self, kind: str) -> int:
        """Problems of ``kind``."""
        return len(self.problems.get(kind, []))


@dataclass
class Batch:
    """One output directory and one scripted server for a group of sessions."""

    root: Path
    home: Path
    work: Path
    server: ScriptedServer

    @property
    def atof(self) -> Path:
        """The batch's ATOF file."""
        return self.root / "atof" / "events.jsonl"

    @property
    def atif(self) -> Path:
        """The batch's ATIF directory."""
        return self.root / "atif"

    @property
    def spans(self) -> Path:
        """The batch's OTel span file."""
        return self.root / "otel" / "spans.jsonl"


def _config(batch: Batch, scenario: Scenario) -> dict[str, Any]:
    chaos_entries = {
        name: {"seed": scenario.seed * 7 + i, "max_sleep": 0.005} for i, name in enumerate(CHAOS)
    }
    return {
        "model": {
            "default": "scripted-model",
            "base_url": batch.server.base_url,
            "max_retries": 2,
            "timeout": 0.5,
            "stream": scenario.stream,
        },
        "agent": {"max_turns": 12},
        "approvals": {"mode": scenario.approval_mode, "timeout": 0.05},
        "delegation": {"max_spawn_depth": 1, "max_concurrent_children": 3},
        "plugins": {
            "enabled": ["observability/relay", "observability/otel", *CHAOS],
            "entries": {
                "observability/otel": {
                    "exporter": "file",
                    "file": str(batch.spans),
                    "metrics": False,
                    "schedule_delay_ms": 200,
                    "shutdown_timeout_ms": 10_000,
                },
                **chaos_entries,
            },
        },
    }


def _plugins_toml(batch: Batch) -> Path:
    path = batch.root / "plugins.toml"
    if not path.exists():
        path.write_text(
            'version = 1\n\n[[components]]\nkind = "observability"\n\n'
            "[components.config.atof]\nenabled = true\n"
            f'output_directory = "{batch.atof.parent}"\nfilename = "events.jsonl"\n\n'
            f'[components.config.atif]\nenabled = true\noutput_directory = "{batch.atif}"\n\n'
            '[[components]]\nkind = "adaptive"\n\n'
            '[components.config.tool_parallelism]\nmode = "inject_hints"\n',
            encoding="utf-8",
        )
    return path


def _run_session(batch: Batch, scenario: Scenario, tally: Tally, monkeypatch: Any) -> None:
    (batch.home / "config.yaml").write_text(yaml.safe_dump(_config(batch, scenario)))
    if scenario.managed:
        monkeypatch.setenv("WAYLINE_RELAY_PLUGINS_TOML", str(_plugins_toml(batch)))
        tally.coverage["managed"] += 1
    else:
        monkeypatch.delenv("WAYLINE_RELAY_PLUGINS_TOML", raising=False)
    runtime = build_runtime(batch.home)
    try:
        _drive(runtime, batch, scenario, tally)
    finally:
        # The session's exporters end what it left open and close the batch's shared files
        # before the next session's runtime opens them.
        shutdown_exporters(runtime)


def _drive(runtime: Runtime, batch: Batch, scenario: Scenario, tally: Tally) -> None:
    seed = scenario.seed
    loaded = {k: p.loaded for k, p in runtime.manager.plugins.items() if p.enabled}
    assert all(loaded.values()) and len(loaded) == 4, f"seed {seed}: plugins {loaded}"
    provider = replace(runtime.settings.provider, backoff_base=0.002, backoff_max=0.02)
    runtime.settings = runtime.settings.with_(provider=provider)
    probe = Probe()
    probe.attach(runtime.manager.hooks)
    mode = {"off": "yolo"}.get(scenario.approval_mode, scenario.approval_mode)
    approver = Approver(
        runtime.manager.hooks, mode=mode, timeout=0.05, ask=lambda q, t: scenario.answer
    )
    agent = runtime.agent(cwd=batch.work, approver=approver)

    def run() -> list[Any]:
        try:
            return [agent.run_turn(text) for text in scenario.turns]
        finally:
            agent.finalize()

    results, error = run_with_deadline(run, SESSION_DEADLINE)
    tally.sessions += 1
    module = sys.modules.get("wayline_plugins.chaos")
    if module is not None and module.INSTANCES:
        tally.actions.update(module.INSTANCES[-1].actions)
    if error is not None:
        agent.cancel.set()
        where = "".join(traceback.format_exception(error)[-6:])
        tally.add("crashed", seed, f"{type(error).__name__}: {error!r}\n{where}"[:3000])
        return
    assert results is not None and len(results) == len(scenario.turns)
    for result in results:
        tally.coverage[f"reason:{result.reason}"] += 1
    _check_hooks(probe, agent.session_id, len(scenario.turns), seed, tally)
    _check_transcripts(batch, probe, agent.session_id, scenario, seed, tally)


def _check_hooks(probe: Probe, root: str, turns: int, seed: int, tally: Tally) -> None:
    family = probe.family(root)
    tally.coverage["children"] += len(family) - 1
    for sid in family:
        ends = [kw for kw in probe.of("on_session_end") if kw.get("session_id") == sid]
        finals = [kw for kw in probe.of("on_session_finalize") if kw.get("session_id") == sid]
        want = turns if sid == root else 1
        if len(ends) != want or len(finals) != 1:
            tally.add("lifecycle", seed, f"{sid}: {len(ends)} ends, {len(finals)} finalizes")
    attempts: Counter[tuple[str, str]] = Counter()
    for name in ("pre_api_request", "post_api_request", "api_request_error"):
        for kw in probe.of(name):
            key = (str(kw.get("session_id")), str(kw.get("api_request_id")))
            attempts[key] += 1 if name == "pre_api_request" else -1
            tally.coverage[name] += 1
    for key, balance in attempts.items():
        if key[0] in family and balance != 0:
            tally.add("lifecycle", seed, f"api attempt {key} unbalanced by {balance}")
    calls: Counter[tuple[str, str, str]] = Counter()
    for name in ("pre_tool_call", "post_tool_call"):
        for kw in probe.of(name):
            calls[(name, str(kw.get("session_id")), str(kw.get("tool_call_id")))] += 1
    for (name, sid, call), n in calls.items():
        if sid in family and n != 1:
            tally.add("tool_results", seed, f"{name} fired {n}x for {call}")
    for name in ("pre_approval_request", "subagent_start", "post_tool_call"):
        tally.coverage[name] += len(probe.of(name))


def _check_transcripts(
    batch: Batch, probe: Probe, root: str, scenario: Scenario, seed: int, tally: Tally
) -> None:
    posts: dict[str, set[str]] = {}
    for kw in probe.of("post_tool_call"):
        posts.setdefault(str(kw.get("session_id")), set()).add(str(kw.get("tool_call_id")))
    for sid in probe.family(root):
        messages = store_messages(batch.home, sid)
        for problem in pairing_problems(messages, f"store {sid}"):
            tally.add("tool_results", seed, problem)
        stored = {
            str(c.get("id"))
            for m in messages
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        }
        if stored != posts.get(sid, set()):
            missing = stored ^ posts.get(sid, set())
            tally.add("tool_results", seed, f"{sid}: store and post_tool_call differ on {missing}")
    markers = (f"[{scenario.tag}]", f"CHILD-{scenario.tag}-")
    for req in batch.server.requests:
        messages = req.body.get("messages") or []
        first = next((m for m in messages if m.get("role") == "user"), {})
        if any(mark in str(first.get("content")) for mark in markers):
            for problem in pairing_problems(messages, f"request {req.index}"):
                tally.add("tool_results", seed, problem)


def _check_batch(batch: Batch, tally: Tally, label: str) -> None:
    atof = check_atof(batch.atof)
    tally.coverage["atof_events"] += atof.events
    for problem in atof.problems[:20]:
        tally.add("atof_problems", label, problem)
    for uuid in atof.unclosed:
        scope = atof.scopes[uuid]
        meta = scope.get("metadata") or {}
        tally.add(
            "atof_unclosed",
            label,
            f"scope {scope.get('name')} {uuid} session {meta.get('session_id')} "
            f"call {meta.get('tool_call_id')}",
        )
    files, bad = check_atif_dir(batch.atif)
    tally.coverage["atif_files"] += files
    for problem in bad:
        tally.add("atif_invalid", label, problem)
    spans = read_spans(batch.spans)
    tally.coverage["otel_spans"] += len(spans)
    for problem in orphan_spans(spans) + unfinished_spans(spans):
        tally.add("otel_orphans", label, problem)


def _new_batch(root: Path, scenarios: list[Scenario], monkeypatch: Any) -> Batch:
    root.mkdir(parents=True)
    home = root / "home"
    home.mkdir()
    for name in CHAOS:
        install_chaos(home, name)
    work = root / "work"
    work.mkdir()
    for name, text in zip(
        "abcdef", ("alpha", "beta", "gamma", "delta", "eps", "zeta"), strict=True
    ):
        (work / f"{name}.txt").write_text(f"{text}\n")
    (work / "scratch").mkdir()
    (work / "scratch" / "keep.txt").write_text("must survive\n")
    monkeypatch.setenv("WAYLINE_HOME", str(home))
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY", str(root / "atof"))
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_FILENAME", "events.jsonl")
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY", str(root / "atif"))
    server = ScriptedServer(batch_script(scenarios)).start()
    return Batch(root, home, work, server)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_chaos_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Randomized sessions under two chaos plugins: no crash, no lost result, balanced files."""
    total = int(os.environ.get("WAYLINE_CHAOS_SESSIONS") or scaled(30, 1000))
    first_seed = int(os.environ.get("WAYLINE_CHAOS_FIRST_SEED", "0"))
    tally = Tally()
    format_check = _FormatCheck()
    logging.getLogger().addHandler(format_check)
    try:
        for start in range(first_seed, first_seed + total, BATCH):
            seeds = range(start, min(start + BATCH, first_seed + total))
            scenarios = [make_scenario(seed) for seed in seeds]
            batch = _new_batch(tmp_path / f"batch-{start}", scenarios, monkeypatch)
            try:
                for scenario in scenarios:
                    _run_session(batch, scenario, tally, monkeypatch)
                    tally.coverage.update(scenario.features)
                    assert (batch.work / "scratch" / "keep.txt").exists(), scenario.seed
            finally:
                batch.server.stop()
            _check_batch(batch, tally, f"batch {start}")
    finally:
        logging.getLogger().removeHandler(format_check)
    for failure in format_check.failures[:5]:
        tally.add("log_format", "-", failure)
    _report(tally, total)


def _report(tally: Tally, total: int) -> None:
    figures = [
        record("chaos_sessions", "chaos: randomized sessions run", tally.sessions, ">=", total),
        record("chaos_crashed", "chaos: crashed or hung sessions", tally.count("crashed")),
        record(
            "chaos_tool_results",
            "chaos: tool results lost or duplicated",
            tally.count("tool_results"),
        ),
        record(
            "chaos_lifecycle",
            "chaos: unbalanced session/API lifecycle hooks",
            tally.count("lifecycle"),
        ),
        record(
            "chaos_atof_unclosed",
            "chaos: ATOF scope starts without ends",
            tally.count("atof_unclosed"),
        ),
        record(
            "chaos_atof_invalid", "chaos: ATOF validation problems", tally.count("atof_problems")
        ),
        record(
            "chaos_atif_invalid",
            "chaos: ATIF files failing validation",
            tally.count("atif_invalid"),
        ),
        record(
            "chaos_otel_orphans",
            "chaos: OTel spans orphaned or unfinished",
            tally.count("otel_orphans"),
        ),
        record(
            "chaos_log_format", "chaos: log records that fail to format", tally.count("log_format")
        ),
    ]
    print(f"\nchaos coverage: {dict(sorted(tally.coverage.items()))}")
    print(f"chaos actions (last instance per session): {dict(tally.actions)}")
    for kind, problems in tally.problems.items():
        print(f"{kind}: {len(problems)} problem(s)")
        for problem in problems[:10]:
            print(f"  {problem}")
    bad = [f for f in figures if not f.ok]
    assert not bad, "; ".join(f"{f.label} = {f.value}" for f in bad)
    # The run must really have exercised what it claims to.
    for feature in (
        "delegation",
        "parallel",
        "danger",
        "fault",
        "stream",
        "managed",
        "pre_approval_request",
        "subagent_start",
        "api_request_error",
        "post_tool_call",
    ):
        assert tally.coverage[feature] > 0, f"no session exercised {feature}"
    assert sum(tally.actions.values()) > 0, "the chaos plugins never misbehaved"
