"""Exporting recorded sessions as OpenTelemetry spans and metrics, after the fact.

The recorded hook calls (:mod:`.recorded`) drive the live plugin's own
:class:`~wayline.plugins.observability.otel.observer.OtelObserver`, one call at a time on the
calling thread, with the thread's clock pinned to each hook's recorded time: span names,
parents, attributes, statuses and times come from the one mapping the live plugin uses.

Trace and span ids are the live plugin's: derived from the session and what each span stands
for (``observability/otel``'s ``pipeline.KeyedIds``), so the live record, the ATOF export and
the ATIF export of one session give the same ids, and a backend that keys spans by id stores
each once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.trace.export import SpanExporter

from wayline.plugins.observability.otel.observer import OtelObserver
from wayline.plugins.observability.otel.pipeline import Pipeline, build_pipeline
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.relay.clock import pin, pinned_ns
from wayline.trajectory.otlp.recorded import HookCall

__all__ = ["OfflineExport", "export_settings"]

_FLUSH_EVERY = 4096
"""Hook calls between span flushes: the batch queue never fills up and drops spans."""


def export_settings(
    settings: OtelSettings,
    *,
    endpoint: str | None = None,
    protocol: str | None = None,
    headers: dict[str, str] | None = None,
    metrics: bool | None = None,
) -> OtelSettings:
    """``settings`` made to send OTLP: flags over the configured values; every span kept."""
    return replace(
        settings,
        enabled=True,
        exporter="otlp",
        endpoint=endpoint if endpoint is not None else settings.endpoint,
        protocol=protocol or settings.protocol,
        headers={**settings.headers, **(headers or {})},
        metrics=settings.metrics if metrics is None else metrics,
        sample_rate=None,
        force_flush_on_session_end=False,
        max_queue_size=max(settings.max_queue_size, 2 * _FLUSH_EVERY),
        export_timeout_ms=_export_timeout_ms(settings),
    )


def _export_timeout_ms(settings: OtelSettings) -> int:
    """The configured export timeout, else 30 s rather than the plugin's 10 s default: a
    backend's first request may be slow (MLflow opens its store) and nothing waits on it."""
    configured = settings.export_timeout_ms
    return 30_000 if configured == OtelSettings().export_timeout_ms else configured


@dataclass
class OfflineExport:
    """One export run: a pipeline and the live plugin's observer."""

    pipeline: Pipeline
    observer: OtelObserver

    @classmethod
    def build(
        cls,
        settings: OtelSettings,
        *,
        span_exporter: SpanExporter | None = None,
        metric_reader: MetricReader | None = None,
    ) -> OfflineExport:
        """A pipeline for ``settings`` (or the given exporter/reader)."""
        pipeline = build_pipeline(
            settings, span_exporter=span_exporter, metric_reader=metric_reader
        )
        # The observer's clock is the recorded time too: TTL sweeps and approval waits are
        # measured as they happened, not as fast as the file is read.
        observer = OtelObserver(settings, pipeline, clock=_recorded_clock)
        return cls(pipeline, observer)

    def session(self, seed: str, calls: Iterable[HookCall]) -> int:
        """Feed one recorded session's hook calls; how many were fed. ``seed`` names the file
        or session in messages only: ids come from what each span stands for.

        Open spans are ended at the last recorded time, as the live plugin ends them at exit.
        """
        del seed
        fed = 0
        last: int | None = None
        try:
            for hook, payload, ns in calls:
                pin(ns)
                last = ns
                getattr(self.observer, hook)(**payload)
                fed += 1
                if fed % _FLUSH_EVERY == 0:
                    self.pipeline.flush_spans(self.pipeline_timeout_ms())
            pin(last)
            self.observer.close_all("recording_end")
        finally:
            pin(None)
        return fed

    def pipeline_timeout_ms(self) -> int:
        """How long a flush may wait for the exporter."""
        return self.observer.settings.export_timeout_ms

    def finish(self) -> dict[str, int]:
        """Export everything (spans, then metrics) and stop; the export counters."""
        timeout = self.pipeline_timeout_ms()
        self.pipeline.flush_spans(timeout)
        self.pipeline.shutdown(timeout)  # sends the metrics, once
        return self.pipeline.stats()


def _recorded_clock() -> float:
    ns = pinned_ns()
    return time.time() if ns is None else ns / 1e9
