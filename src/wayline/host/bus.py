"""The hook bus: registration, O(1) ``has_hook``, fail-open ``invoke_hook``.

Every hook callback is an **observer**: it runs synchronously on the caller's
thread (tool worker threads and subagent threads included, so callbacks must be
thread-safe), an ``Exception`` it raises is logged and skipped, and the next
callback still runs; a ``BaseException`` (KeyboardInterrupt, SystemExit)
propagates. Four hooks may change behaviour through their return value; the
helpers at the bottom implement the Hermes observer contract's table for them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wayline.contract.hooks import TELEMETRY_SCHEMA_VERSION, VALID_HOOKS
from wayline.redaction.unsanitized import has_unsanitized, resolve_payload

if TYPE_CHECKING:
    from wayline.host.middleware import MiddlewareChains

log = logging.getLogger("wayline.hooks")

HookCallback = Callable[..., Any]


class QueuedObserver:
    """A hook callback that hands each payload to its own thread instead of running on the
    hook's: the bundled observability plugins' callbacks are these.

    Kind: OBSERVER (fails open). :meth:`enqueue` runs on the thread that fired the hook (the
    agent's turn thread, a tool worker, a subagent thread) and must return at once; the
    callback's own thread reads the payload later. The bus calls :meth:`enqueue` with its
    payload dict itself (no keyword copy per callback; the bus never changes it afterwards),
    and when every callback of a hook is a ``QueuedObserver`` the sanitized fields may still
    be :class:`~wayline.redaction.unsanitized.Unsanitized`: the observer's thread sanitizes
    them with :func:`~wayline.redaction.unsanitized.resolve_payload` before reading them.
    A host that does not know this class (Hermes) calls the object with keyword arguments,
    which enqueues a dict of them.
    """

    def enqueue(self, payload: dict[str, Any]) -> None:
        """Queue ``payload`` for the observer's thread; never raises into the caller. The host
        may change the payload or what it refers to afterwards: keep a copy of what is read
        later."""
        raise NotImplementedError

    def enqueue_owned(self, payload: dict[str, Any]) -> None:
        """Queue ``payload``, which nobody changes afterwards, nor anything in it (a wayline
        host with no middleware and no observer but queued ones): the observer's thread may
        read it as it is."""
        self.enqueue(payload)

    def __call__(self, **payload: Any) -> None:
        """The plain hook-callback form: enqueue the keyword arguments."""
        self.enqueue(payload)


@dataclass(frozen=True, slots=True)
class Registration:
    """A callback, the plugin that registered it, and whether it is a :class:`QueuedObserver`."""

    callback: HookCallback
    plugin: str
    queued: bool = False


def describe_exception(exc: BaseException) -> str:
    """A plugin exception's message for the log: redacted, bounded, never raising.

    Formatted here rather than by ``logging``: an exception whose ``str()`` raises would
    otherwise make the handler print its own traceback, and a message built from a payload
    may carry a secret.
    """
    try:
        text = str(exc)
    except Exception:
        return f"<{type(exc).__name__} with an unprintable message>"
    from wayline.redaction.sanitize import redact_bounded  # only on failures: imports stay light

    return redact_bounded(text, 2000)


class FailureLog:
    """Logs a callback failure once per (plugin, point, exception type); counts all.

    A plugin that raises on every event would otherwise flood the log; the count
    keeps the evidence (``wayline plugins list`` and the reliability report read it).
    """

    def __init__(self, logger: logging.Logger, what: str) -> None:
        self._log = logger
        self._what = what
        self._lock = threading.Lock()
        self.counts: dict[tuple[str, str, str], int] = {}

    def record(self, plugin: str, point: str, exc: BaseException) -> None:
        """Count a failure; warn the first time this (plugin, point, type) is seen."""
        key = (plugin, point, type(exc).__name__)
        with self._lock:
            n = self.counts.get(key, 0) + 1
            self.counts[key] = n
        if n == 1:
            self._log.warning(
                "%s %r of plugin %r raised %s: %s (further identical failures are counted, "
                "not logged)",
                self._what,
                point,
                plugin,
                type(exc).__name__,
                describe_exception(exc),
            )
        elif self._log.isEnabledFor(logging.DEBUG):
            self._log.debug(
                "%s %r of plugin %r raised again: %s",
                self._what,
                point,
                plugin,
                describe_exception(exc),
            )

    def total(self) -> int:
        """All failures recorded so far."""
        with self._lock:
            return sum(self.counts.values())


class HookBus:
    """Observer-hook registry and dispatcher.

    ``has_hook`` is a dict membership test: call sites check it before building a
    payload, so a hook nobody subscribed to costs one lookup. Only hooks with at
    least one callback are keys, which keeps that test exact.
    """

    __slots__ = ("_hooks", "_middleware", "_queued_only", "_sync", "failures")

    def __init__(self, middleware: MiddlewareChains | None = None) -> None:
        # Tuples, replaced on registration: dispatch iterates without a lock while
        # another thread may register (copy-on-write).
        self._hooks: dict[str, tuple[Registration, ...]] = {}
        # Hooks whose every callback is a QueuedObserver (they sanitize on their own thread).
        self._queued_only: set[str] = set()
        self.failures = FailureLog(log, "Hook")
        # The host's middleware. Its runtime builds every payload anew and never changes one
        # after a hook has seen it, but middleware, and observers called on the hook's own
        # thread, are handed the live objects and may rewrite in place what a payload refers
        # to (a request's messages, a tool's arguments, the history, as context compression
        # does): only a host with neither hands its queued observers payloads they need not
        # copy.
        self._middleware = middleware
        self._sync = False  # whether any callback is not a QueuedObserver

    def register(self, name: str, callback: HookCallback, plugin: str = "<direct>") -> None:
        """Append ``callback`` to hook ``name``; unknown names warn but are stored."""
        if not callable(callback):
            raise TypeError(f"plugin {plugin!r}: callback for hook {name!r} is not callable")
        if name not in VALID_HOOKS:
            log.warning(
                "Plugin %r registered unknown hook %r (valid: %s); stored for forward "
                "compatibility",
                plugin,
                name,
                ", ".join(sorted(VALID_HOOKS)),
            )
        registration = Registration(callback, plugin, isinstance(callback, QueuedObserver))
        regs = self._hooks[name] = (*self._hooks.get(name, ()), registration)
        self._sync = self._sync or not registration.queued
        if all(reg.queued for reg in regs):
            self._queued_only.add(name)
        else:
            self._queued_only.discard(name)

    def clear(self) -> None:
        """Forget every registration."""
        self._hooks.clear()  # in place: ``active`` views handed out stay valid
        self._queued_only.clear()
        self._sync = False

    def queued_only(self, name: str) -> bool:
        """True when every callback of ``name`` is a :class:`QueuedObserver`: a call site may
        then pass :class:`~wayline.redaction.unsanitized.Unsanitized` values, sanitized later
        on the observers' thread instead of the caller's."""
        return name in self._queued_only

    @property
    def active(self) -> Mapping[str, tuple[Registration, ...]]:
        """Hook name → registrations, for hot call sites: ``if "x" in active:``.

        The same dict for the bus's lifetime (updated in place), so a caller may bind it
        once; a membership test on it is the cheapest possible guard. Read-only.
        """
        return self._hooks

    def has_hook(self, name: str) -> bool:
        """True when at least one callback listens to ``name``."""
        return name in self._hooks

    def callbacks(self, name: str) -> tuple[Registration, ...]:
        """Registrations for ``name`` in registration order."""
        return self._hooks.get(name, ())

    def names(self) -> list[str]:
        """Hook names with at least one callback."""
        return sorted(self._hooks)

    def invoke_hook(self, name: str, **payload: Any) -> list[Any]:
        """Call every callback of ``name`` in order; return the non-None results.

        ``telemetry_schema_version`` is added unless the caller set it. Each callback gets
        the payload as keyword arguments; a :class:`QueuedObserver` gets the payload dict
        itself through ``enqueue``, which the bus never changes after that. Unsanitized
        values are sanitized first unless every callback is a :class:`QueuedObserver`.
        """
        return [ret for _, ret in self._returns(name, payload)]

    # -- behaviour hooks (the observer contract's return values) ---------------------------
    # A return value is read inside a try too: a plugin's hostile object (a dict whose
    # ``get`` raises, an unprintable value) fails open like a raising callback.

    def _returns(self, name: str, payload: dict[str, Any]) -> list[tuple[str, Any]]:
        """(plugin, return value) of every callback of ``name`` that returned non-None."""
        regs = self._hooks.get(name)
        if not regs:
            return []
        payload.setdefault("telemetry_schema_version", TELEMETRY_SCHEMA_VERSION)
        if name not in self._queued_only and has_unsanitized(payload):
            resolve_payload(payload)
        chains = self._middleware
        owned = chains is not None and not self._sync and chains.empty()
        out: list[tuple[str, Any]] = []
        for reg in regs:
            try:
                callback: Any = reg.callback
                if not reg.queued:
                    ret = callback(**payload)
                elif owned:
                    ret = callback.enqueue_owned(payload)
                else:
                    ret = callback.enqueue(payload)
            except Exception as exc:
                self.failures.record(reg.plugin, name, exc)
                continue
            if ret is not None:
                out.append((reg.plugin, ret))
        return out

    def _read(
        self, name: str, read: Callable[[Any], str | None], payload: dict[str, Any]
    ) -> list[str]:
        """Each return of ``name`` through ``read``; a ``read`` that raises is logged, skipped."""
        values: list[str] = []
        for plugin, ret in self._returns(name, payload):
            try:
                value = read(ret)
            except Exception as exc:
                self.failures.record(plugin, name, exc)
                continue
            if value is not None:
                values.append(value)
        return values

    def pre_llm_context(self, **payload: Any) -> str:
        """``pre_llm_call``: join context strings (``str`` or ``{"context": ...}``)."""
        return "\n\n".join(self._read("pre_llm_call", _context_piece, payload))

    def pre_tool_block(self, **payload: Any) -> str | None:
        """``pre_tool_call``: the message of the first valid block directive, else None."""
        messages = self._read("pre_tool_call", _block_message, payload)
        return messages[0] if messages else None

    def transform_tool_result(self, **payload: Any) -> str | None:
        """``transform_tool_result``: the first ``str`` return (even empty), else None."""
        values = self._read("transform_tool_result", _any_str, payload)
        return values[0] if values else None

    def transform_llm_output(self, **payload: Any) -> str | None:
        """``transform_llm_output``: the first non-empty ``str`` return, else None."""
        values = self._read("transform_llm_output", _nonempty_str, payload)
        return values[0] if values else None

    def transform_terminal_output(self, **payload: Any) -> str | None:
        """``transform_terminal_output``: the first ``str`` return, else None."""
        values = self._read("transform_terminal_output", _any_str, payload)
        return values[0] if values else None


def _context_piece(ret: Any) -> str | None:
    if isinstance(ret, dict):
        ctx = ret.get("context")
        return str(ctx) if ctx else None
    if isinstance(ret, str) and ret.strip():
        return ret
    return None


def _block_message(ret: Any) -> str | None:
    if isinstance(ret, dict) and ret.get("action") == "block":
        message = ret.get("message")
        if isinstance(message, str) and message:
            return str(message)
    return None


def _any_str(ret: Any) -> str | None:
    return ret if isinstance(ret, str) else None


def _nonempty_str(ret: Any) -> str | None:
    return ret if isinstance(ret, str) and ret else None
