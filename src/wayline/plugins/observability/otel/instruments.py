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
from typing import Any, Protocol

from opentelemetry.metrics import Meter

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


class Adder(Protocol):
    """What the plugin calls on a counter (the SDK's ``Counter.add``)."""

    def add(self, amount: int | float, attributes: Any = None) -> None:
        """Add ``amount`` to the sum of ``attributes``."""


class Instruments:
    """Every instrument the plugin records, created once per plugin instance."""

    def __init__(self, meter: Meter) -> None:
        self.pricer = Pricer()
        self.pricer.load()  # with the plugin's build, not at the first priced call
        self.cost: Adder = meter.create_counter(
            "hermes.llm.cost", unit="USD", description="Cost of successful provider calls"
        )
        self.tool_calls: Adder = meter.create_counter(
            "hermes.tool.calls", unit="{call}", description="Tool calls by tool and outcome"
        )
        self.tool_duration = meter.create_histogram(
            "hermes.tool.duration",
            unit="ms",
            description="Tool call duration",
            explicit_bucket_boundaries_advisory=MS_BUCKETS,
        )
        self.tokens: dict[str, Adder] = {
            key: meter.create_counter(name, unit="{token}", description=f"Tokens ({key})")
            for key, name in TOKEN_COUNTERS
        }
        self.api_duration = meter.create_histogram(
            "hermes.api.duration",
            unit="ms",
            description="Provider request duration (per attempt)",
            explicit_bucket_boundaries_advisory=MS_BUCKETS,
        )
        self.api_errors: Adder = meter.create_counter(
            "hermes.api.error.count", unit="{error}", description="Failed provider attempts"
        )
        self.retries: Adder = meter.create_counter(
            "hermes.retry.count", unit="{retry}", description="Retryable provider failures"
        )
        self.sessions: Adder = meter.create_counter(
            "hermes.sessions", unit="{turn}", description="Finished turns by kind and status"
        )
        self.subagents: Adder = meter.create_counter(
            "hermes.subagent.count", unit="{subagent}", description="Delegated child agents"
        )
        self.subagent_duration = meter.create_histogram(
            "hermes.subagent.duration",
            unit="ms",
            description="Delegated child agent duration",
            explicit_bucket_boundaries_advisory=MS_BUCKETS,
        )
        self.approvals: Adder = meter.create_counter(
            "hermes.approval.count", unit="{approval}", description="Approval decisions"
        )
        self.approval_duration = meter.create_histogram(
            "hermes.approval.duration",
            unit="ms",
            description="Time waiting for a human approval decision",
            explicit_bucket_boundaries_advisory=MS_BUCKETS,
        )
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used per provider request (GenAI semantic conventions)",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Provider request duration (GenAI semantic conventions)",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
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
