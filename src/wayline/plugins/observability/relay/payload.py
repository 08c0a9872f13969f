"""Hook payload → relay event fields: correlation metadata, the middleware trace, the model's
arguments, a model call's own times and its request body.

OBSERVER helpers, pure functions of one payload: nothing here raises for odd payloads.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from wayline.redaction.sanitize import TRUNCATED_ITEMS_KEY, sanitize

__all__ = [
    "llm_output",
    "metadata",
    "model_arguments",
    "payload_time",
    "request_body",
    "start_metadata",
]

_META_KEYS = (
    "telemetry_schema_version",
    "session_id",
    "platform",
    "task_id",
    "turn_id",
    "api_request_id",
    "tool_call_id",
    "parent_session_id",
    "parent_turn_id",
    "parent_subagent_id",
    "parent_tool_call_id",
    "child_session_id",
    "child_subagent_id",
    "child_role",
    "child_status",
    "provider",
    "model",
    "api_mode",
    "status",
    "reason",
)


def llm_output(response: Any) -> Any:
    """The llm end event's data: Hermes' response shape plus top-level ``content``/``tool_calls``.

    ``assistant_message`` keeps Hermes' Relay plugin's shape; the two top-level keys are what ATOF
    consumers such as NAT's ATOF→ATIF converter read from an OpenAI-style output.
    """
    if not isinstance(response, dict):
        return response
    message = response.get("assistant_message")
    if not isinstance(message, dict):
        return response
    out = dict(response)
    out["content"] = message.get("content")
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    return out


def start_metadata(kwargs: dict[str, Any]) -> dict[str, Any]:
    """:func:`metadata` of a tool/llm start, plus the payload's ``middleware_trace`` (who
    rewrote the request or arguments, and why) when a middleware left one."""
    meta = metadata(kwargs)
    trace = kwargs.get("middleware_trace")
    if isinstance(trace, list) and trace:
        meta["middleware_trace"] = sanitize(trace)
        original = kwargs.get("original_request_fields")
        if isinstance(original, dict):  # an llm start: the request fields before the rewrite
            meta["original_request_fields"] = sanitize(original)
    return meta


def payload_time(epoch_s: Any) -> datetime | None:
    """A payload's ``started_at``/``ended_at`` (epoch seconds) as an event time: a model
    call's span covers the call itself, as the OTel span does, not the hooks around it."""
    if isinstance(epoch_s, int | float) and not isinstance(epoch_s, bool) and epoch_s > 0:
        try:
            return datetime.fromtimestamp(epoch_s, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def model_arguments(response: Any) -> dict[str, Any]:
    """The arguments a model response asked for, by tool call id, parsed when JSON text.

    ``assistant_message.tool_calls`` entries are ``{id, name, arguments}`` (wayline) or
    OpenAI's ``{id, function: {name, arguments}}`` (Hermes)."""
    message = response.get("assistant_message") if isinstance(response, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    found: dict[str, Any] = {}
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict) or not call.get("id"):
            continue
        function = call.get("function", call)
        if not isinstance(function, dict):
            continue
        raw = function.get("arguments")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except (ValueError, RecursionError):
                pass  # not JSON, or nested past the parser: the text is what the model sent
        found[str(call["id"])] = raw
    return found


def metadata(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Correlation metadata of a hook payload, plus derived trajectory ids."""
    meta = {k: kwargs[k] for k in _META_KEYS if kwargs.get(k) is not None}
    if "session_id" in meta:
        meta["trajectory_id"] = meta["session_id"]
    if "parent_session_id" in meta:
        meta["parent_trajectory_id"] = meta["parent_session_id"]
    if "child_session_id" in meta:
        meta["child_trajectory_id"] = meta["child_session_id"]
    return meta


# Trailing raw messages kept when the host's sanitized request lost its tail.
_TAIL_MESSAGES = 20


def _cut(items: Any) -> bool:
    """True when a message list is missing, empty or ends in the sanitizer's cut marker."""
    if not isinstance(items, list) or not items:
        return True
    last = items[-1]
    return not isinstance(last, dict) or TRUNCATED_ITEMS_KEY in last


def request_body(kw: dict[str, Any]) -> Any:
    """The provider request body of a ``pre_api_request`` payload, with its latest messages.

    The sanitized ``request`` (``{"method", "body"}`` in Hermes) drops the tail of a long
    conversation, or is replaced by a ``{"_truncated": True, ...}`` preview, once it passes
    the payload limit; the ATIF user step needs the last message. Then the raw
    ``request_messages`` are used: as many trailing messages as fit, behind a marker
    counting the ones left out. They are sanitized afresh each call: a host may rewrite its
    history in place (Hermes compresses context), so no earlier result is reused.
    """
    request = kw.get("request")
    body = request.get("body", request) if isinstance(request, dict) else request
    if (
        isinstance(body, dict)
        and not body.get("_truncated")
        and (
            not _cut(body.get("messages"))
            or not _cut(body.get("input"))
            or (isinstance(body.get("input"), str) and body["input"])
        )
    ):
        return body
    raw = kw.get("request_messages")
    if not isinstance(raw, list) or not raw:
        return body
    kept = sanitize(list(raw[-_TAIL_MESSAGES:]))
    if _cut(kept):
        kept = [sanitize(raw[-1])]
    omitted = len(raw) - len(kept)
    rebuilt = {
        k: v for k, v in (body if isinstance(body, dict) else {}).items() if k != "_truncated"
    }
    rebuilt.pop("preview", None)
    rebuilt.pop("original_type", None)
    rebuilt.setdefault("model", kw.get("model"))
    rebuilt["messages"] = ([{TRUNCATED_ITEMS_KEY: omitted}] if omitted else []) + kept
    return rebuilt
