"""Conditional-execution guardrails with the nemo_relay ``guardrails`` names.

A guardrail is a CONTROL callback that decides whether a managed call may run at all:
``fn(request) -> None | str`` for LLM calls, ``fn(name, args) -> None | str`` for tools.
``None`` allows; a string rejects with that reason (coroutine functions are awaited).
Guardrails run first, before request
intercepts, in ``(priority, name)`` order, synchronously on the calling thread.

Every evaluated guardrail emits a ``guardrail`` scope pair named after it (start data
``{"kind": "llm_conditional_execution"}``; end data ``{"allowed": true, "rejected": false}``
or ``{"allowed": false, "rejected": true, "rejection_reason": …}``). A rejection then emits a
mark named after the LLM/tool with ``{"rejected": true, "rejection_reason": …}`` and raises
``RuntimeError("guardrail rejected: …")``: no request intercept, no lifecycle, no provider
call. A guardrail that raises ends its scope with error status and the exception propagates.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

from wayline.relay._intercepts import sanitize as _sanitize
from wayline.relay._intercepts.awaiting import resolve, settle
from wayline.relay._intercepts.chains import Entry, Registry
from wayline.relay._scopes import publish as _publish
from wayline.relay._scopes.datatypes import Json, LLMRequest
from wayline.relay._scopes.handles import ScopeHandle
from wayline.relay._scopes.stack_ops import current, end_timestamp_ns
from wayline.relay._scopes.uuid7 import uuid7_at
from wayline.relay.clock import now_ns
from wayline.relay.events import emit_mark, emit_scope
from wayline.relay.typing_names import (
    LlmConditionalExecutionGuardrail,
    LlmSanitizeRequestGuardrail,
    LlmSanitizeResponseGuardrail,
    ToolConditionalExecutionGuardrail,
    ToolSanitizeGuardrail,
)

__all__ = [
    "GuardrailRejected",
    "LlmConditionalExecutionGuardrail",
    "LlmSanitizeRequestGuardrail",
    "LlmSanitizeResponseGuardrail",
    "ToolConditionalExecutionGuardrail",
    "ToolSanitizeGuardrail",
    "deregister_llm_conditional_execution",
    "deregister_llm_sanitize_request",
    "deregister_llm_sanitize_response",
    "deregister_mark_sanitize",
    "deregister_scope_sanitize_end",
    "deregister_scope_sanitize_start",
    "deregister_tool_conditional_execution",
    "deregister_tool_sanitize_request",
    "deregister_tool_sanitize_response",
    "register_llm_conditional_execution",
    "register_llm_sanitize_request",
    "register_llm_sanitize_response",
    "register_mark_sanitize",
    "register_scope_sanitize_end",
    "register_scope_sanitize_start",
    "register_tool_conditional_execution",
    "register_tool_sanitize_request",
    "register_tool_sanitize_response",
]

LlmConditionalFn = Callable[[LLMRequest], "str | None"]
ToolConditionalFn = Callable[[str, Json], "str | None"]

LLM_CONDITIONAL = Registry(
    "LLM conditional-execution guardrail", "llm_conditional_execution_guardrail"
)
TOOL_CONDITIONAL = Registry(
    "tool conditional-execution guardrail", "tool_conditional_execution_guardrail"
)


class GuardrailRejected(RuntimeError):
    """A conditional-execution guardrail blocked the call (a ``RuntimeError``, as in Relay)."""

    def __init__(self, guardrail: str, reason: str) -> None:
        super().__init__(f"guardrail rejected: {reason}")
        self.guardrail = guardrail
        self.reason = reason


def register_llm_conditional_execution(name: str, priority: int, fn: LlmConditionalFn) -> None:
    """Register ``fn(request) -> None | str`` run before every managed LLM call (control)."""
    LLM_CONDITIONAL.register(name, priority, False, fn)


def deregister_llm_conditional_execution(name: str) -> bool:
    """Remove an LLM guardrail; ``True`` if it existed."""
    return LLM_CONDITIONAL.deregister(name)


def register_tool_conditional_execution(name: str, priority: int, fn: ToolConditionalFn) -> None:
    """Register ``fn(name, args) -> None | str`` run before every managed tool call (control)."""
    TOOL_CONDITIONAL.register(name, priority, False, fn)


def deregister_tool_conditional_execution(name: str) -> bool:
    """Remove a tool guardrail; ``True`` if it existed."""
    return TOOL_CONDITIONAL.deregister(name)


def _open(entry: Entry, parent: ScopeHandle, kind: str, target: str | None) -> tuple[str, int]:
    started = now_ns()
    uuid = uuid7_at(started)
    emit_scope(
        "start",
        uuid,
        parent.uuid,
        parent.propagation_root_uuid,
        started,
        entry.name,
        "guardrail",
        (),
        None,
        {"kind": kind} if target is None else {"kind": kind, "target_name": target},
        None,
    )
    return uuid, started


def _close(
    entry: Entry,
    parent: ScopeHandle,
    opened: tuple[str, int],
    verdict: Any,
    exc: BaseException | None,
) -> None:
    uuid, started = opened
    if exc is None:
        data: dict[str, Any] = {"allowed": verdict is None, "rejected": verdict is not None}
        if verdict is not None:
            data["rejection_reason"] = verdict
    else:  # as Relay: the failure is the guardrail's outcome, not an error status
        if isinstance(exc, _UnexpectedVerdict):
            text = exc.relay_text
        else:
            text = f"{type(exc).__name__}: {exc}"
        data = {"allowed": False, "error": f"internal error: {text}"}
    emit_scope(
        "end",
        uuid,
        parent.uuid,
        parent.propagation_root_uuid,
        end_timestamp_ns(started, None),
        entry.name,
        "guardrail",
        (),
        None,
        data,
        None,
    )


class _UnexpectedVerdict(RuntimeError):
    """A conditional guardrail returned something other than ``None`` or a ``str``."""

    def __init__(self, relay_text: str, guardrail: str) -> None:
        super().__init__(f"{relay_text} (guardrail {guardrail!r})")
        self.relay_text = relay_text


def _checked(entry: Entry, kind: str, verdict: Any) -> str | None:
    if verdict is not None and not isinstance(verdict, str):
        what = "tool conditional" if kind.startswith("tool") else "llm conditional"
        raise _UnexpectedVerdict(
            f"{what} guardrail returned unexpected type: TypeError: "
            f"'{type(verdict).__name__}' object is not an instance of 'str'",
            entry.name,
        )
    return verdict


def _evaluate(
    entry: Entry, parent: ScopeHandle, kind: str, args: tuple[Any, ...], target: str | None = None
) -> Any:
    opened = _open(entry, parent, kind, target)
    try:
        verdict = _checked(entry, kind, resolve(entry.fn(*args)))
    except Exception as exc:
        _close(entry, parent, opened, None, exc)
        raise
    _close(entry, parent, opened, verdict, None)
    return verdict


async def _evaluate_async(
    entry: Entry, parent: ScopeHandle, kind: str, args: tuple[Any, ...], target: str | None = None
) -> Any:
    """:func:`_evaluate` awaiting a coroutine verdict on the caller's event loop."""
    opened = _open(entry, parent, kind, target)
    try:
        verdict = _checked(entry, kind, await settle(entry.fn(*args)))
    except Exception as exc:
        _close(entry, parent, opened, None, exc)
        raise
    except asyncio.CancelledError as exc:  # a cancelled caller still closes the scope it opened
        _close(entry, parent, opened, None, exc)
        raise
    _close(entry, parent, opened, verdict, None)
    return verdict


