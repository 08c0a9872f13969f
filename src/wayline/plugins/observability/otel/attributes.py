"""Hook payload → span attributes: every value through the shared sanitizer, sizes bounded.

Short identifiers (ids, model and tool names) are redacted and clipped; free text
(messages, arguments, results, commands) is redacted and clipped to the content cap (always
redacted before it is cut, and cut where no part of a secret is left: see ``redact_clip``), and
structured values go through ``wayline.redaction.sanitize.sanitize`` before they are encoded
as JSON (``json.dumps``). Nothing is cached: each value is cleaned as the hook reports it.
Content is only ever set when ``capture_content`` is on (it is never set-then-removed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from wayline.contract.semconv import SESSION_KEYS, TOKEN_KEYS
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.redaction.sanitize import MIN_PAYLOAD_MAX_CHARS, REDACTED, redact_text, sanitize

__all__ = [
    "FAILED_SUBAGENT",
    "GRANTED",
    "LABEL_MAX",
    "SUMMARY_MAX",
    "Attrs",
    "Cleaner",
    "api_end_attrs",
    "api_error_attrs",
    "api_start_attrs",
    "approval_start_attrs",
    "error_status_class",
    "llm_attrs",
    "model_attrs",
    "redact_clip",
    "root_attrs",
    "session_attrs",
    "subagent_start_attrs",
    "subagent_stop_attrs",
    "tool_end_attrs",
    "tool_start_attrs",
    "tool_target",
    "usage_counts",
]

Attrs = dict[str, str | bool | int | float | list[str]]

_ID_MAX = 200
LABEL_MAX = 120
SUMMARY_MAX = 500
_TARGET_KEYS = ("path", "file_path", "target", "url", "uri")
_COMMAND_KEYS = ("command", "cmd")

# Clipping. Text is redacted before it is cut, over a window past the limit (a cost bound).
# The window ends after a whole word (a word longer than _WORD_REACH is left out whole, and
# nothing after it is kept), and what is kept came from at least _REDACT_WINDOW characters
# before the window's end, so a secret's context past the cut was seen: when redaction shrank
# the text (secrets replaced by the marker), text from near the window's edge would otherwise
# move below the limit. The window doubles up to _WIDEN times to keep the limit's worth of
# text; after that, less is kept.
_REDACT_WINDOW = 1024
_WORD_REACH = 65_536
_WIDEN = 3
# A cut inside a run of non-space characters shorter than this drops the run (a token is
# kept whole or not at all); a longer run is data, and is cut at the limit.
_TOKEN_REACH = 256
_RUN_BREAKS = frozenset(" \t\r\n\"'`,;()[]{}")
_SPACE = re.compile(r"\s")


def _cut(text: str, limit: int) -> int:
    """Where to cut ``text`` to keep at most ``limit`` characters: ``limit``, or the start of
    the marker or of the short token the cut would split."""
    if limit >= len(text):
        return len(text)
    marker = text.rfind("<", max(0, limit - len(REDACTED) + 1), limit)
    if marker >= 0 and text.startswith(REDACTED, marker):
        return marker
    if text[limit] in _RUN_BREAKS or text[limit - 1 : limit] in _RUN_BREAKS | {""}:
        return limit
    start = limit - 1
    while start > 0 and text[start - 1] not in _RUN_BREAKS:
        start -= 1
        if limit - start > _TOKEN_REACH:
            return limit
    return start


def _word_end(text: str, end: int) -> int:
    """Where a window over ``text[:end]`` may end: after a whole word."""
    if end >= len(text) or text[end - 1].isspace() or text[end].isspace():
        return min(end, len(text))
    after = _SPACE.search(text, end, end + _WORD_REACH)
    if after is not None:
        return after.start()
    if len(text) <= end + _WORD_REACH:
        return len(text)  # the last word ends the text
    before = max(text.rfind(c, 0, end) for c in " \t\r\n")
    return before + 1  # 0 when the whole window is one word


def _clip(text: str, limit: int, dropped: int = 0) -> str:
    """``text`` cut to at most ``limit`` characters with an explicit marker; the cut never
    splits a ``<redacted>`` marker or a short token (see :func:`_cut`).

    ``dropped`` counts characters already cut before ``text`` was redacted.
    """
    if len(text) <= limit and not dropped:
        return text
    cut = _cut(text, limit)
    return f"{text[:cut]}...[truncated {len(text) - cut + dropped} chars]"


def redact_clip(text: str, limit: int) -> str:
    """Redact ``text`` and clip it, leaving no part of a secret at the cut (see above)."""
    end = limit + _REDACT_WINDOW
    if len(text) <= end:
        return _clip(redact_text(text), limit)
    for _ in range(_WIDEN + 1):
        stop = _word_end(text, end)
        red = redact_text(text[:stop])
        if stop >= len(text):
            return _clip(red, limit)
        if stop < end:  # a word too long to redact whole follows: it is the edge, unseen
            margin = 0
            break
        margin = _REDACT_WINDOW
        if len(red) >= limit + margin:
            break
        end *= 2
    cut = _cut(red, min(limit, max(0, len(red) - margin)))
    return f"{red[:cut]}...[truncated {len(red) - cut + len(text) - stop} chars]"


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _middleware_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """What request middleware changed before a call ran: its trace (who and why, as JSON)
    and the sources, when the payload carries a non-empty ``middleware_trace``."""
    trace = kw.get("middleware_trace")
    if not isinstance(trace, list) or not trace:
        return {}
    sources = [
        c.ident(entry.get("source") or "unknown", LABEL_MAX)
        for entry in trace
        if isinstance(entry, Mapping)
    ]
    # Keys sorted, as the ATOF and ATIF records keep them: every record of the call agrees.
    ordered = [dict(sorted(e.items())) if isinstance(e, Mapping) else e for e in trace]
    return {
        "wayline.middleware.trace": c.json(ordered, SUMMARY_MAX * 4),
        "wayline.middleware.sources": sources,
    }


class Cleaner:
    """Turns arbitrary hook values into safe, bounded attribute values."""

    def __init__(self, settings: OtelSettings) -> None:
        self.content = settings.capture_content
        self.content_max = settings.content_max_chars
        self.history = settings.capture_conversation_history
        self.history_max = settings.history_max_chars

    def ident(self, value: Any, limit: int = _ID_MAX) -> str:
        """A short identifier or label: redacted and clipped."""
        return redact_clip(value if isinstance(value, str) else str(value), limit)

    def text(self, value: Any, limit: int | None = None) -> str:
        """Free text (or a structure, JSON-encoded): redacted and clipped."""
        limit = self.content_max if limit is None else limit
        if isinstance(value, str):
            return redact_clip(value, limit)
        return self.json(value, limit)

    def json(self, value: Any, limit: int) -> str:
        """A structure sanitized (keys, secrets, depth) then JSON-encoded and clipped."""
        safe = sanitize(value, max_chars=max(limit, MIN_PAYLOAD_MAX_CHARS))
        return _clip(_compact_json(safe), limit)


def _num(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def session_attrs(c: Cleaner, kw: Mapping[str, Any], session_id: str | None) -> Attrs:
    """Correlation attributes every span of a session carries."""
    attrs: Attrs = {}
    if session_id:
        sid = c.ident(session_id)
        for key in SESSION_KEYS:
            attrs[key] = sid
    turn_id = kw.get("turn_id")
    if turn_id:
        attrs["hermes.turn_id"] = c.ident(turn_id)
    return attrs


def model_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """Model and provider in both conventions."""
    attrs: Attrs = {}
    model = kw.get("model")
    if model:
        attrs["llm.model_name"] = attrs["gen_ai.request.model"] = c.ident(model)
    provider = kw.get("provider")
    if provider:
        attrs["llm.provider"] = attrs["gen_ai.provider.name"] = c.ident(provider, LABEL_MAX)
    return attrs


def _server_attrs(c: Cleaner, base_url: Any) -> Attrs:
    """``server.address`` / ``server.port`` from the provider's base URL (no userinfo)."""
    if not isinstance(base_url, str) or not base_url:
        return {}
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return {}
    attrs: Attrs = {}
    if parts.hostname:
        attrs["server.address"] = c.ident(parts.hostname, LABEL_MAX)
    if port:
        attrs["server.port"] = port
    return attrs


