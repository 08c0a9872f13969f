"""Open spans keyed by explicit ids: turns, their children, delegations, pending roots.

Nothing here asks OpenTelemetry for a "current span": a pre hook stores its span under the
ids its post hook will carry (``turn_id``, ``api_request_id``, ``tool_call_id``, the child's
session id), so hooks may run on any thread — parallel tool workers, subagent threads,
approval executors — and still find their span and parent. One re-entrant lock guards the
maps; spans are started by the SDK's tracer with an explicit parent context.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode, Tracer

from wayline.plugins.observability.hookqueue import event_time_ns
from wayline.plugins.observability.otel.attributes import Attrs
from wayline.plugins.observability.otel.ids import KeyedIds

Key = tuple[str, str]


@dataclass
class TurnState:
    """One user turn: its root span, open children and the summary stamped at its end."""

    turn_id: str
    session_id: str
    kind: str
    root: Span
    started: float
    is_subagent: bool = False
    key: str = ""
    """The key of the turn's root span (``<session>/<n>``), which its children's keys extend."""
    llm: Span | None = None
    apis: dict[str, Span] = field(default_factory=dict)
    last_api: Span | None = None
    open: dict[Key, Span] = field(default_factory=dict)
    tool_parents: dict[str, Span] = field(default_factory=dict)
    tool_names: dict[str, str] = field(default_factory=dict)
    approval_started: dict[str, float] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    api_attempts: int = 0
    error_type: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    output: str | None = None

    def open_call_of(self, tool_name: str) -> str | None:
        """The id of the latest still-open call of ``tool_name`` in this turn."""
        for call_id in reversed(list(self.tool_names)):
            if self.tool_names[call_id] == tool_name and ("tool", call_id) in self.open:
                return call_id
        return None

    def parent_for_children(self) -> Span:
        """The span a tool, approval or delegation hangs under: last api, else llm, else root."""
        return self.last_api or self.llm or self.root


@dataclass
class PendingRoot:
    """A root opened by ``on_session_start`` that the turn's first hook adopts."""

    span: Span
    started: float
    kind: str
    is_subagent: bool
    key: str = ""


@dataclass
class Delegation:
    """An open ``subagent.{role}`` span, found again by the child's session id."""

    span: Span
    role: str
    parent_session_id: str | None
    parent_turn_id: str | None
    started: float


def end_span(
    span: Span,
    attrs: Attrs | None = None,
    *,
    error: str | None = None,
    end_time: int | None = None,
) -> None:
    """Set ``attrs``, the status (ERROR with ``error`` as description, else OK) and end.

    A span that already ended (or was sampled out) is left alone, so a span reachable from
    two maps (a delegation is also a child of its turn) is ended exactly once.
    """
    if not span.is_recording():
        return
    if attrs:
        span.set_attributes(attrs)
    if error is not None:
        span.set_status(Status(StatusCode.ERROR, error))
    else:
        span.set_status(Status(StatusCode.OK))
    span.end(end_time=end_time if end_time is not None else event_time_ns())


class Tracker:
    """The maps of open spans, plus span creation with explicit parents and the TTL sweep."""

    def __init__(
        self,
        tracer: Tracer,
        ttl_ms: int,
        clock: Callable[[], float] = time.monotonic,
        ids: KeyedIds | None = None,
    ) -> None:
        self.tracer = tracer
        self.ids = ids
        self.ttl = ttl_ms / 1000.0
        self.clock = clock
        self.lock = threading.RLock()
        self.turns: dict[str, TurnState] = {}
        self.pending: dict[str, PendingRoot] = {}
        self.delegations: dict[str, Delegation] = {}
        self.subagent_sessions: set[str] = set()
        # Spans whose hooks carried no usable turn id, by (what, id), with their start time.
        self.loose: dict[Key, tuple[Span, float]] = {}
        # Roots started per session: the n-th turn's root is keyed <session>/<n>.
        self.roots: dict[str, int] = {}
        self._last_sweep = clock()

    # -- creating spans ----------------------------------------------------------------------
    def start(
        self,
        name: str,
        parent: Span | None,
        attrs: Attrs,
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        start_time: int | None = None,
        links: list[Link] | None = None,
        key: str | None = None,
    ) -> Span:
        """A span under ``parent`` (or a new trace: never the thread's ambient context), with
        ids derived from ``key`` (what the span stands for; see ``ids``) when given."""
        # An empty context, not None: None would mean the thread's ambient context.
        context = trace.set_span_in_context(parent) if parent is not None else Context()
        ids = self.ids
        if ids is not None:
            ids.starting(key)
        try:
            return self.tracer.start_span(
                name,
                context,
                kind=kind,
                attributes=attrs,
                links=links,
                start_time=start_time if start_time is not None else event_time_ns(),
            )
        finally:
            if ids is not None:
                ids.starting(None)

    # -- lookups -----------------------------------------------------------------------------
    def turn(self, turn_id: Any) -> TurnState | None:
        """The open turn with this id."""
        return self.turns.get(turn_id) if isinstance(turn_id, str) else None

    def turns_of(self, session_id: Any) -> list[TurnState]:
        """Open turns of a session (normally at most one)."""
        return [t for t in self.turns.values() if t.session_id == session_id]

    def find_turn(self, turn_id: Any, session_id: Any = None) -> TurnState | None:
        """By turn id; else the session's only open turn; else the only open turn at all."""
        found = self.turn(turn_id)
        if found is not None:
            return found
        candidates = self.turns_of(session_id) if session_id else list(self.turns.values())
        return candidates[0] if len(candidates) == 1 else None

    def tool_turn(self, turn_id: Any, tool_call_id: str) -> TurnState | None:
        """The turn holding the open tool span ``tool_call_id`` (by turn id when given)."""
        found = self.turn(turn_id)
        if found is not None:
            return found
        for state in self.turns.values():
            if ("tool", tool_call_id) in state.open:
                return state
        return None

    # -- closing -----------------------------------------------------------------------------
    def close_children(self, state: TurnState, closed_by: str) -> None:
        """End every still-open child of a turn (status OK, marked with who closed it)."""
        for key, span in list(state.open.items()):
            end_span(span, {"hermes.span.closed_by": closed_by})
            state.open.pop(key, None)

    def due(self, started: float, now: float) -> bool:
        """True when something started at ``started`` has outlived the TTL."""
        return now - started > self.ttl

    def should_sweep(self) -> float | None:
        """The current time when a sweep is due (at most about once a second), else None."""
        if self.ttl <= 0:
            return None  # root_span_ttl_ms: 0 turns the sweep off
        now = self.clock()
        if now - self._last_sweep < min(1.0, self.ttl / 2):
            return None
        self._last_sweep = now
        return now
