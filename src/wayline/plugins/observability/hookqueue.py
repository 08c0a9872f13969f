"""The observability plugins' observers run on one in-process thread, in hook order.

A hook call only appends ``(queue, callback, payload or its snapshot, time)`` to a bounded
deque; one daemon thread, ``wayline-hooks``, shared by every :class:`HookQueue` of the process,
sanitizes the payloads (``redaction.unsanitized``) and runs the callbacks with relay's clock
pinned to each hook's time, mostly while the agent waits for its model or a tool. Like the
OpenTelemetry SDK's batch processor, it runs the first hook after a pause at once (a session's
first hook builds the plugins), then gathers what arrives in a window of
:data:`SCHEDULE_DELAY_S` (cut short by :data:`BATCH_MAX` hooks or a drain) and runs it as a
batch; only after a window with no hook does it sleep until a hook wakes it, so an agent at
work wakes it about once per pause. CONTRIBUTING.md ("The observability room") says what each
part buys.

When :data:`QUEUE_LIMIT` hooks wait, a hook call blocks until there is room: backpressure, not
loss (a dropped ``pre_*`` hook leaves a span open forever). Every callback is an OBSERVER: an
``Exception`` is logged once per (queue, hook, type), redacted, and counted (the host's
``FailureLog``); a ``BaseException`` propagates and ends the thread, and a new thread runs the
hooks after it. Callbacks treat their payloads as read-only.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from wayline.host.bus import FailureLog, QueuedObserver
from wayline.plugins.observability.snapshot import Snapshots
from wayline.redaction.unsanitized import Memos, has_unsanitized, resolve_payload
from wayline.relay.clock import pin, pinned_ns

__all__ = [
    "QUEUE_LIMIT",
    "THREAD_NAME",
    "HookQueue",
    "HookThread",
    "QueuedHook",
    "event_time_ns",
    "shared",
]

log = logging.getLogger("wayline.plugins.hooks")

QUEUE_LIMIT = 65_536
"""Hooks waiting for the thread past which a hook call blocks until there is room."""

SCHEDULE_DELAY_S = 0.1
"""How long the thread gathers hooks after the first one before it runs them (a crash loses
at most this much); :meth:`HookQueue.drain` cuts it short."""

BATCH_MAX = 512
"""Queued hooks that end the gathering at once."""

THREAD_NAME = "wayline-hooks"


event_time_ns = pinned_ns
"""The wall-clock time (ns) at which the hook being handled on this thread fired, if any."""


Item = tuple["HookQueue", Callable[..., Any], dict[str, Any], int, str]


class HookThread:
    """A bounded deque of queued hooks and the one thread that empties it (the process
    shares one, :data:`shared`; a test may make its own with a small limit)."""

    def __init__(self, limit: int = QUEUE_LIMIT, delay_s: float = SCHEDULE_DELAY_S) -> None:
        self.limit = limit
        self.delay_s = delay_s
        self._reset()

    def _reset(self) -> None:
        """A new, empty state: at construction, and in a forked child (its thread did not
        survive the fork; the parent's queued hooks are not the child's to run)."""
        self.items: deque[Item] = deque()
        self.lock = threading.Lock()
        self.has_items = threading.Condition(self.lock)  # the thread waits here for work
        self.progress = threading.Condition(self.lock)  # drain() and full producers wait here
        self.thread: threading.Thread | None = None
        self.state = "idle"  # idle (a put wakes it), woken, gathering, running
        self.rested = True  # after a pause the first hook runs at once
        self.waiters = 0  # callers waiting on ``progress``: the thread notifies only then
        self.urgent = 0  # drain() callers: the thread does not gather while there are any
        self.queued = 0  # items ever accepted ...
        self.done = 0  # ... and ever run: drain() waits for done to pass its ticket
        self.batch: list[Item] = []  # the batch being run, and how many of it ran
        self.ran = 0
        self.memos = Memos()  # sanitizer memos of the thread (the history repeats per call)
        self.snapshots = Snapshots()  # what hook calls queue: copies of what may change
        # Work a callback asked for later (a live ATIF snapshot): key -> (due, item). It runs
        # when the thread would otherwise sleep, so it never delays a hook, and one key
        # coalesces however often it is asked for.
        self.later: dict[Hashable, tuple[float, Item]] = {}

    def _start(self) -> None:
        """Start the thread (called with the lock held, when there is none)."""
        self.thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self.thread.start()

    def _full(self) -> bool:
        return len(self.items) >= min(BATCH_MAX, self.limit)

    def put(self, item: Item) -> bool:
        """Queue ``item``; False once its queue is closed (the caller runs it itself)."""
        with self.lock:
            while len(self.items) >= self.limit and not item[0].closed:
                self._wait_for_progress(None)
            if item[0].closed:
                return False
            self.items.append(item)
            self.queued += 1
            if self.thread is None:
                self._start()
            elif self.state == "idle" or (self.state == "gathering" and self._full()):
                self.state = "woken"  # one wakeup is enough, however many hooks follow
                self.has_items.notify()
            return True

    def _wait_for_progress(self, timeout_s: float | None) -> None:
        self.waiters += 1
        try:
            self.progress.wait(timeout_s)
        finally:
            self.waiters -= 1

    def _next_batch(self) -> list[Item]:
        """Take the next batch of hooks (called with the lock held): the first hook after a
        pause at once, else what a window gathered; a window with nothing puts it to sleep,
        and what :meth:`put_later` asked for runs when it would sleep."""
        items = self.items
        deadline = time.monotonic() + self.delay_s
        while not (items and (self.rested or self.urgent or self._full())):
            left = deadline - time.monotonic()
            if left > 0:
                self.state = "gathering"
                self.has_items.wait(left)
            elif items:
                break
            else:
                due = self._due_later()
                if due:
                    items.extend(due)
                    self.queued += len(due)
                    break
                self.state = "idle"
                self.rested = True
                soonest = min((when for when, _ in self.later.values()), default=None)
                self.has_items.wait(None if soonest is None else soonest - time.monotonic())
        self.state = "running"
        self.rested = False
        batch = self.batch = list(items)
        self.ran = 0
        items.clear()
        if self.waiters:
            self.progress.notify_all()  # producers waiting for room
        return batch

    def _run(self) -> None:
        try:
            while True:
                with self.lock:
                    batch = self._next_batch()
                for item in batch:
                    try:
                        item[0].run(item, self.memos)
                    finally:
                        with self.lock:
                            self.done += 1
                            self.ran += 1
                            if self.waiters:
                                self.progress.notify_all()
        finally:
            self._ended()

    def _ended(self) -> None:
        """A ``BaseException`` ended the thread (it propagates, as for any observer): the rest
        of its batch goes back to the front of the queue and a new thread takes over."""
        with self.lock:
            self.items.extendleft(reversed(self.batch[self.ran :]))
            self.batch, self.ran = [], 0
            self.state, self.rested = "idle", True
            self.thread = None
            if self.items or self.later:
                self._start()
            self.progress.notify_all()

    def _due_later(self) -> list[Item]:
        """Take the later work that is due (called with the lock held, the queue empty)."""
        now = time.monotonic()
        keys = [key for key, (when, _) in self.later.items() if when <= now]
        return [self.later.pop(key)[1] for key in keys]

    def put_later(self, key: Hashable, item: Item, due: float) -> None:
        """Run ``item`` once the thread is idle and ``due`` (monotonic) has passed; a second
        request for ``key`` before then replaces the first (at the sooner of the two times)."""
        with self.lock:
            earlier = self.later.get(key)
            self.later[key] = (min(due, earlier[0]) if earlier else due, item)
            if self.thread is None:
                self._start()
            elif self.state == "idle":
                self.has_items.notify()  # it sleeps until its soonest work: that may be sooner

    def cancel_later(self, key: Hashable) -> None:
        """Forget ``key``'s later work (its owner did it itself)."""
        with self.lock:
            self.later.pop(key, None)

    def drain(self, timeout_s: float) -> bool:
        """Wait until every item queued before this call has run (at most ``timeout_s``)."""
        if threading.current_thread() is self.thread:
            return True  # a callback that flushes: what is before it already ran
        deadline = time.monotonic() + timeout_s
        with self.lock:
            ticket = self.queued
            self.urgent += 1
            self.has_items.notify()  # no gathering while somebody waits
            try:
                while self.done < ticket:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._wait_for_progress(left)
            finally:
                self.urgent -= 1
        return True

    def close_queue(self, queue: HookQueue) -> None:
        """Mark ``queue`` closed; its producers waiting for room run their hooks inline."""
        with self.lock:
            queue.closed = True
            for key in [k for k, (_, item) in self.later.items() if item[0] is queue]:
                del self.later[key]  # its owner writes for itself when it closes
            self.progress.notify_all()

    def pending(self, queue: HookQueue) -> int:
        """Items of ``queue`` queued or in the batch being run, not yet done."""
        with self.lock:
            waiting = (*self.items, *self.batch[self.ran :])
            return sum(1 for item in waiting if item[0] is queue)


