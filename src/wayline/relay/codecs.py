"""``nemo_relay.codecs`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._codecs.openai_chat`.
"""

from __future__ import annotations

from wayline.relay._codecs.openai_chat import (
    AnnotatedLLMRequest,
    AnnotatedLLMResponse,
    AnthropicMessagesCodec,
    GeminiGenerateContentCodec,
    LlmCodec,
    LlmResponseCodec,
    OCIGenAIChatCodec,
    OpenAIChatCodec,
    OpenAIResponsesCodec,
)

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
