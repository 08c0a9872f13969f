"""Differential scenarios for the provider codecs: decode, encode and response decoding.

Each codec gets a realistic request (decoded, helpers read, re-encoded unchanged and after
edits), realistic responses and its error cases, plus one managed ``llm.execute`` with the
codec on both sides so the annotated request and response on the LLM events compare too.
"""

from __future__ import annotations

import copy
from typing import Any

from relay_diff_base import _run, scenario

_REQUEST_FIELDS = (
    "messages",
    "instructions",
    "model",
    "params",
    "tools",
    "tool_choice",
    "api_specific",
    "extra",
)
_RESPONSE_FIELDS = ("id", "model", "message", "tool_calls", "finish_reason", "usage", "extra")


def _fields(value: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(value, name) for name in names}


def _failure(fn: Any) -> str | None:
    try:
        fn()
    except Exception as exc:
        return f"{next(c.__name__ for c in type(exc).__mro__ if c.__module__ == 'builtins')}"
    return None


def _request_case(nr: Any, rec: Any, codec: Any, body: dict[str, Any], edits: Any) -> None:
    original = nr.LLMRequest({"x-h": "1"}, copy.deepcopy(body))
    ann = codec.decode(original)
    rec("decoded", _fields(ann, _REQUEST_FIELDS))
    rec("helpers", [ann.system_prompt(), ann.last_user_message(), ann.has_tool_calls()])
    same = codec.encode(ann, original)
    rec("roundtrip", [same.content == body, same.headers])
    for label, edit in edits.items():
        edited = codec.decode(original)
        edit(edited)
        try:
            rec(f"edit_{label}", codec.encode(edited, original).content)
        except Exception as exc:
            rec(f"edit_{label}", f"error: {type(exc).__name__}")


def _response_case(rec: Any, codec: Any, responses: dict[str, Any]) -> None:
    for label, raw in responses.items():
        try:
            out = codec.decode_response(copy.deepcopy(raw))
        except Exception as exc:
            rec(f"response_{label}", f"error: {type(exc).__name__}")
            continue
        fields = _fields(out, _RESPONSE_FIELDS)
        fields["api_specific"] = out.api_specific
        fields["helpers"] = [out.response_text(), out.has_tool_calls()]
        rec(f"response_{label}", fields)


def _managed(nr: Any, rec: Any, codec: Any, body: dict[str, Any], response: Any) -> None:
    rec.pin("category_profile.annotated_request", "category_profile.annotated_response")

    async def provider(request: Any) -> Any:
        rec("provider_saw", request.content == body)
        return copy.deepcopy(response)

    with nr.scope.scope("agent", nr.ScopeType.Agent):
        _run(
            lambda: nr.llm.execute(
                "llm",
                nr.LLMRequest({}, copy.deepcopy(body)),
                provider,
                codec=codec,
                response_codec=codec,
            )
        )


def _set(name: str, value: Any) -> Any:
    return lambda ann: setattr(ann, name, copy.deepcopy(value))


# -- Anthropic Messages -----------------------------------------------------------------------

