"""The server's one store, the thread it lives on, and what tells listeners that it changed.

An SQLite connection belongs to the thread that opened it, and the store's update and
questions block on disk. So the server keeps one :class:`~wayline.store.SessionStore` on one
worker thread (:class:`StoreWorker`) and the event loop hands it work, one piece at a time:
every request brings the index up to date first (what changed only, by size and mtime), as a
command does, then asks.

Live tail: while at least one Server-Sent Events stream is open, :meth:`Hub.run` (a plain
asyncio task) updates the index every :data:`POLL_SECONDS`. An ATOF file that grew is read from
where the last update stopped. When an update indexed or removed something, the hub's
generation goes up and every stream waiting in :meth:`Hub.wait_change` wakes and asks the store
what it needs again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TypeVar

from wayline.store import SessionStore, SyncReport

__all__ = ["POLL_SECONDS", "Hub", "StoreWorker"]

POLL_SECONDS = 0.25
"""How often the index is updated while a live stream is open: well inside the one second a
running session has to appear in, and a quarter of a core at most on a 10,000-file folder."""

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
    """The store worker, the index's generation, and the live streams waiting on it."""

    def __init__(self, worker: StoreWorker, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.worker = worker
        self.poll_seconds = poll_seconds
        #: Goes up each time an update changed the index.
        self.generation = 0
        self._changed = asyncio.Condition()
        self._listeners = 0
        self._wanted = asyncio.Event()
        self._warned: set[str] = set()

    async def ask(self, question: Callable[[SessionStore], T]) -> T:
        """Update the index (what changed only), then ``question(store)``, on the worker."""

        def work(store: SessionStore) -> tuple[SyncReport, T]:
            report = store.update()
            return report, question(store)

        report, answer = await self.worker.call(work)
        await self._noted(report)
        return answer

    async def refresh(self) -> None:
        """Update the index now; wake the streams when something changed."""
        report = await self.worker.call(lambda store: store.update())
        await self._noted(report)

    async def _noted(self, report: SyncReport) -> None:
        for line in report.warnings:
            if line not in self._warned:
                self._warned.add(line)
                log.warning("%s", line)
        if report.indexed or report.removed:
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
