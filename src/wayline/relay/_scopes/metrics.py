"""Metric measurements and ``scope.metric``: a validated group of recordings as one mark.

A metric mark carries ``data_schema {"name": "nemo.relay.metric_measurements", "version": "1"}``
and ``data {"measurements": [...]}``, one entry per :class:`MetricMeasurement`. The whole group
is validated before anything is emitted: one invalid measurement rejects the group with a
``ValueError`` naming it, so subscribers never see half a group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, Final

__all__ = [
    "METRIC_SCHEMA",
    "MetricKind",
    "MetricMeasurement",
    "MetricTemporality",
    "MetricValueType",
    "metric_mark_data",
]

METRIC_SCHEMA: Final = {"name": "nemo.relay.metric_measurements", "version": "1"}
MAX_BOUNDARIES: Final = 64
MAX_UNIT_BYTES: Final = 63


class MetricKind(Enum):
    """OpenTelemetry instrument kind recorded by a measurement."""

    Counter = "counter"
    UpDownCounter = "up_down_counter"
    Gauge = "gauge"
    Histogram = "histogram"

    def __str__(self) -> str:
        return self.value


class MetricValueType(Enum):
    """Explicit numeric representation of a measurement's value."""

    U64 = "u64"
    I64 = "i64"
    F64 = "f64"

    def __str__(self) -> str:
        return self.value


class MetricTemporality(Enum):
    """Preferred aggregation temporality for OTLP metric export."""

    Cumulative = "cumulative"
    Delta = "delta"
    LowMemory = "low_memory"


_ACCEPTED: Final = {
    MetricKind.Counter: {MetricValueType.U64, MetricValueType.F64},
    MetricKind.UpDownCounter: {MetricValueType.I64, MetricValueType.F64},
    MetricKind.Gauge: {MetricValueType.U64, MetricValueType.I64, MetricValueType.F64},
    MetricKind.Histogram: {MetricValueType.U64, MetricValueType.F64},
}


class MetricMeasurement:
    """One typed recording operation emitted by ``scope.metric``."""

    __slots__ = (
        "attributes",
        "boundaries",
        "description",
        "kind",
        "name",
        "unit",
        "value",
        "value_type",
    )

    def __init__(
        self,
        name: str,
        kind: MetricKind,
        value_type: MetricValueType,
        value: int | float,
        unit: str | None = None,
        description: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        boundaries: Sequence[float] | None = None,
    ) -> None:
        if not isinstance(kind, MetricKind):
            raise TypeError(f"kind must be a MetricKind, not {type(kind).__name__}")
        if not isinstance(value_type, MetricValueType):
            raise TypeError(
                f"value_type must be a MetricValueType, not {type(value_type).__name__}"
            )
        self.name = name
        self.kind = kind
        self.value_type = value_type
        self.value = value
        self.unit = unit
        self.description = description
        self.attributes = None if attributes is None else dict(attributes)
        self.boundaries = None if boundaries is None else [float(b) for b in boundaries]

    def __repr__(self) -> str:
        return (
            f"MetricMeasurement(name={self.name!r}, kind={self.kind}, "
            f"value_type={self.value_type}, value={self.value!r})"
        )

    def validate(self) -> None:
        """Raise ``ValueError`` naming this measurement when it cannot be recorded."""
        problem = self._problem()
        if problem is not None:
            raise ValueError(f"invalid metric measurement {self.name!r}: {problem}")

    def _problem(self) -> str | None:
        if not isinstance(self.name, str) or not self.name.strip():
            return "name must be a non-empty string"
        value, vtype = self.value, self.value_type
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "value must be a number"
        if vtype is MetricValueType.F64:
            if not math.isfinite(value):
                return "f64 values must be finite"
        elif not isinstance(value, int):
            return f"{vtype} values must be integers"
        elif vtype is MetricValueType.U64 and not 0 <= value < 2**64:
            return "u64 values must be in 0..2^64"
        elif vtype is MetricValueType.I64 and not -(2**63) <= value < 2**63:
            return "i64 values must fit in 64 bits"
        if self.boundaries is not None:
            if self.kind is not MetricKind.Histogram:
                return "boundaries are only valid for histogram measurements"
            if len(self.boundaries) > MAX_BOUNDARIES:
                return f"boundaries must contain at most {MAX_BOUNDARIES} entries"
            if not all(math.isfinite(b) for b in self.boundaries):
                return "boundaries must be finite"
            if any(a >= b for a, b in zip(self.boundaries, self.boundaries[1:], strict=False)):
                return "boundaries must be strictly increasing without duplicates"
        if self.unit is not None and (not self.unit.isascii() or len(self.unit) > MAX_UNIT_BYTES):
            return f"unit must be ASCII and at most {MAX_UNIT_BYTES} bytes"
        if self.kind is MetricKind.Counter and vtype is MetricValueType.F64 and value < 0:
            return "counter values must be non-negative"
        if vtype not in _ACCEPTED[self.kind]:
            return f"kind {self.kind} does not support value_type {vtype}"
        for key in self.attributes or {}:
            if not isinstance(key, str) or not key.strip():
                return "attributes contains a blank attribute key"
        return None

    def to_json(self) -> dict[str, Any]:
        """The measurement as it appears in a metric mark's ``data``."""
        return {
            "name": self.name,
            "kind": self.kind.value,
            "value_type": self.value_type.value,
            "value": self.value,
            "unit": self.unit,
            "description": self.description,
            "attributes": self.attributes,
            "boundaries": self.boundaries,
        }


def metric_mark_data(measurements: Sequence[MetricMeasurement]) -> dict[str, Any]:
    """A metric mark's ``data``, after validating every measurement (all or nothing)."""
    items = list(measurements)
    for item in items:
        if not isinstance(item, MetricMeasurement):
            raise TypeError(f"measurements must be MetricMeasurement, not {type(item).__name__}")
        item.validate()
    return {"measurements": [item.to_json() for item in items]}
