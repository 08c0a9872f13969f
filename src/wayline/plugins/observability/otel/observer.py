"""Observer hooks → OpenTelemetry spans and metrics (hermes-otel's hook → span mapping).

Every public hook method here is an **observer** callback: it may run on any thread (the
agent thread, parallel tool workers, subagent threads), never exports on the caller's thread
and never waits on a failing exporter (the optional end-of-turn flush waits, bounded, only
for a healthy one). An exception it raises is logged once and skipped by the host (fail
open); ``BaseException`` propagates. Tree per turn::

    agent | cron                       on_session_start / first hook of a turn → on_session_end
    └── llm.{model}                    pre_llm_call → post_llm_call
        ├── api.{model}                pre_api_request → post_api_request | api_request_error
        │   ├── tool.{name}            pre_tool_call → post_tool_call (parallel calls: siblings)
        │   ├── approval.{pattern}     pre_approval_request → post_approval_response
        │   └── subagent.{role}        subagent_start → subagent_stop
        │       └── agent              the child's own root (same process: same trace)
        └── api.error                  api_request_error with no open attempt span
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry.trace import Span, SpanKind

from wayline.plugins.observability.hookqueue import event_time_ns
from wayline.plugins.observability.otel.attributes import (
    FAILED_SUBAGENT,
    GRANTED,
    LABEL_MAX,
    Attrs,
    Cleaner,
    api_end_attrs,
    api_error_attrs,
    api_start_attrs,
    approval_start_attrs,
    error_status_class,
    llm_attrs,
    model_attrs,
    session_attrs,
    subagent_start_attrs,
    subagent_stop_attrs,
    tool_end_attrs,
    tool_start_attrs,
    tool_target,
    usage_counts,
)
from wayline.plugins.observability.otel.instruments import Instruments
from wayline.plugins.observability.otel.pipeline import Pipeline
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.plugins.observability.otel.tracker import (
    Delegation,
    Tracker,
    TurnState,
    end_span,
    traceparent_of,
)


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _ns(epoch_s: Any) -> int | None:
    seconds = _number(epoch_s)
    return int(seconds * 1e9) if seconds is not None and seconds > 0 else None


def _child(state: TurnState, what: str) -> str | None:
    """The span key of ``what`` in a turn (its root's key extended), if the root has one."""
    return f"{state.key}/{what}" if state.key else None


def _session_key(kw: Mapping[str, Any], what: str, ident: Any) -> str | None:
    """The span key ``<session>/<what>/<id>`` of a call known by its own id, if both exist."""
    sid = kw.get("session_id")
    if isinstance(sid, str) and sid and isinstance(ident, str) and ident:
        return f"{sid}/{what}/{ident}"
    return None


def _seconds(value: Any) -> float | None:
    seconds = _number(value)
    return seconds if seconds is not None and seconds >= 0 else None


class OtelObserver:
    """Maps the observer hooks to spans (keyed by explicit ids) and metrics."""

    def __init__(
        self,
        settings: OtelSettings,
        pipeline: Pipeline,
        *,
        clock: Callable[[], float] = time.monotonic,
        remote_parent: str | None = None,
        remote_parent_session: str | None = None,
    ) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.c = Cleaner(settings)
        self.m = Instruments(pipeline.meter)
        self.t = Tracker(
            pipeline.tracer,
            self.c,
            self.m,
            agent_name=settings.agent_name,
            ttl_ms=settings.root_span_ttl_ms,
            clock=clock,
            ids=pipeline.ids,
            remote_parent=remote_parent,
            remote_parent_session=remote_parent_session,
        )

    # -- session hooks -----------------------------------------------------------------------
    def on_session_start(self, **kw: Any) -> None:
        """Open the session's root span (``agent``/``cron``), nested under its delegation."""
        self.t.sweep()
        sid = kw.get("session_id")
        if not isinstance(sid, str) or not sid:
            return
        with self.t.lock:
            if sid in self.t.pending or self.t.turns_of(sid):
                return
            self.t.pending[sid] = self.t.new_root(sid, kw)

    def on_session_end(self, **kw: Any) -> None:
        """Close the turn's root with the turn summary; flush (bounded) for top-level sessions."""
        sid = kw.get("session_id")
        turn_id = kw.get("turn_id")
        completed = kw.get("completed") is True
        interrupted = kw.get("interrupted") is True
        final = "completed" if completed else "interrupted" if interrupted else "incomplete"
        reason = kw.get("reason")
        with self.t.lock:
            state = self.t.turns.pop(turn_id, None) if isinstance(turn_id, str) else None
            states = [state] if state is not None else []
            if not states and not turn_id:
                states = self.t.turns_of(sid)
                for s in states:
                    self.t.turns.pop(s.turn_id, None)
            if not states and isinstance(sid, str) and sid in self.t.pending:
                pending = self.t.pending.pop(sid)
                states = [TurnState("", sid, pending.kind, pending.span, pending.started)]
            for s in states:
                self.t.close_turn(
                    s,
                    final,
                    reason=reason,
                    completed=completed,
                    interrupted=interrupted,
                    closed_by="session_end",
                )
        if (
            states
            and self.settings.force_flush_on_session_end
            and sid not in self.t.subagent_sessions
            and not any(s.is_subagent for s in states)
        ):
            self.pipeline.flush_spans(self.settings.flush_timeout_ms, only_if_healthy=True)

    def on_session_finalize(self, **kw: Any) -> None:
        """Close whatever the session left open; optionally flush spans (bounded)."""
        sid = kw.get("session_id")
        if not isinstance(sid, str):
            return
        subagent = sid in self.t.subagent_sessions
        with self.t.lock:
            for state in self.t.turns_of(sid):
                self.t.turns.pop(state.turn_id, None)
                self.t.close_turn(state, "incomplete", reason="finalized", closed_by="finalize")
            pending = self.t.pending.pop(sid, None)
            if pending is not None:
                end_span(pending.span, {"hermes.span.closed_by": "finalize"})
        if not subagent and self.settings.force_flush_on_session_end:
            # Metrics keep their own interval (and are flushed at exit): collecting them
            # here would cost every session end a full collection.
            self.pipeline.flush_spans(self.settings.flush_timeout_ms, only_if_healthy=True)

    # -- llm ----------------------------------------------------------------------------------
    def pre_llm_call(self, **kw: Any) -> None:
        """Open ``llm.{model}`` under the turn's root (synthesizing the root if needed)."""
        self.t.sweep()
        attrs = llm_attrs(self.c, kw)
        with self.t.lock:
            state = self.t.open_turn(kw)
            if state is None or ("llm", state.turn_id) in state.open:
                return
            if "input.value" in attrs and self.c.content:
                state.root.set_attribute("input.value", self.c.text(kw.get("user_message")))
            name = f"llm.{self.c.ident(kw.get('model') or 'unknown', LABEL_MAX)}"
            state.llm = self.t.start(name, state.root, attrs, key=_child(state, "llm"))
            state.open[("llm", state.turn_id)] = state.llm

    def post_llm_call(self, **kw: Any) -> None:
        """Close ``llm.{model}`` with the final response."""
        with self.t.lock:
            state = self.t.find_turn(kw.get("turn_id"), kw.get("session_id"))
            if state is None:
                return
            span = state.open.pop(("llm", state.turn_id), None)
            attrs: Attrs = {}
            if self.c.content and kw.get("assistant_response") is not None:
                state.output = self.c.text(kw.get("assistant_response"))
                attrs["output.value"] = state.output
                attrs["output.mime_type"] = "text/plain"
            if span is not None:
                end_span(span, attrs)

    # -- api attempts -------------------------------------------------------------------------
    def pre_api_request(self, **kw: Any) -> None:
        """Open ``api.{model}`` under the turn's llm span; retries reuse the request id."""
        self.t.sweep()
        attrs = api_start_attrs(self.c, kw)
        rid = str(kw.get("api_request_id") or "")
        with self.t.lock:
            state = self.t.open_turn(kw)
            key = _child(state, f"api/{state.api_attempts + 1}") if state is not None else None
            span = self._api_span(state, kw, attrs, key)
            self.t.hold(state, ("api", rid), span)
            if state is not None:
                state.apis[rid] = state.last_api = span
                state.api_attempts += 1

    def _api_span(
        self, state: TurnState | None, kw: Mapping[str, Any], attrs: Attrs, key: str | None
    ) -> Span:
        """Start ``api.{model}`` under the turn's llm span (else its root) at the call's start."""
        parent = (state.llm or state.root) if state is not None else None
        name = f"api.{self.c.ident(kw.get('model') or 'unknown', LABEL_MAX)}"
        start = _ns(kw.get("started_at"))
        return self.t.start(name, parent, attrs, kind=SpanKind.CLIENT, start_time=start, key=key)

    def _pop_api(self, kw: Mapping[str, Any]) -> tuple[TurnState | None, Span | None]:
        state = self.t.find_turn(kw.get("turn_id"), kw.get("session_id"))
        return state, self.t.take(state, ("api", str(kw.get("api_request_id") or "")))

    def _genai_labels(self, kw: Mapping[str, Any]) -> dict[str, str]:
        labels = {"gen_ai.operation.name": "chat"}
        for key, value in model_attrs(self.c, kw).items():
            if key.startswith("gen_ai."):
                labels[key] = str(value)
        if kw.get("response_model"):
            labels["gen_ai.response.model"] = self.c.ident(kw["response_model"])
        return labels

    def post_api_request(self, **kw: Any) -> None:
        """Close ``api.{model}`` (OK) with usage, finish reason and timing; record metrics."""
        attrs = api_end_attrs(self.c, kw)
        usage = usage_counts(kw.get("usage"))
        labels = self._genai_labels(kw)
        self.m.add_cost(attrs, kw, labels)
        with self.t.lock:
            state, span = self._pop_api(kw)
            if span is None:  # attempt began before the plugin loaded
                span = self._api_span(state, kw, api_start_attrs(self.c, kw), None)
            if state is not None:
                for key, n in usage.items():
                    state.usage[key] = state.usage.get(key, 0) + n
            end_span(span, attrs, end_time=_ns(kw.get("ended_at")))
        self.m.api_success(labels, usage, _seconds(kw.get("api_duration")))

    def api_request_error(self, **kw: Any) -> None:
        """Close the attempt as ERROR with an exception event (or open+close ``api.error``)."""
        self.t.sweep()
        attrs, etype, message = api_error_attrs(self.c, kw)
        retryable = kw.get("retryable") if isinstance(kw.get("retryable"), bool) else None
        retries, limit = kw.get("retry_count"), kw.get("max_retries")
        final = not retryable or (
            isinstance(retries, int) and isinstance(limit, int) and retries >= limit
        )
        with self.t.lock:
            state, span = self._pop_api(kw)
            if span is None:
                parent = (state.llm or state.root) if state is not None else None
                start: Attrs = session_attrs(self.c, kw, kw.get("session_id"))
                start.update(model_attrs(self.c, kw))
                start.update({"openinference.span.kind": "LLM", "gen_ai.operation.name": "chat"})
                span = self.t.start("api.error", parent, start, kind=SpanKind.CLIENT)
            span.add_event(
                "exception",
                {
                    "exception.type": etype,
                    "exception.message": message,
                    "exception.escaped": final,
                },
                timestamp=event_time_ns(),
            )
            if state is not None:
                state.error_type = etype
            end_span(span, attrs, error=f"{etype}: {message}" if message else etype)
        self.m.api_failure(
            self._genai_labels(kw),
            etype,
            error_status_class(kw.get("status_code")),
            retryable,
            _seconds(kw.get("api_duration")),
        )

    # -- tools --------------------------------------------------------------------------------
    def pre_tool_call(self, **kw: Any) -> None:
        """Open ``tool.{name}`` under its api span (parallel calls become siblings)."""
        self.t.sweep()
        attrs = tool_start_attrs(self.c, kw)
        name = str(attrs["tool.name"])
        call_id = str(kw.get("tool_call_id") or f"{name}:{id(kw)}")
        target, command = tool_target(kw.get("args"))
        with self.t.lock:
            state = self.t.open_turn(kw)
            if state is not None and ("tool", call_id) in state.open:
                return
            parent: Span | None = None
            if state is not None:
                parent = state.apis.get(str(kw.get("api_request_id") or ""))
                parent = parent or state.parent_for_children()
            key = _session_key(kw, "tool", kw.get("tool_call_id"))
            span = self.t.start(f"tool.{name}", parent, attrs, key=key)
            self.t.hold(state, ("tool", call_id), span)
            if state is None:
                return
            state.tool_parents[call_id] = parent or state.root
            state.tool_names[call_id] = name
            state.tools.append(name)
            if target:
                state.targets.append(self.c.text(target, 200))
            if command and self.c.content:
                state.commands.append(self.c.text(command, 200))

    def post_tool_call(self, **kw: Any) -> None:
        """Close ``tool.{name}``: ERROR only for an ``error`` outcome; record tool metrics."""
        attrs = tool_end_attrs(self.c, kw)
        outcome = str(attrs["hermes.tool.outcome"])
        name = self.c.ident(kw.get("tool_name") or "unknown", LABEL_MAX)
        call_id = str(kw.get("tool_call_id") or "")
        with self.t.lock:
            state = self.t.tool_turn(kw.get("turn_id"), call_id)
            span = self.t.take(state, ("tool", call_id))
            if span is None:  # no pre_tool_call seen (blocked before it, or loaded late)
                parent = state.parent_for_children() if state is not None else None
                key = _session_key(kw, "tool", call_id)
                span = self.t.start(f"tool.{name}", parent, tool_start_attrs(self.c, kw), key=key)
            if state is not None:
                state.outcomes[outcome] = state.outcomes.get(outcome, 0) + 1
            error = str(attrs.get("error.message") or "tool error") if outcome == "error" else None
            end_span(span, attrs, error=error)
        labels = {"tool_name": name, "outcome": outcome}
        self.m.tool_calls.add(1, labels)
        if (duration := _number(kw.get("duration_ms"))) is not None:
            self.m.tool_duration.record(duration, labels)

    # -- delegation ---------------------------------------------------------------------------
    def subagent_start(self, **kw: Any) -> None:
        """Open ``subagent.{role}`` and remember it so the child's root nests under it."""
        self.t.sweep()
        child = kw.get("child_session_id")
        if not isinstance(child, str) or not child:
            return
        role = self.c.ident(kw.get("child_role") or "subagent", LABEL_MAX)
        attrs = subagent_start_attrs(self.c, kw, role)
        with self.t.lock:
            state = self.t.find_turn(kw.get("parent_turn_id"), kw.get("parent_session_id"))
            parent: Span | None = None
            if state is not None:
                tool_call = kw.get("parent_tool_call_id")
                if not isinstance(tool_call, str) or not tool_call:
                    # Hermes does not name the delegating call: it is the open delegate_task.
                    tool_call = state.open_call_of("delegate_task")
                    if tool_call:
                        attrs["gen_ai.tool.call.id"] = self.c.ident(tool_call)
                parent = state.tool_parents.get(tool_call) if tool_call else None
                parent = parent or state.parent_for_children()
            key = f"{state.session_id}/subagent/{child}" if state is not None else None
            span = self.t.start(f"subagent.{role}", parent, attrs, key=key)
            parent_sid = kw.get("parent_session_id")
            parent_turn = kw.get("parent_turn_id")
            self.t.delegations[child] = Delegation(
                span,
                role,
                parent_sid if isinstance(parent_sid, str) else None,
                parent_turn if isinstance(parent_turn, str) else None,
                self.t.clock(),
            )
            self.t.subagent_sessions.add(child)
            if state is not None:
                state.open[("subagent", child)] = span

    def subagent_stop(self, **kw: Any) -> None:
        """Close ``subagent.{role}``: ERROR for failure-like statuses; record metrics."""
        child = kw.get("child_session_id")
        attrs = subagent_stop_attrs(self.c, kw)
        status = str(attrs["hermes.subagent.status"])
        role = self.c.ident(kw.get("child_role") or "unknown", LABEL_MAX)
        with self.t.lock:
            delegation = self.t.delegations.pop(child, None) if isinstance(child, str) else None
            if isinstance(child, str):
                self.t.subagent_sessions.discard(child)
            if delegation is not None:
                role = delegation.role
                state = self.t.find_turn(delegation.parent_turn_id, delegation.parent_session_id)
                if state is not None:
                    state.open.pop(("subagent", str(child)), None)
                failed = status in FAILED_SUBAGENT
                end_span(delegation.span, attrs, error=f"subagent {status}" if failed else None)
        self.m.subagents.add(1, {"role": role, "status": status})
        if (duration := _number(kw.get("duration_ms"))) is not None:
            self.m.subagent_duration.record(duration, {"role": role})

    def traceparent_for_child(self, child_session_id: str) -> str | None:
        """W3C ``traceparent`` of the delegation span, for a child started in another process."""
        with self.t.lock:
            delegation = self.t.delegations.get(child_session_id)
        return traceparent_of(delegation.span) if delegation is not None else None

    # -- approvals ----------------------------------------------------------------------------
    def _approval_key(self, kw: Mapping[str, Any]) -> str:
        return str(kw.get("tool_call_id") or kw.get("pattern_key") or "approval")

    def pre_approval_request(self, **kw: Any) -> None:
        """Open ``approval.{pattern_key}`` in the gated tool's turn (keyed by turn id)."""
        self.t.sweep()
        pattern = self.c.ident(kw.get("pattern_key") or "unknown", LABEL_MAX)
        attrs = approval_start_attrs(self.c, kw, pattern)
        key = self._approval_key(kw)
        with self.t.lock:
            state = self.t.find_turn(kw.get("turn_id"), kw.get("session_id"))
            parent: Span | None = None
            if state is not None:
                parent = state.tool_parents.get(str(kw.get("tool_call_id") or ""))
                parent = parent or state.parent_for_children()
            span = self.t.start(
                f"approval.{pattern}", parent, attrs, key=_session_key(kw, "approval", key)
            )
            self.t.hold(state, ("approval", key), span)
            if state is not None:
                state.approval_started[key] = self.t.clock()

    def post_approval_response(self, **kw: Any) -> None:
        """Close ``approval.{pattern_key}`` (always OK) with the choice and the wait."""
        pattern = self.c.ident(kw.get("pattern_key") or "unknown", LABEL_MAX)
        choice = self.c.ident(kw.get("choice") or "unknown", LABEL_MAX)
        key = self._approval_key(kw)
        now = self.t.clock()
        with self.t.lock:
            state = self.t.find_turn(kw.get("turn_id"), kw.get("session_id"))
            span: Span | None = None
            started: float | None = None
            if state is not None:
                span = state.open.pop(("approval", key), None)
                started = state.approval_started.pop(key, None)
            if span is None:
                loose = self.t.loose.pop(("approval", key), None)
                span, started = (loose[0], loose[1]) if loose else (None, None)
            duration_ms = (now - started) * 1000.0 if started is not None else None
            if span is not None:
                attrs: Attrs = {
                    "hermes.approval.choice": choice,
                    "hermes.approval.granted": choice in GRANTED,
                    "hermes.approval.timed_out": choice == "timeout",
                }
                if duration_ms is not None:
                    attrs["hermes.approval.duration_ms"] = int(duration_ms)
                end_span(span, attrs)
        labels = {"choice": choice, "pattern_key": pattern}
        self.m.approvals.add(1, labels)
        if duration_ms is not None:
            self.m.approval_duration.record(duration_ms, labels)

    def close_all(self, reason: str = "shutdown") -> None:
        """End everything still open (process exit): turns as ``incomplete``."""
        self.t.close_all(reason)
