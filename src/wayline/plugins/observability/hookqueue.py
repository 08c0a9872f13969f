"""Observer callbacks run on one shared worker thread instead of the agent's threads.

Building OpenTelemetry spans, or rendering and writing ATOF lines, costs tens to hundreds of
microseconds per hook; done on the calling thread, that is added to every model call and
tool call. The hook callbacks registered with the host therefore only append
``(queue, callback, payload, time)`` to a deque; one daemon thread (``wayline-hooks``) runs
them in arrival order, mostly while the agent waits for the model or a tool. Each plugin has
its own :class:`HookQueue` (its failure count, its ``drain``/``close``), but all of them share
that one thread: every extra thread that wants the interpreter lock while the agent's thread
wakes up from a reply adds a lock handover to the agent's path.

Times stay exact: the worker pins relay's clock (:mod:`wayline.relay.clock`) to the time each
callback's hook fired, so relay events stamp that time and spans started or ended without an
explicit time use it too (:func:`event_time_ns`).

Every callback here is an OBSERVER: an exception is logged once per (queue, hook, exception
type) and the worker goes on. Payloads are read after the hook returned, which is safe because
hosts build a fresh payload per hook and never mutate a message once it is in the
conversation (the same assumption the sanitizer's memo makes).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from wayline.contract.deferred import Deferred, Memos, has_deferred, resolve_payload
from wayline.plugins.observability.hookproc import ChildGone, Handlers, Remote, worker_process
from wayline.relay.clock import pin, pinned_ns

log = logging.getLogger("wayline.plugins.hooks")

BATCH_DELAY_S = 0.1
"""How long the worker gathers hooks after the first one before running them (and, after a
batch, how long it waits on its own timer for the next hooks before it goes idle).

