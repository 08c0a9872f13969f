"""Turn roots: where a root hangs, adopting or synthesizing it, its summary, the TTL sweep.

A turn's root is opened by ``on_session_start`` (kept pending until the turn's first hook
names its ``turn_id``) or synthesized by that first hook (``hermes.session.synthesized``:
Hermes fires ``on_session_start`` only for a session's first turn). A child session's root
nests under its ``subagent.{role}`` span when the delegation happened in this process, and
links to a W3C ``traceparent`` (payload field or ``TRACEPARENT``) when it did not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanContext
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from wayline.plugins.observability.otel.attributes import (
    LABEL_MAX,
    SUMMARY_MAX,
    Attrs,
    Cleaner,
    root_attrs,
)
from wayline.plugins.observability.otel.instruments import Instruments
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.plugins.observability.otel.tracker import PendingRoot, Tracker, TurnState, end_span

_PROPAGATOR = TraceContextTextMapPropagator()


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


class Turns:
    """Root-span lifecycle over a :class:`Tracker`.

    ``root_links``, ``new_root``, ``open_turn`` and ``close_turn`` expect the tracker's lock
    to be held by the caller; ``sweep`` and ``close_all`` take it themselves.
    """

    def __init__(
        self,
        tracker: Tracker,
        cleaner: Cleaner,
        settings: OtelSettings,
        instruments: Instruments,
        *,
        remote_parent: str | None = None,
        remote_parent_session: str | None = None,
    ) -> None:
        self.t = tracker
        self.c = cleaner
        self.m = instruments
        self.settings = settings
        self._remote = parse_traceparent(remote_parent) if remote_parent else None
        self._remote_session = remote_parent_session

    def root_links(
        self, session_id: Any, kw: Mapping[str, Any]
    ) -> tuple[Span | None, list[Link] | None, Attrs]:
        """Where a session's root hangs: its delegation span, a remote link, or nowhere."""
        delegation = self.t.delegations.get(session_id) if isinstance(session_id, str) else None
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
        attrs = root_attrs(self.c, kw, kind, self.settings.agent_name, sid or "")
        attrs.update(link_attrs)
        attrs.update(extra)
        key = None
        turn = kw.get("turn_id")
        if sid and isinstance(turn, str) and turn:
            key = f"{sid}/turn/{turn}"  # unique across processes (a resumed session)
        elif sid:  # a session's start, before its first turn is known: its n-th root
            n = self.t.roots[sid] = self.t.roots.get(sid, 0) + 1
            key = f"{sid}/{n}"
        span = self.t.start(kind, parent, attrs, links=links, key=key)
        # Only an in-process child is a subagent here: a linked one is top-level in its process.
        return PendingRoot(span, self.t.clock(), kind, parent is not None, key or "")

    def open_turn(self, kw: Mapping[str, Any]) -> TurnState | None:
        """The turn of ``kw['turn_id']``, adopting the pending root or synthesizing one."""
        turn_id = kw.get("turn_id")
        if not isinstance(turn_id, str) or not turn_id:
            return None
        state = self.t.turns.get(turn_id)
        if state is not None:
            return state
        sid = kw.get("session_id")
        pending = self.t.pending.pop(sid, None) if isinstance(sid, str) else None
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
        self.t.turns[turn_id] = state
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
        self.t.close_children(state, closed_by)
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
        now = self.t.should_sweep()
        if now is not None:
            self._end_open("orphan_sweep", lambda started: self.t.due(started, now))

    def close_all(self, reason: str = "shutdown") -> None:
        """End everything still open (process exit): turns as ``incomplete``."""
        self._end_open(reason, None)

    def _end_open(self, closed_by: str, due: Callable[[float], bool] | None) -> None:
        """End what is open: what ``due`` says outlived the TTL (turns ``timed_out``), or,
        without ``due``, all of it (turns ``incomplete``)."""
        ended: Attrs = {"hermes.span.closed_by": closed_by}
        with self.t.lock:
            for state in list(self.t.turns.values()):
                if due is None:
                    del self.t.turns[state.turn_id]
                    self.close_turn(state, "incomplete", reason=closed_by, closed_by=closed_by)
                elif due(state.started):
                    del self.t.turns[state.turn_id]
                    self.close_turn(state, "timed_out", closed_by=closed_by)
            for sid, pending in list(self.t.pending.items()):
                if due is None or due(pending.started):
                    del self.t.pending[sid]
                    timed_out = {"hermes.turn.final_status": "timed_out"} if due else {}
                    end_span(pending.span, {**timed_out, **ended})
            for child, delegation in list(self.t.delegations.items()):
                if due is None or due(delegation.started):
                    del self.t.delegations[child]
                    self.t.subagent_sessions.discard(child)
                    end_span(delegation.span, ended)
            for key, (span, started) in list(self.t.loose.items()):
                if due is None or due(started):
                    del self.t.loose[key]
                    end_span(span, ended)
