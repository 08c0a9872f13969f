"""``diff_sessions``: two sessions compared as ``wayline diff`` compares two files, bounded.

The comparison is :func:`wayline.trajectory.compare.compare` (steps aligned by content, then
by shape; volatile fields ignored unless ``strict``); each difference's values are redacted as
``wayline diff`` shows them (under the last key of their path, so a credential key hides its
value whatever its shape). The answer leads with the first divergence, then one line per
difference, a page at a time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from wayline.mcp.paging import Lines, clip
from wayline.trajectory.compare import CompareOptions, Difference, compare, is_absent, redacted

__all__ = ["diff_text", "redacted"]

FIRST_CHARS = 600
"""Characters of each value the first divergence shows."""

LINE_CHARS = 140
"""Characters of each value a difference's line shows."""


def _value(value: Any, limit: int) -> str:
    if is_absent(value):
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return clip(text, limit)


def _what(d: Difference) -> str:
    """What differs: ``text at message``, or ``a step only the old session has``."""
    if d.kind == "step" and not d.path:
        if is_absent(d.new):
            return "a step only the old session has"
        if is_absent(d.old):
            return "a step only the new session has"
    return f"{d.kind} at {d.path or '(the step)'}"


def _count(traj: Mapping[str, Any]) -> int:
    steps = traj.get("steps")
    return len(steps) if isinstance(steps, list) else 0


def diff_text(
    old_row: Mapping[str, Any],
    old: Mapping[str, Any],
    new_row: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    offset: int,
    limit: int,
    strict: bool,
) -> str:
    """The answer of ``diff_sessions``: a header, the first divergence, a page of differences
    and, when more follow, the call that gets them."""
    try:
        found = redacted(compare(old, new, CompareOptions(strict=strict)))
    except (RecursionError, ValueError, TypeError) as exc:  # a value no trajectory holds
        return f"cannot compare: {type(exc).__name__}: {clip(str(exc), 300)}"
    a, b = old_row["session_id"], new_row["session_id"]
    out = Lines()
    ignored = (
        ""
        if strict
        else " (ids, timestamps, durations and usage ignored; strict=true compares them)"
    )
    out.add(
        f"old {a} ({_count(old):,} steps) vs new {b} ({_count(new):,} steps): "
        f"{len(found):,} difference{'s' if len(found) != 1 else ''}{ignored}"
    )
    if not found:
        out.add("same")
        return out.text()
    first = found[0]
    out.add(
        f"first divergence: {first.location()}: {_what(first)}\n"
        f"  old: {_value(first.old, FIRST_CHARS)}\n  new: {_value(first.new, FIRST_CHARS)}"
    )
    out.add("differences, in run order (where | what | old → new):")
    page = found[offset : offset + limit]
    shown = 0
    for d in page:
        line = (
            f"{d.location()} | {_what(d)} | "
            f"{_value(d.old, LINE_CHARS)} → {_value(d.new, LINE_CHARS)}"
        )
        if not out.add(line):
            break
        shown += 1
    end = offset + shown
    if end < len(found):
        out.extend(
            [
                f"shown {offset + 1}–{end} of {len(found):,}; next: diff_sessions("
                f"old_session={json.dumps(a)}, new_session={json.dumps(b)}, offset={end}, "
                f"limit={limit}{', strict=true' if strict else ''})"
            ]
        )
    elif not page:
        out.extend([f"no differences past offset {offset} (there are {len(found):,})"])
    return out.text()
