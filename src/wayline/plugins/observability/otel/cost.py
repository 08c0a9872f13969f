"""A call's cost on its ``api.{model}`` span and in the ``hermes.llm.cost`` counter.

The figure comes from :mod:`wayline.pricing` (the bundled ``genai-prices`` table, offline). A
model the table does not know gets no cost attribute and adds nothing to the counter: an
unknown cost is absent, never $0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.metrics import Meter

from wayline.plugins.observability.otel.attributes import Attrs
from wayline.pricing import COST_ATTRIBUTES, Pricer

__all__ = ["CostMeter"]


class CostMeter:
    """Prices ``post_api_request`` payloads into span attributes and a USD counter."""

    def __init__(self, meter: Meter) -> None:
        self.pricer = Pricer()
        self.pricer.load()  # with the plugin's build, not at the first priced call
        self.counter = meter.create_counter(
            "hermes.llm.cost", unit="USD", description="Cost of successful provider calls"
        )

    def add(self, attrs: Attrs, kw: Mapping[str, Any], labels: Mapping[str, str]) -> None:
        """Set the cost attributes on ``attrs`` and count the cost under the model's labels.

        An OBSERVER step: runs on the hook thread with the plugin's hook, never blocks.
        """
        cost = self.pricer.hook_cost(kw)
        if cost is None:
            return
        for key in COST_ATTRIBUTES:
            attrs[key] = cost
        self.counter.add(
            cost,
            {
                "model": labels.get("gen_ai.request.model", ""),
                "provider": labels.get("gen_ai.provider.name", ""),
            },
        )
