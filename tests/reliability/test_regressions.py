"""Focused checks for the bugs the chaos and fault runs found, one per bug, small and direct."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from rel_support import (
    Outputs,
    check_atof,
    outputs_problems,
    pairing_problems,
    store_messages,
    write_config,
)

from wayline import relay
from wayline.relay.atof import AtofExporter, AtofExporterConfig
from wayline.runtime import build_runtime
from wayline.testing.secrets import SECRET_SAMPLES


class Boom(Exception):
    """Raised by the hostile objects below."""


class HostileDict(dict[str, Any]):
    """A dict whose lookups raise."""

    def get(self, *args: Any, **kwargs: Any) -> Any:
        """Always raises."""
        raise Boom("get")


class Unprintable(Exception):
    """An exception (and a value) whose ``str``/``repr`` raise."""

    def __str__(self) -> str:
        raise Boom("str")

    def __repr__(self) -> str:
        raise Boom("repr")


TWO_READS = {
    "model": "scripted-model",
    "rules": [
        {
            "match": {},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "read_file", "arguments": {"path": "a.txt"}, "omit_id": True},
                        {"name": "read_file", "arguments": {"path": "a.txt"}, "omit_id": True},
                    ]
                },
                {"content": "done"},
            ],
        }
    ],
}


def _runtime(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, **config: Any) -> Any:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    out = Outputs(tmp_path / "out")
    for key, value in out.env().items():
        monkeypatch.setenv(key, value)
    write_config(home, url, out, **config)
    (tmp_path / "a.txt").write_text("alpha\n")
    return build_runtime(home), out, home


def test_tool_calls_without_ids_get_one_id_everywhere(
    tmp_path: Path, scripted_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server sending calls without ids: store, hooks and exports all name the same ids."""
    server = scripted_server(TWO_READS)
    runtime, out, home = _runtime(tmp_path, server.base_url, monkeypatch)
    posts: list[str] = []
    runtime.manager.hooks.register("post_tool_call", lambda **kw: posts.append(kw["tool_call_id"]))
    agent = runtime.agent(cwd=tmp_path)
    assert agent.run_turn("read twice").text == "done"
    agent.finalize()
    stored = store_messages(home, agent.session_id)
    assert pairing_problems(stored, "store") == []
    calls = [c["id"] for m in stored if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert len(set(calls)) == 2 and sorted(calls) == sorted(posts)
    assert pairing_problems(server.requests[-1].body["messages"], "request") == []
    assert outputs_problems(out, runtime) == []
    atof_calls = {
        (e.get("category_profile") or {}).get("tool_call_id")
        for e in check_atof(out.atof).lines
        if e.get("category") == "tool"
    }
    assert atof_calls == set(calls)


def test_hostile_return_values_fail_open(
    tmp_path: Path, scripted_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Return values whose reading raises are logged and skipped like a raising callback."""
    server = scripted_server(TWO_READS)
    runtime, _, _ = _runtime(tmp_path, server.base_url, monkeypatch, plugins=())
    hooks, chains = runtime.manager.hooks, runtime.manager.middleware
    for name in ("pre_llm_call", "pre_tool_call", "transform_tool_result", "transform_llm_output"):
        hooks.register(name, lambda **kw: HostileDict(action="block"), "hostile")
    chains.register("llm_request", lambda **kw: HostileDict(request={}), "hostile")
    chains.register("tool_request", lambda **kw: HostileDict(args={}), "hostile")
    agent = runtime.agent(cwd=tmp_path)
    assert agent.run_turn("read twice").text == "done"
    # pre_llm_call once, pre_tool_call per call; each request middleware per call or attempt
    assert hooks.failures.total() == 3 and chains.failures.total() >= 3
    assert all('"error"' not in m["content"] for m in agent.messages if m["role"] == "tool")


def test_unprintable_or_secret_plugin_errors_are_logged_safely(
    tmp_path: Path,
    scripted_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A plugin exception that cannot be printed, or quotes a secret, leaves one safe log line."""
    server = scripted_server(TWO_READS)
    runtime, _, _ = _runtime(tmp_path, server.base_url, monkeypatch, plugins=())
    secret = SECRET_SAMPLES[0]

    def unprintable(**kw: Any) -> None:
        raise Unprintable()

    def quoting(**kw: Any) -> None:
        raise ValueError(f"bad key {secret.secret}")

    runtime.manager.hooks.register("pre_tool_call", unprintable, "mute")
    runtime.manager.hooks.register("post_tool_call", quoting, "chatty")
    caplog.set_level(logging.DEBUG, logger="wayline")
    agent = runtime.agent(cwd=tmp_path)
    assert agent.run_turn("read twice").text == "done"
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "<Unprintable with an unprintable message>" in text
    assert "bad key" in text and secret.needle not in text


def test_relay_events_with_unprintable_or_cyclic_data_keep_their_lines(tmp_path: Path) -> None:
    """A managed tool span whose args cycle and whose result cannot print still starts and ends."""
    config = AtofExporterConfig(output_directory=tmp_path, filename="e.jsonl")
    exporter = AtofExporter(config)
    exporter.register("regression")
    try:
        cycle: list[Any] = []
        cycle.append(cycle)
        relay.tools.execute_sync("t", {"loop": cycle}, lambda args: Unprintable())
        relay.tools.execute_sync("t", {"ok": 1}, lambda args: {(1, 2): "tuple key"})
    finally:
        exporter.shutdown()
    atof = check_atof(tmp_path / "e.jsonl")
    assert atof.problems == [] and atof.unclosed == []
    assert sum(1 for e in atof.lines if e.get("scope_category") == "end") == 2


def test_children_keep_the_parent_provider_settings(
    tmp_path: Path, scripted_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delegated child calls the model with the parent's settings (max_tokens, retries)."""
    from dataclasses import replace

    server = scripted_server(
        {
            "model": "scripted-model",
            "rules": [
                {"match": {"first_user_contains": "CHILD"}, "respond": {"content": "child"}},
                {
                    "match": {},
                    "turns": [
                        {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "CHILD"}}]},
                        {"content": "done"},
                    ],
                },
            ],
        }
    )
    runtime, _, _ = _runtime(tmp_path, server.base_url, monkeypatch, plugins=())
    provider = replace(runtime.settings.provider, max_tokens=77, backoff_base=0.01)
    runtime.settings = runtime.settings.with_(provider=provider)
    agent = runtime.agent(cwd=tmp_path)
    assert agent.run_turn("delegate").text == "done"
    child = [r for r in server.requests if "CHILD" in json.dumps(r.body["messages"][1])]
    assert child and all(r.body.get("max_tokens") == 77 for r in child)


