"""The shared hook thread: one thread for every plugin's queue, per-queue close and failure
counts, drain() that waits for what was queued before it, backpressure when the queue is
full, and payloads sanitized on the thread, once for every plugin."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest

from wayline.plugins.observability import hookqueue
from wayline.plugins.observability.hookqueue import (
    THREAD_NAME,
    HookQueue,
    HookThread,
    event_time_ns,
)
from wayline.testing.secrets import SECRET_SAMPLES


def test_queues_share_one_worker_thread_in_arrival_order() -> None:
    """Two plugins' callbacks run on the same worker thread, interleaved as they arrived."""
    first, second = HookQueue(label="one"), HookQueue(label="two")
    seen: list[tuple[str, str]] = []

    def record(tag: str) -> None:
        seen.append((tag, threading.current_thread().name))

    for i in range(5):
        first.put("h", record, {"tag": f"a{i}"})
        second.put("h", record, {"tag": f"b{i}"})
    assert first.drain(5.0)
    assert [tag for tag, _ in seen] == [t for i in range(5) for t in (f"a{i}", f"b{i}")]
    assert {name for _, name in seen} == {THREAD_NAME}


def test_closing_one_queue_leaves_the_other_on_the_worker() -> None:
    """After close(), that queue's hooks run on the caller; the other queue still queues."""
    closed, open_ = HookQueue(label="closed"), HookQueue(label="open")
    threads: dict[str, str] = {}

    def record(tag: str) -> None:
        threads[tag] = threading.current_thread().name

    assert closed.close(5.0)
    closed.put("h", record, {"tag": "closed"})
    open_.put("h", record, {"tag": "open"})
    assert "closed" in threads  # ran inline, before put returned
    assert open_.drain(5.0)
    assert threads == {"closed": threading.current_thread().name, "open": THREAD_NAME}


def test_drain_is_bounded_by_its_timeout_when_an_observer_is_stuck() -> None:
    """A stuck observer does not hang a session's end: drain() gives up after its timeout and
    reports False; once the observer returns, drain() succeeds and later hooks run."""
    thread = HookThread()
    queue = HookQueue(label="stuck", thread=thread)
    release, ran = threading.Event(), []

    def record(n: int) -> None:
        ran.append(n)

    queue.put("h", lambda: release.wait(30.0), {})
    queue.put("h", record, {"n": 1})
    assert queue.drain(0.2) is False
    assert ran == [] and queue.pending() == 2  # the stuck one and the one after it
    release.set()
    assert queue.drain(10.0) and ran == [1]


def test_drain_waits_for_what_was_queued_before_it_not_for_later_hooks() -> None:
    """drain() returns once the hooks queued before it ran, while a hook queued after it still
    runs: a thread that never goes idle does not hold a session's end."""
    thread = HookThread()
    queue = HookQueue(label="busy", thread=thread)
    first, later = threading.Event(), threading.Event()
    marker: list[int] = []
    queue.put("h", lambda: first.wait(10.0), {})
    queue.put("h", lambda: marker.append(1), {})
    drained = threading.Event()

    def drain() -> None:
        if queue.drain(10.0):
            drained.set()

    waiter = threading.Thread(target=drain)
    waiter.start()
    try:
        assert _wait_for(lambda: thread.waiters == 1)  # drain() holds its ticket
        queue.put("h", lambda: later.wait(10.0), {})
        first.set()
        assert drained.wait(10.0) and marker == [1]
        assert not later.is_set()  # the later hook is still running: it was not waited for
    finally:
        first.set()
        later.set()
        waiter.join()
        queue.drain(10.0)


def test_a_full_queue_blocks_the_hook_until_the_thread_makes_room() -> None:
    """With the queue at its limit a hook call waits (nothing is dropped) and returns as soon
    as the thread has run one callback; every hook then runs, in order."""
    thread = HookThread(limit=2)
    queue = HookQueue(label="full", thread=thread)
    release, ran = threading.Event(), []

    def record(n: int) -> None:
        ran.append(n)

    queue.put("h", lambda: release.wait(10.0), {})  # holds the thread
    assert _wait_for(lambda: not thread.items)  # ... which has taken it
    queue.put("h", record, {"n": 1})
    queue.put("h", record, {"n": 2})  # the queue is full now
    returned = threading.Event()

    def third() -> None:
        queue.put("h", record, {"n": 3})
        returned.set()

    producer = threading.Thread(target=third)
    producer.start()
    assert not returned.wait(0.2), "a hook call returned although the queue was full"
    release.set()
    producer.join(10.0)
    assert returned.is_set() and queue.drain(5.0)
    assert ran == [1, 2, 3]


def _wait_for(condition: object, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.005)
    return False


