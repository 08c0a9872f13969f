"""What the plugin adds to the SDK's export path: JSON-lines files, export counters and a
filter that keeps a flapping OTLP exporter's log to one line per message.

Spans and metrics go through the SDK's own ``BatchSpanProcessor`` and
``PeriodicExportingMetricReader``; the file exporters are the SDK's console exporters
pointed at a file, one JSON document per line (``ReadableSpan.to_json(indent=None)``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter, SpanExportResult

from wayline.contract.private import PrivatePaths
from wayline.plugins.observability.otel.settings import CredentialFilter, OtelSettings

log = logging.getLogger("wayline.plugins.otel")


def _append(path: Path) -> IO[str]:
    """``path`` opened for appending (its directory created), so the output exists where it
    is announced before the first export."""
    private = PrivatePaths()
    private.directory(path.parent)
    return private.open(path, "a", encoding="utf-8")


def _span_line(span: ReadableSpan) -> str:
    return str(span.to_json(indent=None)) + "\n"


def _metrics_line(data: MetricsData) -> str:
    return str(data.to_json(indent=None)) + "\n"


class JsonLinesSpanExporter(ConsoleSpanExporter):
    """The SDK's console exporter appending one span per line to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = _append(path)
        super().__init__(out=self._file, formatter=_span_line)

    def shutdown(self) -> None:
        """Close the file."""
        self._file.close()


class JsonLinesMetricExporter(ConsoleMetricExporter):
    """The SDK's console metric exporter appending one snapshot per line to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = _append(path)
        super().__init__(out=self._file, formatter=_metrics_line)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        """Close the file."""
        self._file.close()


class CountingSpanExporter(SpanExporter):
    """Delegates to ``exporter`` and counts what it exported and what failed.

    An exporter that raises or returns FAILURE is counted, and the first failure is logged
    once; the agent is never affected (the SDK's processor calls this on its own thread).
    """

    def __init__(self, exporter: SpanExporter) -> None:
        self.exporter = exporter
        self._lock = threading.Lock()
        self.exported = 0
        self.failed_exports = 0
        self.dropped_export_failed = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export ``spans`` through the wrapped exporter; count the outcome."""
        try:
            result = self.exporter.export(spans)
        except Exception as exc:
            log.debug("observability/otel: exporter raised %r", exc)
            result = SpanExportResult.FAILURE
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                self.exported += len(spans)
                return result
            self.failed_exports += 1
            self.dropped_export_failed += len(spans)
            first = self.failed_exports == 1
        if first:
            log.warning(
                "observability/otel: exporting %d spans failed (exporter unreachable?); "
                "the agent is not affected; further failures are counted, not logged",
                len(spans),
            )
        return result

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Flush the wrapped exporter."""
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        """Shut the wrapped exporter down."""
        self.exporter.shutdown()

    def stats(self) -> dict[str, int]:
        """Counters: exported spans, failed exports and the spans they carried."""
        with self._lock:
            return {
                "exported": self.exported,
                "failed_exports": self.failed_exports,
                "dropped_export_failed": self.dropped_export_failed,
            }


class OnceFilter(logging.Filter):
    """Lets the first record of each message template through and counts the rest.

    Attached to the OTLP exporter's loggers while the plugin runs, so an outage yields one
    warning instead of one per retry (the SDK logs every attempt). With ``settings``, the
    records lose the exporter's credentials (the SDK's retry lines quote the request URL),
    and a backend that refuses metrics (Phoenix answers them with 405; the SDK logs an error
    per export) is told once at INFO, its records dropped.
    """

    def __init__(self, settings: OtelSettings | None = None) -> None:
        super().__init__()
        self._seen: set[tuple[str, int, str]] = set()
        self.suppressed = 0
        self._lock = threading.Lock()
        self._refused_told = False
        self._credentials = CredentialFilter(settings) if settings is not None else None

    def filter(self, record: logging.LogRecord) -> bool:
        """True for the first record of its (logger, level, template), never for a metrics
        refusal."""
        if record.name == OTLP_LOGGERS[1] and "Failed to export" in str(record.msg):
            args = record.args if isinstance(record.args, tuple) else ()
            code = next((a for a in args if isinstance(a, int) and 400 <= a < 500), None)
            if code is not None:
                with self._lock:
                    first, self._refused_told = not self._refused_told, True
                if first:
                    log.info(
                        "observability/otel: the OTLP backend does not accept metrics (HTTP "
                        "%s); spans are still exported (metrics: false stops sending them)",
                        code,
                    )
                return False
        if self._credentials is not None:
            self._credentials.filter(record)
        key = (record.name, record.levelno, str(record.msg))
        with self._lock:
            if key in self._seen:
                self.suppressed += 1
                return False
            self._seen.add(key)
        return True


OTLP_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.sdk.metrics._internal.export",
)
