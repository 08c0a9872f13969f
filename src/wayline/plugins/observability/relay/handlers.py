"""The relay plugin's observer and the exporters it feeds, as one unit one plugin instance owns.

Relay's subscriber registry is process-wide, as in NeMo Relay, and so is every event it
emits: with two agents in one process, a subscriber registered the plain way would see both
agents' events. So each instance registers one subscriber under its own name, an
:class:`EventRoute`, that delivers only the events its own observer emitted: the observer's
callbacks run with the route set in a context variable, and an event is emitted
synchronously inside them, on their thread. Its ATOF file, stream sinks and its sessions'
ATIF exporters are the route's targets.

In managed (adaptive) mode relay records the raw request, response, arguments and result of
the calls it runs (the objects the call uses, which cannot be sanitized in place), so the
route hands its targets a copy of each event whose ``data``, ``metadata`` and
``category_profile`` went through the sanitizer. The observer-driven path sanitizes before
emitting and needs no copy.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from wayline import relay
from wayline.host.bus import FailureLog
from wayline.plugins.observability import RELAY_HOOKS
from wayline.plugins.observability.hookqueue import HookQueue
from wayline.plugins.observability.relay.observer import RelayObserver
from wayline.plugins.observability.relay.settings import RelaySettings
from wayline.redaction.sanitize import sanitize
from wayline.relay.plugin import atof_exporter, stream_exporter

__all__ = ["ATOF_NAME", "EventRoute", "RelayHandlers"]

log = logging.getLogger("wayline.plugins.relay")

ATOF_NAME = "wayline.relay.atof"

_EMITTING: ContextVar[EventRoute | None] = ContextVar("wayline_relay_emitting", default=None)
"""The route of the observer whose callback is running on this thread, if any."""


def redacted(event: Any) -> Any:
    """A copy of a relay event with its payload fields sanitized (the original is untouched)."""
    clone = copy.copy(event)
    clone.data = sanitize(event.data) if event.data is not None else None
    clone.metadata = sanitize(event.metadata) if event.metadata is not None else None
    profile = event.category_profile
    clone.category_profile = sanitize(profile) if profile is not None else None
    clone._line = None  # the cached ATOF text of the original must not be reused
    clone._bytes = None
    return clone


class EventRoute:
    """One plugin instance's relay subscriber: its own events, to its own exporters.

    Kind: OBSERVER. :meth:`__call__` runs on the thread that emitted the event (the hook
    thread, or the agent's thread with synchronous hooks or managed execution) and must not
    block; a target that raises is logged once per target and exception type, and skipped.
    """

    def __init__(self, name: str, *, redact: bool = False) -> None:
        self.name = name
        self._redact = redact  # managed mode: events carry raw payloads
        self._targets: tuple[tuple[str, Callable[[Any], Any]], ...] = ()
        self._failures = FailureLog(log, "Relay exporter")

    def add(self, name: str, target: Callable[[Any], Any]) -> None:
        """Deliver this instance's events to ``target`` too (a new tuple: reads need no lock)."""
        self._targets = (*(t for t in self._targets if t[0] != name), (name, target))

    def remove(self, name: str) -> None:
        """Stop delivering to the target ``name``."""
        self._targets = tuple(t for t in self._targets if t[0] != name)

    def __call__(self, event: Any) -> None:
        if _EMITTING.get() is not self:
            return  # another agent's event, or one emitted outside any plugin
        if self._redact:
            event = redacted(event)
        for name, target in self._targets:
            try:
                target(event)
            except Exception as exc:  # logged once per target and exception type; skipped
                self._failures.record(self.name, name, exc)

    def emitting(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        """``callback`` run with this route as the emitter of the events it causes."""

        def call(*args: Any, **kwargs: Any) -> Any:
            token = _EMITTING.set(self)
            try:
                return callback(*args, **kwargs)
            finally:
                _EMITTING.reset(token)

        call.__name__ = call.__qualname__ = getattr(callback, "__name__", "emitting")
        return call


class RelayHandlers:
    """The observer (its hook callbacks), its event route and the exporters it feeds."""

    def __init__(
        self, settings: RelaySettings, *, later: HookQueue | None = None, managed: bool = False
    ) -> None:
        self.route = EventRoute(f"{ATOF_NAME}@{id(self):x}", redact=managed)
        atof = settings.atof
        self.exporter = atof_exporter(atof) if atof is not None else None
        if self.exporter is not None:
            self.route.add(ATOF_NAME, self.exporter.export)
        # Stream sinks send from their own threads.
        self.streams = [stream_exporter(sink) for sink in settings.streams]
        for i, stream in enumerate(self.streams):
            self.route.add(f"{ATOF_NAME}.stream.{i}", stream.export)
        self.observer = RelayObserver(settings, self.route, later=later, managed=managed)
        relay.subscribers.register(self.route.name, self.route)
        emitting = self.route.emitting
        self.callbacks: Mapping[str, Callable[..., Any]] = {
            hook: emitting(getattr(self.observer, hook)) for hook in RELAY_HOOKS
        }

    def close(self) -> None:
        """End every open session (ATIF written), then flush and close the files."""
        try:
            self.route.emitting(self.observer.close_all)()
        finally:
            relay.subscribers.deregister(self.route.name)
            if self.exporter is not None:
                self.exporter.shutdown()
            for stream in self.streams:
                stream.shutdown()