def root_attrs(
    c: Cleaner, kw: Mapping[str, Any], kind: str, agent_name: str, session_id: str
) -> Attrs:
    """Start attributes of a turn's root span (``agent`` or ``cron``)."""
    attrs = session_attrs(c, kw, session_id)
    attrs.update(model_attrs(c, kw))
    attrs.update(
        {
            "openinference.span.kind": "AGENT",
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": c.ident(agent_name, LABEL_MAX),
            "hermes.session.kind": kind,
        }
    )
    platform = kw.get("platform")
    if platform:
        attrs["hermes.platform"] = c.ident(platform, LABEL_MAX)
    for src, dst in (("job_id", "hermes.cron.job_id"), ("cron_job_id", "hermes.cron.job_id")):
        if kw.get(src):
            attrs[dst] = c.ident(kw[src])
    return attrs


def llm_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """Start attributes of ``llm.{model}``: the user message, or the whole history if asked."""
    attrs = session_attrs(c, kw, kw.get("session_id"))
    attrs.update(model_attrs(c, kw))
    attrs["openinference.span.kind"] = "LLM"
    attrs["gen_ai.operation.name"] = "chat"
    history = kw.get("conversation_history")
    if c.history and isinstance(history, list):
        messages = [*history, {"role": "user", "content": kw.get("user_message")}]
        attrs["input.value"] = c.json(messages, c.history_max)
        attrs["input.mime_type"] = "application/json"
        attrs["hermes.conversation.message_count"] = len(messages)
    elif c.content and kw.get("user_message") is not None:
        attrs["input.value"] = c.text(kw.get("user_message"))
        attrs["input.mime_type"] = "text/plain"
    return attrs


