"""``observability/otel`` run by the hook worker process (the default, see ``hookproc``).

:class:`RemoteOtel` is what the agent's process holds: its hooks only queue, and its
queries (``force_flush``, ``stats``, ``traceparent_for_child``) are answered by the
:class:`OtelHandlers` that :func:`build` makes in the worker process from the same settings
(with ``async_hooks`` off there: the worker process runs the callbacks as they arrive).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from wayline.plugins.observability.hookproc import remote
from wayline.plugins.observability.hookqueue import HookQueue
from wayline.plugins.observability.otel.observer import HOOKS
from wayline.plugins.observability.otel.plugin import KEY, OtelFront, OtelPlugin, create
from wayline.plugins.observability.otel.settings import OtelSettings

# The observer reads the sanitized ``response``, never the provider's response object.
UNREAD = (("post_api_request", "assistant_message"),)


class OtelHandlers:
    """An in-process :class:`OtelPlugin` with synchronous hooks, as hook-worker handlers."""

    def __init__(self, settings: OtelSettings) -> None:
        self.plugin: OtelPlugin = create(dataclasses.replace(settings, async_hooks=False))
        self.callbacks: Mapping[str, Callable[..., Any]] = self.plugin.hooks()

    def call(self, name: str, *args: Any) -> Any:
        """``force_flush(timeout_ms)``, ``stats()``, ``traceparent_for_child(child)``."""
        if name == "force_flush":
            return self.plugin.force_flush(*args)
        if name == "stats":
            return self.plugin.stats()
        if name == "traceparent_for_child":
            return self.plugin.traceparent_for_child(*args)
        raise ValueError(f"observability/otel handlers: unknown call {name!r}")

    def flush(self) -> None:
        """After each hook batch: the counters' additions of the batch go to the SDK (from
        the first batch on, they gather until this call: see ``Instruments``), and a local
        exporter (file, console) is woken to write the batch's spans now, while the agent
        works on; remote exporters keep their schedule (one request per batch would be too
        many). The export runs on the processor's own thread, so an exporter that hangs
        never holds up the hooks."""
        self.plugin.observer.m.flush(gather=True)
        processor = self.plugin.pipeline.processor
        if processor is not None and processor.local:
            processor.request_flush()

    def close(self, timeout_s: float = 0.0) -> None:
        """End open spans, export what is left, stop the exporters."""
        self.plugin.shutdown()


def build(settings: OtelSettings) -> OtelHandlers:
    """Factory for the hook worker process."""
    return OtelHandlers(settings)


class RemoteOtel(OtelFront):
    """The plugin whose observer and pipeline run in the hook worker process."""

    def __init__(self, settings: OtelSettings) -> None:
        self.settings = settings
        spec = remote("wayline.plugins.observability.otel.worker:build", settings, UNREAD)
        self.queue: HookQueue = HookQueue(label=KEY, remote=spec)
        self._closed = False

    def _callbacks(self) -> dict[str, Callable[..., Any] | None]:
        return dict.fromkeys(HOOKS)

    def _export_flush(self, timeout_ms: int) -> bool:
        return bool(self.queue.call("force_flush", timeout_ms, timeout_s=timeout_ms / 1000 + 5))

    def _traceparent(self, child_session_id: str) -> str | None:
        value = self.queue.call("traceparent_for_child", child_session_id)
        return None if value is None else str(value)

    def stats(self) -> dict[str, int]:
        """The worker process's export counters, plus ``hooks_pending``/``hook_failures``."""
        stats: dict[str, int] = dict(self.queue.call("stats"))
        stats["hooks_pending"] = self.queue.pending()
        stats["hook_failures"] = self.queue.failure_count()
        return stats

    def shutdown(self) -> None:
        """End open spans (``incomplete``), export what is left (bounded), stop the worker."""
        if not self._closed:
            self._closed = True
            self.queue.close(self.settings.shutdown_timeout_ms / 1000.0 + 5.0)
