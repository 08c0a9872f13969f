"""Recorded sessions (ATOF events, ATIF trajectories) turned back into the hook calls they
were recorded from, so ``wayline export otlp`` maps them with the live plugin's own observer.

Each item is ``(hook name, payload, epoch ns)``: the payload holds the fields the record
keeps, under the names the hook used, and the time is when the hook fired (the event's
timestamp). Fields a record does not keep are left out, or derived where the record holds
their parts (an attempt's duration from its start and end events).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from wayline.relay.timefmt import parse_timestamp_ns

__all__ = ["HookCall", "answer_counts", "atif_hooks", "atof_hooks", "response_and_usage"]

HookCall = tuple[str, dict[str, Any], int]

# Metadata keys that are relay's or the exporter's own, not the hook payload's.
_NOT_HOOK_KEYS = frozenset(
    {
        "trajectory_id",
        "parent_trajectory_id",
        "child_trajectory_id",
        "otel.status_code",
        "otel.status_description",
        "nemo_relay_scope_role",
        "subagent_id",
        "original_arguments",
    }
)
_MARK_HOOKS = {
    "hermes.subagent.start": "subagent_start",
    "hermes.subagent.stop": "subagent_stop",
    "hermes.approval.request": "pre_approval_request",
    "hermes.approval.response": "post_approval_response",
}


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _base(event: Mapping[str, Any]) -> dict[str, Any]:
    meta = _dict(event.get("metadata"))
    return {k: v for k, v in meta.items() if k not in _NOT_HOOK_KEYS and not k.startswith("_")}


def response_and_usage(data: Any) -> tuple[Any, Any]:
    """The hook's ``response`` and ``usage`` back from an llm end's data: without the two
    top-level keys the relay plugin adds for ATOF readers, and without the cost it adds."""
    if not isinstance(data, Mapping):
        return data, None
    response = dict(data)
    if isinstance(response.get("assistant_message"), Mapping):
        response.pop("content", None)
        response.pop("tool_calls", None)
    usage = response.get("usage")
    if isinstance(usage, Mapping) and "cost_usd" in usage:
        usage = {k: v for k, v in usage.items() if k != "cost_usd"}
        response["usage"] = usage
    return response, usage


def answer_counts(response: Any) -> dict[str, int]:
    """``assistant_content_chars`` and ``assistant_tool_call_count`` of a hook response."""
    message = response.get("assistant_message") if isinstance(response, Mapping) else None
    if not isinstance(message, Mapping):
        return {}
    content = message.get("content")
    calls = message.get("tool_calls")
    return {
        "assistant_content_chars": len(content) if isinstance(content, str) else 0,
        "assistant_tool_call_count": len(calls) if isinstance(calls, list) else 0,
    }


class _AtofHooks:
    """The state the ATOF mapping needs: when each open llm and tool span started."""

    def __init__(self) -> None:
        self.started: dict[str, int] = {}
        self.attempts: dict[str, int] = {}  # per turn: the api_call_count of the next attempt

    def scope(self, event: Mapping[str, Any], ns: int) -> Iterator[HookCall]:
        category = event.get("category")
        start = event.get("scope_category") == "start"
        uuid = str(event.get("uuid") or "")
        base = _base(event)
        data = event.get("data")
        if category == "agent":
            sid = base.get("session_id") or _dict(data).get("session_id")
            if not isinstance(sid, str):
                return
            if start:
                yield "on_session_start", {**base, "session_id": sid}, ns
            else:
                yield "on_session_finalize", {**_dict(data), "session_id": sid}, ns
        elif category == "llm":
            yield from self._llm(event, base, data, start, uuid, ns)
        elif category == "tool":
            profile = _dict(event.get("category_profile"))
            call_id = profile.get("tool_call_id") or base.get("tool_call_id")
            payload = {**base, "tool_name": event.get("name"), "tool_call_id": call_id}
            if start:
                self.started[uuid] = ns
                yield "pre_tool_call", {**payload, "args": data}, ns
            else:
                began = self.started.pop(uuid, None)
                if began is not None:
                    payload["duration_ms"] = (ns - began) // 1_000_000
                yield "post_tool_call", {**payload, "result": data}, ns

    def _llm(
        self,
        event: Mapping[str, Any],
        base: dict[str, Any],
        data: Any,
        start: bool,
        uuid: str,
        ns: int,
    ) -> Iterator[HookCall]:
        if start:
            self.started[uuid] = ns
            body = _dict(data).get("content")
            payload = {**base, "started_at": ns / 1e9}
            turn = str(base.get("turn_id") or "")
            self.attempts[turn] = payload["api_call_count"] = self.attempts.get(turn, 0) + 1
            if isinstance(body, Mapping):
                payload["request"] = {"body": dict(body)}
                for key, field in (("messages", "message_count"), ("tools", "tool_count")):
                    if isinstance(body.get(key), list):
                        payload[field] = len(body[key])
            yield "pre_api_request", payload, ns
            return
        began = self.started.pop(uuid, None)
        timing: dict[str, Any] = {"ended_at": ns / 1e9}
        if began is not None:
            timing["started_at"] = began / 1e9
            timing["api_duration"] = (ns - began) / 1e9
        meta = _dict(event.get("metadata"))
        if meta.get("otel.status_code") == "ERROR":
            # wayline's relay plugin records the hook's error under "error"; other writers may
            # put its fields at the top.
            failure = _dict(_dict(data).get("error")) or _dict(data)
            error = {k: failure[k] for k in ("type", "message") if k in failure}
            extra = {
                k: failure[k]
                for k in ("status_code", "retry_count", "retryable", "reason")
                if failure.get(k) is not None
            }
            yield "api_request_error", {**base, **timing, **extra, "error": error}, ns
            return
        response, usage = response_and_usage(data)
        payload = {**base, **timing, "response": response, "usage": usage}
        if isinstance(response, Mapping):
            if response.get("finish_reason") is not None:
                payload["finish_reason"] = response["finish_reason"]
            if response.get("model") is not None:
                payload["response_model"] = response["model"]
            payload.update(answer_counts(response))
        yield "post_api_request", payload, ns

    def mark(self, event: Mapping[str, Any], ns: int) -> Iterator[HookCall]:
        name = event.get("name")
        base = _base(event)
        data = _dict(event.get("data"))
        if name == "hermes.turn.start":
            yield "pre_llm_call", {**base, **data}, ns
        elif name == "hermes.turn.end":
            yield "post_llm_call", {**base, **data}, ns
        elif name == "hermes.session.end":
            yield "on_session_end", {**base, **data}, ns
        elif name == "hermes.api.error":
            error = _dict(data.get("error"))
            extra = {k: v for k, v in data.items() if k != "error" and v is not None}
            yield "api_request_error", {**base, **extra, "error": error}, ns
        elif isinstance(name, str) and name in _MARK_HOOKS:
            yield _MARK_HOOKS[name], data, ns


def atof_hooks(events: Iterable[Mapping[str, Any]]) -> Iterator[HookCall]:
    """The hook calls a stream of ATOF events (in file order) was recorded from.

    Raises ``ValueError`` for an event whose timestamp cannot be read.
    """
    state = _AtofHooks()
    for event in events:
        ns = parse_timestamp_ns(event.get("timestamp"))
        if event.get("kind") == "scope":
            yield from state.scope(event, ns)
        elif event.get("kind") == "mark":
            yield from state.mark(event, ns)


def atif_hooks(document: Mapping[str, Any]) -> Iterator[HookCall]:
    """The hook calls an ATIF trajectory (with its embedded subagents) stands for.

    An ATIF file keeps less than ATOF: turn ids are the user steps' positions, attempt ids
    the agent steps', and a call's times come from the step's recorded invocation.
    """
    from wayline.trajectory.otlp.recorded_atif import trajectory_hooks

    yield from trajectory_hooks(document)
