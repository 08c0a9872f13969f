"""Scope-local middleware and subscribers (the nemo_relay ``scope_local`` module).

Each ``register_*`` mirrors its global counterpart but takes the owning ``ScopeHandle`` first:
the registration applies to work emitted while that scope is on the current stack (and to
the scope's own end event) and is removed automatically when the scope is popped. Scope-local
entries join the global ones in one ``(priority, name)`` order. Callback kinds and error rules
are those of the global registries (observers fail open, middleware as documented there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wayline.relay._intercepts import registrations as _reg
from wayline.relay._intercepts.sanitize import require_payload_context
from wayline.relay._scopes import publish as _publish
from wayline.relay._scopes.handles import ScopeHandle

_WHAT = {
    "event_metadata_injector": "event metadata injector",
    "mark_sanitize_guardrail": "mark sanitize",
    "scope_sanitize_start_guardrail": "scope sanitize start",
    "scope_sanitize_end_guardrail": "scope sanitize end",
    "tool_sanitize_request_guardrail": "tool sanitize request",
    "tool_sanitize_response_guardrail": "tool sanitize response",
    "tool_conditional_execution_guardrail": "tool conditional execution",
    "tool_request_intercept": "tool request",
    "tool_execution_intercept": "tool execution",
    "llm_sanitize_request_guardrail": "llm sanitize request",
    "llm_sanitize_response_guardrail": "llm sanitize response",
    "llm_conditional_execution_guardrail": "llm conditional execution",
    "llm_request_intercept": "llm request",
    "llm_execution_intercept": "llm execution",
    "llm_stream_execution_intercept": "llm stream execution",
    "subscriber": "subscriber",
}


def _uuid(scope_handle: ScopeHandle) -> str:
    uuid = getattr(scope_handle, "uuid", None)
    if not isinstance(uuid, str):
        raise TypeError(f"expected a ScopeHandle, not {type(scope_handle).__name__}")
    key = getattr(scope_handle, "_local_key", uuid)
    if key not in _reg.state.stack_uuids():
        # As in Relay: a popped (or foreign) scope owns nothing any more.
        raise RuntimeError(f"not found: scope {uuid} not found")
    return key


def _add(
    scope_handle: ScopeHandle,
    kind: str,
    name: str,
    priority: int,
    break_chain: bool,
    fn: Callable[..., Any],
) -> None:
    what = _WHAT[kind]
    if not isinstance(name, str):
        raise TypeError(f"scope-local {what} name must be a str, not {type(name).__name__}")
    if not callable(fn):
        raise TypeError(f"scope-local {what} {name!r}: callback must be callable")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"scope-local {what} {name!r}: priority must be an int")
    entry = _reg.Entry(priority, name, bool(break_chain), fn)
    _reg.add_local(_uuid(scope_handle), kind, entry, what)
    _publish.refresh()


def _remove(scope_handle: ScopeHandle, kind: str, name: str) -> bool:
    removed = _reg.remove_local(_uuid(scope_handle), kind, name)
    _publish.refresh()
    return removed


def register_event_metadata_injector(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(event) -> metadata additions``, scoped to ``scope_handle``."""
    _add(scope_handle, "event_metadata_injector", name, priority, False, fn)


