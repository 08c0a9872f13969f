"""Sanitized payload fields whose sanitizing is left to a queued observer's own thread.

The API hooks carry the sanitized provider request and response. When every callback of such
a hook is a :class:`~wayline.host.bus.QueuedObserver` (the bundled observability plugins),
the runtime passes an :class:`Unsanitized` value instead, and the observer's thread calls
:func:`resolve_payload` before it reads the payload: the agent's thread does not walk the
conversation on every model call. Every other callback never sees one: the hook bus resolves
the payload first, so plugins written for Hermes get the same dicts as always.

The raw value must not change after the hook fired (the runtime passes fresh request lists
and response dicts), and resolving gives exactly ``sanitize(raw)``.
"""

from __future__ import annotations

from typing import Any

from wayline.redaction.sanitize import SanitizeMemo, sanitize

__all__ = ["Memos", "Unsanitized", "has_unsanitized", "resolve_payload"]


class Unsanitized:
    """A payload value that stands for ``sanitize(raw)``.

    ``memo_depth`` names the :class:`SanitizeMemo` depth that fits ``raw``'s shape (3 for
    ``{"method", "body": {"messages": [...]}}``), so a resolving thread's :class:`Memos`
    reuse the messages it sanitized for earlier calls; ``memo`` is the producer's own memo of
    that depth, used when the bus resolves the value on the producer's thread.
    """

    __slots__ = ("memo", "memo_depth", "raw")

    def __init__(
        self, raw: Any, memo_depth: int | None = None, memo: SanitizeMemo | None = None
    ) -> None:
        self.raw = raw
        self.memo_depth = memo_depth
        self.memo = memo

    def value(self, memos: Memos | None = None) -> Any:
        """``sanitize(raw)``, with the resolver's memo of this depth when it has one."""
        memo = self.memo
        if memos is not None and self.memo_depth is not None:
            memo = memos.get(self.memo_depth)
        return sanitize(self.raw, memo=memo)

    def __repr__(self) -> str:
        return f"Unsanitized(memo_depth={self.memo_depth!r})"


class Memos:
    """One :class:`SanitizeMemo` per depth, for the one thread that resolves many payloads."""

    __slots__ = ("_memos",)

    def __init__(self) -> None:
        self._memos: dict[int, SanitizeMemo] = {}

    def get(self, depth: int) -> SanitizeMemo:
        """The memo of ``depth`` (made on first use)."""
        memo = self._memos.get(depth)
        if memo is None:
            memo = self._memos[depth] = SanitizeMemo(depth)
        return memo


def has_unsanitized(payload: dict[str, Any]) -> bool:
    """True when some value of ``payload`` is :class:`Unsanitized`."""
    return Unsanitized in map(type, payload.values())  # in C: the bus asks on every hook


def resolve_payload(payload: dict[str, Any], memos: Memos | None = None) -> dict[str, Any]:
    """``payload`` with every :class:`Unsanitized` value replaced by its value, in place.

    In place, so the other queued observers of the same hook (which share the dict) find
    it sanitized already.
    """
    for key, value in payload.items():
        if type(value) is Unsanitized:
            payload[key] = value.value(memos)
    return payload