Each batch wakes the hook worker process; on the 2-vCPU VM of ``bench/``, every wakeup of
another process costs the agent wall time, however little that process then does (P3,
paired rounds, the plugin arm's time: x0.97 with 100 ms batches instead of 20 ms, x0.94 with
the frames written to /dev/null instead of the worker). ``drain()`` (``finalize``) skips the
wait."""

BATCH_MAX = 512
"""Queued hooks that end the gathering at once."""

QUEUE_LIMIT = 65_536
"""Hooks waiting for the worker past which a hook blocks until there is room (backpressure:
dropping hooks would leave spans open or misparented)."""

WORKER_NAME = "wayline-hooks"


def resolve(value: Any) -> Any:
    """``value``, or the sanitized value of a Deferred (with the worker's shared memos).

    For callbacks marked ``accepts_deferred``: :meth:`HookQueue.run` hands them the
    payload's :class:`~wayline.contract.deferred.Deferred` values as they are, and they
    resolve what they use (or a part of it) through this.
    """
    if type(value) is not Deferred:
        return value
    with _memos_lock:
        return value.value(_memos)


def event_time_ns() -> int | None:
    """The wall-clock time (ns) at which the hook being handled on this thread fired, if any."""
    return pinned_ns()


Item = tuple["HookQueue", Callable[..., Any] | None, dict[str, Any], int, str]

# Deferred payload values are resolved with these memos (the history is re-sent each call).
_memos = Memos()
_memos_lock = threading.Lock()


class _Worker:
    """The thread and the deque every :class:`HookQueue` feeds (one per process)."""

    def __init__(self, limit: int = QUEUE_LIMIT) -> None:
        self.limit = limit
        self.items: deque[Item] = deque()
        self.cond = threading.Condition()
        self.thread: threading.Thread | None = None
        self.busy: list[Item] = []  # the batch being run
        self.idle = False  # waiting for a first hook: a put must wake it
        self.wakeups = 0  # puts that woke an idle worker (diagnostics)
        self.urgent = 0  # drain() callers waiting: no batching delay
        self.queued = 0  # items ever accepted ...
        self.done = 0  # ... and ever run: drain() waits for done to pass its ticket

    def put(self, item: Item) -> bool:
        """Queue ``item``; False once its queue is closed (the caller runs it itself)."""
        with self.cond:
            while len(self.items) >= self.limit and not item[0].closed:
                self.cond.wait(0.1)
            if item[0].closed:
                return False
            self.items.append(item)
            self.queued += 1
            if self.thread is None:
                self.thread = threading.Thread(target=self._work, name=WORKER_NAME, daemon=True)
                self.thread.start()
            elif self.idle or len(self.items) >= BATCH_MAX:
                self.wakeups += self.idle
                self.cond.notify_all()
            return True

    def _work(self) -> None:
        items, cond = self.items, self.cond
        lingering = False  # a batch just ran
        while True:
            with cond:
                self.done += len(self.busy)
                self.busy = []
                gathered = False
                while not items:
                    cond.notify_all()  # drain() waiters: nothing queued, nothing running
                    if lingering and not self.urgent:
                        # Wait one window for the next hooks without being woken: an active
                        # agent queues some meanwhile, and gathering them on this timer
                        # spares its thread waking this one for every batch (a thread
                        # switch, and a handover of the interpreter lock, on its time).
                        lingering = False
                        cond.wait(BATCH_DELAY_S)
                        gathered = bool(items)
                        continue
                    self.idle = True
                    cond.wait()
                self.idle = False
                if not gathered and not self.urgent and len(items) < BATCH_MAX:
                    # Gather a batch: waking for every hook would make the agent's thread
                    # hand over the interpreter lock (a forced switch) for every hook.
                    cond.wait(BATCH_DELAY_S)
                batch = self.busy = list(items)
                items.clear()
                cond.notify_all()  # producers waiting for room
            lingering = True
            remote: list[Item] = []
            for item in batch:
                if item[0].remote is not None and worker_process.dead is None:
                    remote.append(item)
                    continue
                item[0].run(item)
                # Offer the interpreter lock between callbacks: an agent thread that woke up
                # (a model reply arrived) should not wait for the whole batch.
                time.sleep(0)
            if remote:
                self._send(remote)

    @staticmethod
    def _send(items: list[Item]) -> None:
        try:
            worker_process.send([(item[0].qid, item[4], item[2], item[3]) for item in items])
        except ChildGone:
            for item in items:  # the worker process is gone: run them here
                item[0].run(item)

    def drain(self, timeout_s: float) -> bool:
        """Wait until every item queued before this call has run (at most ``timeout_s``)."""
        if threading.current_thread() is self.thread:
            return True  # a callback that flushes: what is before it already ran
        deadline = time.monotonic() + timeout_s
        with self.cond:
            ticket = self.queued
            self.urgent += 1
            self.cond.notify_all()  # no batching delay while somebody waits
            try:
                while self.done < ticket:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self.cond.wait(left)
            finally:
                self.urgent -= 1
        return True

    def pending(self, queue: HookQueue) -> int:
        """Items of ``queue`` queued or running."""
        with self.cond:
            return sum(1 for item in (*self.items, *self.busy) if item[0] is queue)

    def after_fork(self) -> None:
        # The worker did not survive the fork; the parent's queued hooks are not ours to run.
        self.cond = threading.Condition()
        self.items.clear()
        self.busy = []
        self.thread = None
        self.idle = False
        self.urgent = self.queued = self.done = 0


_worker = _Worker()


class HookQueue:
    """One plugin's observer callbacks, run in arrival order on the shared worker thread.

    With ``remote`` (see :mod:`hookproc`) the callbacks run in the hook worker process
    instead: the host callbacks made by :meth:`wrap` then take ``callback=None``, and the
    process builds its own handlers from ``remote``. Should that process be unavailable,
    the same handlers are built here and run on the worker thread.
    """

    def __init__(self, *, label: str = "observability/otel", remote: Remote | None = None) -> None:
        self._label = label
        self.closed = False
        self._logged: set[tuple[str, type[BaseException]]] = set()
        self.failures = 0
        self.remote = remote
        self.qid = worker_process.add(remote) if remote is not None else 0
        self._local: Handlers | None = None
        self._local_lock = threading.Lock()

    def wrap(
        self,
        hook: str,
        callback: Callable[..., Any] | None,
        *,
        wait_s: float | None = None,
        wait_if: Callable[[dict[str, Any]], bool] | None = None,
    ) -> Callable[..., None]:
        """A host callback for ``hook`` that queues ``callback(**payload)`` for the worker.

        ``wait_s``: the callback then also waits (at most that long) until the worker has run
        it and everything queued before it, for hooks whose results callers read at once;
        ``wait_if(payload)``, when given, decides per call whether to wait.
        """

        def sink(payload: dict[str, Any]) -> None:
            self.put(hook, callback, payload)
            if wait_s is not None and (wait_if is None or wait_if(payload)):
                self.drain(wait_s)

        def queued(**payload: Any) -> None:
            sink(payload)

        # The bus hands ``sink`` its payload dict itself: no keyword copy per plugin, and the
        # plugins' queued copies of one hook are then one dict (sent and decoded once).
        queued.payload_sink = sink  # type: ignore[attr-defined]

        queued.__name__ = getattr(callback, "__name__", hook)
        queued.__qualname__ = getattr(callback, "__qualname__", hook)
        # Sanitized fields may come as Deferred: run() resolves them off the agent's thread.
        queued.accepts_deferred = True  # type: ignore[attr-defined]
        return queued

    def put(self, hook: str, callback: Callable[..., Any] | None, payload: dict[str, Any]) -> None:
        """Queue one callback; after :meth:`close` it runs on the calling thread instead
        (a remote queue's are dropped then: its plugin has shut down)."""
        item: Item = (self, callback, payload, time.time_ns(), hook)
        if (self.closed or not _worker.put(item)) and self.remote is None:
            self.run(item)

    def _handlers(self) -> Handlers:
        with self._local_lock:
            if self._local is None:
                assert self.remote is not None
                self._local = self.remote.build()
            return self._local

    def run(self, item: Item) -> None:
        """Run one queued callback with its hook's time (an observer: failures are logged)."""
        _, callback, payload, ns, hook = item
        if callback is None:  # a remote queue's hook, run here (no worker process)
            try:
                callback = self._handlers().callbacks.get(hook)
            except Exception as exc:
                callback = None
                self._failed(hook, exc)
            if callback is None:
                return
        pin(ns)
        try:
            if has_deferred(payload) and not getattr(callback, "accepts_deferred", False):
                with _memos_lock:  # the worker's thread, or a caller after close()
                    resolve_payload(payload, _memos)
            callback(**payload)
        except BaseException as exc:
            self._failed(hook, exc)
        finally:
            pin(None)

    def _failed(self, hook: str, exc: BaseException) -> None:
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

    def _remote_live(self) -> bool:
        return self.remote is not None and self._local is None and worker_process.dead is None

    def drain(self, timeout_s: float) -> bool:
        """Wait until every callback queued so far has run (at most ``timeout_s``); True if so.

        On the worker thread itself (a callback that flushes) there is nothing to wait for.
        A remote queue's wait also covers the worker process.
        """
        started = time.monotonic()
        done = _worker.drain(timeout_s)
        if done and self._remote_live() and worker_process.opened(self.qid):
            left = timeout_s - (time.monotonic() - started)
            try:
                worker_process.request("sync", timeout_s=max(left, 0.001))
            except TimeoutError:
                return False
            except ChildGone:
                pass  # what was sent is lost; later hooks run here
        return done

    def call(self, name: str, *args: Any, timeout_s: float = 5.0) -> Any:
        """Ask the plugin's handlers (``Handlers.call``), wherever they run."""
        if self._remote_live():
            try:
                return worker_process.request("call", self.qid, name, args, timeout_s=timeout_s)
            except ChildGone:
                pass
        return self._handlers().call(name, *args)

    def failure_count(self) -> int:
        """Callbacks that raised, here and in the worker process."""
        failures = self.failures
        if self._remote_live() and worker_process.opened(self.qid):
            try:
                failures += int(self.call("hook_failures"))
            except (ChildGone, TimeoutError, RuntimeError):
                pass
        return failures

    def pending(self) -> int:
        """This queue's callbacks queued or running (on the worker thread)."""
        return _worker.pending(self)

    def close(self, timeout_s: float) -> bool:
        """Run what is queued (bounded by ``timeout_s``), then run later hooks inline; a
        remote queue also closes its handlers (the plugin's shutdown), wherever they run."""
        started = time.monotonic()
        done = self.drain(timeout_s)
        with _worker.cond:
            self.closed = True
            _worker.cond.notify_all()  # producers waiting for room: they run inline now
        if self.remote is not None:
            left = max(timeout_s - (time.monotonic() - started), 0.001)
            try:
                worker_process.close(self.qid, left)
            except (ChildGone, TimeoutError, RuntimeError) as exc:
                log.warning("%s: closing in the hook worker process: %s", self._label, exc)
            if self._local is not None:
                self._local.close(left)
        return done


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _worker.after_fork())
