"""Background refreshes of live ATIF files: coalesced, at most one per interval per file.

A running session's trajectory file is rewritten whole (ATIF is one JSON document), so
rewriting it after every turn costs time that grows with the session: a 100-turn session
would write hundreds of megabytes. A refresh is instead queued here and done on one daemon
thread, at most once per ``interval`` per key; requests arriving meanwhile merge into the
pending one. The interval stretches to ``COST_FACTOR`` times the last rewrite's duration, so
refreshing a long session's file never takes more than about 5% of a core. The final write
of a session stays synchronous (its owner calls the exporter's ``write``, which cancels a
pending refresh), so nothing here is needed for completeness.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Hashable

__all__ = ["Refresher", "refresher"]

_log = logging.getLogger("wayline.relay.atif")

COST_FACTOR = 20.0
"""A key's next job waits at least this many times as long as its last job took."""


class Refresher:
    """Runs jobs keyed by ``key`` on one daemon thread, each key at most once per interval.

    Jobs are observers of their own making: an ``Exception`` is logged once per refresher and
    the thread goes on.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        # key -> (due time, job); key -> (time its last job started, seconds it took)
        self._pending: dict[Hashable, tuple[float, Callable[[], None]]] = {}
        self._last: dict[Hashable, tuple[float, float]] = {}
        self._thread: threading.Thread | None = None
        self._failed = False

    def schedule(
        self, key: Hashable, job: Callable[[], None], interval: float, *, delay: float = 0.0
    ) -> None:
        """Run ``job`` once ``interval`` seconds (or ``COST_FACTOR`` times the last job's
        duration, if longer) passed since ``key``'s last run started, and no sooner than
        ``delay`` seconds from now (a :meth:`cancel` meanwhile drops it)."""
        with self._cond:
            due = time.monotonic() + delay
            last = self._last.get(key)
            if last is not None:
                due = max(due, last[0] + max(interval, last[1] * COST_FACTOR))
            pending = self._pending.get(key)
            soonest = min((p[0] for p in self._pending.values()), default=None)
            self._pending[key] = (min(due, pending[0]) if pending else due, job)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="wayline-atif-refresh", daemon=True
                )
                self._thread.start()
            elif soonest is None or due < soonest:
                # Only a sooner job needs the thread now: a live session asks after every
                # turn, and waking a thread to wait again is not free (see bench/ P3).
                self._cond.notify()

    def cancel(self, key: Hashable) -> None:
        """Drop ``key``'s pending job and its history (its owner writes for itself now)."""
        with self._cond:
            self._pending.pop(key, None)
            self._last.pop(key, None)

    def pending(self, key: Hashable) -> bool:
        """True while a job for ``key`` waits to run."""
        with self._cond:
            return key in self._pending

    def _next(self) -> tuple[Hashable, Callable[[], None]]:
        with self._cond:
            while True:
                if not self._pending:
                    self._cond.wait()
                    continue
                key, (due, job) = min(self._pending.items(), key=lambda item: item[1][0])
                wait = due - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                del self._pending[key]
                last = self._last.get(key)
                self._last[key] = (time.monotonic(), last[1] if last is not None else 0.0)
                return key, job

    def _run(self) -> None:
        while True:
            key, job = self._next()
            started = time.monotonic()  # the job's duration sets the key's next wait
            try:
                job()
            except Exception:
                if not self._failed:
                    self._failed = True
                    _log.exception("background ATIF refresh failed (further failures not logged)")
            finally:
                with self._cond:
                    if key in self._last:  # (not cancelled meanwhile)
                        self._last[key] = (self._last[key][0], time.monotonic() - started)

    def _after_fork(self) -> None:
        # The thread did not survive the fork; pending jobs belong to the parent.
        self._cond = threading.Condition()
        self._pending.clear()
        self._last.clear()
        self._thread = None


refresher = Refresher()
"""The process-wide refresher used by ``AtifExporter.refresh``."""

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=refresher._after_fork)
