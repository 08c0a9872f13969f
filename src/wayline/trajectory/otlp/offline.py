"""Exporting recorded sessions as OpenTelemetry spans and metrics, after the fact.

The recorded hook calls (:mod:`.recorded`) drive the live plugin's own
:class:`~wayline.plugins.observability.otel.observer.OtelObserver`, one call at a time on the
calling thread, with the thread's clock pinned to each hook's recorded time: span names,
parents, attributes, statuses and times come from the one mapping the live plugin uses.

Trace and span ids come from :class:`SessionIds`, a sequence keyed by the session: the same
file exported twice gives the same ids, so a backend that keys spans by id stores them once.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from wayline.plugins.observability.otel.observer import OtelObserver
from wayline.plugins.observability.otel.pipeline import Pipeline, build_pipeline
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.relay.clock import pin, pinned_ns
from wayline.trajectory.otlp.recorded import HookCall

__all__ = ["OfflineExport", "SessionIds", "export_settings"]

_FLUSH_EVERY = 4096
"""Hook calls between span flushes: the batch queue never fills up and drops spans."""


class SessionIds(IdGenerator):
    """Trace and span ids from a hash of (session key, kind, sequence number).

    :meth:`reseed` starts the sequence of one recorded session; the observer starts spans in
    the recorded order, so the n-th span of a session gets the same id on every export.
    """

    def __init__(self) -> None:
        self._seed = ""
        self._n = 0

    def reseed(self, seed: str) -> None:
        """Start the id sequence of the session (or file) keyed ``seed``."""
        self._seed = seed
        self._n = 0

    def _next(self, kind: str, size: int) -> int:
        self._n += 1
        digest = hashlib.sha256(f"{self._seed}\x00{kind}\x00{self._n}".encode()).digest()
        return int.from_bytes(digest[:size], "big") or 1  # zero is an invalid id

    def generate_span_id(self) -> int:
        """The next span id of the session."""
        return self._next("span", 8)

    def generate_trace_id(self) -> int:
        """The next trace id of the session."""
        return self._next("trace", 16)


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
    """One export run: a pipeline, the observer, and the session-keyed id sequence."""

    pipeline: Pipeline
    observer: OtelObserver
    ids: SessionIds

    @classmethod
    def build(
        cls,
        settings: OtelSettings,
        *,
        span_exporter: SpanExporter | None = None,
        metric_reader: MetricReader | None = None,
    ) -> OfflineExport:
        """A pipeline for ``settings`` (or the given exporter/reader) with session-keyed ids."""
        ids = SessionIds()
        pipeline = build_pipeline(
            settings, span_exporter=span_exporter, metric_reader=metric_reader, id_generator=ids
        )
        # The observer's clock is the recorded time too: TTL sweeps and approval waits are
        # measured as they happened, not as fast as the file is read.
        observer = OtelObserver(settings, pipeline, clock=_recorded_clock)
        return cls(pipeline, observer, ids)

    def session(self, seed: str, calls: Iterable[HookCall]) -> int:
        """Feed one recorded session's hook calls (ids keyed by ``seed``); how many were fed.

        Open spans are ended at the last recorded time, as the live plugin ends them at exit.
        """
        self.ids.reseed(seed)
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
