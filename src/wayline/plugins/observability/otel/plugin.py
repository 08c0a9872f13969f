"""One plugin instance: settings, the private pipeline and observer, and what a host calls."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from wayline.plugins.observability import OTEL_HOOKS
from wayline.plugins.observability.hookqueue import HookQueue, QueuedHook
from wayline.plugins.observability.instance import PluginInstance
from wayline.plugins.observability.otel.settings import OtelSettings

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.trace.export import SpanExporter

    from wayline.plugins.observability.otel.observer import OtelObserver
    from wayline.plugins.observability.otel.pipeline import Pipeline

log = logging.getLogger("wayline.plugins.otel")
KEY = "observability/otel"
TRACEPARENT_ENV = "TRACEPARENT"
PARENT_SESSION_ENV = "WAYLINE_PARENT_SESSION_ID"


class OtelPlugin(PluginInstance["tuple[Pipeline, OtelObserver]"]):
    """The plugin's pipeline and observer; ``hooks()`` is what ``register(ctx)`` subscribes."""

    HOOKS = OTEL_HOOKS

    def __init__(
        self,
        settings: OtelSettings,
        *,
        span_exporter: SpanExporter | None = None,
        metric_reader: MetricReader | None = None,
        clock: Callable[[], float] = time.monotonic,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self._span_exporter = span_exporter
        self._metric_reader = metric_reader
        self._clock = clock
        self._env = dict(os.environ if env is None else env)
        close_s = settings.shutdown_timeout_ms / 1000.0
        super().__init__(KEY, queued=settings.async_hooks, drain_s=5.0, close_s=close_s)

    def _make(self) -> tuple[Pipeline, OtelObserver]:
        from wayline.plugins.observability.otel.observer import OtelObserver
        from wayline.plugins.observability.otel.pipeline import build_pipeline

        pipeline = build_pipeline(
            self.settings, span_exporter=self._span_exporter, metric_reader=self._metric_reader
        )
        observer = OtelObserver(
            self.settings,
            pipeline,
            clock=self._clock,
            remote_parent=self._env.get(TRACEPARENT_ENV) or None,
            remote_parent_session=self._env.get(PARENT_SESSION_ENV) or None,
        )
        return pipeline, observer

    def _release(self, built: tuple[Pipeline, OtelObserver]) -> None:
        """End open spans (``incomplete``), export what is left (bounded), stop threads."""
        pipeline, observer = built
        try:
            observer.close_all()
        finally:
            pipeline.shutdown(self.settings.shutdown_timeout_ms)

    def _callback(self, built: tuple[Pipeline, OtelObserver], hook: str) -> Callable[..., Any]:
        return getattr(built[1], hook)  # type: ignore[no-any-return]

    @property
    def pipeline(self) -> Pipeline:
        """The tracer and meter providers and exporters (built on first use)."""
        return self.built()[0]

    @property
    def observer(self) -> OtelObserver:
        """The hook callbacks' span and metric logic (built on first use)."""
        return self.built()[1]

    def _queued(self, queue: HookQueue, hook: str, callback: Callable[..., Any]) -> QueuedHook:
        """With ``force_flush_on_session_end`` a session's finalize also waits (bounded by
        ``flush_timeout_ms``) until its spans are ended and exported (otherwise the host's
        close or the exit does both)."""
        waits = hook == "on_session_finalize" and self.settings.force_flush_on_session_end
        wait_s = self.settings.flush_timeout_ms / 1000.0 if waits else None
        return queue.wrap(hook, callback, wait_s=wait_s)

    def attach(self, bus: Any, plugin: str = KEY) -> None:
        """Subscribe to a host's hook bus directly (``bus.register(name, callback, plugin)``)."""
        for name, callback in self.hooks().items():
            bus.register(name, callback, plugin)

    def traceparent_for_child(self, child_session_id: str) -> str | None:
        """W3C ``traceparent`` of a delegation span (after ``subagent_start``)."""
        self.drain()
        return self.observer.traceparent_for_child(child_session_id)

    def force_flush(self, timeout_ms: int = 5000) -> bool:
        """Export everything ended so far; waits at most about ``timeout_ms``."""
        started = time.monotonic()
        drained = self.drain(timeout_ms / 1000.0)
        left = max(0, timeout_ms - int((time.monotonic() - started) * 1000))
        return self.pipeline.force_flush(left) and drained

    def stats(self) -> dict[str, int]:
        """Export counters (exported, failed exports, spans they carried) and
        ``hooks_pending``/``hook_failures`` of the hook thread."""
        return {**self.pipeline.stats(), **super().stats()}

    def shutdown(self) -> None:
        """End open spans (``incomplete``), export what is left (bounded), stop threads;
        idempotent (:meth:`close`)."""
        self.close()

    def child_env(
        self, child_session_id: str, parent_session_id: str | None = None
    ) -> dict[str, str]:
        """Environment for a child agent started in another process: it links back to us."""
        env: dict[str, str] = {}
        value = self.traceparent_for_child(child_session_id)
        if value:
            env[TRACEPARENT_ENV] = value
        if parent_session_id:
            env[PARENT_SESSION_ENV] = parent_session_id
        return env


create = OtelPlugin
"""A plugin instance (not registered anywhere); tests and benches pass their exporters."""
