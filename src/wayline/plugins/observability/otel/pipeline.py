"""The plugin's private OpenTelemetry pipeline: providers, exporters, flush and shutdown.

The plugin owns its own ``TracerProvider`` and ``MeterProvider`` and never installs them as
the global providers: a host application that configured OpenTelemetry keeps its own
pipeline untouched, and the plugin's spans go only where the plugin's settings say.
"""

from __future__ import annotations

import logging
import sys
import threading
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from opentelemetry.metrics import Meter, NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased, Sampler, TraceIdRatioBased
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from wayline.plugins.observability.otel.export import (
    OTLP_LOGGERS,
    BoundedSpanProcessor,
    JsonLinesMetricExporter,
    JsonLinesSpanExporter,
    OnceFilter,
)
from wayline.plugins.observability.otel.lightspan import LightTracer
from wayline.plugins.observability.otel.settings import OtelSettings, sampler_from_env

log = logging.getLogger("wayline.plugins.otel")
SCOPE = "wayline.plugins.observability.otel"


def _version() -> str:
    try:
        return metadata.version("wayline")
    except metadata.PackageNotFoundError:
        return "0"


def _resource(settings: OtelSettings) -> Resource:
    attributes: dict[str, Any] = {
        **settings.resource_attributes,
        "service.name": settings.service_name,
        "service.version": _version(),
        "openinference.project.name": settings.project_name or settings.service_name,
    }
    return Resource.create(attributes)


def _sampler(settings: OtelSettings) -> Sampler | None:
    if settings.sample_rate is None or sampler_from_env():
        return None  # the SDK reads OTEL_TRACES_SAMPLER / _ARG itself
    return ParentBased(TraceIdRatioBased(settings.sample_rate))


def _span_exporter(settings: OtelSettings) -> SpanExporter | None:
    if settings.exporter == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(
            endpoint=settings.traces_endpoint(),
            headers=settings.headers or None,
            timeout=settings.export_timeout_ms / 1000.0,
        )
    if settings.exporter == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        # stderr: stdout carries the agent's answer in `wayline chat -q`.
        return ConsoleSpanExporter(out=sys.stderr)
    if settings.exporter == "file":
        assert settings.file is not None
        return JsonLinesSpanExporter(settings.file)
    return None


def _metric_reader(settings: OtelSettings) -> MetricReader | None:
    exporter: Any
    if settings.exporter == "otlp":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        exporter = OTLPMetricExporter(
            endpoint=settings.metrics_endpoint(),
            headers=settings.headers or None,
            timeout=settings.export_timeout_ms / 1000.0,
        )
    elif settings.exporter == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        exporter = ConsoleMetricExporter(out=sys.stderr)
    elif settings.exporter == "file":
        assert settings.metrics_file is not None
        exporter = JsonLinesMetricExporter(settings.metrics_file)
    else:
        return None
    return PeriodicExportingMetricReader(
        exporter,
        export_interval_millis=settings.metric_export_interval_ms,
        export_timeout_millis=settings.export_timeout_ms,
    )


