"""The plugin's metrics: hermes-otel's ``hermes.*`` instruments plus the GenAI client metrics.

Labels are deliberately low-cardinality: model, provider, tool name, outcome, role, status,
choice, pattern key, error type — never a session, turn, request or tool-call id.

A call's cost (on its ``api.{model}`` span and in ``hermes.llm.cost``) comes from
:mod:`wayline.pricing` (the bundled ``genai-prices`` table, offline). A model the table does
not know gets no cost attribute and adds nothing to the counter: an unknown cost is absent,
never $0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.metrics import Counter, Histogram, Meter

from wayline.plugins.observability.otel.attributes import Attrs
from wayline.pricing import COST_ATTRIBUTES, Pricer

__all__ = ["Instruments"]

#: gen_ai.client.token.usage buckets from the GenAI semantic conventions: 1, 4, 16, ... 4^13.
TOKEN_BUCKETS = tuple(4**n for n in range(14))
#: gen_ai.client.operation.duration buckets (seconds) from the GenAI semantic conventions:
#: 0.01, 0.02, 0.04, ... 81.92 (each twice the one before).
DURATION_BUCKETS = tuple(0.01 * 2**n for n in range(14))
#: Millisecond buckets for the hermes.* durations (the SDK default stops at 10 s).
MS_BUCKETS = (
    1,
    5,
    10,
    25,
    50,
    100,
    250,
    500,
    1000,
    2500,
    5000,
    10000,
    30000,
    60000,
    120000,
    300000,
    600000,
)


TOKEN_COUNTERS = (
    ("input_tokens", "hermes.tokens.prompt"),
    ("output_tokens", "hermes.tokens.completion"),
    ("total_tokens", "hermes.tokens.total"),
    ("cache_read_tokens", "hermes.tokens.cache_read"),
    ("cache_write_tokens", "hermes.tokens.cache_write"),
    ("reasoning_tokens", "hermes.tokens.reasoning"),
)


class Instruments:
    """Every instrument the plugin records, created once per plugin instance."""

    def __init__(self, meter: Meter) -> None:
        def histogram(name: str, unit: str, text: str, buckets: tuple[float, ...]) -> Histogram:
            return meter.create_histogram(
                name, unit=unit, description=text, explicit_bucket_boundaries_advisory=buckets
            )

        self.pricer = Pricer()
        self.pricer.load()  # with the plugin's build, not at the first priced call
        self.cost = meter.create_counter(
            "hermes.llm.cost", unit="USD", description="Cost of successful provider calls"
        )
        self.tool_calls = meter.create_counter(
            "hermes.tool.calls", unit="{call}", description="Tool calls by tool and outcome"
        )
        self.tool_duration = histogram(
            "hermes.tool.duration", "ms", "Tool call duration", MS_BUCKETS
        )
        self.tokens: dict[str, Counter] = {
            key: meter.create_counter(name, unit="{token}", description=f"Tokens ({key})")
            for key, name in TOKEN_COUNTERS
        }
        self.api_duration = histogram(
            "hermes.api.duration", "ms", "Provider request duration (per attempt)", MS_BUCKETS
        )
        self.api_errors = meter.create_counter(
            "hermes.api.error.count", unit="{error}", description="Failed provider attempts"
        )
        self.retries = meter.create_counter(
            "hermes.retry.count", unit="{retry}", description="Retryable provider failures"
        )
        self.sessions = meter.create_counter(
            "hermes.sessions", unit="{turn}", description="Finished turns by kind and status"
        )
        self.subagents = meter.create_counter(
            "hermes.subagent.count", unit="{subagent}", description="Delegated child agents"
        )
        self.subagent_duration = histogram(
            "hermes.subagent.duration", "ms", "Delegated child agent duration", MS_BUCKETS
        )
        self.approvals = meter.create_counter(
            "hermes.approval.count", unit="{approval}", description="Approval decisions"
        )
        self.approval_duration = histogram(
            "hermes.approval.duration",
            "ms",
            "Time waiting for a human approval decision",
            MS_BUCKETS,
        )
        self.token_usage = histogram(
            "gen_ai.client.token.usage",
            "{token}",
            "Tokens used per provider request (GenAI semantic conventions)",
            TOKEN_BUCKETS,
        )
        self.operation_duration = histogram(
            "gen_ai.client.operation.duration",
            "s",
            "Provider request duration (GenAI semantic conventions)",
            DURATION_BUCKETS,
        )

    def api_success(
        self, genai: Mapping[str, Any], usage: Mapping[str, int], duration_s: float | None
    ) -> None:
        """Token counters and histograms, request duration, for one successful attempt."""
        labels = {
            "model": genai.get("gen_ai.request.model", ""),
            "provider": genai.get("gen_ai.provider.name", ""),
        }
        for key, counter in self.tokens.items():
            n = usage.get(key)
            if n:
                counter.add(n, labels)
        for key, token_type in (("input_tokens", "input"), ("output_tokens", "output")):
            n = usage.get(key)
            if n is not None:
                self.token_usage.record(n, {**genai, "gen_ai.token.type": token_type})
        if duration_s is not None:
            self.api_duration.record(duration_s * 1000.0, labels)
            self.operation_duration.record(duration_s, dict(genai))

    def api_failure(
        self,
        genai: Mapping[str, Any],
        error_type: str,
        status_class: str,
        retryable: bool | None,
        duration_s: float | None,
    ) -> None:
        """Error and retry counters and the failed attempt's duration."""
        self.api_errors.add(
            1,
            {
                "error_type": error_type,
                "status_class": status_class,
                "retryable": bool(retryable),
            },
        )
        if retryable:
            self.retries.add(1, {"error_type": error_type})
        if duration_s is not None:
            self.operation_duration.record(duration_s, {**genai, "error.type": error_type})

    def add_cost(self, attrs: Attrs, kw: Mapping[str, Any], labels: Mapping[str, str]) -> None:
        """Set a priced call's cost attributes on ``attrs`` and count it under its model."""
        cost = self.pricer.hook_cost(kw)
        if cost is None:
            return
        for key in COST_ATTRIBUTES:
            attrs[key] = cost
        self.cost.add(
            cost,
            {
                "model": labels.get("gen_ai.request.model", ""),
                "provider": labels.get("gen_ai.provider.name", ""),
            },
        )