shared = HookThread()
"""The hook thread every :class:`HookQueue` of the process uses unless given another."""


class QueuedHook(QueuedObserver):
    """The host callback of one hook of one :class:`HookQueue`: it only queues the payload.

    Kind: OBSERVER. Runs on whichever thread fires the hook and returns at once (it blocks
    only under backpressure, or for ``wait_s`` when this hook waits for the thread).
    """

    def __init__(
        self,
        queue: HookQueue,
        hook: str,
        callback: Callable[..., Any],
        wait_s: float | None,
        wait_if: Callable[[dict[str, Any]], bool] | None,
        first: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.queue = queue
        self.hook = hook
        self.callback = callback
        self.wait_s = wait_s
        self.wait_if = wait_if
        self.first = first
        self.__name__ = getattr(callback, "__name__", hook)
        self.__qualname__ = getattr(callback, "__qualname__", hook)

    def enqueue(self, payload: dict[str, Any], owned: bool = False) -> None:
        """Run ``first(payload)`` if given; queue ``callback(**payload)`` (a snapshot of it
        unless ``owned``: its host never changes it); then wait if this hook waits."""
        if self.first is not None:
            self.first(payload)
        self.queue.put(self.hook, self.callback, payload, owned)
        if self.wait_s is not None and (self.wait_if is None or self.wait_if(payload)):
            self.queue.drain(self.wait_s)

    def enqueue_owned(self, payload: dict[str, Any]) -> None:
        """Queue ``payload`` as it is: its host never changes it (see :meth:`enqueue`)."""
        self.enqueue(payload, True)


class HookQueue:
    """One plugin's observer callbacks, run in arrival order on the shared hook thread."""

    def __init__(self, *, label: str = "observability/otel", thread: HookThread = shared) -> None:
        self._label = label
        self._thread = thread
        self.closed = False
        self._failures = FailureLog(log, "Observer")

    def wrap(
        self,
        hook: str,
        callback: Callable[..., Any],
        *,
        wait_s: float | None = None,
        wait_if: Callable[[dict[str, Any]], bool] | None = None,
        first: Callable[[dict[str, Any]], None] | None = None,
    ) -> QueuedHook:
        """A host callback for ``hook`` that queues ``callback(**payload)`` for the thread.

        ``wait_s``: the callback then also waits (at most that long) until the thread has run
        it and everything queued before it, for hooks whose results callers read at once;
        ``wait_if(payload)``, when given, decides per call whether to wait. ``first(payload)``
        runs on the calling thread before the payload is queued (it must not block).
        """
        return QueuedHook(self, hook, callback, wait_s, wait_if, first)

    def put(
        self, hook: str, callback: Callable[..., Any], payload: dict[str, Any], owned: bool = False
    ) -> None:
        """Queue one callback (with a snapshot of ``payload`` unless ``owned``: its host never
        changes it); after :meth:`close` it runs on the calling thread instead."""
        snapshots = self._thread.snapshots
        if owned:
            snapshot, ns = payload, snapshots.stamp(payload)
        else:
            snapshot, ns = snapshots.take_stamped(payload)
        item: Item = (self, callback, snapshot, ns, hook)
        if self.closed or not self._thread.put(item):
            self.run(item, Memos())

    def run(self, item: Item, memos: Memos) -> None:
        """Run one queued callback with its hook's time (an observer: failures are logged)."""
        _, callback, payload, ns, hook = item
        pin(ns)
        try:
            if has_unsanitized(payload):
                resolve_payload(payload, memos)
            callback(**payload)
        except Exception as exc:
            self._failures.record(self._label, hook, exc)
        finally:
            pin(None)

    @property
    def failures(self) -> int:
        """How many of this queue's callbacks raised (each kind is logged once)."""
        return self._failures.total()

    def later(self, key: Hashable, job: Callable[[], Any], delay_s: float) -> None:
        """Run ``job()`` on the hook thread when it is idle, no sooner than ``delay_s`` from
        now; asking again for ``key`` before then replaces the job. After :meth:`close` the
        job runs at once on the calling thread. Kind: OBSERVER (failures are logged)."""
        item: Item = (self, job, {}, time.time_ns(), "<later>")
        if self.closed:
            self.run(item, Memos())
            return
        self._thread.put_later((id(self), key), item, time.monotonic() + delay_s)

    def cancel_later(self, key: Hashable) -> None:
        """Forget the later job of ``key`` (its owner did the work itself)."""
        self._thread.cancel_later((id(self), key))

    def drain(self, timeout_s: float) -> bool:
        """Wait until every callback queued so far has run (at most ``timeout_s``); True if so.

        On the hook thread itself (a callback that flushes) there is nothing to wait for.
        """
        return self._thread.drain(timeout_s)

    def pending(self) -> int:
        """This queue's callbacks queued or running on the thread."""
        return self._thread.pending(self)

    def close(self, timeout_s: float) -> bool:
        """Run what is queued (bounded by ``timeout_s``), then run later hooks inline."""
        done = self.drain(timeout_s)
        self._thread.close_queue(self)
        return done


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: shared._reset())