@dataclass
class Pipeline:
    """Tracer and meter plus what delivers their data; flushes never block on a bad exporter."""

    tracer_provider: TracerProvider
    tracer: LightTracer
    meter: Meter
    processor: BoundedSpanProcessor | None
    meter_provider: MeterProvider | None
    log_filter: OnceFilter | None = None
    _metric_flush: threading.Thread | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _closed: bool = False

    def flush_spans(self, timeout_ms: int, *, only_if_healthy: bool) -> bool:
        """Export queued spans; with ``only_if_healthy`` never waits on a failing exporter."""
        if self.processor is None:
            return True
        if only_if_healthy:
            return self.processor.flush_if_healthy(timeout_ms)
        return self.processor.force_flush(timeout_ms)

    def flush_metrics_async(self, timeout_ms: int) -> threading.Thread | None:
        """Collect and export metrics on a helper thread (the SDK exports on the caller's)."""
        if self.meter_provider is None:
            return None
        provider = self.meter_provider
        with self._lock:
            if self._closed or (self._metric_flush is not None and self._metric_flush.is_alive()):
                return self._metric_flush

            def run() -> None:
                try:
                    provider.force_flush(timeout_millis=timeout_ms)
                except Exception as exc:
                    log.debug("observability/otel: metric flush failed: %r", exc)

            thread = threading.Thread(target=run, name="wayline-otel-metrics", daemon=True)
            self._metric_flush = thread
        thread.start()
        return thread

    def force_flush(self, timeout_ms: int = 5000) -> bool:
        """Flush spans and metrics, waiting at most about ``timeout_ms`` for each."""
        spans = self.flush_spans(timeout_ms, only_if_healthy=False)
        thread = self.flush_metrics_async(timeout_ms)
        if thread is not None:
            thread.join(timeout_ms / 1000.0)
            if thread.is_alive():
                return False
        return spans

    def shutdown(self, timeout_ms: int) -> None:
        """Export what is left (bounded) and stop every worker thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.processor is not None:
            self.processor.shutdown(timeout_ms)
        if self.meter_provider is not None:
            provider = self.meter_provider

            def stop() -> None:
                try:
                    provider.shutdown(timeout_millis=timeout_ms)
                except Exception as exc:
                    log.debug("observability/otel: meter provider shutdown failed: %r", exc)

            thread = threading.Thread(target=stop, name="wayline-otel-metrics-stop", daemon=True)
            thread.start()
            thread.join(timeout_ms / 1000.0)
        if self.log_filter is not None:
            for name in OTLP_LOGGERS:
                logging.getLogger(name).removeFilter(self.log_filter)

    def stats(self) -> dict[str, int]:
        """The span processor's counters (empty when nothing is exported)."""
        stats = self.processor.stats() if self.processor is not None else {}
        if self.log_filter is not None:
            stats["suppressed_exporter_log_records"] = self.log_filter.suppressed
        return stats


def build_pipeline(
    settings: OtelSettings,
    *,
    span_exporter: SpanExporter | None = None,
    metric_reader: MetricReader | None = None,
    exporter_is_local: bool = True,
) -> Pipeline:
    """Providers for ``settings``; an explicit exporter or reader replaces the configured one."""
    resource = _resource(settings)
    # shutdown_on_exit=False: the plugin's own atexit hook ends open spans first, then
    # shuts the providers down with bounded waits (the SDK's would export on exit unbounded).
    tracer_provider = TracerProvider(
        resource=resource, sampler=_sampler(settings), shutdown_on_exit=False
    )
    local = settings.exporter in ("file", "console")
    if span_exporter is None:
        span_exporter = _span_exporter(settings)
    else:
        local = exporter_is_local
    processor: BoundedSpanProcessor | None = None
    if span_exporter is not None:
        processor = BoundedSpanProcessor(
            span_exporter,
            max_queue_size=settings.max_queue_size,
            max_export_batch_size=settings.max_export_batch_size,
            schedule_delay_ms=settings.schedule_delay_ms,
            local=local,
        )
        tracer_provider.add_span_processor(processor)
    tracer = LightTracer(tracer_provider, processor, InstrumentationScope(SCOPE, _version()))
    meter_provider: MeterProvider | None = None
    if settings.metrics:
        reader = metric_reader if metric_reader is not None else _metric_reader(settings)
        if reader is not None:
            meter_provider = MeterProvider(
                resource=resource, metric_readers=[reader], shutdown_on_exit=False
            )
    meter = (meter_provider or NoOpMeterProvider()).get_meter(SCOPE, _version())
    log_filter: OnceFilter | None = None
    if settings.exporter == "otlp" and span_exporter is not None:
        log_filter = OnceFilter()
        for name in OTLP_LOGGERS:
            logging.getLogger(name).addFilter(log_filter)
    return Pipeline(tracer_provider, tracer, meter, processor, meter_provider, log_filter)
