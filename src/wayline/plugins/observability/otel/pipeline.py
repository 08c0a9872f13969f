"""The plugin's private OpenTelemetry pipeline: providers, exporters, flush and shutdown.

The plugin owns its own ``TracerProvider`` and ``MeterProvider`` and never installs them as
the global providers: a host application that configured OpenTelemetry keeps its own
pipeline untouched, and the plugin's spans go only where the plugin's settings say.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.metrics import Meter, NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ParentBased, Sampler, TraceIdRatioBased
from opentelemetry.trace import Tracer

from wayline.plugins.observability import wayline_version
from wayline.plugins.observability.otel.export import (
    OTLP_LOGGERS,
    CountingSpanExporter,
    JsonLinesMetricExporter,
    JsonLinesSpanExporter,
    OnceFilter,
)
from wayline.plugins.observability.otel.settings import (
    OtelConfigError,
    OtelSettings,
)

__all__ = ["KeyedIds", "Pipeline", "build_pipeline"]

log = logging.getLogger("wayline.plugins.otel")
SCOPE = "wayline.plugins.observability.otel"


class KeyedIds(IdGenerator):
    """The SDK's id generator, keyed per span start by :meth:`starting` (thread-safe).

    The live plugin, ``wayline export otlp`` of the session's ATOF and of its ATIF all name a
    span by the same key: its session and what it is in that session (the n-th turn's root
    and llm span, that turn's m-th API attempt, a tool call by its id, a delegation by the
    child's session, an approval by its call). The ids are a hash of that key, so a backend
    that stores spans by id keeps each span once, whichever mix of the three reached it. A
    span started without a key gets random ids, as the SDK's default generator gives.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._random = RandomIdGenerator()

    def starting(self, key: str | None) -> None:
        """The key of the span this thread starts next (``None``: random ids)."""
        self._local.key = key

    def _keyed(self, kind: str, size: int) -> int | None:
        key = getattr(self._local, "key", None)
        if key is None:
            return None
        digest = hashlib.sha256(f"{kind}\x00{key}".encode()).digest()
        return int.from_bytes(digest[:size], "big") or 1  # zero is an invalid id

    def generate_span_id(self) -> int:
        """The span id of the keyed span being started, else a random one."""
        keyed = self._keyed("span", 8)
        return self._random.generate_span_id() if keyed is None else keyed

    def generate_trace_id(self) -> int:
        """The trace id of the keyed root being started, else a random one."""
        keyed = self._keyed("trace", 16)
        return self._random.generate_trace_id() if keyed is None else keyed


def _resource(settings: OtelSettings) -> Resource:
    attributes: dict[str, Any] = {
        **settings.resource_attributes,
        "service.name": settings.service_name,
        "service.version": wayline_version(),
        "openinference.project.name": settings.project_name or settings.service_name,
    }
    try:
        return Resource.create(attributes)
    except RuntimeError:
        # A session shorter than the SDK's import leaves the building to the process's exit,
        # when the SDK's thread pool for resource detectors refuses work: the standard
        # OTEL_RESOURCE_ATTRIBUTES detector then runs here, on the calling thread.
        from opentelemetry.sdk.resources import OTELResourceDetector
        from opentelemetry.sdk.version import __version__ as sdk_version

        sdk = Resource(
            {
                "telemetry.sdk.language": "python",
                "telemetry.sdk.name": "opentelemetry",
                "telemetry.sdk.version": sdk_version,
            }
        )
        return sdk.merge(OTELResourceDetector().detect()).merge(Resource(attributes))


def _sampler(settings: OtelSettings) -> Sampler | None:
    if settings.sample_rate is None or os.environ.get("OTEL_TRACES_SAMPLER"):
        return None  # the SDK reads OTEL_TRACES_SAMPLER / _ARG itself, and it wins
    return ParentBased(TraceIdRatioBased(settings.sample_rate))


def _otlp_module(settings: OtelSettings, signal: str) -> Any:
    """The SDK's OTLP exporter module for ``signal`` over the configured protocol."""
    transport = "grpc" if settings.protocol == "grpc" else "http"
    name = f"opentelemetry.exporter.otlp.proto.{transport}.{signal}_exporter"
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        extra = "otel-grpc" if transport == "grpc" else "otel"
        raise OtelConfigError(
            f"plugins.entries.observability/otel.protocol: {settings.protocol} needs "
            f"pip install 'wayline[{extra}]' ({exc})"
        ) from None


def _exporter(settings: OtelSettings, signal: str) -> Any:
    """The configured exporter of ``signal`` (``trace`` or ``metric``); None for ``none``."""
    spans = signal == "trace"
    if settings.exporter == "otlp":
        module = _otlp_module(settings, signal)
        return (module.OTLPSpanExporter if spans else module.OTLPMetricExporter)(
            endpoint=settings.traces_endpoint() if spans else settings.metrics_endpoint(),
            headers=settings.headers or None,
            timeout=settings.export_timeout_ms / 1000.0,
        )
    if settings.exporter == "console":
        # stderr: stdout carries the agent's answer in `wayline chat -q`.
        return (ConsoleSpanExporter if spans else ConsoleMetricExporter)(out=sys.stderr)
    if settings.exporter == "file":
        path = settings.file if spans else settings.metrics_file
        assert path is not None
        return (JsonLinesSpanExporter if spans else JsonLinesMetricExporter)(path)
    return None


def _bounded(name: str, work: Callable[[], object], timeout_ms: int) -> bool:
    """Run ``work`` on a daemon thread and wait at most ``timeout_ms`` for it.

    The SDK's flush and shutdown export on the caller's thread and wait out an exporter's
    retries; at exit a collector that is down must not hold the process for that long.
    """

    def run() -> None:
        try:
            work()
        except Exception as exc:
            log.debug("observability/otel: %s failed: %r", name, exc)

    thread = threading.Thread(target=run, name=f"wayline-otel-{name}", daemon=True)
    thread.start()
    thread.join(max(timeout_ms, 0) / 1000.0)
    return not thread.is_alive()


@dataclass
class Pipeline:
    """The SDK's providers, the tracer the observer starts spans with, and bounded flushes."""

    tracer_provider: TracerProvider
    tracer: Tracer
    meter: Meter
    processor: BatchSpanProcessor | None
    counter: CountingSpanExporter | None
    meter_provider: MeterProvider | None
    log_filter: OnceFilter | None = None
    ids: KeyedIds = field(default_factory=KeyedIds)
    """The tracer's id generator: ids keyed by what each span stands for."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _closed: bool = False

    def flush_spans(self, timeout_ms: int, *, only_if_healthy: bool = False) -> bool:
        """Export the ended spans (bounded); with ``only_if_healthy`` not once an export has
        failed (the flush would wait on a failing exporter)."""
        processor = self.processor
        failing = self.counter is not None and self.counter.failed_exports > 0
        if processor is None or (only_if_healthy and failing):
            return processor is None
        return _bounded("flush", processor.force_flush, timeout_ms)

    def force_flush(self, timeout_ms: int = 5000) -> bool:
        """Flush spans and metrics, waiting at most about ``timeout_ms`` for each."""
        spans = self.flush_spans(timeout_ms)
        provider = self.meter_provider
        if provider is None:
            return spans
        return _bounded("metrics", lambda: provider.force_flush(timeout_ms), timeout_ms) and spans

    def shutdown(self, timeout_ms: int) -> None:
        """Export what is left (bounded) and stop the SDK's threads."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        _bounded("shutdown", self.tracer_provider.shutdown, timeout_ms)
        if self.meter_provider is not None:
            provider = self.meter_provider
            _bounded(
                "metrics-stop", lambda: provider.shutdown(timeout_millis=timeout_ms), timeout_ms
            )
        if self.log_filter is not None:
            for name in OTLP_LOGGERS:
                logging.getLogger(name).removeFilter(self.log_filter)

    def stats(self) -> dict[str, int]:
        """Export counters (empty when nothing is exported)."""
        stats = self.counter.stats() if self.counter is not None else {}
        if self.log_filter is not None:
            stats["suppressed_exporter_log_records"] = self.log_filter.suppressed
        return stats


def build_pipeline(
    settings: OtelSettings,
    *,
    span_exporter: SpanExporter | None = None,
    metric_reader: MetricReader | None = None,
) -> Pipeline:
    """Providers for ``settings``; an explicit exporter or reader replaces the configured one."""
    resource = _resource(settings)
    ids = KeyedIds()
    # shutdown_on_exit=False: the plugin's own atexit hook ends open spans first, then
    # shuts the providers down with bounded waits (the SDK's would export on exit unbounded).
    tracer_provider = TracerProvider(
        resource=resource,
        sampler=_sampler(settings),
        shutdown_on_exit=False,
        id_generator=ids,
    )
    if span_exporter is None:
        span_exporter = _exporter(settings, "trace")
    processor: BatchSpanProcessor | None = None
    counter: CountingSpanExporter | None = None
    if span_exporter is not None:
        counter = CountingSpanExporter(span_exporter)
        processor = BatchSpanProcessor(
            counter,
            max_queue_size=settings.max_queue_size,
            max_export_batch_size=min(settings.max_export_batch_size, settings.max_queue_size),
            schedule_delay_millis=settings.schedule_delay_ms,
            export_timeout_millis=settings.export_timeout_ms,
        )
        tracer_provider.add_span_processor(processor)
    tracer = tracer_provider.get_tracer(SCOPE, wayline_version())
    meter_provider: MeterProvider | None = None
    if settings.metrics:
        reader = metric_reader
        if reader is None and (exporter := _exporter(settings, "metric")) is not None:
            reader = PeriodicExportingMetricReader(
                exporter,
                export_interval_millis=settings.metric_export_interval_ms,
                export_timeout_millis=settings.export_timeout_ms,
            )
        if reader is not None:
            meter_provider = MeterProvider(
                resource=resource, metric_readers=[reader], shutdown_on_exit=False
            )
    meter = (meter_provider or NoOpMeterProvider()).get_meter(SCOPE, wayline_version())
    log_filter: OnceFilter | None = None
    if settings.exporter == "otlp" and span_exporter is not None:
        log_filter = OnceFilter(settings)
        for name in OTLP_LOGGERS:
            logging.getLogger(name).addFilter(log_filter)
    return Pipeline(
        tracer_provider, tracer, meter, processor, counter, meter_provider, log_filter, ids
    )
