"""``observability/relay``: observer hooks → Relay-compatible ATOF events and ATIF trajectories.

Configured by environment (``WAYLINE_RELAY_*`` or Hermes' ``HERMES_NEMO_RELAY_*``) and a
plugins.toml (:mod:`.settings`). With an ``adaptive`` component in the plugins.toml the plugin
also registers execution middleware that runs the real calls inside relay's spans
(:mod:`.managed`). Works unchanged in Hermes Agent (entry point ``wayline_relay``;
``docs/hermes.md`` lists the host differences absorbed here and in the observer).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wayline.contract.private import private_directory
from wayline.plugins.observability import RELAY_HOOKS
from wayline.plugins.observability.hookqueue import HookQueue, QueuedHook
from wayline.plugins.observability.instance import PluginInstance
from wayline.plugins.observability.relay.settings import RelaySettings, load_settings

if TYPE_CHECKING:
    from wayline.plugins.observability.relay.handlers import RelayHandlers
    from wayline.plugins.observability.relay.observer import RelayObserver

__all__ = ["RelayPlugin", "register"]

log = logging.getLogger("wayline.plugins.relay")

WAIT_S = 30.0
"""Longest wait of a session's end, and of shutdown, for the hook thread (a huge final ATIF)."""


_CHILDREN_KEPT = 4096


class _EndWaits:
    """Which session ends wait for the hook thread: those whose files a caller may read at
    once. A top-level session's ``on_session_finalize``/``on_session_reset`` returns once its
    ATOF lines and ATIF file are written; a delegated child's (known from ``subagent_start``)
    does not hold up the parent's tool call, unless ATIF exports every child to a file."""

    def __init__(self, all_children_exported: bool) -> None:
        self._exported = all_children_exported
        # Insertion-ordered and bounded: Hermes never finalizes a child, so ids pile up.
        self._children: dict[str, None] = {}

    def waits(self, payload: dict[str, Any]) -> bool:
        """Whether this session end waits for the hook thread (a child's, once, unless exported)."""
        session = str(payload.get("session_id") or payload.get("old_session_id"))
        if session not in self._children:
            return True
        self._children.pop(session, None)
        return self._exported

    def wrap(self, queue: HookQueue, hook: str, callback: Any) -> QueuedHook:
        """The host callback (an OBSERVER) of ``hook``: queued, and waiting where
        :meth:`waits` says so (``on_session_end`` never: a run's end is not the session's)."""
        if hook in ("on_session_finalize", "on_session_reset"):
            return queue.wrap(hook, callback, wait_s=WAIT_S, wait_if=self.waits)
        if hook == "subagent_start":
            return queue.wrap(hook, callback, first=self.note_child)
        return queue.wrap(hook, callback)

    def note_child(self, payload: dict[str, Any]) -> None:
        """Remember a delegated child (``subagent_start``, on the calling thread; bounded)."""
        child = payload.get("child_session_id")
        if child:
            children = self._children
            children[str(child)] = None
            if len(children) > _CHILDREN_KEPT:
                with contextlib.suppress(StopIteration, KeyError, RuntimeError):
                    del children[next(iter(children))]


def _host_agent(ctx: Any) -> tuple[str, str | None]:
    """ATIF agent name and version defaults for the host whose context registers us (no
    version: wayline's own, see ``settings.wayline_version``)."""
    if type(ctx).__module__.split(".", 1)[0] == "hermes_cli":
        version = getattr(sys.modules.get("hermes_cli"), "__version__", None)
        return "Hermes Agent", str(version or "unknown")
    return "wayline", None


class RelayPlugin(PluginInstance["RelayHandlers"]):
    """The plugin's state for one host: settings, observer and exporters, hook queue (two
    agents in one process have two, each with its own files)."""

    HOOKS = RELAY_HOOKS

    def __init__(self, settings: RelaySettings) -> None:
        self.settings = settings
        self.managed = settings.adaptive_mode is not None
        atif = settings.atif
        self._ends = _EndWaits(atif is not None and atif.subagent_export_mode == "all")
        queued = settings.async_hooks and not self.managed
        if queued:
            _check_outputs(settings)  # what building would reject fails the plugin's load here
        super().__init__("observability/relay", queued=queued, drain_s=WAIT_S, close_s=WAIT_S)

    def _make(self) -> RelayHandlers:
        from wayline.plugins.observability.relay.handlers import RelayHandlers

        return RelayHandlers(self.settings, later=self.queue, managed=self.managed)

    def _release(self, built: RelayHandlers) -> None:
        built.close()

    def _callback(self, built: RelayHandlers, hook: str) -> Callable[..., Any]:
        return built.callbacks[hook]

    def _queued(self, queue: HookQueue, hook: str, callback: Callable[..., Any]) -> QueuedHook:
        return self._ends.wrap(queue, hook, callback)

    def middleware(self) -> dict[str, Any]:
        """Managed (adaptive) mode's execution middleware, run with this instance's route."""
        if not self.managed:
            return {}
        from wayline.plugins.observability.relay.managed import ManagedExecution

        handlers = self.built()
        execution = ManagedExecution(handlers.observer, str(self.settings.adaptive_mode))
        emitting = handlers.route.emitting
        return {
            "llm_execution": emitting(execution.llm_execution),
            "tool_execution": emitting(execution.tool_execution),
        }

    @property
    def observer(self) -> RelayObserver:
        """The observer, once every queued hook has reached it (tests close sessions with it)."""
        self.drain()
        return self.built().observer


def _check_outputs(settings: RelaySettings) -> None:
    """Create the ATOF directory and check the stream sinks' headers, as building would."""
    if settings.atof is not None:
        private_directory(settings.atof.output_directory)
    if settings.streams:
        from wayline.relay.atof_stream import check_headers

        for sink in settings.streams:
            check_headers(sink.headers, sink.header_env)


def register(ctx: Any) -> RelayPlugin:
    """Plugin entry point: build this host's instance and subscribe its hooks (and
    middleware); returns it. Files go under ``ctx.home`` unless configured elsewhere. The
    observer runs on the hook thread, or on the calling thread with ``*_ASYNC_HOOKS=0`` and
    in managed mode (its middleware runs the real calls inside relay's spans)."""
    agent_name, agent_version = _host_agent(ctx)
    home = getattr(ctx, "home", None)
    settings: RelaySettings = load_settings(
        agent_name=agent_name,
        agent_version=agent_version,
        home=Path(home) if home is not None else None,
    )
    plugin = RelayPlugin(settings)
    plugin.bind(ctx)
    for kind, middleware in plugin.middleware().items():
        ctx.register_middleware(kind, middleware)
    log.debug(
        "observability/relay registered (atof=%s, atif=%s, managed=%s, hook thread=%s)",
        settings.atof,
        settings.atif,
        plugin.managed,
        plugin.queue is not None,
    )
    return plugin
