"""Global event subscribers, with the nemo_relay ``subscribers`` names.

A subscriber is an OBSERVER: ``callback(event)`` runs synchronously on the thread that
emitted the event, before the emitting call returns, and in emission order for that thread.
If it raises an ``Exception``, the error is logged once per subscriber name and delivery
continues with the next subscriber; ``BaseException`` (KeyboardInterrupt, SystemExit,
cancellation) propagates to the caller. Callbacks may be called from several threads at once
and should be quick; they must not block for long.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wayline.relay._intercepts import registrations as _reg

if TYPE_CHECKING:
    from wayline.relay.events import Event

__all__ = ["deregister", "flush", "flush_async", "register", "registered"]

_log = logging.getLogger("wayline.relay")

Callback = Callable[["Event"], Any]

_lock = threading.Lock()
_registry: dict[str, Callback] = {}
_failed: set[str] = set()

# Emitters read this tuple without a lock: registration replaces it wholesale, so a reader
# sees either the old or the new snapshot, and an empty tuple means "build no event at all".
_callbacks: tuple[tuple[str, Callback], ...] = ()
# Publication middleware (wayline.relay._scopes.publish) and scope-local delivery, when installed.
_hook: Callable[[Event], None] | None = None
_local: Callback | None = None
LOCAL_NAME = "<scope-local subscribers>"


def _rebuild() -> None:
    global _callbacks
    items = tuple(_registry.items())
    _callbacks = items if _local is None else (*items, (LOCAL_NAME, _local))


def set_hook(hook: Callable[[Event], None] | None) -> None:
    """Install (or remove) the function applied to every event before delivery."""
    global _hook
    _hook = hook


def set_local_delivery(callback: Callback | None) -> None:
    """Install (or remove) the scope-local subscribers' delivery callback."""
    global _local
    with _lock:
        _local = callback
        _rebuild()


def register(name: str, callback: Callback) -> None:
    """Register ``callback`` under a unique ``name``; ``RuntimeError`` if the name is taken."""
    if not callable(callback):
        raise TypeError(f"subscriber {name!r}: callback must be callable")
    with _lock:
        if name in _registry:
            raise RuntimeError(f"subscriber {name!r} is already registered")
        _registry[name] = callback
        _failed.discard(name)
        _rebuild()


def deregister(name: str) -> bool:
    """Remove the subscriber ``name``; ``True`` if one was removed."""
    with _lock:
        if _registry.pop(name, None) is None:
            return False
        _rebuild()
        return True


def registered() -> list[str]:
    """Names of the registered subscribers, in registration order."""
    return [name for name, _ in _callbacks if name != LOCAL_NAME]


def flush() -> None:
    """Barrier for queued deliveries; delivery is synchronous here, so there is nothing to wait for.

    Kept so code written for nemo_relay (which queues deliveries) ports unchanged.
    """


async def flush_async() -> None:
    """Async form of :func:`flush` (nemo_relay's ``flush`` raises inside a running loop)."""


def dispatch(event: Event, callbacks: tuple[tuple[str, Callback], ...]) -> None:
    """Publish ``event``: publication middleware, then each (ungated) callback."""
    hook = _hook
    if hook is not None:
        hook(event)
    if _reg.state.gates:
        callbacks = tuple(
            item
            for item in callbacks
            if item[0] == LOCAL_NAME or _reg.allowed("subscriber", item[0])
        )
    dispatch_plain(event, callbacks)


def dispatch_plain(event: Event, callbacks: tuple[tuple[str, Callback], ...]) -> None:
    """Deliver ``event`` to each callback; an ``Exception`` is logged once per name and skipped."""
    for name, callback in callbacks:
        try:
            callback(event)
        except Exception:
            if name not in _failed:
                _failed.add(name)
                _log.exception(
                    "relay subscriber %r failed on a %s event %r; skipping it for this event "
                    "(further failures of this subscriber are not logged)",
                    name,
                    event.kind,
                    event.name,
                )
