"""The Gemini generateContent codec (nemo_relay ``codecs.GeminiGenerateContentCodec``).

Decoding turns ``systemInstruction`` and ``contents`` into OpenAI-shaped messages: a leading
system message, ``user``/``assistant`` text (parts joined by newlines), ``functionCall`` parts
as ``tool_calls`` (the function name doubles as the call id) and ``functionResponse`` parts as
``tool`` messages whose content is the compact JSON response. ``generationConfig`` sampling
keys become params; ``functionDeclarations`` become function tools, other tools stay
provider-native. Everything else (``toolConfig``, ``safetySettings``, …) is ``extra``.
``instructions`` cannot be encoded for Gemini: put the system prompt in a system message.
"""

from __future__ import annotations

import json
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
    plain_response,
    present,
    string_or_none,
    to_annotation,
)
from wayline.relay._scopes.datatypes import Json, LLMRequest

__all__ = ["GEMINI_GENERATE_CONTENT", "GeminiGenerateContentCodec"]

GEMINI_GENERATE_CONTENT: Final = "gemini_generate_content"
_PARAMS: Final = {
    "max_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "top_p": "topP",
    "stop": "stopSequences",
}
_OWNED: Final = frozenset({"contents", "systemInstruction", "generationConfig", "tools", "model"})
_FILTERED: Final = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
)
_RESPONSE_KEYS: Final = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId"})


def _texts(parts: Any) -> str | None:
    texts = [
        str(p["text"])
        for p in parts or []
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def _decode_contents(body: dict[str, Any]) -> list[Any]:
    messages: list[Any] = []
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        messages.append({"role": "system", "content": _texts(system.get("parts")) or ""})
    for content in body["contents"]:
        parts = content.get("parts") if isinstance(content, dict) else None
        parts = parts if isinstance(parts, list) else []
        role = "assistant" if content.get("role") == "model" else "user"
        calls = [p["functionCall"] for p in parts if isinstance(p, dict) and "functionCall" in p]
        answers = [
            p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p
        ]
        text = _texts(parts)
        if text is not None or calls or not answers:
            message: dict[str, Any] = {"role": role, "content": text}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": call.get("name"),
                        "type": "function",
                        "function": {
                            "name": call.get("name"),
                            "arguments": compact_json(call.get("args", {})),
                        },
                    }
                    for call in calls
                ]
            messages.append(message)
        for answer in answers:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": answer.get("name"),
                    "content": compact_json(answer.get("response")),
                }
            )
    return messages


def _encode_messages(messages: list[Any], body: dict[str, Any], _: dict[str, Any]) -> None:
    contents: list[Any] = []
    body.pop("systemInstruction", None)
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        text = content if isinstance(content, str) else _texts(content)
        if role == "system":
            body["systemInstruction"] = {"parts": [{"text": text or ""}]}
            continue
        if role == "tool":
            response = message.get("content")
            try:
                response = json.loads(response) if isinstance(response, str) else response
            except ValueError:
                response = {"content": response}
            part = {"functionResponse": {"name": message.get("tool_call_id"), "response": response}}
            contents.append({"role": "user", "parts": [part]})
            continue
        parts: list[Any] = [{"text": text}] if text else []
        for call in message.get("tool_calls") or []:
            function = call.get("function", {}) if isinstance(call, dict) else {}
            arguments = function.get("arguments")
            args = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
            parts.append({"functionCall": {"name": function.get("name"), "args": args}})
        contents.append({"role": "model" if role == "assistant" else "user", "parts": parts})
    body["contents"] = contents


def _write_params(params: dict[str, Any], body: dict[str, Any], _: dict[str, Any]) -> None:
    config = body.get("generationConfig")
    config = dict(config) if isinstance(config, dict) else {}
    for key in _PARAMS.values():
        config.pop(key, None)
    config.update({raw: params[name] for name, raw in _PARAMS.items() if name in params})
    body["generationConfig"] = config


def _write_tools(tools: list[Any], body: dict[str, Any], _: dict[str, Any]) -> None:
    declarations: list[Any] = []
    out: list[Any] = []
    for tool in tools:
        if isinstance(tool, dict) and tool.get("type") == "provider_native":
            out.append(tool.get("value"))
        elif isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            declarations.append(tool["function"])
    body["tools"] = ([{"functionDeclarations": declarations}] if declarations else []) + out


def _refuse_instructions(value: Any, body: dict[str, Any], _: dict[str, Any]) -> None:
    raise RuntimeError(
        "invalid argument: Gemini encoder: field 'instructions' is not representable in the "
        "Gemini generateContent API; use a provider-native extra field instead"
    )


