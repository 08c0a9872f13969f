"""Span delivery that can never slow the agent: a bounded queue, one worker, counted drops.

The SDK's ``BatchSpanProcessor`` (1.45) exports on the *caller's* thread inside
``force_flush`` and ignores its timeout there, and logs every queue overflow. This
processor keeps every export on its own daemon thread: ``on_end`` is an append to a bounded
deque (or a counted drop), a flush only wakes the worker and waits (bounded) for it, and an
exporter that is failing or stuck is never waited for. Also here: the JSON-lines file
exporters for offline use and a filter that keeps a flapping OTLP exporter's log to one line.
"""

from __future__ import annotations

import datetime
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from opentelemetry.context import Context
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanContext

from wayline.plugins.observability.cooperation import cooperate

log = logging.getLogger("wayline.plugins.otel")

_dumps = json.JSONEncoder().encode  # json.dumps' defaults, without its per-call set-up


class BoundedSpanProcessor(SpanProcessor):
    """Queues ended spans for a background exporter; never blocks the thread that ends a span.

    ``on_end`` runs on whichever thread ends a span (tool workers, subagent threads): it is
    O(1) under a short lock. When the queue holds ``max_queue_size`` spans the new span is
    dropped and counted; the first drop is logged, later ones only counted. Failed exports
    are counted the same way.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        max_queue_size: int = 2048,
        max_export_batch_size: int = 512,
        schedule_delay_ms: int = 1000,
        local: bool = False,
    ) -> None:
        self.exporter = exporter
        self.local = local
        self._max_queue = max(1, max_queue_size)
        self._max_batch = max(1, min(max_export_batch_size, self._max_queue))
        self._delay = max(schedule_delay_ms, 1) / 1000.0
        self._queue: deque[ReadableSpan] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._wake = threading.Event()
        self._enqueued = 0
        self._settled = 0  # spans whose export was attempted (success or failure)
        self._busy_since: float | None = None
        self._closed = False
        self.exported = 0
        self.dropped_queue_full = 0
        self.dropped_export_failed = 0
        self.failed_exports = 0
        self.last_export_ok: bool | None = None
        self._worker = threading.Thread(target=self._run, name="wayline-otel-export", daemon=True)
        self._worker.start()

    # -- SpanProcessor ------------------------------------------------------------------
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Queue ``span`` for export, or count it as dropped when the queue is full."""
        if not span.context.trace_flags.sampled:
            return
        with self._cond:
            if self._closed or len(self._queue) >= self._max_queue:
                self.dropped_queue_full += 1
                first = self.dropped_queue_full == 1
            else:
                self._queue.append(span)
                self._enqueued += 1
                first = False
                if len(self._queue) >= self._max_batch:
                    self._wake.set()
        if first:
            log.warning(
                "observability/otel: span queue full (%d spans; exporter down or slow) — "
                "dropping spans; further drops are counted, not logged",
                self._max_queue,
            )

    def healthy(self) -> bool:
        """True when the exporter is not inside an export and its last export did not fail."""
        with self._cond:
            return self._busy_since is None and self.last_export_ok is not False

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Wake the worker and wait up to ``timeout_millis`` for what is queued now."""
        with self._cond:
            target = self._enqueued
        self._wake.set()
        with self._cond:
            return self._cond.wait_for(
                lambda: self._settled >= target, max(timeout_millis, 0) / 1000.0
            )

    def request_flush(self) -> None:
        """Ask the worker to export now without waiting for it."""
        self._wake.set()

    def flush_if_healthy(self, timeout_millis: int) -> bool:
        """Flush and wait only when that cannot hang on a failing or stuck exporter.

        A remote exporter is waited for only after it has proved itself (a successful
        export) and is idle; otherwise the worker is just woken.
        """
        with self._cond:
            idle = self._busy_since is None
            proven = self.last_export_ok is True or (self.local and self.last_export_ok is None)
        if idle and proven:
            return self.force_flush(timeout_millis)
        self.request_flush()
        return False

    def shutdown(self, timeout_millis: int = 2000) -> None:
        """Export what is queued (bounded wait), stop the worker, shut the exporter down."""
        with self._cond:
            if self._closed:
                return
            failing = self.last_export_ok is False
            self._closed = True
        self._wake.set()
        # A known outage gets a short grace instead of the full timeout at exit.
        self._worker.join(0.2 if failing and not self.local else timeout_millis / 1000.0)
        try:
            self.exporter.shutdown()  # also aborts an OTLP retry back-off in progress
        except Exception as exc:
            log.debug("observability/otel: exporter shutdown failed: %r", exc)
        self._worker.join(0.5)
        with self._cond:
            left = len(self._queue)
            self._queue.clear()
            self.dropped_export_failed += left
        if left:
            log.warning("observability/otel: %d spans not exported at shutdown", left)

    def stats(self) -> dict[str, int]:
        """Counters: exported, dropped (queue full / export failed), failed exports, queued."""
        with self._cond:
            return {
                "exported": self.exported,
                "dropped_queue_full": self.dropped_queue_full,
                "dropped_export_failed": self.dropped_export_failed,
                "failed_exports": self.failed_exports,
                "queued": len(self._queue),
            }

    # -- the worker -----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            self._wake.wait(self._delay)
            self._wake.clear()
            self._drain()
            with self._cond:
                if self._closed:
                    break
        self._drain()

    def _drain(self) -> None:
        while True:
            with self._cond:
                n = min(self._max_batch, len(self._queue))
                if n == 0:
                    self._cond.notify_all()
                    return
                batch = [self._queue.popleft() for _ in range(n)]
                self._busy_since = time.monotonic()
            ok = first = False
            try:
                ok = self.exporter.export(batch) is SpanExportResult.SUCCESS
            except Exception as exc:
                log.debug("observability/otel: exporter raised %r", exc)
            with self._cond:
                self._busy_since = None
                self._settled += n
                self.last_export_ok = ok
                if ok:
                    self.exported += n
                else:
                    self.failed_exports += 1
                    self.dropped_export_failed += n
                    first = self.failed_exports == 1
                self._cond.notify_all()
            if not ok and first:
                log.warning(
                    "observability/otel: exporting %d spans failed (exporter unreachable?); "
                    "the agent is not affected; further failures are counted, not logged",
                    n,
                )


class _JsonLinesFile:
    """Appends lines to one file, creating its directory; one writer at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fh: TextIO | None = None
        try:  # created up front, so the output is where it is announced before any write
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        except OSError as exc:
            log.warning("observability/otel: cannot create %s: %s", path, exc)

    def write(self, lines: Sequence[str]) -> None:
        """Append ``lines`` (one newline each) and flush."""
        with self._lock:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
            self._fh.write("".join(line + "\n" for line in lines))
            self._fh.flush()

    def close(self) -> None:
        """Close the file (a later write reopens it)."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


_UTC = datetime.UTC
_from_timestamp = datetime.datetime.fromtimestamp


def _iso(ns: int) -> str:
    """``ns_to_iso_str(ns)``: the same datetime, formatted without ``strftime`` (2x faster)."""
    ts = _from_timestamp(ns / 1e9, _UTC)
    return (
        f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}T{ts.hour:02d}:{ts.minute:02d}:"
        f"{ts.second:02d}.{ts.microsecond:06d}Z"
    )


_ascii = json.encoder.encode_basestring_ascii  # what json.dumps writes for a str


def _str_json(value: Any) -> str:
    return _ascii(value) if type(value) is str else _dumps(value)


def _context_json(context: SpanContext) -> dict[str, str]:
    return {
        "trace_id": f"0x{context.trace_id:032x}",
        "span_id": f"0x{context.span_id:016x}",
        "trace_state": repr(context.trace_state),
    }


def _context_text(context: SpanContext) -> str:
    return (
        f'{{"trace_id": "0x{context.trace_id:032x}", "span_id": "0x{context.span_id:016x}", '
        f'"trace_state": {_ascii(repr(context.trace_state))}}}'
    )


def _attributes_json(attributes: Any) -> dict[str, Any] | None:
    return None if attributes is None else dict(attributes)


class SpanJson:
    """``ReadableSpan.to_json(indent=None)``, the same text, at a fraction of its cost.

    The SDK builds a dict per span, re-encodes the span's resource with ``indent=4`` and
    parses it back, then encodes it all; here the line is assembled from its parts: the
    attributes (and any events or links) go through the compact C encoder, the fixed
    fields are formatted directly, and the resource's text is encoded once per resource.
    """

    def __init__(self) -> None:
        self._resource: tuple[Resource | None, str] = (None, "")
        self._kinds: dict[Any, str] = {}

    def _resource_text(self, resource: Resource) -> str:
        cached, text = self._resource
        if cached is not resource:
            value = {"attributes": dict(resource.attributes), "schema_url": resource.schema_url}
            text = _dumps(value)
            self._resource = (resource, text)
        return text

    def __call__(self, span: ReadableSpan) -> str:
        """The span's JSON line text (no newline)."""
        status = span.status
        status_text = f'{{"status_code": {_ascii(str(status.status_code.name))}'
        if status.description:
            status_text += f', "description": {_str_json(status.description)}'
        kind = self._kinds.get(span.kind)
        if kind is None:
            kind = self._kinds[span.kind] = _ascii(str(span.kind))
        start, end, parent, context = span.start_time, span.end_time, span.parent, span.context
        parent_text = "null" if parent is None else f'"0x{parent.span_id:016x}"'
        start_text = f'"{_iso(start)}"' if start else "null"  # ISO text needs no escapes
        end_text = f'"{_iso(end)}"' if end else "null"
        attributes, events, links = span.attributes, span.events, span.links
        return (
            f'{{"name": {_str_json(span.name)}, '
            f'"context": {_context_text(context) if context else "null"}, '
            f'"kind": {kind}, "parent_id": {parent_text}, '
            f'"start_time": {start_text}, "end_time": {end_text}, '
            f'"status": {status_text}}}, '
            f'"attributes": {"null" if attributes is None else _dumps(dict(attributes))}, '
            f'"events": {_dumps([_event_json(e) for e in events]) if events else "[]"}, '
            f'"links": {_dumps([_link_json(link) for link in links]) if links else "[]"}, '
            f'"resource": {self._resource_text(span.resource)}}}'
        )


