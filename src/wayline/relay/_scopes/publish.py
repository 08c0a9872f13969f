"""Event publication middleware: metadata injectors, mark/scope sanitizers, scope-local
subscribers (the nemo_relay ``event_metadata`` module and the event half of ``guardrails``).

Every event passes, before any subscriber sees it, through:

1. event metadata injectors (``fn(event) -> {key: scalar | list of one scalar type}``), lowest
   ``(priority, name)`` first. Additions never replace a key the event already has, and an
   earlier injector wins over a later one. An injector that raises or returns anything but a
   flat mapping of primitives is logged and its additions omitted (fail open).
2. sanitizers (``fn(event, fields) -> fields`` over ``{"data", "category_profile",
   "metadata"}``): mark sanitizers for marks, scope start/end sanitizers for scope events. A
   sanitizer that raises or returns a non-mapping clears all three fields and stops the chain
   (fail closed).

Coroutine functions are accepted everywhere and awaited
(see :mod:`wayline.relay._intercepts.awaiting`).
Scope-local registrations (:mod:`wayline.relay.scope_local`) apply to events emitted while
their scope is on the stack, and to that scope's own end event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from wayline.relay._intercepts import registrations as _reg
from wayline.relay._intercepts.awaiting import resolve
from wayline.relay._intercepts.chains import Entry, Registry
from wayline.relay._scopes import subscribers as _subs
from wayline.relay.events import Event

__all__ = ["deregister_injector", "register_injector"]

_log = logging.getLogger("wayline.relay")

INJECTORS = Registry("event metadata injector", "event_metadata_injector")
MARK_SANITIZE = Registry("mark sanitize guardrail", "mark_sanitize_guardrail")
SCOPE_SANITIZE_START = Registry("scope sanitize-start guardrail", "scope_sanitize_start_guardrail")
SCOPE_SANITIZE_END = Registry("scope sanitize-end guardrail", "scope_sanitize_end_guardrail")
LOCAL_SUBSCRIBER = "subscriber"
_FIELDS = ("data", "category_profile", "metadata")
_warned: set[str] = set()


def _warn_once(key: str, message: str, *args: Any) -> None:
    if key not in _warned:
        _warned.add(key)
        _log.warning(message, *args)


def _chain(registry: Registry, event: Event) -> tuple[Entry, ...]:
    if not _reg.state.active:
        return registry._chain
    return _reg.effective(registry.reg_kind, registry._chain, (event.uuid,))


def _valid_value(value: Any) -> bool:
    if isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        kinds = {type(item) for item in value}
        if kinds <= {int, float}:  # a numeric list may mix integers and fractions (as Relay)
            return True
        return len(kinds) <= 1 and all(isinstance(i, (str, bool, int, float)) for i in value)
    return False


def _inject(event: Event, chain: tuple[Entry, ...]) -> None:
    additions: dict[str, Any] = {}
    for entry in chain:
        try:
            out = resolve(entry.fn(event))
        except Exception as exc:
            _warn_once(
                f"inj:{entry.name}", "event metadata injector %r failed: %s", entry.name, exc
            )
            continue
        if not isinstance(out, Mapping) or not all(
            isinstance(k, str) and _valid_value(v) for k, v in out.items()
        ):
            _warn_once(
                f"bad:{entry.name}",
                "event metadata injector %r returned invalid attributes; omitting them",
                entry.name,
            )
            continue
        for key, value in out.items():
            additions.setdefault(key, value)
    if not additions:
        return
    metadata = event.metadata
    if metadata is None:
        event.metadata = additions
    elif isinstance(metadata, dict):
        event.metadata = {**metadata, **{k: v for k, v in additions.items() if k not in metadata}}


def _sanitize(event: Event, chain: tuple[Entry, ...]) -> None:
    fields: dict[str, Any] = {name: getattr(event, name) for name in _FIELDS}
    for entry in chain:
        try:
            out = resolve(entry.fn(event, dict(fields)))
            if not isinstance(out, Mapping):
                raise TypeError(f"sanitizer must return a mapping, not {type(out).__name__}")
        except Exception as exc:
            _warn_once(f"san:{entry.name}", "event sanitizer %r failed: %s", entry.name, exc)
            fields = dict.fromkeys(_FIELDS)
            break
        fields = {name: out.get(name) for name in _FIELDS}
    for name in _FIELDS:
        setattr(event, name, fields[name])


def process(event: Event) -> None:
    """Apply injectors then sanitizers to ``event`` in place (the subscribers' hook)."""
    injectors = _chain(INJECTORS, event)
    if injectors:
        _inject(event, injectors)
    if event.kind == "mark":
        sanitizers = _chain(MARK_SANITIZE, event)
    elif getattr(event, "scope_category", None) == "start":
        sanitizers = _chain(SCOPE_SANITIZE_START, event)
    else:
        sanitizers = _chain(SCOPE_SANITIZE_END, event)
    if sanitizers:
        _sanitize(event, sanitizers)


def _deliver_local(event: Event) -> None:
    uuids = _reg.state.stack_uuids()
    uuids.append(event.uuid)
    entries = _reg.local_entries(LOCAL_SUBSCRIBER, dict.fromkeys(uuids))
    if entries:
        _subs.dispatch_plain(event, tuple((e.name, e.fn) for e in entries))


def refresh() -> None:
    """Install the hook and the scope-local delivery only while something needs them."""
    busy = bool(
        INJECTORS._chain
        or MARK_SANITIZE._chain
        or SCOPE_SANITIZE_START._chain
        or SCOPE_SANITIZE_END._chain
        or _reg.state.local
    )
    _subs.set_hook(process if busy else None)
    has_local_subscriber = any(LOCAL_SUBSCRIBER in kinds for kinds in _reg.state.local.values())
    _subs.set_local_delivery(_deliver_local if has_local_subscriber else None)


def register(registry: Registry, name: str, priority: int, fn: Callable[..., Any]) -> None:
    """Register on one of this module's registries and refresh the hook."""
    registry.register(name, priority, False, fn)
    refresh()


def deregister(registry: Registry, name: str) -> bool:
    """Deregister from one of this module's registries and refresh the hook."""
    removed = registry.deregister(name)
    refresh()
    return removed


def register_injector(name: str, priority: int, injector: Callable[[Event], Any]) -> None:
    """Register a global event metadata injector (additive; fails open; see the module doc)."""
    register(INJECTORS, name, priority, injector)


def deregister_injector(name: str) -> bool:
    """Remove a global event metadata injector; ``True`` if it existed."""
    return deregister(INJECTORS, name)
