"""The server's one store, the thread it lives on, how fresh its answers are, and what tells
listeners that it changed.

An SQLite connection belongs to the thread that opened it, and the store's update and
questions block on disk. So the server keeps one :class:`~wayline.store.SessionStore` on one
worker thread (:class:`StoreWorker`) and the event loop hands it work, one piece at a time.

Freshness, one rule: a request is answered from an index updated (what changed only, by size
and mtime) no longer than :data:`FRESH_SECONDS` before it arrived; when the last update began
longer ago, the request updates first. So a file written, rewritten or deleted on disk is
reflected in every answer to a request made :data:`FRESH_SECONDS` or more after the change;
requests in quick succession (a page and the requests it makes) walk the folders once; and a
server nobody asks does no work.

Live tail: while at least one Server-Sent Events stream is open, :meth:`Hub.run` (a plain
asyncio task) updates the index every :data:`POLL_SECONDS`. An ATOF file that grew is read from
where the last update stopped. When an update changed the index (indexed or removed a file, or
another process wrote to the index meanwhile), the hub's generation goes up, answers kept for
the old one are dropped, and every stream waiting in :meth:`Hub.wait_change` wakes and asks the
store what it needs again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

from wayline.store import SessionStore, SyncReport

__all__ = ["FRESH_SECONDS", "POLL_SECONDS", "Hub", "StoreWorker"]

POLL_SECONDS = 0.25
"""How often the index is updated while a live stream is open: well inside the one second a
running session has to appear in, and a quarter of a core at most on a 10,000-file folder."""
FRESH_SECONDS = 1.0
"""The oldest index a request is answered from (see the module doc): a change on disk shows in
every answer to a request made this long after it, or sooner."""
KEPT_ANSWERS = 64
"""Answers kept for the index's current generation (the charts of a filter, say)."""

T = TypeVar("T")
log = logging.getLogger("wayline.serve")


class StoreWorker:
    """One thread that owns the server's store; :meth:`call` runs work there, in turn.

    ``open_store`` runs on that thread the first time work arrives (so the connection is the
    thread's own). The work runs on the worker thread and may block; it must not call back into
    the event loop.
    """

    def __init__(self, open_store: Callable[[], SessionStore]) -> None:
        self._open = open_store
        self._store: SessionStore | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wayline-serve-store")

    def _run(self, work: Callable[[SessionStore], T]) -> T:
        if self._store is None:
            self._store = self._open()
        return work(self._store)

    async def call(self, work: Callable[[SessionStore], T]) -> T:
        """``work(store)`` on the worker thread; its result or its exception."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, work)

    def close(self) -> None:
        """Close the store on its own thread and stop the thread (waits for work in hand)."""

        def shut() -> None:
            if self._store is not None:
                self._store.close()
                self._store = None

        self._executor.submit(shut)
        self._executor.shutdown(wait=True)


class Hub:
    """The store worker, the index's freshness and generation, and the live streams waiting
    on it."""

    def __init__(
        self,
        worker: StoreWorker,
        *,
        poll_seconds: float = POLL_SECONDS,
        fresh_seconds: float = FRESH_SECONDS,
    ) -> None:
        self.worker = worker
        self.poll_seconds = poll_seconds
        self.fresh_seconds = fresh_seconds
        #: Goes up each time an update changed the index (read on the event loop).
        self.generation = 0
        self._changed = asyncio.Condition()
        self._listeners = 0
        self._wanted = asyncio.Event()
        self._warned: set[str] = set()
        # The worker thread's own: when the last update began (monotonic), SQLite's count of
        # other connections' commits after it, and answers kept until the index changes.
        self._began: float | None = None
        self._data_version: int | None = None
        self._kept: dict[Hashable, Any] = {}

    def _update(self, store: SessionStore, *, when_due: bool) -> tuple[SyncReport | None, bool]:
        """On the worker thread: update the index (only when due, with ``when_due``); the
        report (None when not due) and whether the index changed."""
        began = time.monotonic()
        if when_due and self._began is not None and began - self._began < self.fresh_seconds:
            return None, False
        report = store.update()
        self._began = began
        row = store.connection.execute("PRAGMA data_version").fetchone()
        version = int(row[0])
        # Another process (wayline sessions on the same index) may have indexed a file first:
        # this update then finds nothing new, but the index did change.
        written = self._data_version is not None and version != self._data_version
        self._data_version = version
        changed = bool(report.indexed or report.removed or written)
        if changed:
            self._kept.clear()
        return report, changed

    async def ask(self, question: Callable[[SessionStore], T], *, keep: Hashable = None) -> T:
        """``question(store)`` on the worker, from an index no older than
        :attr:`fresh_seconds` (updated first when it is). With ``keep``, the answer is kept
        under that key until the index changes, and asked again only then."""

        def work(store: SessionStore) -> tuple[SyncReport | None, bool, T]:
            report, changed = self._update(store, when_due=True)
            if keep is None:
                return report, changed, question(store)
            if keep not in self._kept:
                if len(self._kept) >= KEPT_ANSWERS:
                    self._kept.clear()
                self._kept[keep] = question(store)
            return report, changed, cast(T, self._kept[keep])

        report, changed, answer = await self.worker.call(work)
        await self._noted(report, changed)
        return answer

    async def refresh(self) -> None:
        """Update the index now; wake the streams when something changed."""
        report, changed = await self.worker.call(lambda store: self._update(store, when_due=False))
        await self._noted(report, changed)

    async def _noted(self, report: SyncReport | None, changed: bool) -> None:
        for line in report.warnings if report is not None else ():
            if line not in self._warned:
                self._warned.add(line)
                log.warning("%s", line)
        if changed:
            async with self._changed:
                self.generation += 1
                self._changed.notify_all()

    async def wait_change(self, seen: int, timeout: float) -> int:
        """The generation once it differs from ``seen``, or the same after ``timeout`` s."""
        async with self._changed:
            try:
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self.generation != seen), timeout
                )
            except TimeoutError:
                pass
            return self.generation

    @asynccontextmanager
    async def listening(self) -> AsyncIterator[None]:
        """While a live stream is open: the poll runs."""
        self._listeners += 1
        self._wanted.set()
        try:
            yield
        finally:
            self._listeners -= 1
            if self._listeners == 0:
                self._wanted.clear()

    async def run(self) -> None:
        """The poll: update the index every :attr:`poll_seconds` while a stream listens.

        Runs on the event loop until cancelled; an update that fails is logged and tried again
        at the next tick (a file being rewritten, an index another process holds)."""
        while True:
            await self._wanted.wait()
            try:
                await self.refresh()
            except Exception as exc:  # the server goes on; the next tick tries again
                log.warning("index update failed: %s: %s", type(exc).__name__, exc)
            await asyncio.sleep(self.poll_seconds)