_NOT_PARAMS = ("messages", "tools", "input")


def api_start_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """Start attributes of ``api.{model}``: one provider attempt."""
    attrs = session_attrs(c, kw, kw.get("session_id"))
    attrs.update(model_attrs(c, kw))
    attrs.update(_server_attrs(c, kw.get("base_url")))
    attrs["openinference.span.kind"] = "LLM"
    attrs["gen_ai.operation.name"] = "chat"
    for src, dst in (
        ("api_call_count", "hermes.api_call_count"),
        ("message_count", "llm.request.message_count"),
        ("tool_count", "llm.request.tool_count"),
        ("approx_input_tokens", "llm.request.approx_input_tokens"),
        ("max_tokens", "gen_ai.request.max_tokens"),
    ):
        n = _num(kw.get(src))
        if n is not None:
            attrs[dst] = n
    if kw.get("api_mode"):
        attrs["llm.api_mode"] = c.ident(kw["api_mode"], LABEL_MAX)
    if kw.get("api_request_id"):
        attrs["hermes.api_request_id"] = c.ident(kw["api_request_id"])
    request = kw.get("request")
    body = request.get("body") if isinstance(request, Mapping) else None
    if isinstance(body, Mapping):
        params = {k: v for k, v in body.items() if k not in _NOT_PARAMS}
        if params:
            attrs["llm.invocation_parameters"] = c.json(params, 2000)
        for key in ("temperature", "top_p"):
            value = body.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                attrs[f"gen_ai.request.{key}"] = float(value)
        if c.history and body.get("messages") is not None:
            attrs["input.value"] = c.json(body.get("messages"), c.history_max)
            attrs["input.mime_type"] = "application/json"
    attrs.update(_middleware_attrs(c, kw))
    return attrs


def usage_counts(usage: Any) -> dict[str, int]:
    """Token counts by wayline key (``input_tokens``, …) from a usage dict of either naming."""
    if not isinstance(usage, Mapping):
        return {}
    out: dict[str, int] = {}
    for key, *_ in TOKEN_KEYS:
        n = _num(usage.get(key))
        if n is not None:
            out[key] = n
    if "input_tokens" not in out and _num(usage.get("prompt_tokens")) is not None:
        out["input_tokens"] = int(usage["prompt_tokens"])
    if "output_tokens" not in out and _num(usage.get("completion_tokens")) is not None:
        out["output_tokens"] = int(usage["completion_tokens"])
    if "total_tokens" not in out and ("input_tokens" in out or "output_tokens" in out):
        out["total_tokens"] = out.get("input_tokens", 0) + out.get("output_tokens", 0)
    return out


