"""Provider codecs with the nemo_relay ``codecs`` names: raw provider JSON ⇄ normalized annotations.

A request codec turns a provider request body into an :class:`AnnotatedLLMRequest` (``decode``)
and back (``encode``); a response codec turns a provider response into an
:class:`AnnotatedLLMResponse` (``decode_response``). With a request codec active on a managed
LLM call the annotation is authoritative: request intercepts edit ``annotated_request`` and
the provider body is ``encode(final annotation)`` (see :mod:`wayline.relay.intercepts`).

Annotations serialize (``to_dict``) with absent fields omitted and unknown provider keys
(``extra``) flattened into the object, as Relay 0.10.4 writes them on ATOF events.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Final, Protocol, runtime_checkable

from wayline.relay._codecs.annotated import AnnotatedLLMRequest, AnnotatedLLMResponse, text_of
from wayline.relay._codecs.anthropic import AnthropicMessagesCodec
from wayline.relay._codecs.gemini import GeminiGenerateContentCodec
from wayline.relay._codecs.oci import OCIGenAIChatCodec
from wayline.relay._codecs.responses import OpenAIResponsesCodec
from wayline.relay._codecs.support import floats
from wayline.relay._scopes.datatypes import Json, LLMRequest

__all__ = [
    "AnnotatedLLMRequest",
    "AnnotatedLLMResponse",
    "AnthropicMessagesCodec",
    "GeminiGenerateContentCodec",
    "LlmCodec",
    "LlmResponseCodec",
    "OCIGenAIChatCodec",
    "OpenAIChatCodec",
    "OpenAIResponsesCodec",
]

OPENAI_CHAT: Final = "openai_chat"

# Top-level Chat Completions request keys that are sampling/transport parameters. Everything
# else that is not messages/model/tools/tool_choice is kept verbatim in ``extra``.
OPENAI_CHAT_PARAMS: Final = frozenset(
    {
        "audio",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "metadata",
        "modalities",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "reasoning_effort",
        "response_format",
        "seed",
        "service_tier",
        "stop",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "top_logprobs",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    }
)

FINISH_REASONS: Final = {
    "stop": "complete",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "length",
    "content_filter": "content_filter",
}
"""OpenAI ``finish_reason`` → Relay's normalized value (others pass through unchanged)."""


@runtime_checkable
class LlmCodec(Protocol):
    """A request codec: ``decode(request)`` and ``encode(annotated, original)``."""

    def decode(self, request: LLMRequest) -> Any:
        """The normalized annotation of ``request``."""
        ...

    def encode(self, annotated: Any, original: LLMRequest) -> LLMRequest:
        """A provider request carrying ``annotated`` (headers from ``original``)."""
        ...


@runtime_checkable
class LlmResponseCodec(Protocol):
    """A response codec: ``decode_response(response)``."""

    def decode_response(self, response: Json) -> Any:
        """The normalized annotation of a provider response."""
        ...


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return value


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError:
            return raw
    return raw


def _usage(raw: Any) -> dict[str, Json] | None:
    if not isinstance(raw, Mapping):
        return None
    usage: dict[str, Json] = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        if isinstance(raw.get(key), int):
            usage[key] = raw[key]
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    if isinstance(cached, int):
        usage["cache_read_tokens"] = cached
        prompt = usage.get("prompt_tokens")
        if isinstance(prompt, int):
            usage["uncached_input_tokens"] = max(prompt - cached, 0)
    return usage or None


class OpenAIChatCodec:
    """Request and response codec for OpenAI Chat Completions bodies (``api: openai_chat``).

    ``encode(decode(request))`` reproduces the request body exactly, so a codec on a managed
    call changes nothing unless an intercept edits the annotation.
    """

    api: Final = OPENAI_CHAT

    def decode(self, request: LLMRequest) -> AnnotatedLLMRequest:
        """Split a Chat Completions body into messages, model, params, tools and extra."""
        content = request.content if isinstance(request, LLMRequest) else request
        if not isinstance(content, Mapping):
            raise TypeError(
                f"OpenAIChatCodec.decode needs an LLMRequest, not {type(request).__name__}"
            )
        body = copy.deepcopy(dict(content))
        messages = body.pop("messages", None)
        if messages is not None and not isinstance(messages, list):
            raise ValueError("invalid argument: openai_chat request 'messages' must be a list")
        model = body.pop("model", None)
        if model is not None and not isinstance(model, str):
            body["model"], model = model, None  # kept verbatim rather than coerced
        tools = body.pop("tools", None)
        tool_choice = body.pop("tool_choice", None)
        params = {k: body.pop(k) for k in list(body) if k in OPENAI_CHAT_PARAMS}
        return AnnotatedLLMRequest(
            messages=messages,
            model=model,
            params=floats(params, "temperature", "top_p") or None,
            tools=tools,
            tool_choice=tool_choice,
            api_specific={"api": OPENAI_CHAT},
            extra=body,
        )

    def encode(self, annotated: Any, original: LLMRequest) -> LLMRequest:
        """A request whose body is ``annotated`` in Chat Completions form (``original``'s headers).

        ``instructions``, when set, become a leading system message.
        """
        if isinstance(annotated, Mapping):
            annotated = AnnotatedLLMRequest.from_dict(annotated)
        if not isinstance(annotated, AnnotatedLLMRequest):
            raise TypeError(
                "OpenAIChatCodec.encode needs an AnnotatedLLMRequest or a mapping, "
                f"not {type(annotated).__name__}"
            )
        body: dict[str, Json] = {}
        if annotated.model is not None:
            body["model"] = annotated.model
        messages = copy.deepcopy(annotated.messages)
        if annotated.instructions is not None:
            system = {"role": "system", "content": annotated.instructions}
            messages = [system, *(messages or [])]
        if messages is not None:
            body["messages"] = messages
        body.update(copy.deepcopy(annotated.params or {}))
        if annotated.tools is not None:
            body["tools"] = copy.deepcopy(annotated.tools)
        if annotated.tool_choice is not None:
            body["tool_choice"] = copy.deepcopy(annotated.tool_choice)
        for key, value in annotated.extra.items():
            body.setdefault(key, copy.deepcopy(value))
        headers = original.headers if isinstance(original, LLMRequest) else {}
        return LLMRequest(headers, body)

    def decode_response(self, response: Json) -> AnnotatedLLMResponse:
        """Message text, tool calls (arguments parsed), normalized finish reason and usage."""
        data = _plain(response)
        if not isinstance(data, Mapping):
            raise TypeError(
                f"openai_chat response must be a JSON object, not {type(data).__name__}"
            )
        choices = data.get("choices")
        first = _object(choices[0] if isinstance(choices, list) and choices else None)
        message = _object(first.get("message"))
        calls: list[dict[str, Json]] = []
        for call in message.get("tool_calls") or []:
            if not isinstance(call, Mapping):
                continue
            function = _object(call.get("function"))
            calls.append(
                {
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": _arguments(function.get("arguments")),
                }
            )
        finish = first.get("finish_reason")
        known = {"id", "model", "choices", "usage"}
        return AnnotatedLLMResponse(
            id=data.get("id") if isinstance(data.get("id"), str) else None,
            model=data.get("model") if isinstance(data.get("model"), str) else None,
            message=text_of(message.get("content")),
            tool_calls=calls or None,
            finish_reason=FINISH_REASONS.get(finish, finish) if isinstance(finish, str) else None,
            usage=_usage(data.get("usage")),
            api_specific={"api": OPENAI_CHAT},
            extra={k: v for k, v in data.items() if k not in known and v is not None},
        )
