"""The clock relay stamps events with, which an observer worker can pin to a hook's time.

An observer that hands hooks to a worker thread (``observability/relay`` does) emits their
events after the hook returned; pinning this thread's clock to the time the hook fired keeps
every timestamp (and the time inside each UUIDv7) what a synchronous observer would write.
"""

from __future__ import annotations

import threading
from time import time_ns

__all__ = ["now_ns", "pin", "pinned_ns"]


class _Pinned(threading.local):
    # A class default: reading an unset attribute of a thread-local through getattr(...,
    # default) raises and catches AttributeError, ten times the cost of time_ns() itself.
    ns: int | None = None


_local = _Pinned()


def now_ns() -> int:
    """Epoch nanoseconds: this thread's pinned time if one is set, else the wall clock."""
    pinned = _local.ns
    return time_ns() if pinned is None else pinned


def pin(ns: int | None) -> None:
    """Make :func:`now_ns` return ``ns`` on this thread (``None``: the wall clock again)."""
    _local.ns = ns


def pinned_ns() -> int | None:
    """This thread's pinned time, or ``None`` when it reads the wall clock."""
    return _local.ns
