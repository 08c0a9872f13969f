"""ATIF file text: the fast indented encoder, the reuse of step text, background refreshes."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from atif_events import Atof
from hypothesis import given, settings
from hypothesis import strategies as st

from wayline import relay
from wayline.relay.atif import AtifExporter, TrajectoryBuilder, render_trajectory
from wayline.relay.atif.jsontext import dumps_indented, trajectory_text, warm_text
from wayline.relay.atif.refresh import Refresher


def _reference(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_indented_text_is_json_dumps_byte_for_byte(value: Any) -> None:
    """Any JSON value (NaN, big ints, tuples, non-ASCII, empties) encodes like json.dumps."""
    assert dumps_indented(value) == _reference(value)


def test_values_outside_the_fast_path_follow_json_dumps() -> None:
    """Non-str keys and str subclasses fall back to json.dumps; unencodable values raise alike."""

    class Name(str):
        """A str subclass."""

    assert dumps_indented({1: "a", 2: [Name("x")]}) == _reference({1: "a", 2: [Name("x")]})
    assert dumps_indented({"f": -0.0, "g": math.inf}) == _reference({"f": -0.0, "g": math.inf})
    with pytest.raises(TypeError):
        dumps_indented({"x": object()})


def _node(builder: TrajectoryBuilder) -> Any:
    root = builder.manual_root
    assert root is not None
    return root


def test_reused_step_text_follows_changes_to_a_step(atof: Atof) -> None:
    """A step that gains a result after a write is re-encoded; unchanged steps are reused."""
    builder = TrajectoryBuilder(session_id="s")
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    atof.llm(agent, [{"role": "user", "content": "hi"}], "", [("c1", "read", {"p": 1})])
    tool = atof.tool_start(agent, "read", "c1", {"p": 1})
    for event in atof.events:
        builder.feed(event)
    node = _node(builder)
    first = trajectory_text(node)
    assert first == _reference(render_trajectory(node))
    fed = len(atof.events)
    atof.tool_end(tool, "file text")
    atof.llm(agent, [{"role": "user", "content": "hi"}], "done")
    for event in atof.events[fed:]:
        builder.feed(event)
    second = trajectory_text(node)
    assert second != first
    assert second == _reference(render_trajectory(node))
    assert trajectory_text(node) == second


def test_messages_recurring_in_later_requests_are_encoded_once(atof: Atof) -> None:
    """Each user step's request repeats the conversation: a message object is encoded once
    per indentation (the main file's and an embedded child's), and the text stays exact."""
    builder = TrajectoryBuilder(session_id="s")
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    history: list[dict[str, Any]] = []
    for turn in range(4):
        history.append({"role": "user", "content": f"turn {turn} \u00e9"})
        atof.llm(agent, list(history), f"answer {turn}")
        history.append({"role": "assistant", "content": f"answer {turn}", "n": [1.5, None]})
    child = atof.start("child", "agent", agent, metadata={"session_id": "c"})
    atof.llm(child, history[:3], "child answer")
    for event in atof.events:
        builder.feed(event)
    node = _node(builder)
    text = trajectory_text(node)
    assert text == _reference(render_trajectory(node))
    assert node.value_texts is not None
    # 7 distinct messages in the main requests, 3 of them again in the child's, deeper.
    assert len(node.value_texts) == 7
    assert len({indent for indent, _ in node.value_texts}) == 1
    assert sum(len(c.value_texts or {}) for c in node.children) == 3
    atof.llm(agent, [*history, {"role": "user", "content": "last"}], "bye")
    builder.feed(atof.events[-2])
    builder.feed(atof.events[-1])
    assert trajectory_text(node) == _reference(render_trajectory(node))
    assert len(node.value_texts) == 9  # the last answer and the new user message


def test_tool_schemas_recurring_in_requests_are_encoded_once(atof: Atof) -> None:
    """The tool schemas every request repeats (the same objects, as the sanitizer's memo
    hands them back) are encoded once, like its messages, and the text stays exact."""
    builder = TrajectoryBuilder(session_id="s")
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    tools = [
        {"type": "function", "function": {"name": f"tool{i}", "parameters": {"n": [i, 2.5]}}}
        for i in range(3)
    ]
    for turn in range(3):
        body = {"model": "m-1", "messages": [{"role": "user", "content": f"q{turn}"}]}
        uid = atof.start(
            "openai",
            "llm",
            agent,
            data={"content": {**body, "tools": tools}, "headers": {}},
            profile={"model_name": "m-1"},
        )
        atof.llm_end(uid, f"a{turn}")
    for event in atof.events:
        builder.feed(event)
    node = _node(builder)
    assert trajectory_text(node) == _reference(render_trajectory(node))
    assert node.value_texts is not None
    cached = {key[1] for key in node.value_texts}
    assert {id(tool) for tool in tools} <= cached
    assert len(node.value_texts) == 3 + 3  # three tools, three user messages


def test_settled_steps_are_encoded_ahead_of_the_write(atof: Atof) -> None:
    """warm_text encodes the user step and finished agent steps (a child's too, at its
    embedded depth; ``pause`` runs before each) but stops at a step still waiting for a tool
    result; the write then reuses them and still equals json.dumps, the waiting step
    included once it ends."""
    builder = TrajectoryBuilder(session_id="s")
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    atof.llm(agent, [{"role": "user", "content": "hi"}], "", [("c1", "delegate", {})])
    tool = atof.tool_start(agent, "delegate", "c1", {})
    child = atof.start("child", "agent", agent, metadata={"session_id": "c"})
    atof.llm(child, [{"role": "user", "content": "child task"}], "child done")
    for event in atof.events:
        builder.feed(event)
    node = _node(builder)
    pauses: list[int] = []
    warm_text(node, pause=lambda: pauses.append(1))
    assert len(pauses) == 3  # before each step encoded: the user step and the child's two
    assert node.warmed == 1  # the user step; the agent step waits for c1's result
    assert node.children[0].warmed == 2
    assert {indent for indent, _ in node.children[0].text_cache or {}} == {" " * 8}
    fed = len(atof.events)
    atof.end(child)
    atof.tool_end(tool, "delegated")
    for event in atof.events[fed:]:
        builder.feed(event)
    warm_text(node)
    assert node.warmed == 2
    cached = dict(node.text_cache or {})
    assert trajectory_text(node) == _reference(render_trajectory(node))
    assert node.text_cache == cached  # the write encoded nothing new


def test_a_write_renders_only_steps_that_may_have_changed(
    atof: Atof, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write renders no step whose text was made at its current result count; a step with
    a sub-agent is rendered every time, so the sub-agent's reference appears once the
    sub-agent has steps, even after that step's text was made."""
    from wayline.relay.atif import jsontext

    builder = TrajectoryBuilder(session_id="s")
    agent = atof.start("agent", "agent", metadata={"session_id": "s"})
    atof.llm(agent, [{"role": "user", "content": "hi"}], "", [("c1", "delegate", {})])
    tool = atof.tool_start(agent, "delegate", "c1", {})
    child = atof.start("child", "agent", agent, metadata={"session_id": "c"})
    atof.tool_end(tool, "delegated")
    atof.llm(agent, [{"role": "user", "content": "more"}], "done")
    for event in atof.events:
        builder.feed(event)
    node = _node(builder)
    first = trajectory_text(node)
    assert "subagent_trajectory_ref" not in first  # the child has no steps yet
    rendered: list[int] = []
    render_step = jsontext.render_step
    monkeypatch.setattr(
        jsontext,
        "render_step",
        lambda step_id, step, path_for=None: (
            rendered.append(step_id) or render_step(step_id, step, path_for)
        ),
    )
    assert trajectory_text(node) == first
    assert rendered == [2]  # only the step whose result has a sub-agent
    fed = len(atof.events)
    atof.llm(child, [{"role": "user", "content": "child task"}], "child done")
    atof.end(child)
    for event in atof.events[fed:]:
        builder.feed(event)
    second = trajectory_text(node)
    assert second == _reference(render_trajectory(node))
    assert "subagent_trajectory_ref" in second


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


