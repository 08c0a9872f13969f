"""One plugin instance: settings + private pipeline + observer, and what a host calls on it."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.trace.export import SpanExporter

from wayline.plugins.observability.hookqueue import HookQueue
from wayline.plugins.observability.otel.observer import HOOKS, OtelObserver
from wayline.plugins.observability.otel.pipeline import Pipeline, build_pipeline
from wayline.plugins.observability.otel.settings import OtelSettings, load_settings

log = logging.getLogger("wayline.plugins.otel")
KEY = "observability/otel"
TRACEPARENT_ENV = "TRACEPARENT"
PARENT_SESSION_ENV = "WAYLINE_PARENT_SESSION_ID"


class OtelFront:
    """What a host and callers use of the plugin, wherever its observer runs."""

    settings: OtelSettings
    queue: HookQueue | None

    def _callbacks(self) -> dict[str, Callable[..., Any] | None]:
        raise NotImplementedError

    def hooks(self) -> dict[str, Callable[..., None]]:
        """Hook name → host callback, an OBSERVER that fails open.

        With ``async_hooks`` (the default) each callback only queues its payload for the
        hook worker (see ``hookqueue``/``hookproc``); the session-end hooks then wait for the
        worker when ``force_flush_on_session_end`` asks for spans on disk at that point.
        """
        callbacks = self._callbacks()
        queue = self.queue
        if queue is None:
            return {name: cb for name, cb in callbacks.items() if cb is not None}
        hooks = {name: queue.wrap(name, callback) for name, callback in callbacks.items()}
        if self.settings.force_flush_on_session_end:
            timeout_s = self.settings.flush_timeout_ms / 1000.0
            for name in ("on_session_end", "on_session_finalize"):
                hooks[name] = queue.wrap(name, callbacks[name], wait_s=timeout_s)
        return hooks

    def drain(self, timeout_s: float = 5.0) -> bool:
        """Wait (bounded) until every hook received so far has been turned into spans."""
        return True if self.queue is None else self.queue.drain(timeout_s)

    def attach(self, bus: Any, plugin: str = KEY) -> None:
        """Subscribe to a host's hook bus directly (``bus.register(name, callback, plugin)``)."""
        for name, callback in self.hooks().items():
            bus.register(name, callback, plugin)

    def traceparent_for_child(self, child_session_id: str) -> str | None:
        """W3C ``traceparent`` of a delegation span (after ``subagent_start``)."""
        self.drain()
        return self._traceparent(child_session_id)

    def _traceparent(self, child_session_id: str) -> str | None:
        raise NotImplementedError

    def force_flush(self, timeout_ms: int = 5000) -> bool:
        """Export everything ended so far; waits at most about ``timeout_ms``."""
        started = time.monotonic()
        drained = self.drain(timeout_ms / 1000.0)
        left = max(0, timeout_ms - int((time.monotonic() - started) * 1000))
        return self._export_flush(left) and drained

    def _export_flush(self, timeout_ms: int) -> bool:
        raise NotImplementedError

    def stats(self) -> dict[str, int]:
        """Export counters and ``hooks_pending``/``hook_failures``."""
        raise NotImplementedError

    def shutdown(self) -> None:
        """End open spans (``incomplete``), export what is left (bounded), stop threads."""
        raise NotImplementedError

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


class OtelPlugin(OtelFront):
    """The plugin's pipeline and observer in this process; ``hooks()`` is what
    ``register(ctx)`` subscribes."""

    def __init__(
        self,
        settings: OtelSettings,
        pipeline: Pipeline,
        *,
        clock: Callable[[], float] = time.monotonic,
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.settings = settings
        self.pipeline = pipeline
        self.observer = OtelObserver(
            settings,
            pipeline,
            clock=clock,
            remote_parent=env.get(TRACEPARENT_ENV) or None,
            remote_parent_session=env.get(PARENT_SESSION_ENV) or None,
        )
        self._closed = False
        self.queue = HookQueue(label=KEY) if settings.async_hooks else None

    def _callbacks(self) -> dict[str, Callable[..., Any] | None]:
        return {name: getattr(self.observer, name) for name in HOOKS}

    def _export_flush(self, timeout_ms: int) -> bool:
        self.observer.m.flush()
        return self.pipeline.force_flush(timeout_ms)

    def _traceparent(self, child_session_id: str) -> str | None:
        return self.observer.traceparent_for_child(child_session_id)

    def stats(self) -> dict[str, int]:
        """Export counters: exported, dropped (queue full / export failed), queued…, and
        ``hooks_pending``/``hook_failures`` of the hook worker."""
        stats = self.pipeline.stats()
        if self.queue is not None:
            stats["hooks_pending"] = self.queue.pending()
            stats["hook_failures"] = self.queue.failures
        return stats

    def shutdown(self) -> None:
        """End open spans (``incomplete``), export what is left (bounded), stop threads."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.queue is not None:
                self.queue.close(self.settings.shutdown_timeout_ms / 1000.0)
            self.observer.close_all()
            self.observer.m.flush()
        finally:
            self.pipeline.shutdown(self.settings.shutdown_timeout_ms)


def create(
    settings: OtelSettings | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    span_exporter: SpanExporter | None = None,
    metric_reader: MetricReader | None = None,
    exporter_is_local: bool = True,
    clock: Callable[[], float] = time.monotonic,
    env: Mapping[str, str] | None = None,
) -> OtelPlugin:
    """A plugin instance (not registered anywhere); tests and benches pass their exporters."""
    if settings is None:
        settings = load_settings(config, env)
    pipeline = build_pipeline(
        settings,
        span_exporter=span_exporter,
        metric_reader=metric_reader,
        exporter_is_local=exporter_is_local,
    )
    return OtelPlugin(settings, pipeline, clock=clock, env=env)
