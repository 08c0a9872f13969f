"""The relay plugin's observer and the exporters it feeds, as one unit the plugin owns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wayline import relay
from wayline.plugins.observability.relay.hooks import HOOKS
from wayline.plugins.observability.relay.observer import RelayObserver
from wayline.plugins.observability.relay.redacting import redacting
from wayline.plugins.observability.relay.settings import RelaySettings
from wayline.relay.plugin import atof_exporter, stream_exporter

ATOF_NAME = "wayline.relay.atof"


class RelayHandlers:
    """The observer (its hook callbacks) and the ATOF subscriber it feeds."""

    def __init__(self, settings: RelaySettings, *, managed: bool = False) -> None:
        atof = settings.atof
        self.exporter = atof_exporter(atof) if atof is not None else None
        if self.exporter is not None:
            if managed:  # relay records the raw payloads of managed calls: redact them here
                relay.subscribers.register(ATOF_NAME, redacting(self.exporter.export))
            else:
                self.exporter.register(ATOF_NAME)
        # Stream sinks send from their own threads.
        self.streams = [stream_exporter(sink) for sink in settings.streams]
        for i, stream in enumerate(self.streams):
            export = redacting(stream.export) if managed else stream.export
            relay.subscribers.register(f"{ATOF_NAME}.stream.{i}", export)
        self.observer = RelayObserver(settings, managed=managed)
        self.callbacks: Mapping[str, Callable[..., Any]] = {
            hook: getattr(self.observer, hook) for hook in HOOKS
        }

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
