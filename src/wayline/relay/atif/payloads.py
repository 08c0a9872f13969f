"""Read LLM/tool payloads and timestamps out of ATOF event dicts.

Providers shape requests and responses differently (OpenAI chat and responses, Anthropic
messages, Hermes' normalized ``assistant_message``, Relay's codec annotations). Everything here
is a pure function of JSON values, so the ATIF mapping stays independent of where events come
from. Unknown shapes yield ``None``/empty results rather than errors: telemetry must not fail a
conversion because a provider added a field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

JsonDict = dict[str, Any]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$"
)

_TEXT_PART_TYPES = (None, "text", "input_text", "output_text", "summary_text", "reasoning_text")


def as_dict(value: Any) -> JsonDict | None:
    """Return ``value`` if it is a JSON object, else ``None``."""
    return value if isinstance(value, dict) else None


def as_str(value: Any) -> str | None:
    """Return ``value`` if it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """Return ``value`` if it is a JSON integer (bools excluded), else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def timestamp_ns(value: Any) -> int | None:
    """Epoch nanoseconds of an ATOF timestamp (RFC 3339 string or integer epoch µs)."""
    micros = as_int(value)
    if micros is not None:
        return micros * 1000
    text = as_str(value)
    if text is None:
        return None
    match = _RFC3339.match(text)
    if match is None:
        return None
    date, clock, fraction, offset = match.groups()
    if offset in ("Z", "z"):
        offset = "+00:00"
    try:
        base = datetime.fromisoformat(f"{date}T{clock}{offset}")
    except ValueError:
        return None
    nanos = int((fraction or "").ljust(9, "0")) if fraction else 0
    return int(base.timestamp()) * 1_000_000_000 + nanos


def timestamp_text(value: Any) -> str | None:
    """ATIF step timestamp for an ATOF timestamp: RFC 3339 text passes, epoch µs is converted.

    Text that is no timestamp gives None (the step has no timestamp) rather than an invalid
    ATIF document.
    """
    if isinstance(value, str):
        return value if timestamp_ns(value) is not None else None
    micros = as_int(value)
    if micros is None:
        return None
    try:
        # Epoch arithmetic, not fromtimestamp(): no platform time_t limit, and isoformat()
        # always writes a four-digit year (strftime's %Y does not below 1000).
        return (_EPOCH + timedelta(microseconds=micros)).isoformat()
    except OverflowError:
        return None  # beyond the years 1-9999: the step gets no timestamp


def epoch_seconds_ms(ns: int | None) -> float | None:
    """Epoch seconds truncated to milliseconds, as Relay reports invocation times."""
    if ns is None:
        return None
    return (ns // 1_000_000) / 1000


def content_text(content: Any) -> str | None:
    """Text of a message ``content``: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
            continue
        part_dict = as_dict(part)
        if part_dict is None:
            continue
        text = as_str(part_dict.get("text"))
        if text is not None and part_dict.get("type") in _TEXT_PART_TYPES:
            texts.append(text)
    return "\n".join(texts) if texts else None


def request_body(start_data: Any) -> Any:
    """The provider request inside an LLM start event's ``data`` (``{"content", "headers"}``)."""
    data = as_dict(start_data)
    if data is not None and "content" in data:
        return data["content"]
    return start_data


def request_messages(profile: JsonDict | None, start_data: Any) -> list[Any] | None:
    """Conversation items of an LLM request: codec annotation first, then the raw body."""
    annotated = as_dict((profile or {}).get("annotated_request"))
    if annotated is not None and isinstance(annotated.get("messages"), list):
        return list(annotated["messages"])
    body = as_dict(request_body(start_data))
    if body is None:
        return None
    for key in ("messages", "input"):
        items = body.get(key)
        if isinstance(items, list):
            return items
        if key == "input" and isinstance(items, str):
            return [{"role": "user", "content": items}]
    return None


def fresh_user_text(messages: list[Any] | None) -> str | None:
    """The user text that opens a fresh turn: the request's last item, when it is a user message.

    A request ending in a tool result continues the previous turn, so it gets no user step.
    """
    if not messages:
        return None
    last = as_dict(messages[-1])
    if last is None or last.get("role") != "user":
        return None
    content = last.get("content")
    if isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") in ("tool_result", "function_call_output")
        for part in content
    ):
        return None
    text = content_text(content)
    return text if text else None