def test_refresh_writes_in_the_background_and_write_supersedes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """refresh() writes soon on another thread, a snapshot not flushed to disk (no fsync);
    a later write() leaves the final state, flushed to disk."""
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
    exporter.refresh(tmp_path, interval=0.05)
    deadline = time.monotonic() + 5
    while not target.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert json.loads(target.read_text())["steps"][-1]["message"] == "hello"
    assert synced == []
    atof.llm(agent, [{"role": "user", "content": "again"}], "bye")
    for event in atof.events[-2:]:
        exporter.on_event(event)
    exporter.refresh(tmp_path, interval=60)  # due in a minute: write() must not wait for it
    exporter.write(tmp_path)
    assert json.loads(target.read_text())["steps"][-1]["message"] == "bye"
    assert len(synced) == 1


def test_refresher_coalesces_requests_within_an_interval() -> None:
    """Requests for one key inside its interval merge into one run of the latest job."""
    refresher = Refresher()
    runs: list[str] = []
    done = threading.Event()

    def job(name: str) -> Any:
        def run() -> None:
            runs.append(name)
            done.set()

        return run

    refresher.schedule("k", job("first"), 10.0)
    assert done.wait(5)
    done.clear()
    for name in ("a", "b", "c"):
        refresher.schedule("k", job(name), 0.2)
    assert refresher.pending("k")
    assert done.wait(5)
    time.sleep(0.3)
    assert runs == ["first", "c"]
    refresher.schedule("k", job("dropped"), 10.0)
    refresher.cancel("k")
    assert not refresher.pending("k")


def test_refresher_waits_longer_after_a_slow_job() -> None:
    """A key whose last job took d seconds runs again no sooner than COST_FACTOR * d after it
    started, even when its interval is shorter (refreshing stays a small share of a core)."""
    from wayline.relay.atif.refresh import COST_FACTOR

    refresher = Refresher()
    started: list[float] = []
    done = threading.Event()

    def slow() -> None:
        started.append(time.monotonic())
        time.sleep(0.05)
        done.set()

    refresher.schedule("k", slow, 0.01)
    assert done.wait(5)
    done.clear()
    time.sleep(0.1)  # the job has finished and recorded its duration
    refresher.schedule("k", slow, 0.01)
    assert done.wait(10)
    assert started[1] - started[0] >= 0.05 * COST_FACTOR * 0.95
