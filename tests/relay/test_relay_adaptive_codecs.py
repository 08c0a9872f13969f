"""Unit tests for the adaptive module and provider codecs beyond what the Relay harness pins."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from wayline import relay
from wayline.relay import adaptive
from wayline.relay.codecs import (
    AnnotatedLLMRequest,
    AnthropicMessagesCodec,
    GeminiGenerateContentCodec,
    OpenAIResponsesCodec,
)


def test_latency_sensitivity_is_context_local() -> None:
    """A level set in one context is not seen by another context."""

    def set_and_read() -> int | None:
        adaptive.set_latency_sensitivity(4)
        return adaptive.latency_sensitivity()

    assert contextvars.Context().run(set_and_read) == 4
    assert contextvars.Context().run(adaptive.latency_sensitivity) is None


def test_runtime_accepts_config_dataclass() -> None:
    """AdaptiveRuntime takes an AdaptiveConfig as well as its dict form."""
    config = adaptive.AdaptiveConfig(
        state=adaptive.StateConfig(adaptive.BackendSpec.in_memory()),
        telemetry=adaptive.TelemetryConfig(),
    )
    runtime = adaptive.AdaptiveRuntime(config)
    asyncio.run(runtime.register())
    assert runtime.report() == {"diagnostics": []}


def test_transport_fields_written_but_not_compared() -> None:
    """Decoded transport keys appear in to_dict() yet do not affect equality."""
    body = {"model": "m", "max_tokens": 5, "messages": [], "stream": True}
    decoded = AnthropicMessagesCodec().decode(relay.LLMRequest({}, body))
    assert decoded.to_dict()["stream"] is True
    assert decoded == AnthropicMessagesCodec().decode(relay.LLMRequest({}, {**body, "stream": 0}))


@pytest.mark.parametrize(
    ("codec", "body"),
    [
        (AnthropicMessagesCodec(), {"model": "m", "max_tokens": 5, "messages": []}),
        (OpenAIResponsesCodec(), {"model": "m", "input": "hi"}),
        (GeminiGenerateContentCodec(), {"model": "m", "contents": []}),
    ],
)
def test_encode_accepts_the_dict_form(codec: object, body: dict[str, object]) -> None:
    """encode() rebuilds an annotation from its to_dict() form and applies its edits."""
    original = relay.LLMRequest({"h": "1"}, body)
    annotated = codec.decode(original).to_dict()  # type: ignore[attr-defined]
    annotated["model"] = "other"
    out = codec.encode(annotated, original)  # type: ignore[attr-defined]
    assert out.content["model"] == "other"
    assert out.headers == {"h": "1"}


def test_encode_rejects_other_types() -> None:
    """encode() names the codec and the wrong type it was given."""
    with pytest.raises(TypeError, match=r"OpenAIResponsesCodec\.encode.*int"):
        OpenAIResponsesCodec().encode(42, relay.LLMRequest({}, {"input": "x"}))


def test_params_default_is_none() -> None:
    """AnnotatedLLMRequest.params defaults to None, as in Relay."""
    assert AnnotatedLLMRequest(messages=[]).params is None