ANTHROPIC_REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-4-20250514",
    "max_tokens": 1024,
    "system": [
        {"type": "text", "text": "You are a careful planner."},
        {"type": "text", "text": "Cite sources.", "cache_control": {"type": "ephemeral"}},
    ],
    "messages": [
        {"role": "user", "content": "Find sources about caching"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "cache"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 hits"}],
        },
    ],
    "tools": [
        {
            "name": "search",
            "description": "Web search",
            "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
    ],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "temperature": 0.2,
    "top_k": 5,
    "stop_sequences": ["END"],
    "metadata": {"user_id": "u-1"},
    "stream": False,
    "service_hint": "x",
}
ANTHROPIC_RESPONSE: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-20250514",
    "content": [
        {"type": "text", "text": "Here is"},
        {"type": "text", "text": "what I found."},
        {"type": "tool_use", "id": "toolu_2", "name": "fetch", "input": {"url": "u"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 120,
        "output_tokens": 30,
        "cache_read_input_tokens": 80,
        "cache_creation_input_tokens": 10,
    },
}


@scenario
def codecs__anthropic_request(nr: Any, rec: Any) -> None:
    _request_case(
        nr,
        rec,
        nr.codecs.AnthropicMessagesCodec(),
        ANTHROPIC_REQUEST,
        {
            "model": _set("model", "claude-opus-4"),
            "params": _set("params", {"max_tokens": 10, "temperature": 1.0, "stop": ["X"]}),
            "cleared": lambda a: [
                setattr(a, name, None)
                for name in ("params", "instructions", "tools", "tool_choice", "api_specific")
            ],
            "choice": _set("tool_choice", {"type": "function", "function": {"name": "search"}}),
            "required": _set("tool_choice", "required"),
            "tools": _set(
                "tools",
                [{"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}}],
            ),
            "instructions": _set("instructions", "Be brief."),
            "messages": _set("messages", [{"role": "user", "content": "new question"}]),
            "extra": _set("extra", {"other": 1}),
        },
    )
    codec = nr.codecs.AnthropicMessagesCodec()
    rec("missing", _failure(lambda: codec.decode(nr.LLMRequest({}, {"model": "m"}))))
    rec("not_list", _failure(lambda: codec.decode(nr.LLMRequest({}, {"messages": "x"}))))


@scenario
def codecs__anthropic_response(nr: Any, rec: Any) -> None:
    _response_case(
        rec,
        nr.codecs.AnthropicMessagesCodec(),
        {
            "tool_use": ANTHROPIC_RESPONSE,
            "text": {
                "id": "msg_02",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": [{"type": "text", "text": "Done."}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 5, "output_tokens": 2},
            },
            "max_tokens": {
                "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}],
                "stop_reason": "max_tokens",
            },
            "refusal": {"content": [], "stop_reason": "refusal"},
            "empty": {},
            "not_object": "text",
        },
    )


@scenario
def codecs__anthropic_managed(nr: Any, rec: Any) -> None:
    _managed(nr, rec, nr.codecs.AnthropicMessagesCodec(), ANTHROPIC_REQUEST, ANTHROPIC_RESPONSE)


# -- OpenAI Responses -------------------------------------------------------------------------

RESPONSES_REQUEST: dict[str, Any] = {
    "model": "gpt-4.1-mini",
    "instructions": "You are a careful planner.",
    "input": [
        {"role": "user", "content": "Find sources about caching"},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Be brief"}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "search",
            "arguments": '{"q":"cache"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "3 hits"},
    ],
    "tools": [
        {
            "type": "function",
            "name": "search",
            "description": "Web search",
            "parameters": {"type": "object"},
            "strict": True,
        },
        {"type": "web_search_preview"},
    ],
    "tool_choice": "auto",
    "temperature": 0.3,
    "max_output_tokens": 256,
    "top_p": 1,
    "text": {"format": {"type": "text"}},
    "reasoning": {"effort": "low"},
    "store": False,
    "stream": False,
    "previous_response_id": "resp_0",
    "parallel_tool_calls": True,
    "custom_flag": 1,
}
RESPONSES_RESPONSE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1760000000,
    "status": "completed",
    "model": "gpt-4.1-mini",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Found three.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_2",
            "name": "fetch",
            "arguments": '{"url":"u"}',
            "status": "completed",
        },
    ],
    "usage": {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 40},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 120,
    },
    "temperature": 0.3,
}


@scenario
def codecs__responses_request(nr: Any, rec: Any) -> None:
    _request_case(
        nr,
        rec,
        nr.codecs.OpenAIResponsesCodec(),
        RESPONSES_REQUEST,
        {
            "model": _set("model", "gpt-4.1"),
            "params": _set("params", {"max_tokens": 10, "temperature": 1.0}),
            "stop": _set("params", {"stop": ["X"]}),
            "cleared": lambda a: [
                setattr(a, name, None)
                for name in ("params", "instructions", "tools", "tool_choice", "api_specific")
            ],
            "choice": _set("tool_choice", {"type": "function", "function": {"name": "search"}}),
            "messages": _set(
                "messages",
                [
                    {"role": "user", "content": [{"type": "text", "text": "again"}]},
                    {"role": "tool_call", "call_id": "c", "name": "f", "arguments": {"a": 1}},
                    {"role": "tool_result", "call_id": "c", "output": "ok"},
                ],
            ),
            "extra": _set("extra", {"other": 1}),
        },
    )
    codec = nr.codecs.OpenAIResponsesCodec()
    string_input = codec.decode(nr.LLMRequest({}, {"model": "m", "input": "hello"}))
    rec("string_input", [string_input.messages, string_input.params, string_input.tool_choice])
    rec("missing", _failure(lambda: codec.decode(nr.LLMRequest({}, {"model": "m"}))))
    rec("bad_input", _failure(lambda: codec.decode(nr.LLMRequest({}, {"input": 5}))))


