"""The turns of a trajectory and how each ended: completed, max_turns, cancelled or error.

A turn starts at a user message and runs to the next one. Relay repeats the turn's user message
before every model call of the turn (after an agent step that called tools); such a repeat
continues the turn. Steps before the first user message belong to the first turn.

How a turn ended is read, in order of preference, from the run's own record of it, the
``hermes.session.end`` mark its runtime emits when a turn ends (``reason``: ``completed``,
``max_turns``, ``interrupted``, ``api_error``; or Hermes' ``completed``/``interrupted``), found in
ATOF events or an ATIF document's ``extra.observed_events``; else it is inferred from the turn's
last agent step: its model call cancelled or a tool call cancelled → ``cancelled``; its model
call failed → ``error``; it called tools and no answer followed → ``max_turns``; otherwise
``completed``. A turn with no agent step is ``open`` (no reply recorded). A cancellation is an
outcome of its own, never an error: OpenTelemetry marks a cancelled turn OK, not ERROR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wayline.relay.atif.payloads import timestamp_ns

__all__ = [
    "OUTCOMES",
    "SESSION_END",
    "assign_marks",
    "infer_outcome",
    "mark_outcome",
    "split_turns",
]

OUTCOMES = ("completed", "max_turns", "cancelled", "error", "open")
"""Every outcome a turn may have; ``open``: no reply was recorded (a live file, a lost run)."""
SESSION_END = "hermes.session.end"
_REASONS = {
    "completed": "completed",
    "max_turns": "max_turns",
    "max_iterations": "max_turns",
    "interrupted": "cancelled",
    "cancelled": "cancelled",
    "api_error": "error",
    "error": "error",
}


def split_turns(steps: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """``(first, last)`` step indexes of each turn (inclusive); empty for no steps."""
    starts: list[int] = []
    text: Any = None
    previous: Mapping[str, Any] | None = None
    for index, step in enumerate(steps):
        if step.get("source") == "user":
            repeat = (
                previous is not None
                and previous.get("source") == "agent"
                and bool(previous.get("tool_calls"))
                and step.get("message") == text
            )
            if not repeat:
                starts.append(index)
                text = step.get("message")
        previous = step
    if not steps:
        return []
    if not starts:
        starts = [0]
    starts[0] = 0  # what comes before the first user message joins the first turn
    ends = [*(s - 1 for s in starts[1:]), len(steps) - 1]
    return list(zip(starts, ends, strict=True))


def mark_outcome(mark: Mapping[str, Any]) -> str | None:
    """The outcome a ``hermes.session.end`` mark records, or None when it does not say."""
    data = mark.get("data")
    if not isinstance(data, Mapping):
        return None
    reason = data.get("reason")
    if isinstance(reason, str) and reason in _REASONS:
        return _REASONS[reason]
    if data.get("interrupted") is True:
        return "cancelled"
    if data.get("completed") is True:
        return "completed"
    return None  # Hermes' completed=False: max iterations or a failure; the steps tell


def infer_outcome(views: Sequence[Mapping[str, Any]]) -> str:
    """A turn's outcome from its steps' views (:func:`wayline.viewer.model.build_view`'s):
    ``cn`` marks a cancelled model or tool call, ``le`` a failed model call, ``c`` tool calls."""
    agents = [v for v in views if v.get("s") == "agent"]
    if not agents:
        return "open"
    last = agents[-1]
    if last.get("cn"):
        return "cancelled"
    if last.get("le"):
        return "error"
    if last.get("c"):
        return "max_turns"  # tools ran and no model call answered after them
    return "completed"


def assign_marks(
    turns: Sequence[tuple[int | None, int | None]], marks: Sequence[Mapping[str, Any]]
) -> list[str | None]:
    """The recorded outcome of each turn, from the session-end marks of its trajectory.

    ``turns`` holds each turn's first and last known instant (ns, or None). Marks are taken in
    time order; a mark earlier than a turn's first instant belongs to no later turn and is
    skipped, and a turn takes the next mark that is not later than the next turn's start.
    Without times, marks are taken in order.
    """
    timed = sorted(
        ((timestamp_ns(m.get("timestamp")), m) for m in marks if m.get("name") == SESSION_END),
        key=lambda pair: pair[0] if pair[0] is not None else -1,
    )
    out: list[str | None] = []
    at = 0
    for index, (first, _last) in enumerate(turns):
        following = turns[index + 1][0] if index + 1 < len(turns) else None
        while at < len(timed) and first is not None and (timed[at][0] or 0) < first:
            at += 1
        found: str | None = None
        if at < len(timed):
            when = timed[at][0]
            if following is None or when is None or when <= following:
                found = mark_outcome(timed[at][1])
                at += 1
        out.append(found)
    return out
