"""The relay plugin's observer and ATOF exporter as one unit, built where the hooks run.

The plugin builds it in the agent's process (``WAYLINE_HOOK_WORKER=thread``, synchronous
hooks, managed mode) or has the hook worker process build it (:mod:`..hookproc`, the
default): only the resolved :class:`RelaySettings` cross the process boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wayline import relay
from wayline.plugins.observability.cooperation import cooperate
from wayline.plugins.observability.relay.observer import HOOKS, RelayObserver
from wayline.plugins.observability.relay.redacting import redacting
from wayline.plugins.observability.relay.settings import RelaySettings
from wayline.relay.plugin import atof_exporter, stream_exporter

ATOF_NAME = "wayline.relay.atof"
# The observer reads the sanitized ``response``, never the provider's response object.
UNREAD = (("post_api_request", "assistant_message"),)


class RelayHandlers:
    """The observer (its hook callbacks) and the ATOF subscriber it feeds."""

    def __init__(
        self, settings: RelaySettings, *, managed: bool = False, buffered: bool = False
    ) -> None:
        atof = settings.atof
        self.exporter = atof_exporter(atof, buffered=buffered) if atof is not None else None
        if self.exporter is not None:
            if managed:  # relay records the raw payloads of managed calls: redact them here
                relay.subscribers.register(ATOF_NAME, redacting(self.exporter.export))
            else:
                self.exporter.register(ATOF_NAME)
        # Stream sinks send from their own threads (in the hook worker process by default).
        self.streams = [stream_exporter(sink) for sink in settings.streams]
        for i, stream in enumerate(self.streams):
            export = redacting(stream.export) if managed else stream.export
            relay.subscribers.register(f"{ATOF_NAME}.stream.{i}", export)
        self.observer = RelayObserver(settings, managed=managed)
        self.callbacks: Mapping[str, Callable[..., Any]] = {
            hook: getattr(self.observer, hook) for hook in HOOKS
        }

    def call(self, name: str, *args: Any) -> Any:
        """Queries from the plugin's process: ``open_sessions``."""
        if name == "open_sessions":
            return sorted(self.observer.sessions)
        raise ValueError(f"observability/relay handlers: unknown call {name!r}")

    def flush(self) -> None:
        """After a batch: map its ATIF events, and write the ATOF lines it buffered (one
        ``write()``).

        Mapping now, while the agent waits for its model, leaves a session's final ATIF
        write (which the agent's ``finalize`` waits for) only the last batch to map.
        """
        for sess in list(self.observer.sessions.values()):
            if sess.atif is not None and not sess.closed:
                sess.atif.drain(pause=cooperate)
        if self.exporter is not None:
            self.exporter.force_flush()

    def close(self, timeout_s: float = 0.0) -> None:
        """End every open session (ATIF written), then flush and close the ATOF file."""
        try:
            self.observer.close_all()
        finally:
            if self.exporter is not None:
                relay.subscribers.deregister(ATOF_NAME)
                self.exporter.shutdown()
            for i, stream in enumerate(self.streams):
                relay.subscribers.deregister(f"{ATOF_NAME}.stream.{i}")
                stream.shutdown()


def build(settings: RelaySettings) -> RelayHandlers:
    """Factory for the hook worker process (non-managed mode). Its ATOF lines are written
    once per batch of hooks, in one ``write()``: a line-per-syscall cost ~20% of the worker
    process's time, and a batch is what the worker thread would have lost in a crash too."""
    return RelayHandlers(settings, buffered=True)