def _reject(
    target: str | None, parent: ScopeHandle, entry: Entry, reason: str
) -> GuardrailRejected:
    if target is None:  # a standalone check (Relay's conditional_execution(request)): no mark
        return GuardrailRejected(entry.name, reason)
    now = now_ns()
    emit_mark(
        uuid7_at(now),
        parent.uuid,
        parent.propagation_root_uuid,
        now,
        target,
        None,
        None,
        {"rejected": True, "rejection_reason": reason},
        None,
    )
    return GuardrailRejected(entry.name, reason)


def _copy(request: LLMRequest) -> LLMRequest:
    return LLMRequest(copy.deepcopy(request.headers), copy.deepcopy(request.content))


def check_llm(name: str | None, request: LLMRequest, handle: ScopeHandle | None) -> None:
    """Run the LLM guardrails for a call named ``name``; raise :class:`GuardrailRejected`.

    ``name=None`` is a standalone check: a rejection emits no mark (as Relay).
    """
    chain = LLM_CONDITIONAL.chain
    if not chain:
        return
    parent = current() if handle is None else handle
    for entry in chain:
        reason = _evaluate(entry, parent, "llm_conditional_execution", (_copy(request),))
        if reason is not None:
            raise _reject(name, parent, entry, reason)


async def check_llm_async(
    name: str | None, request: LLMRequest, handle: ScopeHandle | None
) -> None:
    """:func:`check_llm` awaiting coroutine guardrails on the running event loop."""
    parent = current() if handle is None else handle
    for entry in LLM_CONDITIONAL.chain:
        kind = "llm_conditional_execution"
        reason = await _evaluate_async(entry, parent, kind, (_copy(request),))
        if reason is not None:
            raise _reject(name, parent, entry, reason)


