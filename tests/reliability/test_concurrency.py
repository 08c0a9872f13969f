"""Concurrency: 64 tool calls at once, then 16 subagents at once, under every plugin.

The ``barrier`` plugin's tool returns only when its whole group runs at the same moment, so
a passing run proves the concurrency (64 calls in one parallel batch; 16 delegated children
each calling it). ``observability/relay``, ``observability/otel`` and a chaos plugin that
only adds jitter (sleeps) are enabled; the managed variant also runs relay's adaptive
middleware. Checked: the run finishes in bounded time (no deadlock), no hook is lost
(every tool start has one end, every child starts and stops), and nothing is misparented —
every ATOF scope and mark hangs under its own session's agent scope (a child's agent scope
under its parent's), and every OTel tool span under an ``api`` span of its session, every
child root under the ``subagent`` span that spawned it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rel_support import (
    HERE,
    Outputs,
    Probe,
    check_atof,
    install_chaos,
    install_plugin,
    outputs_problems,
    read_spans,
    record,
    run_with_deadline,
    shutdown_exporters,
    write_config,
)

from wayline.runtime import build_runtime
from wayline.testing.server import ScriptedServer

CALLS, CHILDREN = 64, 16
SCRIPT = {
    "model": "scripted-model",
    "rules": [
        {
            "match": {"first_user_contains": "CHILD"},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "barrier_probe", "arguments": {"group": "children"}},
                        {"name": "read_file", "arguments": {"path": "a.txt"}},
                    ]
                },
                {"content": "child done"},
            ],
        },
        {
            "match": {},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "barrier_probe", "arguments": {"group": "calls"}}
                        for _ in range(CALLS)
                    ]
                },
                {
                    "tool_calls": [
                        {
                            "name": "delegate_task",
                            "arguments": {
                                "tasks": [{"goal": f"CHILD {k} works"} for k in range(CHILDREN)]
                            },
                        }
                    ]
                },
                {"content": "all done"},
            ],
        },
    ],
}


def _atof_parents(out: Outputs) -> list[str]:
    """Scopes and marks whose parent is not their own session's agent scope."""
    atof = check_atof(out.atof)
    agents: dict[str, str] = {}
    for event in atof.lines:
        if event.get("category") == "agent" and event.get("scope_category") == "start":
            agents[str((event.get("metadata") or {}).get("session_id"))] = event["uuid"]
    bad: list[str] = []
    for event in atof.lines:
        meta = event.get("metadata") or {}
        sid = str(meta.get("session_id"))
        if event.get("scope_category") == "end" or sid not in agents:
            continue
        if event.get("category") == "agent":
            parent_sid = meta.get("parent_session_id")
            if not parent_sid:  # a top-level session: under relay's root, not a session's
                if event.get("parent_uuid") in agents.values():
                    bad.append(f"top-level session {sid} under another session")
                continue
            want = agents.get(str(parent_sid))
        elif event["name"].startswith("hermes.subagent."):
            continue  # marked on the parent's scope, named after the child
        else:
            want = agents[sid]
        if event.get("parent_uuid") != want:
            bad.append(f"{event['kind']} {event['name']} of {sid} under {event.get('parent_uuid')}")
    return bad