def _event_json(event: Event) -> dict[str, Any]:
    return {
        "name": event.name,
        "timestamp": _iso(event.timestamp),
        "attributes": _attributes_json(event.attributes),
    }


def _link_json(link: Any) -> dict[str, Any]:
    return {"context": _context_json(link.context), "attributes": _attributes_json(link.attributes)}


class JsonLinesSpanExporter(SpanExporter):
    """One span per line in the SDK's JSON form (``ReadableSpan.to_json``), appended."""

    def __init__(self, path: Path) -> None:
        self._file = _JsonLinesFile(path)
        self._span_json = SpanJson()

    @property
    def path(self) -> Path:
        """The file spans are appended to."""
        return self._file.path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Append ``spans``; FAILURE (never an exception) when the file cannot be written."""
        try:
            lines = []
            for span in spans:
                cooperate()  # a batch's lines are a burst of ~1 ms in the hook worker process
                lines.append(self._span_json(span))
            self._file.write(lines)
        except (OSError, ValueError) as exc:
            log.debug("observability/otel: cannot write %s: %r", self._file.path, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Close the file."""
        self._file.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Lines are flushed as written."""
        return True


class JsonLinesMetricExporter(MetricExporter):
    """One metrics snapshot per line (``MetricsData.to_json``), appended."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._file = _JsonLinesFile(path)

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        """Append one snapshot; FAILURE when the file cannot be written."""
        try:
            self._file.write([metrics_data.to_json(indent=None)])
        except (OSError, ValueError) as exc:
            log.debug("observability/otel: cannot write %s: %r", self._file.path, exc)
            return MetricExportResult.FAILURE
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        """Lines are flushed as written."""
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        """Close the file."""
        self._file.close()


class OnceFilter(logging.Filter):
    """Lets the first record of each message template through and counts the rest.

    Attached to the OTLP exporter's loggers while the plugin runs, so an outage yields one
    warning instead of one per retry (the SDK logs every attempt).
    """

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, int, str]] = set()
        self.suppressed = 0
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """True for the first record of its (logger, level, template)."""
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
