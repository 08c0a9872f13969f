"""The plugin's light spans export what the SDK's own spans export for the same calls."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ParentBased, TraceIdRatioBased
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from wayline.plugins.observability.otel.lightspan import LightTracer


def _both(sampler: Any = None) -> tuple[Any, Any, InMemorySpanExporter, InMemorySpanExporter]:
    """An SDK tracer and a light tracer on providers alike, each with an in-memory exporter."""
    kwargs = {"sampler": sampler} if sampler is not None else {}
    sdk_provider, light_provider = TracerProvider(**kwargs), TracerProvider(**kwargs)
    sdk_out, light_out = InMemorySpanExporter(), InMemorySpanExporter()
    sdk_provider.add_span_processor(SimpleSpanProcessor(sdk_out))
    light = LightTracer(
        light_provider, SimpleSpanProcessor(light_out), InstrumentationScope("scope", "1")
    )
    return sdk_provider.get_tracer("scope", "1"), light, sdk_out, light_out


def _shape(span: ReadableSpan) -> dict[str, Any]:
    return {
        "name": span.name,
        "kind": span.kind,
        "parent": span.parent is not None,
        "same_trace_as_parent": span.parent is None
        or span.parent.trace_id == span.context.trace_id,
        "attributes": dict(span.attributes or {}),
        "events": [(e.name, dict(e.attributes or {}), e.timestamp) for e in span.events],
        "links": len(span.links),
        "status": (span.status.status_code, span.status.description),
        "times": (span.start_time, span.end_time),
        "scope": (span.instrumentation_scope.name, span.instrumentation_scope.version)
        if span.instrumentation_scope
        else None,
        "flags": int(span.context.trace_flags),
    }


def _exercise(start: Any) -> None:
    """The calls the plugin makes: a parent, a child with odd values, events, statuses."""
    root = start("root", None, {"a": 1, "b": "x"}, SpanKind.SERVER, 10)
    child = start("child", root, {"f": 1.5, "ok": True, "none": None, "seq": ["p", "q"]}, None, 20)
    child.set_attribute("late", "v")
    child.set_attribute("none_too", None)
    child.set_attribute("", "empty key: dropped")
    child.set_attribute("mixed", [1, "a"])  # a mixed sequence: dropped
    child.set_attributes({"n": 3, "t": ("u", "v")})
    child.add_event("evt", {"k": "v"}, timestamp=25)
    child.set_status(Status(StatusCode.ERROR, "boom"))
    child.set_status(StatusCode.UNSET)
    child.end(end_time=30)
    child.set_attribute("after_end", 1)
    child.end(end_time=99)
    root.set_status(Status(StatusCode.OK))
    root.set_status(Status(StatusCode.ERROR, "too late"))
    linked = start("linked", None, {}, None, 40)
    linked.add_link(root.get_span_context())
    linked.end(end_time=50)
    root.end(end_time=60)


def _run(tracer: Any, light: bool) -> None:
    def start(name: str, parent: Any, attrs: Any, kind: Any, at: int) -> Any:
        kind = kind or SpanKind.INTERNAL
        if light:
            return tracer.start_span(name, parent, attrs, kind=kind, start_time=at)
        ctx = trace.set_span_in_context(parent) if parent is not None else None
        return tracer.start_span(name, ctx, kind=kind, attributes=attrs, start_time=at)

    _exercise(start)


def test_light_spans_export_what_sdk_spans_export() -> None:
    """Same names, kinds, parents, attributes (lists as tuples, bad ones dropped), events, links,
    status rules (OK final, UNSET ignored), times, scope and flags; calls after end ignored."""
    sdk, light, sdk_out, light_out = _both()
    _run(sdk, light=False)
    _run(light, light=True)
    expected = [_shape(s) for s in sdk_out.get_finished_spans()]
    assert [_shape(s) for s in light_out.get_finished_spans()] == expected
    assert [s["name"] for s in expected] == ["child", "linked", "root"]


def test_light_spans_follow_the_providers_sampler() -> None:
    """A sampled-out span is a NonRecordingSpan (nothing exported, children not recorded);
    a ratio sampler keeps the same decisions as the SDK's for the same trace ids."""
    _, light, _, out = _both(ParentBased(ALWAYS_OFF))
    root = light.start_span("root", None, {})
    assert not root.is_recording() and root.get_span_context().is_valid
    child = light.start_span("child", root, {})
    assert not child.is_recording()
    child.end()
    root.end()
    assert out.get_finished_spans() == ()
    _, light, _, out = _both(TraceIdRatioBased(0.5))
    spans = [light.start_span(f"s{i}", None, {}) for i in range(200)]
    for span in spans:
        span.end()
    kept = {s.context.span_id for s in out.get_finished_spans()}
    assert 40 < len(kept) < 160
    for span in spans:
        bound = TraceIdRatioBased.get_bound_for_rate(0.5)
        sampled = span.get_span_context().trace_id & TraceIdRatioBased.TRACE_ID_LIMIT < bound
        assert (span.get_span_context().span_id in kept) is sampled


def test_light_spans_apply_the_span_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`` / ``..._VALUE_LENGTH_LIMIT`` bound a light span as
    they bound an SDK span."""
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "3")
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "4")
    sdk, light, sdk_out, light_out = _both()
    attrs = {f"k{i}": "abcdefgh" for i in range(6)}
    sdk.start_span("s", attributes=attrs, start_time=1).end(end_time=2)
    light.start_span("s", None, attrs, start_time=1).end(end_time=2)
    (expected,), (got,) = sdk_out.get_finished_spans(), light_out.get_finished_spans()
    assert dict(got.attributes or {}) == dict(expected.attributes or {})
    assert len(got.attributes or {}) == 3 and got.dropped_attributes == expected.dropped_attributes


def test_light_tracer_without_a_processor_records_nothing() -> None:
    """No exporter configured: spans still carry ids (for traceparent) and end quietly."""
    light = LightTracer(TracerProvider(), None, InstrumentationScope("scope"))
    span = light.start_span("s", None, {"a": 1}, links=[Link(trace.INVALID_SPAN_CONTEXT)])
    assert span.get_span_context().is_valid
    span.end()
    assert not span.is_recording()


def test_default_sampler_shortcut_matches_the_sdk_for_remote_parents() -> None:
    """With the default parent-based always-on sampler: a remote unsampled parent's child is
    not recorded, a remote sampled parent's child is, with its trace state (as the SDK)."""
    sdk, light, _, _ = _both()
    state = trace.TraceState([("vendor", "v1")])
    for flags in (trace.TraceFlags.DEFAULT, trace.TraceFlags.SAMPLED):
        remote = trace.NonRecordingSpan(
            trace.SpanContext(
                0x1234,
                0x5678,
                is_remote=True,
                trace_flags=trace.TraceFlags(flags),
                trace_state=state,
            )
        )
        expected = sdk.start_span("c", trace.set_span_in_context(remote))
        got = light.start_span("c", remote, {})
        assert got.is_recording() is expected.is_recording() is bool(flags)
        ctx, want = got.get_span_context(), expected.get_span_context()
        assert (ctx.trace_id, ctx.trace_flags, ctx.trace_state) == (
            want.trace_id,
            want.trace_flags,
            want.trace_state,
        )
