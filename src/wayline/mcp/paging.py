"""The bounds every answer of ``wayline mcp`` keeps, and the cursors that page past them.

An agent's context is the scarce resource: every tool result is text of at most
:data:`RESULT_CHARS` characters (a quarter of that in tokens, counted as characters / 4), and
one that stops early says how to get the rest (the next ``offset`` or ``cursor``). Cursors are
opaque to the agent: base64 of a small JSON object naming the tool they belong to, so one
given to another tool, or edited, is refused with a clear message instead of paging wrongly.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CHARS_PER_TOKEN",
    "RESULT_CHARS",
    "CursorError",
    "Lines",
    "clip",
    "decode_cursor",
    "encode_cursor",
    "tokens",
]

CHARS_PER_TOKEN = 4
"""How characters are counted as tokens for the bounds (the issue's measure)."""

RESULT_CHARS = 48_000
"""The most characters one tool result holds (12,000 tokens): well under the 20,000 tokens a
first page of a 10,000-step session may take, with room for the call that follows it."""


class CursorError(ValueError):
    """A cursor this server did not give for this tool."""


def tokens(text: str) -> int:
    """``text``'s size in tokens as the bounds count them (characters / 4, rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def clip(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace made one space), cut to ``limit`` characters
    with ``…`` when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def encode_cursor(tool: str, **state: Any) -> str:
    """An opaque cursor for ``tool`` holding ``state`` (JSON values)."""
    raw = json.dumps({"tool": tool, **state}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, tool: str) -> dict[str, Any]:
    """The state of a cursor :func:`encode_cursor` made for ``tool``; :class:`CursorError`
    for anything else."""
    padded = cursor.strip() + "=" * (-len(cursor.strip()) % 4)
    try:
        state = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise CursorError(f"cursor: {cursor[:40]!r} is not a cursor this server gave") from None
    if not isinstance(state, dict) or state.get("tool") != tool:
        raise CursorError(f"cursor: {cursor[:40]!r} is not a cursor of {tool}")
    state.pop("tool")
    return state


@dataclass
class Lines:
    """Text built line by line within a budget of characters: :meth:`add` refuses a line
    that does not fit (the caller then says how to page on, within :attr:`reserve`)."""

    budget: int = RESULT_CHARS
    reserve: int = 1_000  # kept back for the closing lines (how to page on)
    lines: list[str] = field(default_factory=list)
    size: int = 0

    def add(self, line: str, *, force: bool = False) -> bool:
        """Append ``line`` when it fits in the budget less the reserve (``force``: within
        the whole budget); False when it does not, and nothing is added."""
        room = self.budget - (0 if force else self.reserve)
        if self.size + len(line) + 1 > room:
            return False
        self.lines.append(line)
        self.size += len(line) + 1
        return True

    def extend(self, lines: Iterable[str]) -> None:
        """Append every line that fits (closing lines: within the whole budget)."""
        for line in lines:
            self.add(line, force=True)

    def text(self) -> str:
        """The lines joined."""
        return "\n".join(self.lines)