def api_end_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """End attributes of a successful attempt: usage (both conventions), finish, timing."""
    attrs: Attrs = {}
    usage = usage_counts(kw.get("usage"))
    for key, oi, genai in TOKEN_KEYS:
        n = usage.get(key)
        if n is not None:
            attrs[oi] = attrs[genai] = n
    finish = kw.get("finish_reason")
    if finish:
        attrs["llm.response.finish_reason"] = c.ident(finish, LABEL_MAX)
        attrs["gen_ai.response.finish_reasons"] = [c.ident(finish, LABEL_MAX)]
    if kw.get("response_model"):
        attrs["gen_ai.response.model"] = c.ident(kw["response_model"])
    duration = kw.get("api_duration")
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        attrs["llm.response.duration_ms"] = attrs["http.duration_ms"] = int(duration * 1000)
    for src, dst in (
        ("assistant_tool_call_count", "llm.response.tool_calls"),
        ("assistant_content_chars", "llm.response.output_chars"),
    ):
        n = _num(kw.get(src))
        if n is not None:
            attrs[dst] = n
    response = kw.get("response")
    message = response.get("assistant_message") if isinstance(response, Mapping) else None
    if c.content and isinstance(message, Mapping):
        if message.get("tool_calls"):
            attrs["output.value"] = c.json(message, c.content_max)
            attrs["output.mime_type"] = "application/json"
        elif message.get("content") is not None:
            attrs["output.value"] = c.text(message.get("content"))
            attrs["output.mime_type"] = "text/plain"
    return attrs


def tool_target(args: Any) -> tuple[str | None, str | None]:
    """The file/URL a tool call acts on and the command it runs, from its arguments."""
    if not isinstance(args, Mapping):
        return None, None
    target = next((args[k] for k in _TARGET_KEYS if isinstance(args.get(k), str)), None)
    command = next((args[k] for k in _COMMAND_KEYS if isinstance(args.get(k), str)), None)
    return target, command


def tool_start_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """Start attributes of ``tool.{name}``."""
    attrs = session_attrs(c, kw, kw.get("session_id"))
    name = c.ident(kw.get("tool_name") or "unknown", LABEL_MAX)
    attrs.update(
        {
            "openinference.span.kind": "TOOL",
            "gen_ai.operation.name": "execute_tool",
            "tool.name": name,
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
        }
    )
    if kw.get("tool_call_id"):
        attrs["gen_ai.tool.call.id"] = attrs["tool.id"] = c.ident(kw["tool_call_id"])
    target, command = tool_target(kw.get("args"))
    if target:
        attrs["hermes.tool.target"] = c.text(target, SUMMARY_MAX)
    rewritten = _middleware_attrs(c, kw)
    attrs.update(rewritten)
    if c.content:
        if command:
            attrs["hermes.tool.command"] = c.text(command, SUMMARY_MAX)
        if kw.get("args") is not None:
            args = c.json(kw.get("args"), c.content_max)
            attrs["input.value"] = attrs["gen_ai.tool.call.arguments"] = args
            attrs["input.mime_type"] = "application/json"
            if rewritten:  # the arguments that ran, named as such next to the trace
                attrs["wayline.middleware.executed_arguments"] = args
    return attrs


_TOOL_OUTCOMES = {"ok": "completed", **{k: k for k in ("error", "blocked", "timeout", "cancelled")}}


def tool_end_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """End attributes of ``tool.{name}``: outcome, error, result."""
    status = kw.get("status")
    # hermes.tool.outcome: unknown statuses count as completed
    outcome = _TOOL_OUTCOMES.get(status, "completed") if isinstance(status, str) else "completed"
    attrs: Attrs = {"hermes.tool.outcome": outcome}
    duration = _num(kw.get("duration_ms"))
    if duration is not None:
        attrs["hermes.tool.duration_ms"] = duration
    if outcome == "error":
        attrs["error.type"] = c.ident(kw.get("error_type") or "tool_error", LABEL_MAX)
    if kw.get("error_message"):
        attrs["error.message"] = c.text(kw["error_message"], SUMMARY_MAX)
    if c.content and kw.get("result") is not None:
        result = c.text(kw.get("result"))
        attrs["output.value"] = attrs["gen_ai.tool.call.result"] = result
    return attrs


def error_status_class(status_code: Any) -> str:
    """``5xx`` / ``4xx`` / ``none``: a bounded label for API error metrics."""
    n = _num(status_code)
    return f"{n // 100}xx" if n is not None and 100 <= n < 600 else "none"


