"""OpenTelemetry attribute names that wayline's spans carry and its OTLP importer reads back:
the GenAI semantic conventions and OpenInference, side by side (the otel plugin writes both,
the importer takes whichever a span has)."""

from __future__ import annotations

__all__ = ["SESSION_KEYS", "TOKEN_KEYS"]

SESSION_KEYS = ("session.id", "gen_ai.conversation.id", "hermes.session.id")
"""The attributes that name a span's session (OpenInference, GenAI, hermes-otel)."""

TOKEN_KEYS = (
    # (wayline/Hermes usage key, OpenInference key, GenAI key)
    ("input_tokens", "llm.token_count.prompt", "gen_ai.usage.input_tokens"),
    ("output_tokens", "llm.token_count.completion", "gen_ai.usage.output_tokens"),
    ("total_tokens", "llm.token_count.total", "gen_ai.usage.total_tokens"),
    (
        "cache_read_tokens",
        "llm.token_count.prompt_details.cache_read",
        "gen_ai.usage.cache_read.input_tokens",
    ),
    (
        "cache_write_tokens",
        "llm.token_count.prompt_details.cache_write",
        "gen_ai.usage.cache_write.input_tokens",
    ),
    (
        "reasoning_tokens",
        "llm.token_count.completion_details.reasoning",
        "gen_ai.usage.reasoning.output_tokens",
    ),
)
"""A model call's token counts: the usage key of a hook payload and its two attribute names."""
