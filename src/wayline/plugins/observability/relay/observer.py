"""Hook → relay event mapping (the ATOF mapping of Hermes' Relay plugin).

Sessions → agent scopes (a child's under its parent's), API hooks → llm spans, tool hooks →
tool spans, turns/approvals/subagents and unmatched ends → marks carrying the correlation
ids. Every span and scope is found by explicit ids, never by a thread's scope stack. All
callbacks are thread-safe observers (one lock around the id maps).

Hermes Agent 0.19.0's payloads differ from wayline's; absorbed here: a retry under the same
``api_request_id`` ends the superseded span; a truncated ``request`` falls back to the raw
``request_messages``; approvals without ``session_id`` are routed by ``tool_call_id`` or
``turn_id``; ``subagent_stop`` gets ``child_subagent_id`` back from ``subagent_start``; spans
a host never ended are ended as cancelled at shutdown.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wayline import relay
from wayline.plugins.observability import wayline_version
from wayline.plugins.observability.relay.payload import (
    llm_output,
    metadata,
    model_arguments,
    payload_time,
    request_body,
    start_metadata,
)
from wayline.plugins.observability.relay.settings import DEFAULT_AGENT_NAME, RelaySettings
from wayline.pricing import Pricer, price_table, with_cost
from wayline.redaction.sanitize import sanitize
from wayline.relay import LLMHandle, ScopeHandle, ToolHandle
from wayline.relay.atif.exporter import REFRESH_INTERVAL
from wayline.relay.atif.files import SubagentMode
from wayline.relay.atif.model import AGENT_METADATA_KEY
from wayline.relay.jsonfmt import read_only

if TYPE_CHECKING:
    from wayline.plugins.observability.hookqueue import HookQueue
    from wayline.plugins.observability.relay.handlers import EventRoute

COST_FACTOR = 20.0
"""A session's next live snapshot waits at least this many times what its last one took, so
rewriting a long session's file whole never takes more than about 5% of the hook thread."""


log = logging.getLogger("wayline.plugins.relay")


@dataclass(slots=True)
class Session:
    """One open session scope and its trajectory exporter."""

    session_id: str
    handle: ScopeHandle
    parent_id: str | None = None
    atif: Any = None
    atif_name: str = ""
    agent: dict[str, Any] = field(default_factory=dict)
    closed: bool = False
    children: list[str] = field(default_factory=list)
    turns: set[str] = field(default_factory=set)
    snapshot_at: float | None = None
    """When the last live snapshot of the ATIF file started (monotonic), and what it cost."""
    snapshot_cost: float = 0.0


