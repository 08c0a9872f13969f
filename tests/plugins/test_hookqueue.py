"""The shared hook worker: one thread for every plugin's queue, per-queue close and failure
counts, and drain() that waits for what was queued before it, not for an idle worker."""

from __future__ import annotations

import threading
import time

from wayline.plugins.observability import hookqueue
from wayline.plugins.observability.hookqueue import WORKER_NAME, HookQueue, event_time_ns


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
    assert {name for _, name in seen} == {WORKER_NAME}


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
    assert threads == {"closed": threading.current_thread().name, "open": WORKER_NAME}


def test_drain_returns_while_other_threads_keep_queueing() -> None:
    """drain() waits for the hooks queued before it, even when the worker never goes idle."""
    queue = HookQueue(label="busy")
    stop = threading.Event()

    def pause() -> None:
        time.sleep(0.001)

    def producer() -> None:
        # Slightly faster than the worker: its backlog only grows, it is never idle.
        while not stop.wait(0.0007):
            queue.put("h", pause, {})

    thread = threading.Thread(target=producer)
    thread.start()
    try:
        time.sleep(0.05)
        marker: list[int] = []
        queue.put("h", lambda: marker.append(1), {})
        assert queue.drain(3.0)
        assert marker == [1]
        assert queue.pending() > 0  # the producer's later hooks were not waited for
    finally:
        stop.set()
        thread.join()
        queue.drain(10.0)


def test_an_active_agent_does_not_wake_the_worker_for_each_batch() -> None:
    """After a batch the worker waits one gathering window for the next hooks on its own
    timer: hooks arriving steadily wake it once, not once per batch."""
    queue = HookQueue(label="steady")
    worker = hookqueue._worker
    assert queue.drain(5.0)
    time.sleep(2.5 * hookqueue.BATCH_DELAY_S)  # past the last batch's window: idle again
    before, ran = worker.wakeups, []

    def record(x: int) -> None:
        ran.append(x)

    for i in range(40):  # 0.8 s of hooks every 20 ms: eight gathering windows
        queue.put("h", record, {"x": i})
        time.sleep(0.02)
    assert queue.drain(5.0)
    assert ran == list(range(40))
    assert worker.wakeups - before <= 2  # the first hook; one more if a window went empty


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


def test_bus_hands_queued_callbacks_one_payload_dict() -> None:
    """Through the bus, two plugins' queued callbacks queue the hook's one payload dict
    (their ``payload_sink``: no copy per plugin) and still run with its keywords."""
    from wayline.host import HookBus

    bus = HookBus()
    gate, first, second = HookQueue(label="gate"), HookQueue(label="one"), HookQueue(label="two")
    opened = threading.Event()
    seen: list[tuple[str, dict[str, object]]] = []

    def record(tag: str) -> object:
        return lambda **kw: seen.append((tag, kw))

    bus.register("post_tool_call", first.wrap("post_tool_call", record("one")), "one")
    bus.register("post_tool_call", second.wrap("post_tool_call", record("two")), "two")
    gate.put("h", lambda: opened.wait(5.0), {})  # holds the worker while we look
    bus.invoke_hook("post_tool_call", tool_name="t")
    with hookqueue._worker.cond:
        queued = [
            i
            for i in (*hookqueue._worker.items, *hookqueue._worker.busy)
            if i[4] == "post_tool_call"
        ]
    opened.set()
    assert len(queued) == 2 and queued[0][2] is queued[1][2]
    assert first.drain(5.0) and second.drain(5.0)
    expected = {"tool_name": "t", "telemetry_schema_version": "hermes.observer.v1"}
    assert seen == [("one", expected), ("two", expected)]
