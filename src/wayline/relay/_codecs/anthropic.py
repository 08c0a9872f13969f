"""The Anthropic Messages codec (nemo_relay ``codecs.AnthropicMessagesCodec``).

Decoding keeps messages and the ``system`` prompt (as ``instructions``) verbatim, maps
``max_tokens``/``temperature``/``top_p``/``stop_sequences`` to params, tools to the normalized
function shape (server tools stay provider-native) and ``tool_choice`` to OpenAI's spelling;
``top_k`` and ``thinking`` go to ``api_specific``. ``metadata``, ``stream`` and a tool
choice's ``disable_parallel_tool_use`` are transport details kept only in the raw body.
"""

from __future__ import annotations

from typing import Any, Final

from wayline.relay._codecs.annotated import AnnotatedLLMRequest, AnnotatedLLMResponse
from wayline.relay._codecs.support import (
    FieldCodec,
    body_of,
    encode_fields,
    floats,
    function_tool,
    int_or_none,
    native_tool,
    plain_response,
    present,
    string_or_none,
    to_annotation,
)
from wayline.relay._scopes.datatypes import Json, LLMRequest

__all__ = ["ANTHROPIC_MESSAGES", "AnthropicMessagesCodec"]

ANTHROPIC_MESSAGES: Final = "anthropic_messages"
_PARAMS: Final = {"max_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p"}
_API_KEYS: Final = ("top_k", "thinking")
_HIDDEN: Final = frozenset({"metadata", "stream"})
_OWNED: Final = frozenset(
    {"messages", "system", "model", "tools", "tool_choice", "stop_sequences", *_PARAMS, *_API_KEYS}
)
_CHOICES: Final = {"auto": "auto", "any": "required", "none": "none"}
_FINISH: Final = {"end_turn": "complete", "max_tokens": "length", "tool_use": "tool_use"}
_RESPONSE_KEYS: Final = frozenset(
    {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
)


def _decode_tool(tool: Any) -> Any:
    if not isinstance(tool, dict):
        return tool
    if "input_schema" in tool or tool.get("type") in (None, "custom"):
        more = {k: v for k, v in tool.items() if k not in ("name", "description", "input_schema")}
        more.pop("type", None)
        out = function_tool(tool.get("name"), tool.get("description"), tool.get("input_schema"))
        out.update(more)
        return out
    return native_tool(tool.get("type"), ANTHROPIC_MESSAGES, tool)


def _encode_tool(tool: Any) -> Any:
    if isinstance(tool, dict) and tool.get("type") == "provider_native":
        return tool.get("value")
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        function = tool["function"]
        out = present(
            name=function.get("name"),
            description=function.get("description"),
            input_schema=function.get("parameters"),
        )
        out.update({k: v for k, v in tool.items() if k not in ("type", "function")})
        return out
    return tool


def _decode_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        kind = choice.get("type")
        if kind == "tool":
            return {"type": "function", "function": {"name": choice.get("name")}}
        return _CHOICES.get(kind, choice) if isinstance(kind, str) else choice
    return choice


def _encode_choice(choice: Any, original: dict[str, Any]) -> dict[str, Any]:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        out: dict[str, Any] = {"type": "tool", "name": choice["function"].get("name")}
    elif choice == "required":
        out = {"type": "any"}
    elif isinstance(choice, str):
        out = {"type": choice}
    else:
        raise ValueError(f"invalid tool_choice: {choice!r}")
    before = original.get("tool_choice")
    if isinstance(before, dict) and "disable_parallel_tool_use" in before:
        out["disable_parallel_tool_use"] = before["disable_parallel_tool_use"]
    return out


def _write_params(params: dict[str, Any], body: dict[str, Any], _: dict[str, Any]) -> None:
    for name, raw in _PARAMS.items():
        if name in params:
            body[raw] = params[name]
    if "stop" in params:
        body["stop_sequences"] = params["stop"]


def _write_api(api: dict[str, Any], body: dict[str, Any], _: dict[str, Any]) -> None:
    body.update({k: v for k, v in api.items() if k != "api"})


def _write_choice(choice: Any, body: dict[str, Any], original: dict[str, Any]) -> None:
    body["tool_choice"] = _encode_choice(choice, original)


def _clear_choice(body: dict[str, Any], original: dict[str, Any]) -> None:
    before = original.get("tool_choice")
    if isinstance(before, dict) and "disable_parallel_tool_use" in before:
        body["tool_choice"] = {
            "type": "auto",
            "disable_parallel_tool_use": before["disable_parallel_tool_use"],
        }


_FIELDS: Final[tuple[FieldCodec, ...]] = (
    ("model", ("model",), lambda v, b, o: b.__setitem__("model", v)),
    ("instructions", ("system",), lambda v, b, o: b.__setitem__("system", v)),
    ("messages", ("messages",), lambda v, b, o: b.__setitem__("messages", v)),
    ("params", ("stop_sequences", *_PARAMS.values()), _write_params),
    ("tools", ("tools",), lambda v, b, o: b.__setitem__("tools", [_encode_tool(t) for t in v])),
    ("tool_choice", ("tool_choice",), _write_choice),
    ("api_specific", _API_KEYS, _write_api),
    ("extra", (), lambda v, b, o: b.update(v)),
)


class AnthropicMessagesCodec:
    """Request and response codec for Anthropic Messages bodies (``api: anthropic_messages``)."""

    api: Final = ANTHROPIC_MESSAGES

    def decode(self, request: LLMRequest) -> AnnotatedLLMRequest:
        """A Messages body as an annotation (see the module docstring)."""
        body = body_of(request, "AnthropicMessagesCodec")
        if "messages" not in body:
            raise RuntimeError("invalid argument: Anthropic Messages request is missing messages")
        messages = body["messages"]
        if not isinstance(messages, list):
            raise RuntimeError("invalid argument: Anthropic Messages messages must be an array")
        params = {name: body[raw] for name, raw in _PARAMS.items() if raw in body}
        if "stop_sequences" in body:
            params["stop"] = body["stop_sequences"]
        tools = body.get("tools")
        api: dict[str, Any] = {"api": ANTHROPIC_MESSAGES}
        api.update({k: body[k] for k in _API_KEYS if k in body})
        return AnnotatedLLMRequest(
            messages=messages,
            instructions=body.get("system"),
            model=string_or_none(body.get("model")),
            params=floats(params, "temperature", "top_p") or None,
            tools=[_decode_tool(t) for t in tools] if isinstance(tools, list) else None,
            tool_choice=_decode_choice(body.get("tool_choice")),
            api_specific=api,
            extra={k: v for k, v in body.items() if k not in _OWNED and k not in _HIDDEN},
            transport=_transport(body),
        )

    def encode(self, annotated: Any, original: LLMRequest) -> LLMRequest:
        """``original`` with the annotation's changed fields written back in Messages form."""
        annotation = to_annotation(annotated, "AnthropicMessagesCodec")
        base = self.decode(original)
        out = encode_fields(annotation, original, base, _FIELDS)
        if annotation.tool_choice is None and base.tool_choice is not None:
            _clear_choice(out.content, dict(original.content))
        return out

    def decode_response(self, response: Json) -> AnnotatedLLMResponse:
        """Text blocks joined by newlines, ``tool_use`` blocks as calls, usage and stop reason."""
        data = plain_response(response, "Anthropic Messages")
        content = data.get("content")
        blocks = content if isinstance(content, list) else []
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        calls = [
            {"id": b.get("id"), "name": b.get("name"), "arguments": b.get("input")}
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        stop = string_or_none(data.get("stop_reason"))
        api = {"api": ANTHROPIC_MESSAGES}
        api.update(
            present(
                content_blocks=content if isinstance(content, list) else None,
                object_type=data.get("type"),
                role=data.get("role"),
                stop_reason=stop,
                stop_sequence=data.get("stop_sequence"),
            )
        )
        return AnnotatedLLMResponse(
            id=string_or_none(data.get("id")),
            model=string_or_none(data.get("model")),
            message="\n".join(str(t) for t in texts) if texts else None,
            tool_calls=calls or None,
            finish_reason=_FINISH.get(stop, stop) if stop is not None else None,
            usage=_usage(data.get("usage")),
            api_specific=api,
            extra={k: v for k, v in data.items() if k not in _RESPONSE_KEYS},
        )


def _transport(body: dict[str, Any]) -> dict[str, Json]:
    out: dict[str, Json] = {k: body[k] for k in sorted(_HIDDEN) if k in body}
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("disable_parallel_tool_use"), bool):
        out["parallel_tool_calls"] = not choice["disable_parallel_tool_use"]
    return out


def _usage(raw: Any) -> dict[str, Json] | None:
    if not isinstance(raw, dict):
        return None
    prompt = int_or_none(raw.get("input_tokens"))
    completion = int_or_none(raw.get("output_tokens"))
    usage: dict[str, Json] = present(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read_tokens=int_or_none(raw.get("cache_read_input_tokens")),
        cache_write_tokens=int_or_none(raw.get("cache_creation_input_tokens")),
    )
    if prompt is not None or completion is not None:
        usage["total_tokens"] = (prompt or 0) + (completion or 0)
    if prompt is not None:
        usage["uncached_input_tokens"] = prompt
    return usage or None
