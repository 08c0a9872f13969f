"""Open spans keyed by explicit ids, and the life of a turn's root span.

Nothing here asks OpenTelemetry for a "current span": a pre hook stores its span under the
ids its post hook will carry (``turn_id``, ``api_request_id``, ``tool_call_id``, the child's
session id), so hooks may run on any thread and still find their span and parent. One
re-entrant lock guards the maps; spans are started by the SDK's tracer with an explicit
parent context and, when given, ids keyed by what they stand for (``pipeline.KeyedIds``).

A turn's root is opened by ``on_session_start`` (kept pending until the turn's first hook
names its ``turn_id``) or synthesized by that first hook (``hermes.session.synthesized``:
Hermes fires ``on_session_start`` only for a session's first turn). A child session's root
nests under its ``subagent.{role}`` span when the delegation happened in this process, and
links to a W3C ``traceparent`` (payload field or ``TRACEPARENT``) when it did not. What
outlives ``root_span_ttl_ms`` is ended by a sweep the hooks run (at most about once a second).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from wayline.plugins.observability.hookqueue import event_time_ns
from wayline.plugins.observability.otel.attributes import (
    LABEL_MAX,
    SUMMARY_MAX,
    Attrs,
    Cleaner,
    root_attrs,
)
from wayline.plugins.observability.otel.instruments import Instruments
from wayline.plugins.observability.otel.pipeline import KeyedIds

Key = tuple[str, str]
_PROPAGATOR = TraceContextTextMapPropagator()


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


def session_kind(kw: Mapping[str, Any]) -> str:
    """``cron`` for scheduled runs (type, platform/source/trigger or a job id), else ``agent``."""
    for key in ("session_type", "origin", "run_type"):
        if str(kw.get(key) or "").lower() == "cron":
            return "cron"
    for key in ("platform", "source", "trigger"):
        if "cron" in str(kw.get(key) or "").lower():
            return "cron"
    return "cron" if kw.get("job_id") or kw.get("cron_job_id") else "agent"


def parse_traceparent(value: str) -> SpanContext | None:
    """The remote span context in a W3C ``traceparent`` value, or None when invalid."""
    ctx = _PROPAGATOR.extract({"traceparent": value})
    span_ctx = trace.get_current_span(ctx).get_span_context()
    return span_ctx if span_ctx.is_valid else None


def traceparent_of(span: Span) -> str | None:
    """The W3C ``traceparent`` header value naming ``span``."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
    return carrier.get("traceparent")