def _otel_parents(out: Outputs) -> list[str]:
    """Tool spans not under an api span of their session; child roots not under their spawn."""
    spans = read_spans(out.spans)
    by_id = {s["context"]["span_id"]: s for s in spans}
    bad: list[str] = []
    for span in spans:
        attrs = span.get("attributes") or {}
        parent = by_id.get(span.get("parent_id") or "")
        pattrs = (parent or {}).get("attributes") or {}
        if span["name"].startswith("tool."):
            if parent is None or not parent["name"].startswith("api."):
                bad.append(f"{span['name']} not under an api span")
            elif pattrs.get("session.id") != attrs.get("session.id"):
                bad.append(f"{span['name']} under another session's api span")
        elif span["name"] == "agent" and attrs.get("hermes.session.is_subagent"):
            if parent is None or not parent["name"].startswith("subagent."):
                bad.append("a child root not under a subagent span")
            elif pattrs.get("hermes.subagent.child_session_id") != attrs.get("session.id"):
                bad.append("a child root under another child's subagent span")
    return bad


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, managed: bool) -> dict[str, int]:
    home, work, out = tmp_path / "home", tmp_path / "work", Outputs(tmp_path / "out")
    home.mkdir()
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    install_plugin(home, HERE / "barrier_plugin", "barrier")
    install_chaos(home, "jitter")
    for key, value in out.env().items():
        monkeypatch.setenv(key, value)
    if managed:
        toml = tmp_path / "plugins.toml"
        toml.write_text(
            'version = 1\n[[components]]\nkind = "observability"\n[components.config.atof]\n'
            f'enabled = true\noutput_directory = "{out.atof.parent}"\n'
            f'filename = "{out.atof.name}"\n[components.config.atif]\nenabled = true\n'
            f'output_directory = "{out.atif}"\n[[components]]\nkind = "adaptive"\n',
            encoding="utf-8",
        )
        monkeypatch.setenv("WAYLINE_RELAY_PLUGINS_TOML", str(toml))
    with ScriptedServer(SCRIPT) as server:
        jitter = {"p_raise": 0, "p_garbage": 0, "p_mutate": 0, "p_sleep": 0.3, "max_sleep": 0.003}
        write_config(
            home,
            server.base_url,
            out,
            plugins=("observability/relay", "observability/otel", "barrier", "jitter"),
            agent={"toolsets": ["terminal", "file", "delegation", "probe"]},
            delegation={"max_concurrent_children": CHILDREN},
            entries={
                "barrier": {"groups": {"calls": CALLS, "children": CHILDREN}, "timeout": 60},
                "jitter": {"seed": 7, **jitter},
            },
        )
        runtime = build_runtime(home)
        assert all(p.loaded for p in runtime.manager.plugins.values() if p.enabled)
        runtime.settings = runtime.settings.with_(
            max_tool_workers=CALLS,
            provider=replace(runtime.settings.provider, timeout=60.0),
        )
        probe = Probe()
        probe.attach(runtime.manager.hooks)
        agent = runtime.agent(cwd=work)

        def run() -> Any:
            try:
                return agent.run_turn("go")
            finally:
                agent.finalize()

        result, error = run_with_deadline(run, 180)
    figures: Counter[str] = Counter()
    if error is not None:
        figures["deadlock"] += 1
        agent.cancel.set()
        shutdown_exporters(runtime)
        return dict(figures)
    assert result.text == "all done", result.text
    posts = probe.of("post_tool_call")
    barrier = [kw for kw in posts if kw.get("tool_name") == "barrier_probe"]
    tool_messages = [
        json.loads(m["content"])
        for m in agent.messages
        if m["role"] == "tool" and m["name"] == "barrier_probe"
    ]
    assert len(tool_messages) == CALLS and all("output" in t for t in tool_messages), tool_messages
    if len(barrier) != CALLS + CHILDREN or any(kw.get("status") != "ok" for kw in barrier):
        figures["lost"] += 1
    pre = Counter((kw["session_id"], kw["tool_call_id"]) for kw in probe.of("pre_tool_call"))
    post = Counter((kw["session_id"], kw["tool_call_id"]) for kw in posts)
    figures["lost"] += sum(1 for k in pre.keys() | post.keys() if pre[k] != 1 or post[k] != 1)
    starts, stops = probe.of("subagent_start"), probe.of("subagent_stop")
    figures["lost"] += abs(len(starts) - CHILDREN) + abs(len(stops) - CHILDREN)
    figures["lost"] += sum(1 for kw in stops if kw.get("child_status") != "completed")
    ends = probe.of("on_session_end")
    figures["lost"] += abs(len(ends) - (CHILDREN + 1))
    problems = outputs_problems(out, runtime)
    figures["lost"] += len(problems)
    tools = CALLS + 2 * CHILDREN + 1
    spans = [s for s in read_spans(out.spans) if s["name"].startswith("tool.")]
    scopes = [e for e in check_atof(out.atof).lines if e.get("category") == "tool"]
    figures["lost"] += abs(len(spans) - tools) + abs(len(scopes) - 2 * tools)
    figures["misparented"] += len(_atof_parents(out)) + len(_otel_parents(out))
    for problem in problems + _atof_parents(out) + _otel_parents(out):
        print(problem)
    return dict(figures)


@pytest.mark.parametrize("managed", [False, True], ids=["observers", "managed"])
@pytest.mark.timeout(600)
def test_64_tool_calls_and_16_subagents(
    managed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No lost events, no misparented events, no deadlock at 64 calls and 16 children."""
    figures = _run(tmp_path, monkeypatch, managed)
    mode = "managed" if managed else "observers"
    results = [
        record(
            f"concurrency_{mode}_deadlock",
            f"concurrency ({mode}): deadlocks",
            figures.get("deadlock", 0),
        ),
        record(
            f"concurrency_{mode}_lost", f"concurrency ({mode}): lost events", figures.get("lost", 0)
        ),
        record(
            f"concurrency_{mode}_misparented",
            f"concurrency ({mode}): misparented events",
            figures.get("misparented", 0),
        ),
    ]
    assert all(f.ok for f in results), figures
