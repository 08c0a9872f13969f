"""Counters that gather their additions between hook batches (the hook worker process)."""

from __future__ import annotations

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from otel_support import metric_points, value

from wayline.plugins.observability.otel.instruments import Instruments


def _instruments() -> tuple[Instruments, InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    return Instruments(provider.get_meter("t")), reader


def test_gathered_additions_reach_the_sdk_at_each_flush_with_the_same_sums() -> None:
    """After flush(gather=True) counter additions wait until the next flush, then export
    the same sums per attribute set as direct additions; histograms are never held back."""
    gathered, reader = _instruments()
    direct, direct_reader = _instruments()
    gathered.flush(gather=True)
    for inst in (gathered, direct):
        for name, outcome in (("read", "completed"), ("read", "completed"), ("term", "error")):
            inst.tool_calls.add(1, {"tool_name": name, "outcome": outcome})
            inst.tool_duration.record(5.0, {"tool_name": name, "outcome": outcome})
        inst.api_success({"gen_ai.request.model": "m"}, {"input_tokens": 7}, 0.25)
    held = metric_points(reader)
    assert value(held, "hermes.tool.calls") == 0 and value(held, "hermes.tokens.prompt") == 0
    assert value(held, "hermes.tool.duration") == 3  # histograms: recorded at once
    gathered.flush()
    points, expected = metric_points(reader), metric_points(direct_reader)
    for name, labels in (
        ("hermes.tool.calls", {"tool_name": "read", "outcome": "completed"}),
        ("hermes.tool.calls", {"tool_name": "term", "outcome": "error"}),
        ("hermes.tokens.prompt", {"model": "m"}),
    ):
        assert value(points, name, **labels) == value(expected, name, **labels) > 0
    gathered.tool_calls.add(2, {"tool_name": "read", "outcome": "completed"})
    gathered.flush()
    assert value(metric_points(reader), "hermes.tool.calls", tool_name="read") == 4


def test_counters_add_at_once_until_asked_to_gather() -> None:
    """Without flush(gather=True) (the plugin on the agent's side) an addition is exported
    at once; an unhashable attribute value or a negative amount is always left to the SDK
    (which drops the latter, instead of it lowering a gathered sum)."""
    inst, reader = _instruments()
    inst.sessions.add(1, {"kind": "turn", "final_status": "ok"})
    assert value(metric_points(reader), "hermes.sessions") == 1
    inst.flush(gather=True)
    inst.sessions.add(1, {"kind": "turn", "final_status": ["a", "b"]})  # type: ignore[dict-item]
    assert value(metric_points(reader), "hermes.sessions") == 2
    inst.sessions.add(1, {"kind": "turn", "final_status": "ok"})
    inst.sessions.add(-5, {"kind": "turn", "final_status": "ok"})  # the SDK drops it
    inst.flush()
    assert value(metric_points(reader), "hermes.sessions") == 3