async def check_tool_async(name: str, args: Json, handle: ScopeHandle | None) -> None:
    """:func:`check_tool` awaiting coroutine guardrails on the running event loop."""
    parent = current() if handle is None else handle
    for entry in TOOL_CONDITIONAL.chain:
        kind = "tool_conditional_execution"
        reason = await _evaluate_async(entry, parent, kind, (name, copy.deepcopy(args)), name)
        if reason is not None:
            raise _reject(name, parent, entry, reason)


def check_tool(name: str, args: Json, handle: ScopeHandle | None) -> None:
    """Run the tool guardrails for tool ``name``; raise :class:`GuardrailRejected`."""
    chain = TOOL_CONDITIONAL.chain
    if not chain:
        return
    parent = current() if handle is None else handle
    for entry in chain:
        reason = _evaluate(
            entry, parent, "tool_conditional_execution", (name, copy.deepcopy(args)), name
        )
        if reason is not None:
            raise _reject(name, parent, entry, reason)


# -- sanitize guardrails (observability only; fail closed) -----------------------------------


def register_mark_sanitize(name: str, priority: int, guardrail: Callable[..., Any]) -> None:
    """Register ``fn(event, fields) -> fields`` applied to every published mark."""
    _publish.register(_publish.MARK_SANITIZE, name, priority, guardrail)


def deregister_mark_sanitize(name: str) -> bool:
    """Remove a mark sanitizer; ``True`` if it existed."""
    return _publish.deregister(_publish.MARK_SANITIZE, name)


def register_scope_sanitize_start(name: str, priority: int, guardrail: Callable[..., Any]) -> None:
    """Register ``fn(event, fields) -> fields`` applied to every scope start event."""
    _publish.register(_publish.SCOPE_SANITIZE_START, name, priority, guardrail)


def deregister_scope_sanitize_start(name: str) -> bool:
    """Remove a scope-start sanitizer; ``True`` if it existed."""
    return _publish.deregister(_publish.SCOPE_SANITIZE_START, name)


def register_scope_sanitize_end(name: str, priority: int, guardrail: Callable[..., Any]) -> None:
    """Register ``fn(event, fields) -> fields`` applied to every scope end event."""
    _publish.register(_publish.SCOPE_SANITIZE_END, name, priority, guardrail)


def deregister_scope_sanitize_end(name: str) -> bool:
    """Remove a scope-end sanitizer; ``True`` if it existed."""
    return _publish.deregister(_publish.SCOPE_SANITIZE_END, name)


def register_tool_sanitize_request(
    name: str, priority: int, guardrail: Callable[[str, Json], Any]
) -> None:
    """Register ``fn(tool_name, args) -> args`` for the args recorded on tool start events."""
    _sanitize.TOOL_REQUEST.register(name, priority, False, guardrail)


def deregister_tool_sanitize_request(name: str) -> bool:
    """Remove a tool sanitize-request guardrail; ``True`` if it existed."""
    return _sanitize.TOOL_REQUEST.deregister(name)


def register_tool_sanitize_response(
    name: str, priority: int, guardrail: Callable[[str, Json], Any]
) -> None:
    """Register ``fn(tool_name, result) -> result`` for the result on tool end events."""
    _sanitize.TOOL_RESPONSE.register(name, priority, False, guardrail)


def deregister_tool_sanitize_response(name: str) -> bool:
    """Remove a tool sanitize-response guardrail; ``True`` if it existed."""
    return _sanitize.TOOL_RESPONSE.deregister(name)


def register_llm_sanitize_request(name: str, priority: int, guardrail: Callable[..., Any]) -> None:
    """Register ``fn(request, context) -> LLMRequest | None`` for LLM start payloads."""
    _sanitize.require_payload_context("LLM sanitize-request guardrail", guardrail)
    _sanitize.LLM_REQUEST.register(name, priority, False, guardrail)


def deregister_llm_sanitize_request(name: str) -> bool:
    """Remove an LLM sanitize-request guardrail; ``True`` if it existed."""
    return _sanitize.LLM_REQUEST.deregister(name)


def register_llm_sanitize_response(name: str, priority: int, guardrail: Callable[..., Any]) -> None:
    """Register ``fn(response, context) -> Json | None`` for LLM end payloads."""
    _sanitize.require_payload_context("LLM sanitize-response guardrail", guardrail)
    _sanitize.LLM_RESPONSE.register(name, priority, False, guardrail)


def deregister_llm_sanitize_response(name: str) -> bool:
    """Remove an LLM sanitize-response guardrail; ``True`` if it existed."""
    return _sanitize.LLM_RESPONSE.deregister(name)