def deregister_event_metadata_injector(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local event metadata injector; ``True`` if it existed."""
    return _remove(scope_handle, "event_metadata_injector", name)


def register_mark_sanitize(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(event, fields) -> fields`` for marks, scoped to ``scope_handle``."""
    _add(scope_handle, "mark_sanitize_guardrail", name, priority, False, fn)


def deregister_mark_sanitize(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local mark sanitize; ``True`` if it existed."""
    return _remove(scope_handle, "mark_sanitize_guardrail", name)


def register_scope_sanitize_start(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register a scope-local callback: ``fn(event, fields) -> fields``."""
    _add(scope_handle, "scope_sanitize_start_guardrail", name, priority, False, fn)


def deregister_scope_sanitize_start(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local scope sanitize start; ``True`` if it existed."""
    return _remove(scope_handle, "scope_sanitize_start_guardrail", name)


def register_scope_sanitize_end(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(event, fields) -> fields`` for scope ends, scoped to ``scope_handle``."""
    _add(scope_handle, "scope_sanitize_end_guardrail", name, priority, False, fn)


def deregister_scope_sanitize_end(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local scope sanitize end; ``True`` if it existed."""
    return _remove(scope_handle, "scope_sanitize_end_guardrail", name)


def register_tool_sanitize_request(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(tool_name, args) -> args`` (recorded args), scoped to ``scope_handle``."""
    _add(scope_handle, "tool_sanitize_request_guardrail", name, priority, False, fn)


def deregister_tool_sanitize_request(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local tool sanitize request; ``True`` if it existed."""
    return _remove(scope_handle, "tool_sanitize_request_guardrail", name)


def register_tool_sanitize_response(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register a scope-local callback: ``fn(tool_name, result) -> result``."""
    _add(scope_handle, "tool_sanitize_response_guardrail", name, priority, False, fn)


def deregister_tool_sanitize_response(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local tool sanitize response; ``True`` if it existed."""
    return _remove(scope_handle, "tool_sanitize_response_guardrail", name)


def register_tool_conditional_execution(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(tool_name, args) -> None | reason``, scoped to ``scope_handle``."""
    _add(scope_handle, "tool_conditional_execution_guardrail", name, priority, False, fn)


def deregister_tool_conditional_execution(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local tool conditional execution; ``True`` if it existed."""
    return _remove(scope_handle, "tool_conditional_execution_guardrail", name)


def register_tool_request(
    scope_handle: ScopeHandle,
    name: str,
    priority: int,
    break_chain: bool,
    fn: Callable[..., Any],
) -> None:
    """Register ``fn(tool_name, args) -> args``, scoped to ``scope_handle``."""
    _add(scope_handle, "tool_request_intercept", name, priority, break_chain, fn)


def deregister_tool_request(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local tool request; ``True`` if it existed."""
    return _remove(scope_handle, "tool_request_intercept", name)


def register_tool_execution(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register a scope-local callback: ``fn(context, next) -> ToolExecutionInterceptOutcome``."""
    _add(scope_handle, "tool_execution_intercept", name, priority, False, fn)


def deregister_tool_execution(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local tool execution; ``True`` if it existed."""
    return _remove(scope_handle, "tool_execution_intercept", name)


def register_llm_sanitize_request(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(request, context) -> LLMRequest | None``, scoped to ``scope_handle``."""
    require_payload_context("LLM sanitize-request guardrail", fn)
    _add(scope_handle, "llm_sanitize_request_guardrail", name, priority, False, fn)


def deregister_llm_sanitize_request(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local llm sanitize request; ``True`` if it existed."""
    return _remove(scope_handle, "llm_sanitize_request_guardrail", name)


def register_llm_sanitize_response(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(response, context) -> Json | None``, scoped to ``scope_handle``."""
    require_payload_context("LLM sanitize-response guardrail", fn)
    _add(scope_handle, "llm_sanitize_response_guardrail", name, priority, False, fn)


def deregister_llm_sanitize_response(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local llm sanitize response; ``True`` if it existed."""
    return _remove(scope_handle, "llm_sanitize_response_guardrail", name)


def register_llm_conditional_execution(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(request) -> None | reason``, scoped to ``scope_handle``."""
    _add(scope_handle, "llm_conditional_execution_guardrail", name, priority, False, fn)


def deregister_llm_conditional_execution(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local llm conditional execution; ``True`` if it existed."""
    return _remove(scope_handle, "llm_conditional_execution_guardrail", name)


def register_llm_request(
    scope_handle: ScopeHandle,
    name: str,
    priority: int,
    break_chain: bool,
    fn: Callable[..., Any],
) -> None:
    """Register ``fn(name, request, annotated) -> outcome``, scoped to ``scope_handle``."""
    _add(scope_handle, "llm_request_intercept", name, priority, break_chain, fn)


def deregister_llm_request(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local llm request; ``True`` if it existed."""
    return _remove(scope_handle, "llm_request_intercept", name)


def register_llm_execution(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register a scope-local callback: ``fn(name, request, context, next) -> response``."""
    _add(scope_handle, "llm_execution_intercept", name, priority, False, fn)


def deregister_llm_execution(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local llm execution; ``True`` if it existed."""
    return _remove(scope_handle, "llm_execution_intercept", name)


def register_llm_stream_execution(
    scope_handle: ScopeHandle, name: str, priority: int, fn: Callable[..., Any]
) -> None:
    """Register ``fn(name, request, context, next) -> chunks``, scoped to ``scope_handle``."""
    _add(scope_handle, "llm_stream_execution_intercept", name, priority, False, fn)


def deregister_llm_stream_execution(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local llm stream execution; ``True`` if it existed."""
    return _remove(scope_handle, "llm_stream_execution_intercept", name)


def register_subscriber(scope_handle: ScopeHandle, name: str, callback: Callable[..., Any]) -> None:
    """Register an observer for events emitted under ``scope_handle`` (fails open)."""
    _add(scope_handle, "subscriber", name, 0, False, callback)


def deregister_subscriber(scope_handle: ScopeHandle, name: str) -> bool:
    """Remove a scope-local subscriber; ``True`` if it existed."""
    return _remove(scope_handle, "subscriber", name)


__all__ = [
    "deregister_event_metadata_injector",
    "deregister_llm_conditional_execution",
    "deregister_llm_execution",
    "deregister_llm_request",
    "deregister_llm_sanitize_request",
    "deregister_llm_sanitize_response",
    "deregister_llm_stream_execution",
    "deregister_mark_sanitize",
    "deregister_scope_sanitize_end",
    "deregister_scope_sanitize_start",
    "deregister_subscriber",
    "deregister_tool_conditional_execution",
    "deregister_tool_execution",
    "deregister_tool_request",
    "deregister_tool_sanitize_request",
    "deregister_tool_sanitize_response",
    "register_event_metadata_injector",
    "register_llm_conditional_execution",
    "register_llm_execution",
    "register_llm_request",
    "register_llm_sanitize_request",
    "register_llm_sanitize_response",
    "register_llm_stream_execution",
    "register_mark_sanitize",
    "register_scope_sanitize_end",
    "register_scope_sanitize_start",
    "register_subscriber",
    "register_tool_conditional_execution",
    "register_tool_execution",
    "register_tool_request",
    "register_tool_sanitize_request",
    "register_tool_sanitize_response",
]