def _session_events(tmp_path: Path, server: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """ATOF events of a real session with a delegated child."""
    runtime, out, _ = _runtime(
        tmp_path, server.base_url, monkeypatch, plugins=("observability/relay",)
    )
    agent = runtime.agent(cwd=tmp_path)
    assert agent.run_turn("delegate").text == "done"
    agent.finalize()
    assert outputs_problems(out, runtime) == []
    return [json.loads(line) for line in out.atof.read_text(encoding="utf-8").splitlines()]


DELEGATING = {
    "model": "scripted-model",
    "rules": [
        {"match": {"first_user_contains": "CHILD"}, "respond": {"content": "child"}},
        {
            "match": {},
            "turns": [
                {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "CHILD"}}]},
                {"content": "done"},
            ],
        },
    ],
}


def test_converter_output_stays_valid_for_duplicated_or_odd_events(
    tmp_path: Path, scripted_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child scope started twice, or a timestamp that is no timestamp: still valid ATIF."""
    from wayline.relay.atif.convert import convert_events
    from wayline.relay.atif.validate import validate_trajectory

    events = _session_events(tmp_path, scripted_server(DELEGATING), monkeypatch)
    child = next(
        i
        for i, e in enumerate(events)
        if e.get("category") == "agent"
        and e.get("parent_uuid")
        and e["scope_category"] == "start"
        and (e.get("metadata") or {}).get("parent_session_id")
    )
    # The child's whole span of events delivered twice (same uuids), its start without a
    # trajectory_id so the scope uuid names the sub-agent both times.
    start = dict(events[child])
    start["metadata"] = {k: v for k, v in start["metadata"].items() if k != "trajectory_id"}
    end = next(i for i, e in enumerate(events) if e["uuid"] == start["uuid"] and i > child)
    span = [start, *events[child + 1 : end + 1]]
    duplicated = [*events[:child], *span, *span, *events[end + 1 :]]
    odd = [dict(e) for e in events]
    first_llm = next(e for e in odd if e.get("category") == "llm")
    first_llm["timestamp"] = ""
    for name, stream in (("duplicated", duplicated), ("odd", odd)):
        report = convert_events(stream, tmp_path / name)
        assert report.written, name
        for path in report.written:
            document = json.loads(path.read_text(encoding="utf-8"))
            assert validate_trajectory(document) == [], (name, path.name)
