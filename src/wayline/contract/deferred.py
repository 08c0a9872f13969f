"""Sanitized payload fields computed where they are first needed, not on the agent's thread.

The API hooks carry the sanitized provider request and response. Sanitizing a 100-turn
conversation costs the agent's thread about 0.1 ms per model call, every call, although
the bundled observers run in the hook worker process anyway. So the runtime may pass a
:class:`Deferred` (the raw value) instead, and the sanitizing happens where a callback first
needs it:

* A hook callback that has ``accepts_deferred = True`` (the queued callbacks of
  :mod:`wayline.plugins.observability.hookqueue`) receives the :class:`Deferred` itself and
  resolves it later, on its own thread or in the worker process (:func:`resolve_payload`).
* Every other callback never sees one: the hook bus resolves the payload first (once for
  all its callbacks), so plugins written for Hermes get the same dicts as always.

The raw value must not change after the hook fired (the runtime passes fresh request lists
and response dicts), and resolving gives exactly ``sanitize(raw)``; a :class:`Deferred`
pickles as its raw value, so the worker process sanitizes what the agent would have.
"""

from __future__ import annotations

from typing import Any

from wayline.contract.sanitize import SanitizeMemo, sanitize

__all__ = ["Deferred", "Memos", "has_deferred", "resolve_payload"]

_UNSET: Any = object()


class Deferred:
    """``sanitize(raw)``, computed on first :meth:`value` and then kept.

    ``memo_depth`` names the :class:`SanitizeMemo` depth that fits ``raw``'s shape (3 for
    ``{"method", "body": {"messages": [...]}}``); ``memo`` is the owner's memo of that
    depth, used when the value is resolved in the owner's process without one given. The
    memo stays behind when the value is pickled.
    """

    __slots__ = ("_value", "memo", "memo_depth", "raw")

    def __init__(
        self, raw: Any, memo_depth: int | None = None, memo: SanitizeMemo | None = None
    ) -> None:
        self.raw = raw
        self.memo_depth = memo_depth
        self.memo = memo
        self._value: Any = _UNSET

    def value(self, memos: Memos | None = None) -> Any:
        """The sanitized value (computed once; a race computes it twice, equal)."""
        value = self._value
        if value is _UNSET:
            memo = self.memo
            if memos is not None and self.memo_depth is not None:
                memo = memos.get(self.memo_depth)
            value = self._value = sanitize(self.raw, memo=memo)
        return value

    @property
    def resolved(self) -> bool:
        """True once :meth:`value` has computed the value."""
        return self._value is not _UNSET

    def __reduce__(self) -> tuple[Any, ...]:
        if self._value is not _UNSET:
            return (_resolved, (self._value,))
        return (Deferred, (self.raw, self.memo_depth))

    def __repr__(self) -> str:
        return f"Deferred(memo_depth={self.memo_depth!r})"


def _resolved(value: Any) -> Any:
    return value


class Memos:
    """One :class:`SanitizeMemo` per depth, for one thread that resolves many payloads."""

    __slots__ = ("_memos",)

    def __init__(self) -> None:
        self._memos: dict[int, SanitizeMemo] = {}

    def get(self, depth: int) -> SanitizeMemo:
        """The memo of ``depth`` (made on first use)."""
        memo = self._memos.get(depth)
        if memo is None:
            memo = self._memos[depth] = SanitizeMemo(depth)
        return memo


def has_deferred(payload: dict[str, Any]) -> bool:
    """True when some value of ``payload`` is a :class:`Deferred`."""
    return Deferred in map(type, payload.values())  # in C: the bus asks on every hook


def resolve_payload(payload: dict[str, Any], memos: Memos | None = None) -> dict[str, Any]:
    """``payload`` with every :class:`Deferred` value replaced by its value, in place."""
    for key, value in payload.items():
        if type(value) is Deferred:
            payload[key] = value.value(memos)
    return payload
