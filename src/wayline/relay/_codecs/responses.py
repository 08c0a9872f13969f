"""The OpenAI Responses codec (nemo_relay ``codecs.OpenAIResponsesCodec``).

Decoding turns ``input`` into normalized messages (a string becomes one user message;
``input_text``/``output_text`` parts become ``text`` parts; ``function_call`` and
``function_call_output`` items become ``tool_call``/``tool_result`` messages), maps
``max_output_tokens``/``temperature``/``top_p`` to params and function tools to the normalized
shape. ``text`` goes to ``api_specific``; ``store``, ``stream``, ``reasoning`` and the other
transport keys stay in the raw body (and on ATOF) only.
"""

from __future__ import annotations

from typing import Any, Final

from wayline.relay._codecs.annotated import AnnotatedLLMRequest, AnnotatedLLMResponse
from wayline.relay._codecs.support import (
    FieldCodec,
    body_of,
    compact_json,
    encode_fields,
    floats,
    function_tool,
    int_or_none,
    native_tool,
    parse_arguments,
    plain_response,
    present,
    string_or_none,
    to_annotation,
)
from wayline.relay._scopes.datatypes import Json, LLMRequest

__all__ = ["OPENAI_RESPONSES", "OpenAIResponsesCodec"]

OPENAI_RESPONSES: Final = "openai_responses"
_PARAMS: Final = {"max_tokens": "max_output_tokens", "temperature": "temperature", "top_p": "top_p"}
_API_KEYS: Final = ("text",)
_HIDDEN: Final = frozenset(
    {
        "include",
        "metadata",
        "parallel_tool_calls",
        "previous_response_id",
        "reasoning",
        "service_tier",
        "store",
        "stream",
        "truncation",
        "user",
    }
)
_OWNED: Final = frozenset(
    {"input", "instructions", "model", "tools", "tool_choice", *_PARAMS.values(), *_API_KEYS}
)
_RESPONSE_KEYS: Final = frozenset(
    {"id", "model", "output", "usage", "status", "incomplete_details"}
)
_INCOMPLETE: Final = {"max_output_tokens": "length", "content_filter": "content_filter"}


def _decode_part(part: Any) -> Any:
    if isinstance(part, dict) and part.get("type") in ("input_text", "output_text"):
        return {**part, "type": "text"}
    return part