class RelayObserver:
    """Turns observer hooks into relay scopes, spans and marks; writes ATIF per session."""

    def __init__(
        self,
        settings: RelaySettings,
        route: EventRoute,
        *,
        later: HookQueue | None = None,
        managed: bool = False,
    ) -> None:
        self.settings = settings
        self.managed = managed
        self.route = route  # where its sessions' ATIF exporters subscribe
        # Live ATIF snapshots run here when the hook thread is idle (None: at once).
        self.later: HookQueue | None = later
        self._lock = threading.RLock()
        self.sessions: dict[str, Session] = {}
        self._pending_children: dict[str, tuple[str, dict[str, Any]]] = {}
        self._llm: dict[tuple[str, str], LLMHandle] = {}
        self._tools: dict[tuple[str, str], ToolHandle] = {}
        # Ids that hooks without a session_id (approvals) are routed by.
        self._turns: dict[str, str] = {}
        # subagent_start facts by child session: subagent_stop does not repeat them.
        self._subagents: dict[str, dict[str, Any]] = {}
        # The arguments each model response asked for, by (session, tool_call_id), until
        # the call starts: a rewritten call's start event records them next to what ran.
        self._asked: dict[tuple[str, str], Any] = {}
        # Prices each llm end's usage.cost_usd (ATIF: metrics.cost_usd); loads with the build.
        self.pricer = Pricer()
        self.pricer.load()

    # -- sessions ---------------------------------------------------------------------
    def session(self, session_id: str, kwargs: dict[str, Any] | None = None) -> Session:
        """The open session ``session_id``; opened now if unseen (resume, hosts without start)."""
        with self._lock:
            found = self.sessions.get(session_id)
            if found is not None:
                return found
            kwargs = kwargs or {}
            parent_id, child_meta = self._pending_children.pop(session_id, (None, {}))
            parent = self.sessions.get(parent_id) if parent_id else None
            meta = {
                **metadata(kwargs),
                **child_meta,
                "session_id": session_id,
                "trajectory_id": session_id,
            }
            if parent is not None:
                meta["nemo_relay_scope_role"] = "subagent"
            model = str(kwargs.get("model") or "")
            agent = self._agent_block(kwargs, model, parent, child_meta)
            meta[AGENT_METADATA_KEY] = agent
            handle = relay.scope.open_detached(
                f"hermes-session-{session_id}",
                relay.ScopeType.Agent,
                handle=parent.handle if parent else None,
                data={"session_id": session_id},
                metadata=meta,
            )
            sess = Session(session_id, handle, parent_id, agent=agent)
            if parent is not None:
                parent.children.append(session_id)
            atif = self.settings.atif
            if atif is not None and (parent is None or atif.subagent_export_mode == "all"):
                # The same agent block the scope declares: `wayline atif convert` of the
                # ATOF then names the agent as this file does.
                sess.atif = relay.AtifExporter(
                    session_id,
                    agent["name"],
                    agent["version"],
                    model_name=agent["model_name"],
                    extra=agent["extra"],
                    infer_tools=True,
                )
                sess.atif_name = f"wayline.relay.atif.{session_id}"
                # Subscribe before the start event would be emitted is impossible (the
                # scope exists now), so feed the exporter the start of its own scope first.
                self.route.add(sess.atif_name, sess.atif.on_event)
                self._replay_start(sess)
            self.sessions[session_id] = sess
            return sess

    def _agent_block(
        self,
        kwargs: dict[str, Any],
        model: str,
        parent: Session | None,
        child_meta: dict[str, Any],
    ) -> dict[str, Any]:
        """The ATIF ``agent`` block of a session: the configured name (a child's suffixed with
        its role), the host's ``agent_version`` when its payload has one, else the plugin's."""
        atif = self.settings.atif
        name = atif.agent_name if atif is not None else DEFAULT_AGENT_NAME
        version = atif.agent_version if atif is not None else wayline_version()
        configured = atif.model_name if atif is not None else "unknown"
        if parent is not None:
            role = child_meta.get("child_role") or "subagent"
            name = f"{parent.agent.get('name') or name}/{role}"
        return {
            "name": name,
            "version": str(kwargs.get("agent_version") or version),
            "model_name": configured if configured != "unknown" else model or "unknown",
            "extra": {
                "source": "wayline",
                "plugin": "observability/relay",
                "pricing": price_table(),  # the table metrics.cost_usd comes from
            },
        }

    def _replay_start(self, sess: Session) -> None:
        h = sess.handle
        event = relay.ScopeEvent(
            "start",
            h.uuid,
            h.parent_uuid,
            h.propagation_root_uuid,
            h.started_ns,
            h.name,
            h.scope_type,
            h._attr_strings,
            None,
            None,
            None,
            h.metadata,
        )
        sess.atif.on_event(event)

    def write_atif(self, sess: Session, *, soon: bool = False) -> None:
        """Write the session's trajectory file(s) atomically (no-op without ATIF).

        ``soon``: a live snapshot of a running session, written when the hook thread is idle,
        a second or more after it is asked for (at least :data:`COST_FACTOR` times what the
        last snapshot took, since the whole file is rewritten): a session that finalizes
        meanwhile (a one-shot) is written once, by its final write.
        """
        if sess.atif is None or self.settings.atif is None:
            return
        key = ("atif", sess.session_id)
        later = self.later
        if not soon:
            if later is not None:
                later.cancel_later(key)
            self._write(sess, final=True)
        elif later is None:
            self._write(sess, final=False)
        else:
            delay = REFRESH_INTERVAL
            if sess.snapshot_at is not None:
                wait = max(REFRESH_INTERVAL, sess.snapshot_cost * COST_FACTOR)
                delay = max(delay, sess.snapshot_at + wait - time.monotonic())
            later.later(key, lambda: self._write(sess, final=False), delay)

    def _write(self, sess: Session, *, final: bool) -> None:
        atif = self.settings.atif
        if atif is None or sess.atif is None or (sess.closed and not final):
            return
        directory = atif.output_directory
        template = atif.filename_template
        subagents: SubagentMode = "all" if atif.subagent_export_mode == "all" else "embedded"
        started = time.monotonic()
        try:
            if final:
                sess.atif.write(directory, filename_template=template, subagents=subagents)
            else:
                sess.atif.snapshot(directory, filename_template=template, subagents=subagents)
        except ValueError as exc:  # a trajectory with no steps yet is not a valid ATIF file
            log.debug("ATIF for %s not written yet: %s", sess.session_id, exc)
        sess.snapshot_at, sess.snapshot_cost = started, time.monotonic() - started

    def close(self, session_id: str, output: dict[str, Any] | None = None) -> None:
        """End a session scope (once), write its ATIF, stop its exporter."""
        with self._lock:
            sess = self.sessions.get(session_id)
            if sess is None or sess.closed:
                return
            sess.closed = True
            for child in list(sess.children):
                self.close(child, {"reason": "parent_closed"})
            self._end_dangling(session_id)
            for turn in sess.turns:
                self._turns.pop(turn, None)
            for key in [k for k in self._asked if k[0] == session_id]:
                del self._asked[key]
        relay.scope.close_detached(sess.handle, output=output)
        self.write_atif(sess)
        if sess.atif is not None:
            self.route.remove(sess.atif_name)

    def _end_dangling(self, session_id: str | None) -> None:
        # Spans the host never ended (crash paths, a host that skips post hooks, a
        # background subagent still running when the process exits) are ended as
        # cancelled so the stream stays balanced: every start has an end.
        for key in [k for k in self._tools if session_id is None or k[0] == session_id]:
            relay.tools.call_end(
                self._tools.pop(key),
                None,
                data={"status": "cancelled"},
                metadata={"status": "cancelled"},
            )
        for key in [k for k in self._llm if session_id is None or k[0] == session_id]:
            relay.llm.call_fail(
                self._llm.pop(key), {"type": "Cancelled", "message": "never completed"}
            )

    def close_all(self) -> None:
        """Close every open session (process exit; hosts that never finalize)."""
        for sid in [s for s, sess in list(self.sessions.items()) if sess.parent_id is None]:
            self.close(sid, {"reason": "shutdown"})
        for sid in list(self.sessions):
            self.close(sid, {"reason": "shutdown"})
        with self._lock:
            # Work that started in an already closed session (a background child whose
            # parent finalized first) is the only thing left open here.
            self._end_dangling(None)
            self._subagents.clear()

    def _remember_turn(self, kw: dict[str, Any]) -> None:
        turn, sid = kw.get("turn_id"), kw.get("session_id")
        if turn and sid:
            with self._lock:
                sess = self.sessions.get(str(sid))
                if sess is not None and not sess.closed:
                    self._turns[str(turn)] = str(sid)
                    sess.turns.add(str(turn))

    def session_of(self, kw: dict[str, Any]) -> str | None:
        """The session a payload belongs to, for hooks that carry no ``session_id``.

        Hermes' approval hooks only name the ``tool_call_id`` and ``turn_id``.
        """
        sid = kw.get("session_id")
        if sid:
            return str(sid)
        call = kw.get("tool_call_id")
        with self._lock:
            if call:
                for owner, open_call in self._tools:
                    if open_call == str(call):
                        return owner
            turn = kw.get("turn_id")
            return self._turns.get(str(turn)) if turn else None

    def mark(
        self, name: str, kwargs: dict[str, Any], data: Any = None, session_id: str | None = None
    ) -> None:
        """Emit a mark on a session's scope."""
        sid = session_id or kwargs.get("session_id")
        handle = self.session(str(sid), kwargs).handle if sid else None
        relay.scope.event(name, handle=handle, data=data, metadata=metadata(kwargs))

    # -- hooks ------------------------------------------------------------------------
    def on_session_start(self, **kw: Any) -> None:
        """Open the session's agent scope (under its parent's for a child)."""
        self.session(kw["session_id"], kw)

    def on_session_end(self, **kw: Any) -> None:
        """Mark the end of a run and refresh the ATIF file."""
        self.mark(
            "hermes.session.end",
            kw,
            data={
                "completed": kw.get("completed"),
                "interrupted": kw.get("interrupted"),
                "reason": kw.get("reason"),
            },
        )
        sess = self.sessions.get(kw["session_id"])
        if sess is not None:
            self.write_atif(sess, soon=True)

    def on_session_finalize(self, **kw: Any) -> None:
        """Close the session scope."""
        self.close(kw["session_id"], sanitize(kw))

    def on_session_reset(self, **kw: Any) -> None:
        """Close the old identity (the new one opens lazily)."""
        old = kw.get("old_session_id")
        if old:
            self.close(old, sanitize(kw))

    def pre_llm_call(self, **kw: Any) -> None:
        """Turn start mark (history is left out: the llm spans carry it)."""
        if kw.get("session_id"):
            self.session(str(kw["session_id"]), kw)
        self._remember_turn(kw)
        self.mark(
            "hermes.turn.start",
            kw,
            data=sanitize(
                {
                    "turn_id": kw.get("turn_id"),
                    "user_message": kw.get("user_message"),
                    "is_first_turn": kw.get("is_first_turn"),
                }
            ),
        )

    def post_llm_call(self, **kw: Any) -> None:
        """Turn end mark with the final answer."""
        self.mark(
            "hermes.turn.end",
            kw,
            data=sanitize(
                {"turn_id": kw.get("turn_id"), "assistant_response": kw.get("assistant_response")}
            ),
        )

    def _llm_key(self, kw: dict[str, Any]) -> tuple[str, str]:
        return str(kw.get("session_id")), str(kw.get("api_request_id") or kw.get("api_call_count"))

    def pre_api_request(self, **kw: Any) -> None:
        """Start an llm span keyed by (session, api_request_id)."""
        if self.managed:
            return
        sess = self.session(kw["session_id"], kw)
        self._remember_turn(kw)
        key = self._llm_key(kw)
        with self._lock:
            superseded = self._llm.pop(key, None)
        if superseded is not None:
            # Hermes retries an attempt under the same api_request_id; when no
            # api_request_error ended the earlier attempt, end it here rather than lose it.
            relay.llm.call_fail(
                superseded,
                {"type": "Superseded", "message": "retried under the same api_request_id"},
                metadata=metadata(kw),
            )
        span = relay.llm.call(
            str(kw.get("provider") or "llm"),
            relay.LLMRequest({}, read_only(request_body(kw))),
            handle=sess.handle,
            data={"turn_id": kw.get("turn_id"), "api_request_id": kw.get("api_request_id")},
            metadata=start_metadata(kw),
            model_name=kw.get("model"),
            timestamp=payload_time(kw.get("started_at")),
        )
        with self._lock:
            self._llm[key] = span

    def post_api_request(self, **kw: Any) -> None:
        """End the llm span with the (sanitized) response."""
        if self.managed:
            return
        with self._lock:
            span = self._llm.pop(self._llm_key(kw), None)
        asked = model_arguments(kw.get("response"))
        if asked:
            sid = str(kw.get("session_id"))
            with self._lock:
                for call, args in asked.items():
                    self._asked[sid, call] = args
        if span is None:
            self.mark("hermes.api.response.unmatched", kw, data=kw.get("response"))
            return
        output = with_cost(llm_output(kw.get("response")), self.pricer.hook_cost(kw))
        relay.llm.call_end(
            span,
            read_only(output),
            metadata=metadata(kw),
            timestamp=payload_time(kw.get("ended_at")),
        )

    def api_request_error(self, **kw: Any) -> None:
        """End the llm span as failed (error metadata), or mark an unmatched error."""
        if self.managed:
            return
        with self._lock:
            span = self._llm.pop(self._llm_key(kw), None)
        error = dict(kw.get("error") or {"type": "error", "message": str(kw.get("reason"))})
        extra = {
            "status_code": kw.get("status_code"),
            "retry_count": kw.get("retry_count"),
            "retryable": kw.get("retryable"),
            "reason": kw.get("reason"),
        }
        if span is None:
            self.mark("hermes.api.error", kw, data={"error": error, **extra})
            return
        relay.llm.call_fail(
            span,
            {**error, **extra},
            metadata=metadata(kw),
            timestamp=payload_time(kw.get("ended_at")),
        )

    def _tool_key(self, kw: dict[str, Any]) -> tuple[str, str]:
        return str(kw.get("session_id")), str(kw.get("tool_call_id"))

    def pre_tool_call(self, **kw: Any) -> None:
        """Start a tool span keyed by (session, tool_call_id); a repeated start is ignored."""
        if self.managed:
            return
        sess = self.session(kw["session_id"], kw)
        self._remember_turn(kw)
        key = self._tool_key(kw)
        with self._lock:
            if key in self._tools and kw.get("tool_call_id"):
                return
            asked = self._asked.pop(key, None)
        meta = start_metadata(kw)
        if "middleware_trace" in meta and asked is not None:
            # What the model asked for, next to what runs (the event's data).
            meta["original_arguments"] = sanitize(asked)
        span = relay.tools.call(
            str(kw.get("tool_name")),
            read_only(sanitize(kw.get("args"))),
            handle=sess.handle,
            data={"turn_id": kw.get("turn_id"), "api_request_id": kw.get("api_request_id")},
            metadata=meta,
            tool_call_id=kw.get("tool_call_id"),
        )
        with self._lock:
            self._tools[key] = span

    def post_tool_call(self, **kw: Any) -> None:
        """End the tool span with the (sanitized) result and its status."""
        if self.managed:
            return
        with self._lock:
            span = self._tools.pop(self._tool_key(kw), None)
        result = sanitize(kw.get("result"))
        if span is None:
            self.mark("hermes.tool.response.unmatched", kw, data=result)
            return
        relay.tools.call_end(span, relay.ToolExecutionResult(result), metadata=metadata(kw))

    def _approval(self, name: str, kw: dict[str, Any]) -> None:
        sid = self.session_of(kw)
        routed = {**kw, "session_id": sid} if sid else kw
        self.mark(name, routed, data=sanitize(kw), session_id=sid)

    def pre_approval_request(self, **kw: Any) -> None:
        """Approval request mark on the session that owns the tool call."""
        self._approval("hermes.approval.request", kw)

    def post_approval_response(self, **kw: Any) -> None:
        """Approval response mark (with the choice) on the session that owns the tool call."""
        self._approval("hermes.approval.response", kw)

    def _delegating_call(self, parent: str) -> str | None:
        # The tool call that is spawning the child: the parent's only open delegate_task
        # (or only open tool). Hermes does not name it in subagent_start.
        open_calls = [(call, h.name) for (owner, call), h in self._tools.items() if owner == parent]
        delegates = [call for call, name in open_calls if name == "delegate_task"]
        if len(delegates) == 1:
            return delegates[0]
        return open_calls[0][0] if len(open_calls) == 1 else None

    def subagent_start(self, **kw: Any) -> None:
        """Remember the child's parent, then mark the start on the parent's scope."""
        child = kw.get("child_session_id")
        parent = kw.get("parent_session_id")
        if child and parent:
            with self._lock:
                facts = {
                    k: kw[k]
                    for k in ("child_subagent_id", "parent_subagent_id", "child_role")
                    if kw.get(k) is not None
                }
                call = kw.get("parent_tool_call_id") or self._delegating_call(str(parent))
                if call:
                    facts["parent_tool_call_id"] = call
                self._subagents[str(child)] = facts
                self._pending_children[str(child)] = (
                    str(parent),
                    {k: v for k, v in metadata({**kw, **facts}).items() if k != "session_id"}
                    | {"subagent_id": kw.get("child_subagent_id")},
                )
        relay.scope.event(
            "hermes.subagent.start",
            handle=self.session(str(parent), kw).handle if parent else None,
            data=sanitize(kw),
            metadata=metadata({**kw, "session_id": child}),
        )

    def subagent_stop(self, **kw: Any) -> None:
        """Mark the stop on the parent's scope and close the child if its host did not.

        Hermes' payload has no ``child_subagent_id``; it is restored from ``subagent_start``.
        """
        child = str(kw.get("child_session_id") or "")
        with self._lock:
            facts = self._subagents.pop(child, {})
        full = {**facts, **{k: v for k, v in kw.items() if v is not None}}
        if full.get("child_subagent_id") is not None:
            full.setdefault("subagent_id", full["child_subagent_id"])
        parent = kw.get("parent_session_id")
        relay.scope.event(
            "hermes.subagent.stop",
            handle=self.session(str(parent), kw).handle if parent else None,
            data=sanitize(full),
            metadata={**metadata({**full, "session_id": child}), **_subagent_extra(full)},
        )
        if child:
            self.close(child, {"reason": "subagent_stop", "child_status": kw.get("child_status")})


def _subagent_extra(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: kw[k] for k in ("subagent_id", "duration_ms") if kw.get(k) is not None}