def request_tools(start_data: Any) -> list[JsonDict]:
    """Tool definitions offered in an LLM request body (OpenAI function-calling schema)."""
    body = as_dict(request_body(start_data))
    tools = body.get("tools") if body is not None else None
    if not isinstance(tools, list):
        return []
    return [tool for tool in tools if isinstance(tool, dict)]


def tool_definition_name(tool: JsonDict) -> str | None:
    """Name of a tool definition in OpenAI (``function.name``) or flat (``name``) form."""
    function = as_dict(tool.get("function"))
    if function is not None and isinstance(function.get("name"), str):
        return str(function["name"])
    return as_str(tool.get("name"))


def parse_arguments(raw: Any) -> JsonDict:
    """Tool-call arguments as an object: JSON strings are parsed, non-objects are wrapped."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            return {"raw_arguments": raw}
        return parsed if isinstance(parsed, dict) else {"value": parsed}
    return {"value": raw}


@dataclass(slots=True)
class ParsedCall:
    """One tool call requested by a model response."""

    call_id: str | None
    name: str
    arguments: JsonDict


@dataclass(slots=True)
class ParsedResponse:
    """What an agent step needs from a model response."""

    text: str = ""
    calls: list[ParsedCall] = field(default_factory=list)
    reasoning: str | None = None
    model: str | None = None


def _calls_from_list(items: Any) -> list[ParsedCall]:
    calls: list[ParsedCall] = []
    if not isinstance(items, list):
        return calls
    for item in items:
        entry = as_dict(item)
        if entry is None:
            continue
        function = as_dict(entry.get("function"))
        source = function if function is not None else entry
        name = as_str(source.get("name")) or ""
        raw_args = source.get("arguments", source.get("input"))
        call_id = as_str(entry.get("id")) or as_str(entry.get("call_id"))
        calls.append(ParsedCall(call_id, name, parse_arguments(raw_args)))
    return calls


def _from_chat_message(message: JsonDict, parsed: ParsedResponse) -> None:
    parsed.text = content_text(message.get("content")) or ""
    parsed.calls = _calls_from_list(message.get("tool_calls"))
    parsed.reasoning = as_str(message.get("reasoning_content")) or as_str(message.get("reasoning"))


def _from_anthropic(blocks: list[Any], parsed: ParsedResponse) -> None:
    texts: list[str] = []
    thoughts: list[str] = []
    for block in blocks:
        entry = as_dict(block)
        if entry is None:
            continue
        kind = entry.get("type")
        if kind == "text" and isinstance(entry.get("text"), str):
            texts.append(entry["text"])
        elif kind == "thinking" and isinstance(entry.get("thinking"), str):
            thoughts.append(entry["thinking"])
        elif kind == "tool_use":
            parsed.calls.extend(_calls_from_list([entry]))
    parsed.text = "\n".join(texts)
    parsed.reasoning = "\n".join(thoughts) if thoughts else None


def _from_responses(items: list[Any], parsed: ParsedResponse) -> None:
    texts: list[str] = []
    thoughts: list[str] = []
    for item in items:
        entry = as_dict(item)
        if entry is None:
            continue
        kind = entry.get("type")
        if kind == "message":
            text = content_text(entry.get("content"))
            if text:
                texts.append(text)
        elif kind == "function_call":
            name = as_str(entry.get("name")) or ""
            call_id = as_str(entry.get("call_id")) or as_str(entry.get("id"))
            parsed.calls.append(ParsedCall(call_id, name, parse_arguments(entry.get("arguments"))))
        elif kind == "reasoning":
            summary = content_text(entry.get("summary"))
            if summary:
                thoughts.append(summary)
    parsed.text = "\n".join(texts)
    parsed.reasoning = "\n".join(thoughts) if thoughts else None


def parse_response(profile: JsonDict | None, end_data: Any) -> ParsedResponse:
    """Assistant text, tool calls and reasoning of an LLM end event.

    The codec annotation (``annotated_response``) wins when present, as in Relay; otherwise the
    raw provider body is read in whichever known shape it has.
    """
    parsed = ParsedResponse()
    data = as_dict(end_data)
    annotated = as_dict((profile or {}).get("annotated_response"))
    if annotated is not None:
        parsed.text = content_text(annotated.get("message")) or ""
        parsed.calls = _calls_from_list(annotated.get("tool_calls"))
        parsed.model = as_str(annotated.get("model"))
        if data is not None:
            parsed.model = parsed.model or as_str(data.get("model"))
        return parsed
    if data is None:
        parsed.text = end_data if isinstance(end_data, str) else ""
        return parsed
    parsed.model = as_str(data.get("model"))
    choices = data.get("choices")
    first = as_dict(choices[0]) if isinstance(choices, list) and choices else None
    message = as_dict(first.get("message")) if first is not None else None
    hermes = as_dict(data.get("assistant_message"))
    if message is not None:
        _from_chat_message(message, parsed)
    elif hermes is not None:
        _from_chat_message(hermes, parsed)
    elif isinstance(data.get("content"), list):
        _from_anthropic(data["content"], parsed)
    elif isinstance(data.get("output"), list):
        _from_responses(data["output"], parsed)
    else:
        parsed.text = content_text(data.get("content")) or ""
    return parsed


# Usage keys turned into first-class metrics; every other key lands in ``metrics.extra``.
_NORMALIZED_KEYS = frozenset(
    {
        "prompt_tokens",
        "completion_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "uncached_input_tokens",
        "cost_usd",
    }
)
_RAW_KEYS = frozenset(
    {
        "prompt_tokens",
        "completion_tokens",
        "input_tokens",
        "output_tokens",
        "prompt_tokens_details",
        "input_tokens_details",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost_usd",
    }
)


def _sum(*values: int | None) -> int | None:
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def _raw_usage_counts(usage: JsonDict) -> tuple[int | None, int | None, int | None]:
    details = as_dict(usage.get("prompt_tokens_details")) or as_dict(
        usage.get("input_tokens_details")
    )
    anthropic_read = as_int(usage.get("cache_read_input_tokens"))
    anthropic_write = as_int(usage.get("cache_creation_input_tokens"))
    prompt = as_int(usage.get("prompt_tokens"))
    if prompt is None:
        prompt = as_int(usage.get("input_tokens"))
        if prompt is not None and (anthropic_read is not None or anthropic_write is not None):
            # Anthropic reports input_tokens without the cached part; ATIF counts it in.
            prompt += (anthropic_read or 0) + (anthropic_write or 0)
    completion = as_int(usage.get("completion_tokens"))
    if completion is None:
        completion = as_int(usage.get("output_tokens"))
    cached = _sum(
        as_int(details.get("cached_tokens")) if details is not None else None,
        anthropic_read,
        anthropic_write,
        as_int(usage.get("cache_read_tokens")),
        as_int(usage.get("cache_write_tokens")),
    )
    return prompt, completion, cached


def usage_metrics(profile: JsonDict | None, end_data: Any) -> JsonDict | None:
    """ATIF step ``metrics`` from the response usage (annotation first, then the raw body).

    ``prompt_tokens`` includes cached tokens; ``cached_tokens`` is cache reads + writes and is
    only reported when non-zero; usage keys with no ATIF field go to ``extra``.
    """
    annotated = as_dict((profile or {}).get("annotated_response"))
    usage = as_dict(annotated.get("usage")) if annotated is not None else None
    known = _NORMALIZED_KEYS
    if usage is not None:
        prompt = as_int(usage.get("prompt_tokens"))
        completion = as_int(usage.get("completion_tokens"))
        cached = _sum(
            as_int(usage.get("cache_read_tokens")), as_int(usage.get("cache_write_tokens"))
        )
    else:
        data = as_dict(end_data)
        usage = as_dict(data.get("usage")) if data is not None else None
        if usage is None:
            return None
        known = _RAW_KEYS
        prompt, completion, cached = _raw_usage_counts(usage)
    cost = usage.get("cost_usd")
    metrics: JsonDict = {}
    if prompt is not None:
        metrics["prompt_tokens"] = prompt
    if completion is not None:
        metrics["completion_tokens"] = completion
    if cached:
        metrics["cached_tokens"] = cached
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        metrics["cost_usd"] = float(cost)
    extra = {key: value for key, value in usage.items() if key not in known}
    if not metrics and not extra:
        return None
    if extra:
        metrics["extra"] = extra
    return metrics


def tool_call_id(profile: JsonDict | None, metadata: Mapping[str, Any] | None) -> str | None:
    """The tool call id of a tool event: ``category_profile`` first, then ``metadata``."""
    call_id = as_str((profile or {}).get("tool_call_id"))
    if call_id is None and metadata is not None:
        call_id = as_str(metadata.get("tool_call_id"))
    return call_id
