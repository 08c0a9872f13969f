"""ATIF file text (encoded afresh at each write), the live exporter's copies, snapshots."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from atif_events import Atof
from hypothesis import given, settings
from hypothesis import strategies as st

from wayline import relay
from wayline.relay.atif import AtifExporter, TrajectoryBuilder, render_trajectory
from wayline.relay.atif.jsontext import trajectory_text


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _node(builder: TrajectoryBuilder) -> Any:
    root = builder.manual_root
    assert root is not None
    return root


def test_file_text_follows_every_change_to_a_step(atof: Atof) -> None:
    """A step that gains a result after a write is written with it: each write encodes the
    trajectory as it is then (sorted, compact JSON)."""
    builder = TrajectoryBuilder(session_id="s")
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    atof.llm(agent, [{"role": "user", "content": "hi \u00e9"}], "", [("c1", "read", {"p": 1})])
    tool = atof.tool_start(agent, "read", "c1", {"p": 1})
    for event in atof.events:
        builder.feed(event)
    node = _node(builder)
    first = trajectory_text(node)
    assert first == _reference(render_trajectory(node))
    assert "\u00e9" in first  # non-ASCII kept as is
    fed = len(atof.events)
    atof.tool_end(tool, "file text")
    atof.llm(agent, [{"role": "user", "content": "hi"}], "done")
    for event in atof.events[fed:]:
        builder.feed(event)
    second = trajectory_text(node)
    assert second != first and "file text" in second
    assert second == _reference(render_trajectory(node))


_text = st.text(max_size=8)


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(
        st.tuples(_text, _text, st.dictionaries(_text, _text, max_size=2)), min_size=1, max_size=4
    ),
    junk=_text,
)
def test_export_is_unchanged_when_fed_dicts_change_afterwards(
    turns: list[tuple[str, str, dict[str, str]]], junk: str
) -> None:
    """Events handed to the live exporter as dicts are its own once received: mutating every
    dict, list and payload of them in place afterwards leaves the trajectory as it was."""
    atof = Atof()
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    for i, (ask, answer, args) in enumerate(turns):
        atof.llm(agent, [{"role": "user", "content": ask}], answer, [(f"c{i}", "t", args)])
        tool = atof.tool_start(agent, "t", f"c{i}", args)
        atof.tool_end(tool, {"out": answer})
    atof.end(agent)
    fed = AtifExporter("s", "n", "1")
    for event in atof.events:
        fed.on_event(event)
    before = json.dumps(fed.export(), sort_keys=True)

    def scramble(value: Any) -> None:
        if isinstance(value, dict):
            for key in list(value):
                if isinstance(value[key], str) and key not in ("kind", "scope_category"):
                    value[key] = junk + "!"
                else:
                    scramble(value[key])
            value["scrambled"] = True
        elif isinstance(value, list):
            for item in value:
                scramble(item)
            value.append(junk)

    for event in atof.events:
        scramble(event)
    assert json.dumps(fed.export(), sort_keys=True) == before


def test_exporter_maps_events_from_many_threads(tmp_path: Path) -> None:
    """Events queued by several emitting threads all reach the trajectory when it is read."""
    exporter = AtifExporter("s", "bench", "0")
    exporter.register("test.atif.threads")
    try:
        agent = relay.scope.push("agent", relay.ScopeType.Agent, metadata={"session_id": "s"})

        def worker(index: int) -> None:
            for turn in range(20):
                call = relay.llm.call(
                    "openai",
                    relay.LLMRequest({}, {"messages": [{"role": "user", "content": f"q{index}"}]}),
                    handle=agent,
                )
                relay.scope.event("tick", handle=agent, data={"i": turn})
                relay.llm.call_end(call, {"choices": [{"message": {"content": f"a{turn}"}}]})

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        relay.scope.pop(agent)
        steps = exporter.export()["steps"]
    finally:
        exporter.deregister("test.atif.threads")
    assert sum(1 for step in steps if step["source"] == "agent") == 80


def test_snapshot_is_not_flushed_and_write_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """snapshot() writes the running trajectory without fsync; write() leaves the final
    state, flushed to disk."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    atof = Atof()
    exporter = AtifExporter("s", "bench", "0")
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    atof.llm(agent, [{"role": "user", "content": "hi"}], "hello")
    for event in atof.events:
        exporter.on_event(event)
    target = tmp_path / "trajectory-s.json"
    exporter.snapshot(tmp_path)
    assert json.loads(target.read_text())["steps"][-1]["message"] == "hello"
    assert synced == []
    atof.llm(agent, [{"role": "user", "content": "again"}], "bye")
    for event in atof.events[-2:]:
        exporter.on_event(event)
    exporter.write(tmp_path)
    assert json.loads(target.read_text())["steps"][-1]["message"] == "bye"
    assert len(synced) == 1
