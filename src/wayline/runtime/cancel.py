"""Cancelling a turn: an event that also calls back, so blocked work stops at once.

A turn's cancel event is polled by long tools (``ctx.cancel.is_set()``), but what blocks
without polling (a model request, an ``async def`` tool awaited from a tool thread, the wait
for a batch of tools) registers a callback that ends the wait the moment the event is set.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["CancelEvent", "TurnInterrupted", "on_cancel"]

log = logging.getLogger("wayline.runtime")


class TurnInterrupted(Exception):
    """The turn was cancelled (Ctrl-C, a cancelled ``arun``, or a child's timeout)."""


class CancelEvent(threading.Event):
    """A ``threading.Event`` whose :meth:`set` also runs the callbacks registered with
    :meth:`on_set`.

    Callbacks are control plumbing, not observers: they run on the thread that calls
    ``set()`` (any thread: the event loop of ``arun``, a signal handler's thread, a
    delegation waiter), must not block, and an ``Exception`` one raises is logged and the
    others still run.
    """

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: dict[int, Callable[[], object]] = {}
        self._callbacks_lock = threading.Lock()
        self._next_id = 0

    def set(self) -> None:
        """Set the flag, then run (and forget) every registered callback."""
        super().set()
        with self._callbacks_lock:
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("a cancel callback failed (ignored)")

    def on_set(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` when the event is set (now, if it already is); returns a function
        that unregisters it (call it when the guarded wait is over)."""
        with self._callbacks_lock:
            if not self.is_set():
                key = self._next_id
                self._next_id += 1
                self._callbacks[key] = callback

                def remove() -> None:
                    with self._callbacks_lock:
                        self._callbacks.pop(key, None)

                return remove
        callback()
        return _nothing


def _nothing() -> None:
    return None


def on_cancel(event: threading.Event | None, callback: Callable[[], object]) -> Callable[[], None]:
    """``event.on_set(callback)`` for a :class:`CancelEvent`; for a plain ``threading.Event``
    (which cannot call back) the callback runs only if it is already set."""
    if isinstance(event, CancelEvent):
        return event.on_set(callback)
    if event is not None and event.is_set():
        callback()
    return _nothing