_FIELDS: Final[tuple[FieldCodec, ...]] = (
    ("model", ("model",), lambda v, b, o: b.__setitem__("model", v)),
    ("instructions", (), _refuse_instructions),
    ("messages", ("contents",), _encode_messages),
    ("params", (), _write_params),
    ("tools", ("tools",), _write_tools),
    ("extra", (), lambda v, b, o: b.update(v)),
)


class GeminiGenerateContentCodec:
    """Request and response codec for Gemini generateContent bodies."""

    api: Final = GEMINI_GENERATE_CONTENT

    def decode(self, request: LLMRequest) -> AnnotatedLLMRequest:
        """A generateContent body as an annotation (see the module docstring)."""
        body = body_of(request, "GeminiGenerateContentCodec")
        if "contents" not in body:
            raise RuntimeError("invalid argument: Gemini request is missing contents")
        if not isinstance(body["contents"], list):
            raise RuntimeError("invalid argument: Gemini request contents must be an array")
        config = body.get("generationConfig")
        config = config if isinstance(config, dict) else {}
        params = {name: config[raw] for name, raw in _PARAMS.items() if raw in config}
        tools: list[Any] = []
        for tool in body.get("tools") or []:
            if isinstance(tool, dict) and isinstance(tool.get("functionDeclarations"), list):
                tools.extend(
                    function_tool(d.get("name"), d.get("description"), d.get("parameters"))
                    for d in tool["functionDeclarations"]
                    if isinstance(d, dict)
                )
            else:
                kind = next(iter(tool), None) if isinstance(tool, dict) else None
                tools.append(native_tool(kind, "gemini", tool))
        return AnnotatedLLMRequest(
            messages=_decode_contents(body),
            model=string_or_none(body.get("model")),
            params=floats(params, "temperature", "top_p") or None,
            tools=tools or None,
            extra={k: v for k, v in body.items() if k not in _OWNED},
        )

    def encode(self, annotated: Any, original: LLMRequest) -> LLMRequest:
        """``original`` with the annotation's changed fields written back in Gemini form."""
        annotation = to_annotation(annotated, "GeminiGenerateContentCodec")
        base = self.decode(original)
        out = encode_fields(annotation, original, base, _FIELDS)
        if annotation.params is None and base.params is not None:
            _write_params({}, out.content, {})  # cleared params leave generationConfig's rest
        return out

    def decode_response(self, response: Json) -> AnnotatedLLMResponse:
        """The first candidate's text and function calls, finish reason and usage."""
        data = plain_response(response, "Gemini generateContent")
        candidates = data.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else {}
        first = first if isinstance(first, dict) else {}
        content = first.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        parts = parts if isinstance(parts, list) else []
        calls = [
            {
                "id": c.get("id") or c.get("name"),
                "name": c.get("name"),
                "arguments": c.get("args", {}),
            }
            for c in (p.get("functionCall") for p in parts if isinstance(p, dict))
            if isinstance(c, dict)
        ]
        usage_raw = data.get("usageMetadata")
        usage_raw = usage_raw if isinstance(usage_raw, dict) else {}
        api: dict[str, Any] = present(
            index=first.get("index"),
            safety_ratings=first.get("safetyRatings"),
            thoughts_tokens=usage_raw.get("thoughtsTokenCount"),
        )
        return AnnotatedLLMResponse(
            id=string_or_none(data.get("responseId")),
            model=string_or_none(data.get("modelVersion")),
            message=_texts(parts),
            tool_calls=calls or None,
            finish_reason=_finish(data, first, bool(calls)),
            usage=_usage(usage_raw),
            api_specific={"api": GEMINI_GENERATE_CONTENT, **api} if api else None,
            extra={k: v for k, v in data.items() if k not in _RESPONSE_KEYS},
        )


def _finish(data: Any, first: dict[str, Any], calls: bool) -> str | None:
    reason = first.get("finishReason")
    feedback = data.get("promptFeedback")
    if reason is None and isinstance(feedback, dict) and feedback.get("blockReason"):
        return "content_filter"
    if not isinstance(reason, str) or reason == "FINISH_REASON_UNSPECIFIED":
        return None
    if reason == "STOP":
        return "tool_use" if calls else "complete"
    if reason == "MAX_TOKENS":
        return "length"
    return "content_filter" if reason in _FILTERED else reason


def _usage(raw: dict[str, Any]) -> dict[str, Json] | None:
    prompt = int_or_none(raw.get("promptTokenCount"))
    cached = int_or_none(raw.get("cachedContentTokenCount"))
    usage: dict[str, Json] = present(
        prompt_tokens=prompt,
        completion_tokens=int_or_none(raw.get("candidatesTokenCount")),
        total_tokens=int_or_none(raw.get("totalTokenCount")),
        cache_read_tokens=cached,
    )
    if prompt is not None:
        usage["uncached_input_tokens"] = max(prompt - (cached or 0), 0)
    return usage or None
