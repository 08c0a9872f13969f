"""Registry entries, scope-local registrations and runtime-registration gates.

Every named registry (intercepts, guardrails, event metadata injectors, sanitizers,
subscribers) reads its effective chain through :func:`effective`: the global entries, plus the
scope-local entries of every scope on the current stack (lowest ``(priority, name)`` first),
minus those a runtime-registration gate rejects. With no scope-local registration and no gate
registered, :data:`state.active` is false and readers take the global snapshot untouched.

Scope-local entries belong to a scope uuid and are dropped when that scope is popped.
Gates are CONTROL callbacks evaluated each time a matching registration is about to run; a
gate that raises fails closed (the registration is skipped) and the error is logged once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = ["Entry", "effective", "state"]

_log = logging.getLogger("wayline.relay")


class Entry(NamedTuple):
    """One registered callback (ordered by priority, then name)."""

    priority: int
    name: str
    break_chain: bool
    fn: Callable[..., Any]


Gate = Callable[[set[str], str], "str | None"]


class _State:
    """Shared flags; ``active`` is read on hot paths without a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = False
        # scope uuid -> registration kind -> name -> entry
        self.local: dict[str, dict[str, dict[str, Entry]]] = {}
        self.gates: dict[str, tuple[frozenset[str], str, Gate]] = {}
        self.failed_gates: set[str] = set()
        # Set by wayline.relay._scopes.stack_ops: uuids of the scopes on the current stack,
        # innermost first.
        self.stack_uuids: Callable[[], list[str]] = list

    def refresh(self) -> None:
        self.active = bool(self.local or self.gates)


state = _State()


def _key(entry: Entry) -> tuple[int, str]:
    return entry.priority, entry.name


def add_local(scope_uuid: str, kind: str, entry: Entry, what: str) -> None:
    """Register ``entry`` under ``scope_uuid``; ``RuntimeError`` when the name is taken there."""
    with state.lock:
        kinds = state.local.setdefault(scope_uuid, {})
        names = kinds.setdefault(kind, {})
        if entry.name in names:
            raise RuntimeError(
                f"already exists: scope-local {what} {entry.name!r} is already registered"
            )
        names[entry.name] = entry
        state.refresh()


def remove_local(scope_uuid: str, kind: str, name: str) -> bool:
    """Remove one scope-local entry; ``True`` if it existed."""
    with state.lock:
        names = state.local.get(scope_uuid, {}).get(kind)
        if not names or names.pop(name, None) is None:
            return False
        if not names:
            del state.local[scope_uuid][kind]
        if not state.local[scope_uuid]:
            del state.local[scope_uuid]
        state.refresh()
        return True


def drop_scope(scope_uuid: str) -> None:
    """Forget every registration owned by a popped scope."""
    if scope_uuid in state.local:
        with state.lock:
            state.local.pop(scope_uuid, None)
            state.refresh()


def local_entries(kind: str, uuids: Iterable[str]) -> list[Entry]:
    """The scope-local entries of ``kind`` owned by any of ``uuids``."""
    local = state.local
    found: list[Entry] = []
    for uuid in uuids:
        kinds = local.get(uuid)
        if kinds is not None:
            found.extend(kinds.get(kind, {}).values())
    return found


def set_gate(name: str, kinds: frozenset[str], registration_name: str, gate: Gate) -> None:
    """Register a runtime-registration gate; ``RuntimeError`` when ``name`` is taken."""
    with state.lock:
        if name in state.gates:
            raise RuntimeError(f"already exists: registration gate {name!r} is already registered")
        state.gates[name] = (kinds, registration_name, gate)
        state.failed_gates.discard(name)
        state.refresh()


def remove_gate(name: str) -> bool:
    """Remove a gate; ``True`` if it existed."""
    with state.lock:
        if state.gates.pop(name, None) is None:
            return False
        state.refresh()
        return True


def allowed(kind: str, name: str) -> bool:
    """Whether every gate matching ``(kind, name)`` lets the registration run."""
    for gate_name, (kinds, registration_name, gate) in list(state.gates.items()):
        if kind not in kinds or registration_name != name:
            continue
        try:
            verdict = gate({kind}, name)
        except Exception:
            if gate_name not in state.failed_gates:
                state.failed_gates.add(gate_name)
                _log.exception("registration gate %r failed; keeping %r active", gate_name, name)
            continue  # a failing gate fails open: the registration keeps running
        if verdict is not None:
            return False
    return True


def effective(
    kind: str, base: tuple[Entry, ...], extra_uuids: Iterable[str] = ()
) -> tuple[Entry, ...]:
    """The chain of ``kind`` in the current context (see the module docstring)."""
    entries = list(base)
    if state.local:
        uuids = state.stack_uuids()
        uuids.extend(extra_uuids)
        local = local_entries(kind, dict.fromkeys(uuids))
        if local:
            entries = sorted([*entries, *local], key=_key)
    if state.gates:
        entries = [entry for entry in entries if allowed(kind, entry.name)]
    return tuple(entries)