def api_error_attrs(c: Cleaner, kw: Mapping[str, Any]) -> tuple[Attrs, str, str]:
    """End attributes of a failed attempt, plus its error type and message."""
    error = kw.get("error") if isinstance(kw.get("error"), Mapping) else {}
    assert isinstance(error, Mapping)
    etype = c.ident(error.get("type") or kw.get("reason") or "error", LABEL_MAX)
    message = c.text(error.get("message") or "", SUMMARY_MAX)
    attrs: Attrs = {"error.type": etype}
    code = _num(kw.get("status_code"))
    if code is not None:
        attrs["http.response.status_code"] = attrs["gen_ai.response.status_code"] = code
    for src, dst in (("retry_count", "hermes.retry.count"), ("max_retries", "hermes.max_retries")):
        n = _num(kw.get(src))
        if n is not None:
            attrs[dst] = n
    if isinstance(kw.get("retryable"), bool):
        attrs["hermes.retryable"] = kw["retryable"]
    if kw.get("reason"):
        attrs["hermes.api.error_reason"] = c.ident(kw["reason"], LABEL_MAX)
    duration = kw.get("api_duration")
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        attrs["llm.response.duration_ms"] = int(duration * 1000)
    return attrs, etype, message


def subagent_start_attrs(c: Cleaner, kw: Mapping[str, Any], role: str) -> Attrs:
    """Start attributes of ``subagent.{role}`` (the delegation span in the parent's trace)."""
    parent_sid = kw.get("parent_session_id")
    attrs = session_attrs(c, {}, parent_sid if isinstance(parent_sid, str) else None)
    attrs.update(
        {
            "openinference.span.kind": "AGENT",
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": role,
            "hermes.subagent.role": role,
        }
    )
    for src, dst in (
        ("child_session_id", "hermes.subagent.child_session_id"),
        ("parent_session_id", "hermes.subagent.parent_session_id"),
        ("parent_turn_id", "hermes.subagent.parent_turn_id"),
        ("child_subagent_id", "hermes.subagent.child_id"),
        ("parent_subagent_id", "hermes.subagent.parent_id"),
        ("parent_tool_call_id", "gen_ai.tool.call.id"),
    ):
        if kw.get(src):
            attrs[dst] = c.ident(kw[src])
    if c.content and kw.get("child_goal"):
        attrs["hermes.subagent.goal"] = c.text(kw["child_goal"], SUMMARY_MAX)
        attrs["input.value"] = c.text(kw["child_goal"])
    return attrs


FAILED_SUBAGENT = frozenset({"error", "failed", "cancelled", "timeout"})


def subagent_stop_attrs(c: Cleaner, kw: Mapping[str, Any]) -> Attrs:
    """End attributes of ``subagent.{role}``."""
    status = c.ident(kw.get("child_status") or "unknown", LABEL_MAX)
    attrs: Attrs = {"hermes.subagent.status": status}
    duration = _num(kw.get("duration_ms"))
    if duration is not None:
        attrs["hermes.subagent.duration_ms"] = duration
    if c.content and kw.get("child_summary"):
        attrs["hermes.subagent.summary"] = c.text(kw["child_summary"], SUMMARY_MAX)
        attrs["output.value"] = c.text(kw["child_summary"])
    return attrs


def approval_start_attrs(c: Cleaner, kw: Mapping[str, Any], pattern: str) -> Attrs:
    """Start attributes of ``approval.{pattern_key}``."""
    attrs = session_attrs(c, kw, kw.get("session_id"))
    attrs.update(
        {
            "openinference.span.kind": "GUARDRAIL",
            "gen_ai.operation.name": "approval",
            "hermes.span_kind": "approval",
            "hermes.approval.pattern_key": pattern,
        }
    )
    keys = kw.get("pattern_keys")
    if isinstance(keys, list):
        attrs["hermes.approval.pattern_keys"] = [c.ident(k, LABEL_MAX) for k in keys[:20]]
    if kw.get("surface"):
        attrs["hermes.approval.surface"] = c.ident(kw["surface"], LABEL_MAX)
    if kw.get("tool_call_id"):
        attrs["gen_ai.tool.call.id"] = c.ident(kw["tool_call_id"])
    if kw.get("description"):
        attrs["hermes.approval.description"] = c.text(kw["description"], SUMMARY_MAX)
    if c.content and kw.get("command"):
        attrs["hermes.approval.command"] = c.text(kw["command"], SUMMARY_MAX)
    return attrs


GRANTED = frozenset({"once", "session", "always", "smart_approve", "yolo"})
