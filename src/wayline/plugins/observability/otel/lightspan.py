"""Spans built by the plugin itself and handed to the SDK's span processor when they end.

The SDK's tracer validates every attribute as it is set (``BoundedAttributes`` runs
``_clean_attribute`` per key, under a lock), copies the span into a ``ReadableSpan`` at the
end and keeps per-span locks, limits and self-metrics: about 90 µs per span on the VM this
was measured on, over 1,000 spans in a 100-turn session (``bench/session.py``). The plugin
knows its attributes are plain ``str``/``int``/``float``/``bool`` values (its attribute
builders make them), so a span here is a dict plus ids until it ends; then one
``ReadableSpan`` is built and given to the pipeline's processor, as the SDK would.

What the SDK does that is kept: the provider's sampler decides (a span it drops is a
``NonRecordingSpan`` carrying the sampled-out context, as in the SDK), the provider's id
generator and resource, trace flags including ``RANDOM_TRACE_ID``, the status rules (OK is
final, UNSET is ignored) and the span limits of ``SpanLimits()`` (environment variables
``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`` etc.): a span over a limit is bounded by the SDK's own
``BoundedAttributes`` when it ends. Any value that is not a plain primitive goes through the
SDK's validation too. What is not kept: ``on_start`` callbacks (the pipeline's processor
exports at the end only) and the SDK's self-metrics of the tracer.

These are OBSERVER internals: nothing here raises into the agent.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.util.types import AttributeValue

__all__ = ["LightSpan", "LightTracer"]

_PLAIN = (str, int, float, bool)
_UNSET = Status(StatusCode.UNSET)
_DROPPED = object()


def _checked(key: str, value: Any) -> Any:
    """``value`` as the SDK would store it (``_DROPPED`` when it would drop it)."""
    if type(value) in _PLAIN and type(key) is str and key:
        return value
    cleaned = BoundedAttributes(attributes={key: value})
    return cleaned.get(key, _DROPPED)


class LightTracer:
    """Starts :class:`LightSpan` objects with explicit parents (never the ambient context)."""

    def __init__(
        self,
        provider: TracerProvider,
        processor: SpanProcessor | None,
        scope: InstrumentationScope,
    ) -> None:
        self.processor = processor
        self.resource = provider.resource
        self.scope = scope
        self.limits = SpanLimits()
        self._sampler = provider.sampler
        self._ids = provider.id_generator

    def start_span(
        self,
        name: str,
        parent: Span | None = None,
        attributes: Mapping[str, Any] | None = None,
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        start_time: int | None = None,
        links: Sequence[Link] | None = None,
    ) -> Span:
        """A recording span under ``parent``, or a ``NonRecordingSpan`` if sampled out."""
        parent_ctx = parent.get_span_context() if parent is not None else None
        if parent_ctx is None or not parent_ctx.is_valid:
            parent_ctx = None
            trace_id = self._ids.generate_trace_id()
            random_id = self._ids.is_trace_id_random()
        else:
            trace_id = parent_ctx.trace_id
            random_id = parent_ctx.trace_flags.random_trace_id
        context = trace.set_span_in_context(parent) if parent is not None else None
        result = self._sampler.should_sample(
            context, trace_id, name, kind, dict(attributes or {}), links or ()
        )
        sampled = result.decision.is_sampled()  # type: ignore[no-untyped-call]
        flags = TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT
        if random_id:
            flags |= TraceFlags.RANDOM_TRACE_ID
        span_ctx = SpanContext(
            trace_id,
            self._ids.generate_span_id(),
            is_remote=False,
            trace_flags=TraceFlags(flags),
            trace_state=result.trace_state,
        )
        if not result.decision.is_recording():  # type: ignore[no-untyped-call]
            return NonRecordingSpan(span_ctx)
        given: Mapping[str, Any] = result.attributes or {}
        attrs: dict[str, Any] = {}
        for key, value in given.items():
            value = _checked(key, value)
            if value is not _DROPPED:
                attrs[key] = value
        return LightSpan(
            self,
            name,
            span_ctx,
            parent_ctx,
            kind,
            attrs,
            list(links or ()),
            start_time if start_time is not None else time.time_ns(),
        )


class LightSpan(Span):
    """A recording span: attributes in a dict, exported as one ``ReadableSpan`` at its end."""

    def __init__(
        self,
        tracer: LightTracer,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        kind: SpanKind,
        attributes: dict[str, Any],
        links: list[Link],
        start_time: int,
    ) -> None:
        self._tracer = tracer
        self.name = name
        self._context = context
        self.parent = parent
        self.kind = kind
        self.attributes = attributes
        self.events: list[Event] = []
        self.links = links
        self.start_time = start_time
        self.status: Status = _UNSET
        self.ended = False

    def get_span_context(self) -> SpanContext:
        """This span's ids."""
        return self._context

    def is_recording(self) -> bool:
        """True until :meth:`end`."""
        return not self.ended

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        """Set one attribute (ignored once ended; cleaned, or dropped, as the SDK does)."""
        if self.ended:
            return
        checked = _checked(key, value)
        if checked is not _DROPPED:
            self.attributes[key] = checked

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        """Set several attributes."""
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def add_event(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue] | None = None,
        timestamp: int | None = None,
    ) -> None:
        """Record an event (its attributes validated as the SDK does)."""
        if self.ended:
            return
        bounded = BoundedAttributes(
            self._tracer.limits.max_event_attributes,
            attributes,
            max_value_len=self._tracer.limits.max_attribute_length,
        )
        self.events.append(Event(name, bounded, timestamp or time.time_ns()))

    def add_link(self, context: SpanContext, attributes: Any = None) -> None:
        """Add a link to another span."""
        if not self.ended and context.is_valid:
            self.links.append(Link(context, attributes))

    def update_name(self, name: str) -> None:
        """Rename the span."""
        if not self.ended:
            self.name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        """The SDK's rules: OK is final, UNSET is ignored."""
        if self.ended or self.status.status_code is StatusCode.OK:
            return
        if not isinstance(status, Status):
            status = Status(status, description)
        if status.status_code is not StatusCode.UNSET:
            self.status = status

    def record_exception(
        self,
        exception: BaseException,
        attributes: Any = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """An ``exception`` event (type and message)."""
        attrs = {
            "exception.type": type(exception).__name__,
            "exception.message": str(exception),
            "exception.escaped": str(escaped),
            **dict(attributes or {}),
        }
        self.add_event("exception", attrs, timestamp)

    def end(self, end_time: int | None = None) -> None:
        """Hand the finished span to the processor (once)."""
        if self.ended:
            return
        self.ended = True
        tracer = self._tracer
        if tracer.processor is None:
            return
        limits = tracer.limits
        attributes: Mapping[str, Any] = self.attributes
        over_count = limits.max_span_attributes is not None and (
            len(attributes) > limits.max_span_attributes
        )
        if over_count or limits.max_span_attribute_length is not None:
            attributes = BoundedAttributes(
                limits.max_span_attributes,
                attributes,
                immutable=True,
                max_value_len=limits.max_span_attribute_length,
            )
        events, links = self.events, self.links
        if limits.max_events is not None and len(events) > limits.max_events:
            events = events[-limits.max_events :]  # the SDK's deque keeps the newest
        if limits.max_links is not None and len(links) > limits.max_links:
            links = links[: limits.max_links]
        tracer.processor.on_end(
            ReadableSpan(
                name=self.name,
                context=self._context,
                parent=self.parent,
                resource=tracer.resource,
                attributes=attributes,
                events=tuple(events),
                links=tuple(links),
                kind=self.kind,
                status=self.status,
                start_time=self.start_time,
                end_time=end_time if end_time is not None else time.time_ns(),
                instrumentation_scope=tracer.scope,
            )
        )
