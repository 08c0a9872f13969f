"""Snapshots of hook payloads: what the hook thread reads is what the hook carried.

A host may change what a queued payload refers to before the hook thread reads it (it appends
to the history it passed, a middleware rewrites a message in place, Hermes compresses
context). So, unless the host hands over payloads it never changes (a wayline host with no
middleware and no observer on the hook's thread: :meth:`Snapshots.stamp`), a hook call queues
a copy of every ``dict`` and ``list`` (and tuples holding containers) in the payload; strings,
numbers, ``None`` and bytes are shared, and so are other objects (hosts hand over fresh ones).

Copying a whole conversation per model call would cost the agent's thread as much as the
walk it saves, and defeat the hook thread's sanitizer memos (keyed on identity). So each
thread keeps the copy it made of each container and hands it out again while the live one
still *equals* it (a comparison in C); a list that grew keeps its copied prefix while that
prefix is equal. Any change fails the comparison and is copied anew. Copies are never
changed after they are made.
"""

from __future__ import annotations

import threading
import time
from operator import is_
from typing import Any

from wayline.redaction.unsanitized import Unsanitized

__all__ = ["Snapshots"]

_SHARED = frozenset({str, int, float, bool, type(None), bytes, complex})
_ENTRIES_KEPT = 8192


class _Memo(threading.local):
    """One thread's copies: id(live) -> (live, copy), and each list's last copied prefix."""

    def __init__(self) -> None:
        # The last payload taken, its values, and its snapshot: the hook's other queued
        # observers (the bus hands each the same dict, one after the other) share it, and
        # the hook's time with it, so every export stamps one hook with one time.
        self.last: tuple[dict[str, Any], list[tuple[str, Any]], dict[str, Any], int] | None = None
        # The last payload stamped without a copy (its host never changes it) and its time.
        self.owned: tuple[dict[str, Any], int] | None = None
        self.take = 0  # which take this is: what was checked in this take is not checked again
        # id(live dict) -> (the live dict, its copy, the take that last found them equal)
        self.copies: dict[int, tuple[Any, Any, int]] = {}
        # id(first item) -> (the live items last copied, their copies, that take)
        self.lists: dict[int, tuple[list[Any], list[Any], int]] = {}


class Snapshots:
    """Makes snapshots of hook payloads on the thread that fires the hook (thread-safe: each
    thread keeps its own copies, bounded)."""

    def __init__(self, limit: int = _ENTRIES_KEPT) -> None:
        self._limit = limit
        self._memo = _Memo()

    def take(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A copy of ``payload`` equal to it now, sharing only what cannot change."""
        return self.take_stamped(payload)[0]

    def stamp(self, payload: dict[str, Any]) -> int:
        """The wall-clock time (ns) of the hook that carries ``payload``, a payload its host
        never changes (nothing is copied): the hook's other queued observers get the same."""
        memo = self._memo
        owned = memo.owned
        if owned is not None and owned[0] is payload:
            return owned[1]
        ns = time.time_ns()
        memo.owned = (payload, ns)
        return ns

    def take_stamped(self, payload: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """A copy of ``payload`` equal to it now, and the wall-clock time (ns) of the hook.

        The same payload dict taken again on this thread with the same values (the next
        queued observer of the same hook) gets the same snapshot and the same time: one per
        hook call, so the plugins' records of one hook carry one timestamp.
        """
        memo = self._memo
        last = memo.last
        if last is not None and last[0] is payload:
            items = list(payload.items())
            known = last[1]
            if len(items) == len(known) and all(map(_same_item, items, known)):
                return last[2], last[3]
        ns = time.time_ns()
        if len(memo.copies) > self._limit:
            memo.copies.clear()
            memo.lists.clear()
        memo.take += 1
        snapshot = self._dict(payload, memo)
        memo.last = (payload, list(payload.items()), snapshot, ns)
        return snapshot, ns

    def _copy(self, value: Any, memo: _Memo, member: bool = False) -> Any:
        """A copy of ``value``; a dict that is a list's ``member`` (a message, a tool
        definition) is kept and handed out again while it still equals its copy. Other dicts
        are copied each time, so the lists inside them are checked once per take."""
        kind = type(value)
        if kind in _SHARED:
            return value
        if kind is dict and not member:
            return self._dict(value, memo)
        if kind is dict:
            hit = memo.copies.get(id(value))
            if hit is not None and hit[0] is value:
                if hit[2] == memo.take:
                    return hit[1]
                if _equal(hit[1], value):
                    memo.copies[id(value)] = (value, hit[1], memo.take)
                    return hit[1]
            copy = self._dict(value, memo)
            # the entry holds ``value``: its id is not reused while it is kept
            memo.copies[id(value)] = (value, copy, memo.take)
            return copy
        if kind is list:
            return self._copy_list(value, memo)
        if kind is tuple:
            return tuple([self._copy(item, memo) for item in value])
        if kind is Unsanitized:
            return Unsanitized(self._copy(value.raw, memo), value.memo_depth, value.memo)
        return value

    def _dict(self, value: dict[str, Any], memo: _Memo) -> dict[str, Any]:
        return {
            key: item if item.__class__ in _SHARED else self._copy(item, memo)
            for key, item in value.items()
        }

    def _copy_list(self, items: list[Any], memo: _Memo) -> list[Any]:
        """A copy of ``items``. Lists that start with the same item (a conversation: the
        history, the request's messages, the next call's request) share the copy of their
        common prefix while it still equals the live items; only the rest is copied."""
        if not items:
            return []
        key = id(items[0])
        last = memo.lists.get(key)
        if last is not None:
            known, copied, checked = last
            n = min(len(known), len(items))
            if all(map(is_, known[:n], items)) and (
                checked == memo.take or _equal(copied[:n], items[:n])
            ):
                copy = copied[:n] + [self._copy(item, memo, True) for item in items[n:]]
                if len(items) >= len(known):
                    memo.lists[key] = (list(items), copy, memo.take)
                elif checked != memo.take:
                    # only the common prefix was checked: the rest must be checked again
                    memo.lists[key] = (list(items), copy, memo.take)
                return copy
        copy = [self._copy(item, memo, True) for item in items]
        memo.lists[key] = (list(items), copy, memo.take)
        return copy


def _same_item(item: tuple[str, Any], known: tuple[str, Any]) -> bool:
    return item[0] == known[0] and item[1] is known[1]


def _equal(copy: Any, live: Any) -> bool:
    """Whether the live value still equals its copy (an ``__eq__`` that raises: no)."""
    try:
        return bool(copy == live)
    except Exception:
        return False