def test_failures_are_counted_per_queue_and_the_worker_goes_on() -> None:
    """A raising callback counts against its own queue only; later callbacks still run, and
    each sees the time its own hook fired."""
    bad, good = HookQueue(label="bad"), HookQueue(label="good")
    times: list[int | None] = []

    def boom() -> None:
        raise ValueError("observer bug")

    before = time.time_ns()
    bad.put("h", boom, {})
    good.put("h", lambda: times.append(event_time_ns()), {})
    after = time.time_ns()
    assert good.drain(5.0)
    assert (bad.failures, good.failures) == (1, 0)
    assert times[0] is not None and before <= times[0] <= after
    assert bad.pending() == good.pending() == 0
    assert hookqueue.event_time_ns() is None  # only set on the worker, per callback


def test_bus_hands_queued_callbacks_one_snapshot_of_the_payload() -> None:
    """Through the bus, two plugins' queued callbacks queue one snapshot of the hook's payload
    (a copy, made once per hook call, not the host's dict) and run with its keywords."""
    from wayline.host import HookBus

    bus = HookBus()
    gate, first, second = HookQueue(label="gate"), HookQueue(label="one"), HookQueue(label="two")
    opened = threading.Event()
    seen: list[tuple[str, dict[str, object]]] = []

    def record(tag: str) -> Callable[..., None]:
        return lambda **kw: seen.append((tag, kw))

    bus.register("post_tool_call", first.wrap("post_tool_call", record("one")), "one")
    bus.register("post_tool_call", second.wrap("post_tool_call", record("two")), "two")
    gate.put("h", lambda: opened.wait(5.0), {})  # holds the worker while we look
    sent: dict[str, object] = {}

    def keep(**payload: object) -> None:
        sent.update(payload)

    bus.register("post_tool_call", keep, "keeper")  # runs last, with the bus's payload
    bus.invoke_hook("post_tool_call", tool_name="t")
    with hookqueue.shared.lock:
        queued = [i for i in hookqueue.shared.items if i[4] == "post_tool_call"]
    opened.set()
    assert len(queued) == 2 and queued[0][2] is queued[1][2]
    assert queued[0][2] == sent
    assert first.drain(5.0) and second.drain(5.0)
    expected = {"tool_name": "t", "telemetry_schema_version": "hermes.observer.v1"}
    assert seen == [("one", expected), ("two", expected)]


def test_unsanitized_fields_are_sanitized_on_the_hook_thread_once_for_every_plugin() -> None:
    """When every callback of a hook is queued the bus passes the raw request; the hook thread
    sanitizes it (a secret never reaches an observer) and both plugins see one value."""
    from wayline.host import HookBus
    from wayline.redaction.sanitize import sanitize
    from wayline.redaction.unsanitized import Unsanitized

    bus = HookBus()
    first, second = HookQueue(label="one"), HookQueue(label="two")
    seen: list[tuple[object, str]] = []

    def record(**kw: object) -> None:
        seen.append((kw["request"], threading.current_thread().name))

    bus.register("pre_api_request", first.wrap("pre_api_request", record), "one")
    bus.register("pre_api_request", second.wrap("pre_api_request", record), "two")
    assert bus.queued_only("pre_api_request")
    raw = {"method": "POST", "body": {"api_key": "sk-live-0123456789abcdef", "messages": []}}
    bus.invoke_hook("pre_api_request", request=Unsanitized(raw, 3))
    assert first.drain(5.0) and second.drain(5.0)
    assert len(seen) == 2 and seen[0][0] is seen[1][0]
    assert seen[0][0] == sanitize(raw) and "sk-live" not in repr(seen[0][0])
    assert {name for _, name in seen} == {THREAD_NAME}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_runs_its_hooks_on_a_thread_of_its_own() -> None:
    """The hook thread does not survive a fork: the child's hooks still run (on a new thread),
    and the parent's hook thread goes on."""
    queue = HookQueue(label="fork")
    ran: list[str] = []
    queue.put("h", lambda: ran.append("before"), {})
    assert queue.drain(5.0) and ran == ["before"]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, leave without pytest's teardown
        try:
            queue.put("h", lambda: ran.append(threading.current_thread().name), {})
            done = queue.drain(5.0) and ran == ["before", THREAD_NAME]
            os.write(write, b"y" if done else b"n")
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 1) == b"y"
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    queue.put("h", lambda: ran.append("after"), {})
    assert queue.drain(5.0) and ran == ["before", "after"]


def test_a_failure_is_logged_once_per_kind_without_the_secret_it_quotes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An observer that raises with a payload's secret in its message is logged once per
    (hook, exception type), redacted, and every failure is counted."""
    sample = next(s for s in SECRET_SAMPLES if s.needle in s.secret and len(s.needle) >= 24)
    queue = HookQueue(label="leaky")

    def boom(text: str) -> None:
        raise ValueError(f"could not render {text}")

    with caplog.at_level("WARNING", logger="wayline.plugins.hooks"):
        for _ in range(3):
            queue.put("pre_tool_call", boom, {"text": f"see {sample.secret} here"})
        assert queue.drain(5.0)
    assert queue.failures == 3
    records = [r for r in caplog.records if "pre_tool_call" in r.getMessage()]
    assert len(records) == 1 and "leaky" in records[0].getMessage()
    assert sample.needle not in caplog.text
