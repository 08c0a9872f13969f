"""Observer callbacks run on one worker thread per plugin instead of the agent's threads.

Building OpenTelemetry spans, or rendering and writing ATOF lines, costs tens to hundreds of
microseconds per hook; done on the calling thread, that is added to every model call and
tool call. The hook callbacks registered with the host therefore only append
``(callback, payload, time)`` to a queue; one daemon thread runs them in arrival order,
mostly while the agent waits for the model or a tool. Times stay exact: the worker hands
each callback the wall-clock time at which its hook fired (:func:`event_time_ns`, and the
``pin`` function a queue is given, e.g. relay's clock), which starts and ends without an
explicit time use.

Every callback here is an OBSERVER: an exception is logged once per (hook, exception type)
and the worker goes on. Payloads are read after the hook returned, which is safe because
hosts build a fresh payload per hook and never mutate a message once it is in the
conversation (the same assumption the sanitizer's memo makes).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger("wayline.plugins.hooks")

_local = threading.local()

BATCH_DELAY_S = 0.02
"""How long the worker gathers hooks after the first one before running them."""

BATCH_MAX = 512
"""Queued hooks that end the gathering at once."""

QUEUE_LIMIT = 65_536
"""Hooks waiting for the worker past which a hook blocks until there is room (backpressure:
dropping hooks would leave spans open or misparented)."""


def event_time_ns() -> int | None:
    """The wall-clock time (ns) at which the hook being handled on this thread fired, if any."""
    value: int | None = getattr(_local, "ns", None)
    return value


Item = tuple[Callable[..., Any], dict[str, Any], int, str]


class HookQueue:
    """Runs queued observer callbacks on one daemon thread, in arrival order."""

    def __init__(
        self,
        name: str = "wayline-otel-hooks",
        limit: int = QUEUE_LIMIT,
        *,
        label: str = "observability/otel",
        pin: Callable[[int | None], None] | None = None,
    ) -> None:
        self._name = name
        self._label = label
        self._pin = pin
        self._limit = limit
        self._items: deque[Item] = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._idle = False  # the worker waits for a first hook (a put must wake it)
        self._urgent = 0  # drain() callers waiting: skip the batching delay
        self._thread: threading.Thread | None = None
        self._closed = False
        self._logged: set[tuple[str, type[BaseException]]] = set()
        self.failures = 0
        _queues.add(self)

    def wrap(
        self, hook: str, callback: Callable[..., Any], *, wait_s: float | None = None
    ) -> Callable[..., None]:
        """A host callback for ``hook`` that queues ``callback(**payload)`` for the worker.

        ``wait_s``: the callback then also waits (at most that long) until the worker has run
        it and everything queued before it, for hooks whose results callers read at once.
        """
        if wait_s is not None:
            timeout_s = wait_s

            def waiting(**payload: Any) -> None:
                self.put(hook, callback, payload)
                self.drain(timeout_s)

            waiting.__name__ = getattr(callback, "__name__", hook)
            waiting.__qualname__ = getattr(callback, "__qualname__", hook)
            return waiting

        def queued(**payload: Any) -> None:
            self.put(hook, callback, payload)

        queued.__name__ = getattr(callback, "__name__", hook)
        queued.__qualname__ = getattr(callback, "__qualname__", hook)
        return queued

    def put(self, hook: str, callback: Callable[..., Any], payload: dict[str, Any]) -> None:
        """Queue one callback; after :meth:`close` it runs on the calling thread instead."""
        item: Item = (callback, payload, time.time_ns(), hook)
        with self._cond:
            if not self._closed:
                while len(self._items) >= self._limit and not self._closed:
                    self._cond.wait(0.1)
                if not self._closed:
                    self._items.append(item)
                    if self._thread is None:
                        self._start_locked()
                    elif self._idle or len(self._items) >= BATCH_MAX:
                        self._cond.notify_all()
                    return
        self._run_one(item)

    def _start_locked(self) -> None:
        thread = threading.Thread(target=self._work, name=self._name, daemon=True)
        self._thread = thread
        thread.start()

    def _work(self) -> None:
        items, cond = self._items, self._cond
        while True:
            with cond:
                self._busy = False
                while not items:
                    cond.notify_all()  # drain() waiters: nothing queued, nothing running
                    self._idle = True
                    cond.wait()
                self._idle = False
                if not self._urgent and len(items) < BATCH_MAX:
                    # Gather a batch: waking for every hook would make the agent's thread
                    # hand over the interpreter lock (a forced switch) for every hook.
                    cond.wait(BATCH_DELAY_S)
                batch = list(items)
                items.clear()
                self._busy = True
                cond.notify_all()  # producers waiting for room
            for item in batch:
                self._run_one(item)
                # Hand the interpreter lock over between callbacks: an agent thread that woke
                # up (a model reply arrived) waits at most one callback, not a switch interval.
                time.sleep(0)

    def _run_one(self, item: Item) -> None:
        callback, payload, ns, hook = item
        _local.ns = ns
        pin = self._pin
        if pin is not None:
            pin(ns)
        try:
            callback(**payload)
        except BaseException as exc:
            self.failures += 1
            key = (hook, type(exc))
            if key not in self._logged:
                self._logged.add(key)
                log.warning(
                    "%s: %s callback failed: %r (logged once per error type)",
                    self._label,
                    hook,
                    exc,
                    exc_info=exc,
                )
        finally:
            _local.ns = None
            if pin is not None:
                pin(None)

    def drain(self, timeout_s: float) -> bool:
        """Wait until every queued callback has run (at most ``timeout_s``); True if so.

        On the worker thread itself (a callback that flushes) there is nothing to wait for.
        """
        if threading.current_thread() is self._thread:
            return True
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._urgent += 1
            self._cond.notify_all()  # no batching delay while somebody waits
            try:
                while self._items or self._busy:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
            finally:
                self._urgent -= 1
        return True

    def pending(self) -> int:
        """Callbacks queued or running."""
        with self._cond:
            return len(self._items) + (1 if self._busy else 0)

    def close(self, timeout_s: float) -> bool:
        """Run what is queued (bounded by ``timeout_s``), then run later hooks inline."""
        done = self.drain(timeout_s)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        return done

    def _after_fork(self) -> None:
        # The worker did not survive the fork; the parent's queued hooks are not ours to run.
        self._cond = threading.Condition()
        self._items.clear()
        self._busy = False
        self._idle = False
        self._urgent = 0
        self._thread = None


_queues: weakref.WeakSet[HookQueue] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for queue in list(_queues):
        queue._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