class Tracker:
    """The maps of open spans, span creation with explicit parents, and the turns' roots:
    adopting or synthesizing them, their summary, the TTL sweep.

    ``root_links``, ``new_root``, ``open_turn`` and ``close_turn`` expect :attr:`lock` to be
    held by the caller; ``sweep`` and ``close_all`` take it themselves.
    """

    def __init__(
        self,
        tracer: Tracer,
        cleaner: Cleaner,
        instruments: Instruments,
        *,
        agent_name: str,
        ttl_ms: int,
        clock: Callable[[], float] = time.monotonic,
        ids: KeyedIds | None = None,
        remote_parent: str | None = None,
        remote_parent_session: str | None = None,
    ) -> None:
        self.tracer = tracer
        self.c = cleaner
        self.m = instruments
        self.agent_name = agent_name
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
        self._remote = parse_traceparent(remote_parent) if remote_parent else None
        self._remote_session = remote_parent_session

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
        ids derived from ``key`` (what the span stands for) when given."""
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
    def turns_of(self, session_id: Any) -> list[TurnState]:
        """Open turns of a session (normally at most one)."""
        return [t for t in self.turns.values() if t.session_id == session_id]

    def find_turn(self, turn_id: Any, session_id: Any = None) -> TurnState | None:
        """By turn id; else the session's only open turn; else the only open turn at all."""
        found = self.turns.get(turn_id) if isinstance(turn_id, str) else None
        if found is not None:
            return found
        candidates = self.turns_of(session_id) if session_id else list(self.turns.values())
        return candidates[0] if len(candidates) == 1 else None

    def tool_turn(self, turn_id: Any, tool_call_id: str) -> TurnState | None:
        """The turn holding the open tool span ``tool_call_id`` (by turn id when given)."""
        found = self.turns.get(turn_id) if isinstance(turn_id, str) else None
        if found is not None:
            return found
        return next((s for s in self.turns.values() if ("tool", tool_call_id) in s.open), None)

    def hold(self, state: TurnState | None, key: Key, span: Span) -> None:
        """Keep an open child span in its turn, or loose (with its start) without one."""
        if state is not None:
            state.open[key] = span
        else:
            self.loose[key] = (span, self.clock())

    def take(self, state: TurnState | None, key: Key) -> Span | None:
        """The open child span ``key`` of ``state``, else the loose one, removed."""
        span = state.open.pop(key, None) if state is not None else None
        if span is None and key in self.loose:
            span = self.loose.pop(key)[0]
        return span

    # -- roots -------------------------------------------------------------------------------
    def root_links(
        self, session_id: Any, kw: Mapping[str, Any]
    ) -> tuple[Span | None, list[Link] | None, Attrs]:
        """Where a session's root hangs: its delegation span, a remote link, or nowhere."""
        delegation = self.delegations.get(session_id) if isinstance(session_id, str) else None
        if delegation is not None:
            attrs: Attrs = {
                "hermes.session.is_subagent": True,
                "hermes.subagent.role": delegation.role,
                "gen_ai.agent.name": delegation.role,
            }
            if delegation.parent_session_id:
                attrs["hermes.subagent.parent_session_id"] = self.c.ident(
                    delegation.parent_session_id
                )
            return delegation.span, None, attrs
        remote = self._remote
        parent_session = self._remote_session
        if isinstance(kw.get("traceparent"), str):
            remote = parse_traceparent(kw["traceparent"]) or remote
            parent_session = kw.get("parent_session_id") or parent_session
        if remote is None:
            return None, None, {}
        attrs = {
            "hermes.session.is_subagent": True,
            "hermes.parent.trace_id": format(remote.trace_id, "032x"),
            "hermes.parent.span_id": format(remote.span_id, "016x"),
        }
        if parent_session:
            attrs["hermes.subagent.parent_session_id"] = self.c.ident(parent_session)
        return None, [Link(remote, {"hermes.link.type": "delegation"})], attrs

    def new_root(self, session_id: Any, kw: Mapping[str, Any], **extra: Any) -> PendingRoot:
        """Start a root span (``agent``/``cron``) for a session, parented or linked."""
        kind = session_kind(kw)
        parent, links, link_attrs = self.root_links(session_id, kw)
        sid = session_id if isinstance(session_id, str) else None
        attrs = root_attrs(self.c, kw, kind, self.agent_name, sid or "")
        attrs.update(link_attrs)
        attrs.update(extra)
        key = None
        turn = kw.get("turn_id")
        if sid and isinstance(turn, str) and turn:
            key = f"{sid}/turn/{turn}"  # unique across processes (a resumed session)
        elif sid:  # a session's start, before its first turn is known: its n-th root
            n = self.roots[sid] = self.roots.get(sid, 0) + 1
            key = f"{sid}/{n}"
        span = self.start(kind, parent, attrs, links=links, key=key)
        # Only an in-process child is a subagent here: a linked one is top-level in its process.
        return PendingRoot(span, self.clock(), kind, parent is not None, key or "")

    def open_turn(self, kw: Mapping[str, Any]) -> TurnState | None:
        """The turn of ``kw['turn_id']``, adopting the pending root or synthesizing one."""
        turn_id = kw.get("turn_id")
        if not isinstance(turn_id, str) or not turn_id:
            return None
        state = self.turns.get(turn_id)
        if state is not None:
            return state
        sid = kw.get("session_id")
        pending = self.pending.pop(sid, None) if isinstance(sid, str) else None
        if pending is None:
            pending = self.new_root(sid, kw, **{"hermes.session.synthesized": True})
        pending.span.set_attribute("hermes.turn_id", self.c.ident(turn_id))
        state = TurnState(
            turn_id,
            sid if isinstance(sid, str) else "",
            pending.kind,
            pending.span,
            pending.started,
            pending.is_subagent,
            pending.key,
        )
        self.turns[turn_id] = state
        return state

    def close_turn(
        self,
        state: TurnState,
        final: str,
        *,
        reason: Any = None,
        completed: bool = False,
        interrupted: bool = False,
        closed_by: str,
    ) -> None:
        """End a turn's open children and its root with the turn summary (lock held)."""
        failed = final == "incomplete"
        why = str(reason or final)
        llm = state.open.pop(("llm", state.turn_id), None)
        if llm is not None:
            end_span(llm, {"hermes.span.closed_by": closed_by}, error=why if failed else None)
        for open_key, span in list(state.open.items()):
            end_span(span, {"hermes.span.closed_by": closed_by})
            state.open.pop(open_key, None)
        attrs: Attrs = {
            "hermes.turn.final_status": final,
            "hermes.session.completed": completed,
            "hermes.session.interrupted": interrupted,
            "hermes.turn.tool_count": len(state.tools),
            "hermes.turn.api_call_count": state.api_attempts,
            "hermes.turn.skill_count": 0,
        }
        if reason:
            attrs["hermes.turn.reason"] = self.c.ident(reason, LABEL_MAX)
        if state.tools:
            attrs["hermes.turn.tools"] = self.c.text(",".join(state.tools), SUMMARY_MAX)
            attrs["hermes.turn.tool_outcomes"] = ",".join(
                f"{k}={v}" for k, v in sorted(state.outcomes.items())
            )
        if state.targets:
            attrs["hermes.turn.tool_targets"] = self.c.text(",".join(state.targets), SUMMARY_MAX)
        if state.commands:
            attrs["hermes.turn.tool_commands"] = self.c.text(
                " ; ".join(state.commands), SUMMARY_MAX
            )
        if state.error_type:
            attrs["error.type"] = state.error_type
        for key, n in state.usage.items():
            attrs[f"hermes.turn.{key}"] = n
        if state.output is not None:
            attrs["output.value"] = state.output
            attrs["output.mime_type"] = "text/plain"
        end_span(state.root, attrs, error=why if failed else None)
        self.m.sessions.add(1, {"kind": state.kind, "final_status": final})

    def sweep(self) -> None:
        """End turns (and delegations, pending roots) older than the TTL as ``timed_out``."""
        if self.ttl <= 0:
            return  # root_span_ttl_ms: 0 turns the sweep off
        now = self.clock()
        if now - self._last_sweep < min(1.0, self.ttl / 2):
            return
        self._last_sweep = now
        self._end_open("orphan_sweep", lambda started: now - started > self.ttl)

    def close_all(self, reason: str = "shutdown") -> None:
        """End everything still open (process exit): turns as ``incomplete``."""
        self._end_open(reason, None)

    def _end_open(self, closed_by: str, due: Callable[[float], bool] | None) -> None:
        """End what is open: what ``due`` says outlived the TTL (turns ``timed_out``), or,
        without ``due``, all of it (turns ``incomplete``)."""
        ended: Attrs = {"hermes.span.closed_by": closed_by}
        with self.lock:
            for state in list(self.turns.values()):
                if due is None:
                    del self.turns[state.turn_id]
                    self.close_turn(state, "incomplete", reason=closed_by, closed_by=closed_by)
                elif due(state.started):
                    del self.turns[state.turn_id]
                    self.close_turn(state, "timed_out", closed_by=closed_by)
            for sid, pending in list(self.pending.items()):
                if due is None or due(pending.started):
                    del self.pending[sid]
                    timed_out = {"hermes.turn.final_status": "timed_out"} if due else {}
                    end_span(pending.span, {**timed_out, **ended})
            for child, delegation in list(self.delegations.items()):
                if due is None or due(delegation.started):
                    del self.delegations[child]
                    self.subagent_sessions.discard(child)
                    end_span(delegation.span, ended)
            for key, (span, started) in list(self.loose.items()):
                if due is None or due(started):
                    del self.loose[key]
                    end_span(span, ended)
