"""Time-ordered UUIDv7 strings (RFC 9562), lowercase and hyphenated like Relay's ``Uuid::now_v7()``.

Layout: 48-bit Unix milliseconds, version 7, then 74 bits that are random per process and
advance by one per id (the "counter" method of RFC 9562 §6.2), so ids are unique within a
process without a lock and sort by creation order within a millisecond.
"""

from __future__ import annotations

import itertools
import os
import random
import time

__all__ = ["uuid7", "uuid7_at"]

_MASK62 = (1 << 62) - 1
_VARIANT = 0b10 << 62

# One (millisecond, "xxxxxxxx-xxxx-7xxx-") pair published by a single reference swap, so a
# thread never sees a prefix that belongs to another millisecond (no lock on the hot path).
_prefix_cache: tuple[int, str] = (-1, "")
_rand_a = ""
_base = 0
# next() on itertools.count is atomic under the GIL: every id gets a distinct counter value.
_counter = itertools.count()


def _reseed() -> None:
    """Draw fresh per-process random bits (also after fork, so children never repeat ids)."""
    global _rand_a, _base, _counter, _prefix_cache
    rng = random.Random(os.urandom(16))
    _rand_a = f"7{rng.getrandbits(12):03x}-"
    # Start in the lower half of the 62-bit space: 2**61 ids of headroom before wrapping.
    _base = rng.getrandbits(61)
    _counter = itertools.count()
    _prefix_cache = (-1, "")


_reseed()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed)


def uuid7_at(ns: int) -> str:
    """A new UUIDv7 string whose timestamp is the millisecond containing ``ns`` (epoch ns)."""
    global _prefix_cache
    ms = ns // 1_000_000
    cache = _prefix_cache
    if cache[0] != ms:
        h = f"{ms & 0xFFFF_FFFF_FFFF:012x}"
        cache = (ms, f"{h[:8]}-{h[8:]}-{_rand_a}")
        _prefix_cache = cache
    low = f"{((_base + next(_counter)) & _MASK62) | _VARIANT:016x}"
    return f"{cache[1]}{low[:4]}-{low[4:]}"


def uuid7() -> str:
    """A new UUIDv7 string stamped with the current time."""
    return uuid7_at(time.time_ns())
