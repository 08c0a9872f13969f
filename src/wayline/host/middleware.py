"""Middleware chains (the Hermes middleware contract): request rewrites and execution wrappers.

Middleware callbacks are **control** callbacks, not observers:

* Request middleware (``llm_request``, ``tool_request``) runs chained in
  registration order; each callback sees the previous rewrite (Hermes 0.19.0
  hands all callbacks the same initial copy and keeps the last one — we chain,
  as upstream intends). A callback that raises is logged and skipped.
* Execution middleware (``llm_execution``, ``tool_execution``) nests in
  registration order (first registered is outermost) around the base call. It
  fails open around ``next_call`` but never hides a downstream error:

  (a) raising before ``next_call``: warning; the rest of the chain and the base
      still run with this frame's payload;
  (b) raising after a successful ``next_call``: warning; the downstream result is
      returned and nothing re-runs;
  (c) a downstream ``Exception`` reaches the middleware as its original type and
      propagates unless the middleware deliberately translates or recovers it;
  (d) a downstream ``BaseException`` passes through untouched;
  (e) ``next_call`` is single-use: a second call raises ``RuntimeError`` and
      never re-runs downstream;
  (f) :class:`~wayline.contract.errors.ControlRejected` raised before ``next_call`` is
      a deliberate refusal, not a bug: it propagates (fails closed).

Callbacks run on the calling thread (tool workers and subagent threads too) and
may block; they must be thread-safe.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from wayline.contract.errors import ControlRejected
from wayline.contract.hooks import (
    EXECUTION_MIDDLEWARE,
    MIDDLEWARE_KINDS,
    MIDDLEWARE_SCHEMA_VERSION,
    REQUEST_MIDDLEWARE,
    TELEMETRY_SCHEMA_VERSION,
    TraceEntry,
)
from wayline.host.bus import FailureLog, Registration

log = logging.getLogger("wayline.middleware")

MiddlewareCallback = Callable[..., Any]
_EMPTY_TRACE: tuple[TraceEntry, ...] = ()


class RequestResult(NamedTuple):
    """Outcome of a request-middleware chain."""

    payload: Any
    original: Any
    changed: bool
    trace: tuple[TraceEntry, ...]


def safe_copy(value: Any) -> Any:
    """Deep copy, falling back to a shallow copy for members that refuse deepcopy."""
    try:
        return copy.deepcopy(value)
    except Exception:
        if isinstance(value, dict):
            return dict(value)
        if isinstance(value, list):
            return list(value)
        return value


class MiddlewareChains:
    """Per-kind middleware registrations and the two ways of running them."""

    __slots__ = ("_chains", "failures")

    def __init__(self) -> None:
        self._chains: dict[str, tuple[Registration, ...]] = {}
        self.failures = FailureLog(log, "Middleware")

    def register(self, kind: str, callback: MiddlewareCallback, plugin: str = "<direct>") -> None:
        """Append ``callback`` to chain ``kind``; unknown kinds warn but are stored."""
        if not callable(callback):
            raise TypeError(f"plugin {plugin!r}: middleware for {kind!r} is not callable")
        if kind not in MIDDLEWARE_KINDS:
            log.warning(
                "Plugin %r registered unknown middleware kind %r (valid: %s)",
                plugin,
                kind,
                ", ".join(sorted(MIDDLEWARE_KINDS)),
            )
        self._chains[kind] = (*self._chains.get(kind, ()), Registration(callback, plugin))

    def clear(self) -> None:
        """Forget every registration."""
        self._chains = {}

    def has_middleware(self, kind: str) -> bool:
        """True when ``kind`` has at least one callback."""
        return kind in self._chains

    def empty(self) -> bool:
        """True when no middleware of any kind is registered."""
        return not self._chains

    def callbacks(self, kind: str) -> tuple[Registration, ...]:
        """Registrations of ``kind`` in order."""
        return self._chains.get(kind, ())

    def apply_request(self, kind: str, payload: Any, **context: Any) -> RequestResult:
        """Run request middleware ``kind`` over ``payload``.

        With no middleware the payload comes back by reference with an empty trace.
        A return of ``{"request"|"args": new, "source"?, "reason"?, "name"?}``
        replaces the payload and appends a trace entry; ``None`` changes nothing;
        anything else is ignored with a warning.
        """
        regs = self._chains.get(kind)
        if not regs:
            return RequestResult(payload, payload, False, _EMPTY_TRACE)
        key = REQUEST_MIDDLEWARE.get(kind, "request")
        original = safe_copy(payload)
        current = safe_copy(original)
        trace: list[TraceEntry] = []
        base = _base_payload(context)
        for reg in regs:
            try:
                ret = reg.callback(**base, **{key: current, f"original_{key}": original})
            except Exception as exc:
                self.failures.record(reg.plugin, kind, exc)
                continue
            if ret is None:
                continue
            try:  # a hostile return value (a dict whose ``get`` raises) fails open too
                rewrite = ret.get(key) if isinstance(ret, dict) else None
                entry = _trace_entry(ret, reg.plugin) if isinstance(rewrite, dict) else None
            except Exception as exc:
                self.failures.record(reg.plugin, kind, exc)
                continue
            if isinstance(rewrite, dict) and entry is not None:
                current = rewrite
                trace.append(entry)
            else:
                self.failures.record(
                    reg.plugin,
                    kind,
                    TypeError(f"returned {type(ret).__name__}, expected None or {{{key!r}: dict}}"),
                )
        return RequestResult(current, original, bool(trace), tuple(trace))

    def execute(
        self,
        kind: str,
        payload: Any,
        terminal: Callable[[Any], Any],
        *,
        original: Any = None,
        **context: Any,
    ) -> Any:
        """Run ``terminal(payload)`` wrapped by execution middleware ``kind``."""
        regs = self._chains.get(kind)
        if not regs:
            return terminal(payload)
        key = EXECUTION_MIDDLEWARE.get(kind, "request")
        base = _base_payload(context)
        base[f"original_{key}"] = payload if original is None else original
        return self._run(kind, regs, 0, payload, terminal, key, base)

    def _run(
        self,
        kind: str,
        regs: tuple[Registration, ...],
        index: int,
        payload: Any,
        terminal: Callable[[Any], Any],
        key: str,
        base: dict[str, Any],
    ) -> Any:
        if index == len(regs):
            return terminal(payload)
        reg = regs[index]
        state = _Frame()

        def next_call(next_payload: Any = None) -> Any:
            if state.called:
                raise RuntimeError(
                    f"middleware {kind!r} of plugin {reg.plugin!r} called next_call() more than "
                    "once; downstream execution is single-use"
                )
            state.called = True
            use = payload if next_payload is None else next_payload
            result = self._run(kind, regs, index + 1, use, terminal, key, base)
            state.done = True
            state.result = result
            return result

        try:
            return reg.callback(**base, **{key: payload}, next_call=next_call)
        except ControlRejected:
            raise  # a deliberate refusal fails closed, never open
        except Exception as exc:
            if state.done:
                self.failures.record(reg.plugin, kind, exc)  # (b) and (e)
                return state.result
            if state.called:
                raise  # (c): the downstream error, or the middleware's translation of it
            self.failures.record(reg.plugin, kind, exc)  # (a)
            return self._run(kind, regs, index + 1, payload, terminal, key, base)


class _Frame:
    __slots__ = ("called", "done", "result")

    def __init__(self) -> None:
        self.called = False
        self.done = False
        self.result: Any = None


def _base_payload(context: dict[str, Any]) -> dict[str, Any]:
    base = dict(context)
    base.setdefault("telemetry_schema_version", TELEMETRY_SCHEMA_VERSION)
    base.setdefault("middleware_schema_version", MIDDLEWARE_SCHEMA_VERSION)
    return base


def _trace_entry(ret: dict[str, Any], plugin: str) -> TraceEntry:
    entry: TraceEntry = {}
    for field in ("source", "reason", "name"):
        value = ret.get(field)
        if isinstance(value, str) and value:
            entry[field] = value  # type: ignore[literal-required,unused-ignore]
    entry.setdefault("source", plugin)
    return entry