def _decode_item(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    kind = item.get("type")
    if kind == "function_call":
        return present(
            role="tool_call",
            call_id=item.get("call_id"),
            name=item.get("name"),
            arguments=parse_arguments(item.get("arguments")),
        )
    if kind == "function_call_output":
        return present(role="tool_result", call_id=item.get("call_id"), output=item.get("output"))
    if kind in (None, "message") and "role" in item:
        content = item.get("content")
        if isinstance(content, list):
            content = [_decode_part(part) for part in content]
        return {"role": item["role"], "content": content}
    return item


def _encode_item(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    role = message.get("role")
    if role == "tool_call":
        arguments = message.get("arguments")
        if not isinstance(arguments, str):
            arguments = compact_json(arguments)
        fields = present(call_id=message.get("call_id"), name=message.get("name"))
        return {"type": "function_call", **fields, "arguments": arguments}
    if role == "tool_result":
        fields = present(call_id=message.get("call_id"), output=message.get("output"))
        return {"type": "function_call_output", **fields}
    content = message.get("content")
    if isinstance(content, list):
        text_type = "output_text" if role == "assistant" else "input_text"
        content = [
            {**part, "type": text_type}
            if isinstance(part, dict) and part.get("type") == "text"
            else part
            for part in content
        ]
        return {"type": "message", **message, "content": content}
    return {**message, "content": content}


def _decode_tool(tool: Any) -> Any:
    if isinstance(tool, dict) and tool.get("type") == "function":
        more = {k: v for k, v in tool.items() if k not in ("type", "name", "description")}
        more.pop("parameters", None)
        return function_tool(
            tool.get("name"), tool.get("description"), tool.get("parameters"), **more
        )
    kind = tool.get("type") if isinstance(tool, dict) else None
    return native_tool(kind, OPENAI_RESPONSES, tool)


def _encode_tool(tool: Any) -> Any:
    if isinstance(tool, dict) and tool.get("type") == "provider_native":
        return tool.get("value")
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        return {"type": "function", **tool["function"]}
    return tool


def _decode_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function" and "name" in choice:
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


def _encode_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def _choice(choice: Any) -> Any:
    return _encode_choice(choice)


def _without_api(api: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in api.items() if k != "api"}


def _write_messages(messages: list[Any], body: dict[str, Any], _: dict[str, Any]) -> None:
    body["input"] = [_encode_item(m) for m in messages]


def _write_params(params: dict[str, Any], body: dict[str, Any], _: dict[str, Any]) -> None:
    if "stop" in params:
        raise RuntimeError("invalid argument: OpenAI Responses does not support stop sequences")
    for name, raw in _PARAMS.items():
        if name in params:
            body[raw] = params[name]


_FIELDS: Final[tuple[FieldCodec, ...]] = (
    ("model", ("model",), lambda v, b, o: b.__setitem__("model", v)),
    ("instructions", ("instructions",), lambda v, b, o: b.__setitem__("instructions", v)),
    ("messages", ("input",), _write_messages),
    ("params", tuple(_PARAMS.values()), _write_params),
    ("tools", ("tools",), lambda v, b, o: b.__setitem__("tools", [_encode_tool(t) for t in v])),
    ("tool_choice", ("tool_choice",), lambda v, b, o: b.__setitem__("tool_choice", _choice(v))),
    ("api_specific", _API_KEYS, lambda v, b, o: b.update(_without_api(v))),
    ("extra", (), lambda v, b, o: b.update(v)),
)


class OpenAIResponsesCodec:
    """Request and response codec for OpenAI Responses bodies (``api: openai_responses``)."""

    api: Final = OPENAI_RESPONSES

    def decode(self, request: LLMRequest) -> AnnotatedLLMRequest:
        """A Responses body as an annotation (see the module docstring)."""
        body = body_of(request, "OpenAIResponsesCodec")
        if "input" not in body:
            raise RuntimeError("invalid argument: OpenAI Responses request is missing input")
        raw = body["input"]
        if isinstance(raw, str):
            messages: list[Any] = [{"role": "user", "content": raw}]
        elif isinstance(raw, list):
            messages = [_decode_item(item) for item in raw]
        else:
            raise RuntimeError(
                "invalid argument: OpenAI Responses input must be a string or an array"
            )
        params = {name: body[key] for name, key in _PARAMS.items() if key in body}
        tools = body.get("tools")
        api: dict[str, Any] = {"api": OPENAI_RESPONSES}
        api.update({k: body[k] for k in _API_KEYS if k in body})
        return AnnotatedLLMRequest(
            messages=messages,
            instructions=body.get("instructions"),
            model=string_or_none(body.get("model")),
            params=floats(params, "temperature", "top_p") or None,
            tools=[_decode_tool(t) for t in tools] if isinstance(tools, list) else None,
            tool_choice=_decode_choice(body.get("tool_choice")),
            api_specific=api,
            extra={k: v for k, v in body.items() if k not in _OWNED and k not in _HIDDEN},
            # Relay also writes the raw output-token cap on ATOF, next to params.max_tokens.
            transport={k: body[k] for k in sorted(_HIDDEN | {"max_output_tokens"}) if k in body},
        )

    def encode(self, annotated: Any, original: LLMRequest) -> LLMRequest:
        """``original`` with the annotation's changed fields written back in Responses form."""
        annotation = to_annotation(annotated, "OpenAIResponsesCodec")
        return encode_fields(annotation, original, self.decode(original), _FIELDS)

    def decode_response(self, response: Json) -> AnnotatedLLMResponse:
        """Output text joined by newlines, function calls, status as finish reason, usage."""
        data = plain_response(response, "OpenAI Responses")
        output = data.get("output")
        items = output if isinstance(output, list) else []
        texts: list[str] = []
        calls: list[dict[str, Json]] = []
        for item in items:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "message" and isinstance(item.get("content"), list):
                texts.extend(
                    str(part["text"])
                    for part in item["content"]
                    if isinstance(part, dict) and part.get("type") == "output_text"
                )
            elif item.get("type") == "function_call":
                calls.append(
                    {
                        "id": item.get("call_id"),
                        "name": item.get("name"),
                        "arguments": parse_arguments(item.get("arguments")),
                    }
                )
        usage_raw = data.get("usage")
        usage_raw = usage_raw if isinstance(usage_raw, dict) else {}
        api: dict[str, Any] = {"api": OPENAI_RESPONSES}
        api.update(
            present(
                input_tokens_details=usage_raw.get("input_tokens_details"),
                output_items=output if isinstance(output, list) else None,
                output_tokens_details=usage_raw.get("output_tokens_details"),
                status=data.get("status"),
                incomplete_details=data.get("incomplete_details"),
            )
        )
        return AnnotatedLLMResponse(
            id=string_or_none(data.get("id")),
            model=string_or_none(data.get("model")),
            message="\n".join(texts) if texts else None,
            tool_calls=calls or None,
            finish_reason=_finish(data),
            usage=_usage(data.get("usage")),
            api_specific=api,
            extra={k: v for k, v in data.items() if k not in _RESPONSE_KEYS},
        )


def _finish(data: Any) -> str | None:
    status = string_or_none(data.get("status"))
    if status == "completed":
        return "complete"
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return _INCOMPLETE.get(reason, reason) if isinstance(reason, str) else "incomplete"
    return status


def _usage(raw: Any) -> dict[str, Json] | None:
    if not isinstance(raw, dict):
        return None
    prompt = int_or_none(raw.get("input_tokens"))
    details = raw.get("input_tokens_details")
    cached = int_or_none(details.get("cached_tokens")) if isinstance(details, dict) else None
    usage: dict[str, Json] = present(
        prompt_tokens=prompt,
        completion_tokens=int_or_none(raw.get("output_tokens")),
        total_tokens=int_or_none(raw.get("total_tokens")),
        cache_read_tokens=cached,
    )
    if prompt is not None:
        usage["uncached_input_tokens"] = max(prompt - (cached or 0), 0)
    return usage or None
