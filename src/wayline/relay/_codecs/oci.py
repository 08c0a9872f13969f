"""The OCI Generative AI chat codec (``ChatDetails`` envelopes, GENERIC and COHERE formats).

A request is an envelope ``{"compartmentId", "servingMode": {"modelId"|"endpointId"},
"chatRequest": {"apiFormat", ...}}``. GENERIC chat requests carry ``messages`` whose roles are
upper-case and whose content is a list of ``{"type": "TEXT", "text"}`` parts; COHERE requests
carry ``message``/``chatHistory``/``preambleOverride``. ``decode`` gives the normalized
(OpenAI-shaped) annotation; ``encode`` rewrites only the fields an intercept changed, so an
unedited annotation re-encodes the original body exactly.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from wayline.relay._codecs.annotated import AnnotatedLLMRequest, AnnotatedLLMResponse
from wayline.relay._codecs.support import (
    body_of,
    function_tool,
    int_or_none,
    parse_arguments,
    plain_response,
    present,
    string_or_none,
    to_annotation,
)
from wayline.relay._scopes.datatypes import Json, LLMRequest

__all__ = ["OCI_GENAI", "OCIGenAIChatCodec"]

OCI_GENAI: Final = "oci_genai"
_PARAMS: Final = {"maxTokens": "max_tokens", "temperature": "temperature", "topP": "top_p"}
_FINISH: Final = {
    "stop": "complete",
    "COMPLETE": "complete",
    "STOP_SEQUENCE": "complete",
    "length": "length",
    "max_tokens": "length",
    "MAX_TOKENS": "length",
    "tool_calls": "tool_use",
    "TOOL_CALL": "tool_use",
    "content_filter": "content_filter",
}
_COHERE_ROLES: Final = {"USER": "user", "CHATBOT": "assistant", "SYSTEM": "system"}


def _chat_request(body: dict[str, Any]) -> dict[str, Any]:
    chat = body.get("chatRequest")
    if not isinstance(chat, dict):
        raise ValueError("invalid argument: OCI request is missing the chatRequest object")
    return chat


def _text_of(content: Any) -> Any:
    """Parts that are all TEXT become one string; other parts stay as they are."""
    if not isinstance(content, list) or not content:
        return None if content in (None, []) else content
    if all(isinstance(p, dict) and p.get("type") == "TEXT" for p in content):
        return "".join(str(p.get("text") or "") for p in content)
    return copy.deepcopy(content)


def _parts(content: Any) -> Any:
    if isinstance(content, str):
        return [{"type": "TEXT", "text": content}]
    return [] if content is None else content


def _decode_generic(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise ValueError("invalid argument: OCI chat messages must be objects")
    out: dict[str, Any] = {"role": str(message.get("role") or "USER").lower()}
    out["content"] = _text_of(message.get("content"))
    calls = message.get("toolCalls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [
            present(
                id=c.get("id"),
                type="function",
                function={"name": c.get("name"), "arguments": c.get("arguments")},
            )
            for c in calls
            if isinstance(c, dict)
        ]
    if isinstance(message.get("toolCallId"), str):
        out["tool_call_id"] = message["toolCallId"]
    return out


def _encode_generic(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise ValueError("invalid argument: annotated messages must be objects")
    out: dict[str, Any] = {"role": str(message.get("role") or "user").upper()}
    out["content"] = _parts(message.get("content"))
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        encoded = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else call
            encoded.append(
                present(
                    id=call.get("id") or None,
                    type="FUNCTION",
                    name=function.get("name"),
                    arguments=function.get("arguments"),
                )
            )
        out["toolCalls"] = encoded
    if isinstance(message.get("tool_call_id"), str):
        out["toolCallId"] = message["tool_call_id"]
    return out


def _decode_cohere(chat: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if isinstance(chat.get("preambleOverride"), str):
        messages.append({"role": "system", "content": chat["preambleOverride"]})
    for turn in chat.get("chatHistory") or []:
        if isinstance(turn, dict):
            role = _COHERE_ROLES.get(str(turn.get("role") or "USER"), "user")
            messages.append({"role": role, "content": turn.get("message")})
    if isinstance(chat.get("message"), str):
        messages.append({"role": "user", "content": chat["message"]})
    return messages


class OCIGenAIChatCodec:
    """Request and response codec for OCI Generative AI chat (``api: oci_genai``)."""

    api: Final = OCI_GENAI

    def decode(self, request: LLMRequest) -> AnnotatedLLMRequest:
        """An OCI ChatDetails envelope as a normalized annotation."""
        body = body_of(request, "OCIGenAIChatCodec")
        chat = _chat_request(body)
        api_format = str(chat.get("apiFormat") or "GENERIC")
        if api_format == "COHERE":
            messages: list[Any] | None = _decode_cohere(chat)
            stop = chat.get("stopSequences")
        else:
            raw = chat.get("messages")
            if raw is not None and not isinstance(raw, list):
                raise ValueError("invalid argument: OCI chatRequest.messages must be an array")
            messages = None if raw is None else [_decode_generic(m) for m in raw]
            stop = chat.get("stop")
        params = {name: chat[raw] for raw, name in _PARAMS.items() if raw in chat}
        if stop is not None:
            params["stop"] = stop
        serving = body.get("servingMode")
        serving = serving if isinstance(serving, dict) else {}
        tools = [
            function_tool(t.get("name"), t.get("description"), t.get("parameters"))
            for t in chat.get("tools") or []
            if isinstance(t, dict)
        ]
        return AnnotatedLLMRequest(
            messages=messages,
            model=string_or_none(serving.get("modelId") or serving.get("endpointId")),
            params=params or None,
            tools=tools or None,
            tool_choice=copy.deepcopy(chat.get("toolChoice")),
            api_specific={"api": OCI_GENAI, "api_format": api_format},
        )

    def encode(self, annotated: Any, original: LLMRequest) -> LLMRequest:
        """``original`` with the annotation's changed fields written back in OCI form."""
        annotation = to_annotation(annotated, "OCIGenAIChatCodec")
        base = self.decode(original)
        body = body_of(original, "OCIGenAIChatCodec")
        chat = _chat_request(body)
        cohere = str(chat.get("apiFormat") or "GENERIC") == "COHERE"
        if annotation.messages != base.messages:
            self._write_messages(chat, annotation.messages or [], cohere)
        if annotation.model != base.model:
            serving = body.setdefault("servingMode", {})
            serving["modelId" if "endpointId" not in serving else "endpointId"] = annotation.model
        if annotation.params != base.params:
            params = annotation.params or {}
            stop_key = "stopSequences" if cohere else "stop"
            for raw, name in [*_PARAMS.items(), (stop_key, "stop")]:
                chat.pop(raw, None)
                if params.get(name) is not None:
                    chat[raw] = copy.deepcopy(params[name])
        if annotation.tools != base.tools:
            chat["tools"] = [self._tool(t) for t in annotation.tools or []]
        if annotation.tool_choice != base.tool_choice:
            chat["toolChoice"] = copy.deepcopy(annotation.tool_choice)
        headers = original.headers if isinstance(original, LLMRequest) else {}
        return LLMRequest(headers, body)

    @staticmethod
    def _write_messages(chat: dict[str, Any], messages: list[Any], cohere: bool) -> None:
        if not cohere:
            chat["messages"] = [_encode_generic(m) for m in messages]
            return
        turns = [m for m in messages if isinstance(m, dict)]
        system = [m for m in turns if m.get("role") == "system"]
        rest = [m for m in turns if m.get("role") != "system"]
        if not rest or rest[-1].get("role") != "user":
            raise ValueError("invalid argument: a COHERE request must end with a user message")
        chat.pop("preambleOverride", None)
        if system:
            chat["preambleOverride"] = str(system[-1].get("content") or "")
        roles = {v: k for k, v in _COHERE_ROLES.items()}
        chat["message"] = str(rest[-1].get("content") or "")
        history = [
            {"role": roles.get(str(m.get("role")), "USER"), "message": m.get("content")}
            for m in rest[:-1]
        ]
        if history or "chatHistory" in chat:
            chat["chatHistory"] = history

    @staticmethod
    def _tool(tool: Any) -> Any:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict):
            return copy.deepcopy(tool)
        return present(
            type="FUNCTION",
            name=function.get("name"),
            description=function.get("description"),
            parameters=copy.deepcopy(function.get("parameters")),
        )

    def decode_response(self, response: Json) -> AnnotatedLLMResponse:
        """The first choice's text and tool calls, normalized finish reason and usage."""
        data = plain_response(response, "OCI Generative AI")
        chat = data.get("chatResponse")
        chat = chat if isinstance(chat, dict) else data
        choices = chat.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else {}
        first = first if isinstance(first, dict) else {}
        message = first.get("message")
        message = message if isinstance(message, dict) else {}
        text = _text_of(message.get("content")) if message else chat.get("text")
        calls = [
            {
                "id": c.get("id"),
                "name": c.get("name"),
                "arguments": parse_arguments(c.get("arguments")),
            }
            for c in message.get("toolCalls") or []
            if isinstance(c, dict)
        ]
        reason = first.get("finishReason", chat.get("finishReason"))
        usage_raw = chat.get("usage")
        usage_raw = usage_raw if isinstance(usage_raw, dict) else {}
        usage: dict[str, Json] = present(
            prompt_tokens=int_or_none(usage_raw.get("promptTokens")),
            completion_tokens=int_or_none(usage_raw.get("completionTokens")),
            total_tokens=int_or_none(usage_raw.get("totalTokens")),
        )
        return AnnotatedLLMResponse(
            id=string_or_none(data.get("id") or chat.get("id")),
            model=string_or_none(data.get("modelId")),
            message=text if isinstance(text, str) else None,
            tool_calls=calls or None,
            finish_reason=None if reason is None else _FINISH.get(str(reason), str(reason)),
            usage=usage or None,
            api_specific={"api": OCI_GENAI},
        )
