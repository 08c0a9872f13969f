"""A sanitizer memo: sanitized copies of the containers of payloads sanitized again and again."""

from __future__ import annotations

from typing import Any

__all__ = ["SanitizeMemo"]


class SanitizeMemo:
    """Sanitized copies of the containers found at one ``depth`` of repeated payloads.

    An agent re-sends its whole history on every model call, so ``sanitize`` would redact the
    same message dicts again and again; with a memo each container at ``depth`` (a message in
    ``{"body": {"messages": [...]}}`` is at depth 3) is walked once per stage and then reused,
    with its share of the size budget. Entries are keyed by the container's identity (an entry
    keeps its container alive, so the id cannot be reused) and the stage's limits. Only use a
    memo for containers that nobody changes once sanitized, and treat the copies as read-only
    (hook payloads already are).
    """

    __slots__ = ("depth", "entries", "lengths", "limit", "list_lengths", "prefixes", "rules")

    def __init__(self, depth: int, *, limit: int = 100_000) -> None:
        self.depth = depth
        self.rules: object = None  # the rules and known values the entries were redacted with
        self.limit = limit  # entries kept; past it the memo starts over (bounded memory)
        self.entries: dict[tuple[int, int, int], tuple[Any, Any, int]] = {}
        # id(output) -> (output, its JSON length or -1 until first measured)
        self.lengths: dict[int, tuple[Any, int]] = {}
        # The list one level up (the messages) is the last call's list plus new items:
        # (id(first item), limits) -> (items walked, their outputs, their budget share).
        self.prefixes: dict[tuple[int, int, int], tuple[list[Any], list[Any], int]] = {}
        # The same for measuring an output list:
        # id(first item) -> (items, the sum of their lengths, the last item's length).
        self.list_lengths: dict[int, tuple[list[Any], int, int]] = {}

    def forget(self, rules: object) -> None:
        """Drop every entry: they were redacted under other rules or known values."""
        for table in (self.entries, self.lengths, self.prefixes, self.list_lengths):
            table.clear()
        self.rules = rules