@scenario
def codecs__responses_response(nr: Any, rec: Any) -> None:
    _response_case(
        rec,
        nr.codecs.OpenAIResponsesCodec(),
        {
            "completed": RESPONSES_RESPONSE,
            "incomplete": {
                "id": "r",
                "status": "incomplete",
                "output": [],
                "incomplete_details": {"reason": "max_output_tokens"},
            },
            "failed": {
                "id": "r",
                "status": "failed",
                "output": [],
                "error": {"code": "server_error", "message": "m"},
            },
            "empty": {},
        },
    )


@scenario
def codecs__responses_managed(nr: Any, rec: Any) -> None:
    _managed(nr, rec, nr.codecs.OpenAIResponsesCodec(), RESPONSES_REQUEST, RESPONSES_RESPONSE)


# -- Gemini generateContent -------------------------------------------------------------------

GEMINI_REQUEST: dict[str, Any] = {
    "model": "gemini-2.0-flash",
    "systemInstruction": {"parts": [{"text": "You are a careful planner."}]},
    "contents": [
        {"role": "user", "parts": [{"text": "Find sources"}, {"text": "about caching"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Searching."},
                {"functionCall": {"name": "search", "args": {"q": "cache"}}},
            ],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "search", "response": {"hits": 3}}}],
        },
    ],
    "tools": [
        {
            "functionDeclarations": [
                {"name": "search", "description": "Web search", "parameters": {"type": "OBJECT"}}
            ]
        },
        {"googleSearch": {}},
    ],
    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    "generationConfig": {
        "temperature": 0.4,
        "maxOutputTokens": 200,
        "topP": 0.9,
        "topK": 20,
        "stopSequences": ["END"],
        "candidateCount": 1,
    },
    "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
}
GEMINI_RESPONSE: dict[str, Any] = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Found"},
                    {"text": "three."},
                    {"functionCall": {"name": "fetch", "args": {"url": "u"}}},
                ],
            },
            "finishReason": "STOP",
            "index": 0,
            "safetyRatings": [],
        }
    ],
    "usageMetadata": {
        "promptTokenCount": 50,
        "candidatesTokenCount": 10,
        "totalTokenCount": 60,
        "cachedContentTokenCount": 20,
        "thoughtsTokenCount": 4,
    },
    "modelVersion": "gemini-2.0-flash",
    "responseId": "resp-g1",
}


@scenario
def codecs__gemini_request(nr: Any, rec: Any) -> None:
    _request_case(
        nr,
        rec,
        nr.codecs.GeminiGenerateContentCodec(),
        GEMINI_REQUEST,
        {
            "model": _set("model", "gemini-2.5-pro"),
            "params": _set("params", {"max_tokens": 10, "temperature": 1.0}),
            "cleared": lambda a: [setattr(a, name, None) for name in ("params", "tools", "model")],
            "instructions": _set("instructions", "Be brief."),
            "messages": _set(
                "messages",
                [
                    {"role": "system", "content": "New system."},
                    {"role": "user", "content": "again"},
                    {"role": "assistant", "content": "ok"},
                ],
            ),
            "extra": _set("extra", {"other": 1}),
        },
    )
    codec = nr.codecs.GeminiGenerateContentCodec()
    rec("missing", _failure(lambda: codec.decode(nr.LLMRequest({}, {"model": "m"}))))
    rec("not_list", _failure(lambda: codec.decode(nr.LLMRequest({}, {"contents": "x"}))))


@scenario
def codecs__gemini_response(nr: Any, rec: Any) -> None:
    _response_case(
        rec,
        nr.codecs.GeminiGenerateContentCodec(),
        {
            "stop": GEMINI_RESPONSE,
            "max_tokens": {
                "candidates": [
                    {"content": {"parts": [{"text": "a"}]}, "finishReason": "MAX_TOKENS"}
                ]
            },
            "safety": {"candidates": [{"content": {"parts": []}, "finishReason": "SAFETY"}]},
            "blocked": {"promptFeedback": {"blockReason": "SAFETY"}},
            "empty": {},
        },
    )


@scenario
def codecs__gemini_managed(nr: Any, rec: Any) -> None:
    _managed(nr, rec, nr.codecs.GeminiGenerateContentCodec(), GEMINI_REQUEST, GEMINI_RESPONSE)
