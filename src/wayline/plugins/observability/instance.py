"""One plugin instance per host, built on the hook thread: what the relay and otel plugins share.

``register(ctx)`` makes one instance for its host (:meth:`PluginInstance.bind`); the host
closes it, or it closes at the process exit in a host that never closes its plugins (Hermes:
:class:`~wayline.host.exit.ExitHook`). What it builds (observer, exporters, the OpenTelemetry
pipeline) is built by the first hook that needs it, on the hook thread; or at once when hooks
run on the calling thread (a bad setting then fails the plugin's load).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from wayline.host.exit import ExitHook
from wayline.plugins.observability.hookqueue import HookQueue, QueuedHook

__all__ = ["PluginInstance"]

log = logging.getLogger("wayline.plugins.hooks")

Built = TypeVar("Built")


class PluginInstance(Generic[Built]):
    """A plugin's state for one host: its hook queue (``None``: hooks run on the calling
    thread), what it builds on first use (:meth:`_make`), and one close path. Thread-safe."""

    HOOKS: tuple[str, ...] = ()
    """The hooks the plugin observes."""

    def __init__(self, label: str, *, queued: bool, drain_s: float, close_s: float) -> None:
        self.label = label
        self.queue = HookQueue(label=label) if queued else None
        self._drain_s = drain_s
        self._close_s = close_s
        self._built: Built | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._released = False  # closed, and the hooks queued before the close have run
        self._exit: ExitHook | None = None
        if self.queue is None:
            self.built()  # hooks run on the calling thread: build now, fail at load

    def _make(self) -> Built:
        """Build the observer and its exporters (called once, with the lock held)."""
        raise NotImplementedError

    def _release(self, built: Built) -> None:
        """End what is open and flush and close the exporters (once, at close)."""
        raise NotImplementedError

    def _callback(self, built: Built, hook: str) -> Callable[..., Any]:
        """The built observer's callback of ``hook``."""
        raise NotImplementedError

    def _queued(self, queue: HookQueue, hook: str, callback: Callable[..., Any]) -> QueuedHook:
        """The host callback that queues ``callback`` (a plugin may make some of them wait)."""
        return queue.wrap(hook, callback)

    def built(self) -> Built:
        """What the plugin builds, built now if this is its first use (thread-safe)."""
        with self._lock:
            if self._built is None:
                self._built = self._make()
            return self._built

    def _handler(self, hook: str) -> Callable[..., None]:
        """The callback of ``hook`` (before queuing): the built observer's, building it on
        first use; a hook that comes after :meth:`close` builds nothing and is dropped."""

        def handle(**payload: Any) -> None:
            built = self._built
            if built is None:
                if self._released:
                    return
                built = self.built()
            self._callback(built, hook)(**payload)

        handle.__name__ = handle.__qualname__ = hook
        return handle

    def hooks(self) -> dict[str, Callable[..., Any]]:
        """Hook name -> host callback (OBSERVERS that fail open), as ``register(ctx)``
        subscribes them: queued for the hook thread unless hooks run on the calling thread;
        with an exit hook, the session start and end re-arm it."""
        hooks: dict[str, Callable[..., Any]] = {}
        for hook in self.HOOKS:
            callback = self._handler(hook)
            hooks[hook] = (
                callback if self.queue is None else self._queued(self.queue, hook, callback)
            )
        if self._exit is not None:
            for name in ("on_session_start", "on_session_end"):
                hooks[name] = self._exit.arming(hooks[name])
        return hooks

    def bind(self, ctx: Any) -> None:
        """Give this instance to ``ctx``'s host to close (``ctx.register_instance``), or close
        it at the process exit for a host without that; subscribe its hooks."""
        register_instance = getattr(ctx, "register_instance", None)
        if callable(register_instance):
            register_instance(self)
        else:
            self._exit = ExitHook(self.close, name=self.label)
            self._exit.arm()
        for hook, callback in self.hooks().items():
            ctx.register_hook(hook, callback)

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait (bounded) until every hook received so far has been handled; True if so."""
        timeout_s = self._drain_s if timeout_s is None else timeout_s
        return True if self.queue is None else self.queue.drain(timeout_s)

    def stats(self) -> dict[str, int]:
        """``hooks_pending`` (still queued) and ``hook_failures`` of this instance's hooks."""
        queue = self.queue
        if queue is None:
            return {"hooks_pending": 0, "hook_failures": 0}
        return {"hooks_pending": queue.pending(), "hook_failures": queue.failures}

    def close(self) -> None:
        """Run what is queued (bounded), then :meth:`_release` what was built; idempotent.
        A hook after this builds nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        # Queued hooks first (later ones run inline), so the record ends as the host left it;
        # they may be what builds, so what was built is read only after.
        if self.queue is not None and not self.queue.close(self._close_s):
            log.warning("%s: hooks still queued after %.0f s at close", self.label, self._close_s)
        if self._exit is not None:
            self._exit.disarm()
        with self._lock:
            self._released = True
            built = self._built
        if built is not None:
            self._release(built)
