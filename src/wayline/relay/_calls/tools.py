"""Tool call lifecycle with the nemo_relay ``tools`` names.

A tool span is not pushed on the scope stack: its events are parented to the active scope,
and a scope opened inside the tool callback is parented to that same enclosing scope.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from wayline.relay._calls import skill_load as _skill_load
from wayline.relay._intercepts import chains as _icpt
from wayline.relay._intercepts import guardrails as _guardrails
from wayline.relay._intercepts import sanitize as _sanitize
from wayline.relay._intercepts.outcomes import PendingMarkSpec, emit_pending_marks
from wayline.relay._scopes import subscribers as _subs
from wayline.relay._scopes.datatypes import (
    Json,
    ToolAttributes,
    ToolExecutionResult,
    attribute_bits,
)
from wayline.relay._scopes.handles import ScopeHandle, ToolHandle
from wayline.relay._scopes.managed import running_in
from wayline.relay._scopes.pyjson import JsonConversionError, to_json_value
from wayline.relay._scopes.stack_ops import current, end_timestamp_ns
from wayline.relay._scopes.status import (
    RelayInternalError,
    RelayInvalidArgument,
    error_metadata,
    ok_metadata,
)
from wayline.relay._scopes.uuid7 import uuid7_at
from wayline.relay.clock import now_ns
from wayline.relay.events import ScopeEvent, emit_mark, merge_json
from wayline.relay.timefmt import datetime_to_ns

__all__ = [
    "call",
    "call_end",
    "conditional_execution",
    "execute",
    "execute_sync",
    "request_intercepts",
]

ToolFunc = Callable[[Json], Any]


def call(
    name: str,
    args: Json,
    *,
    handle: ScopeHandle | None = None,
    attributes: ToolAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    tool_call_id: str | None = None,
    timestamp: datetime | None = None,
) -> ToolHandle:
    """Start a tool span under ``handle`` (default: the active scope) and emit its start event.

    The start event's ``data`` is ``args``; ``data`` stays on the handle only; ``tool_call_id``
    goes into ``category_profile`` (the profile is ``{}`` without it). As in Relay, a call
    whose arguments load a skill is followed by one ``skill.load`` mark per skill, under the
    tool and at its start time (see :mod:`wayline.relay._calls.skill_load`).
    """
    if not isinstance(name, str):
        raise TypeError(f"tool name must be a str, not {type(name).__name__}")
    parent = current() if handle is None else handle
    now = now_ns()
    started = now if timestamp is None else datetime_to_ns(timestamp)
    bits = attribute_bits(attributes, ToolAttributes)
    tool = ToolHandle(
        uuid7_at(now),
        name,
        bits,
        ToolAttributes.strings_of(bits),
        parent.uuid,
        data,
        metadata,
        tool_call_id,
        started,
        parent.propagation_root_uuid,
    )
    callbacks = _subs._callbacks
    if not callbacks and _sanitize.TOOL_REQUEST.chain:
        # As Relay: sanitizers run on every start, even when no subscriber records it.
        _sanitize.tool_payload(_sanitize.TOOL_REQUEST, name, args)
    if callbacks:
        # Detected on the arguments as called, before a sanitizer rewrites the recorded copy.
        skills = _skill_load.detect(name, args)
        if _sanitize.TOOL_REQUEST.chain:
            args = _sanitize.tool_payload(_sanitize.TOOL_REQUEST, name, args)
        _subs.dispatch(
            ScopeEvent(
                "start",
                tool.uuid,
                tool.parent_uuid,
                tool.propagation_root_uuid,
                started,
                name,
                "tool",
                tool._attr_strings,
                tool.profile(),
                args,
                None,
                metadata,
            ),
            callbacks,
        )
        for skill_name, source in skills:
            emit_mark(
                uuid7_at(started),
                tool.uuid,
                tool.propagation_root_uuid,
                started,
                _skill_load.MARK_NAME,
                None,
                None,
                {"skill_name": skill_name},
                {"skill_load_source": source, "tool_name": name},
            )
    return tool


def _unwrap(result: Any) -> tuple[Any, Any]:
    if isinstance(result, ToolExecutionResult):
        return result.result, result.annotation
    return result, None


def _emit_end(
    tool: ToolHandle,
    result: Any,
    annotation: Any,
    metadata: Any,
    timestamp: datetime | None,
) -> int:
    ended = end_timestamp_ns(tool.started_ns, timestamp)
    callbacks = _subs._callbacks
    if callbacks:
        profile = tool.profile()
        if result is not None and _sanitize.TOOL_RESPONSE.chain:
            result = _sanitize.tool_payload(_sanitize.TOOL_RESPONSE, tool.name, result)
        if annotation is not None:
            profile["tool_result_annotation"] = annotation
        _subs.dispatch(
            ScopeEvent(
                "end",
                tool.uuid,
                tool.parent_uuid,
                tool.propagation_root_uuid,
                ended,
                tool.name,
                "tool",
                tool._attr_strings,
                profile,
                result,
                None,
                merge_json(tool.metadata, metadata),
            ),
            callbacks,
        )
    return ended


def call_end(
    handle: ToolHandle,
    result: ToolExecutionResult[Any] | Json,
    *,
    data: Json | None = None,
    metadata: Json | None = None,
    timestamp: datetime | None = None,
) -> None:
    """Finish a tool span started by :func:`call` and emit its end event.

    ``result`` is a ``ToolExecutionResult`` (its ``annotation``, when set, becomes
    ``category_profile.tool_result_annotation``) or a plain JSON value; ``data`` is recorded
    instead when the result is ``None``. ``metadata`` is merged over the start metadata.
    """
    value, annotation = _unwrap(result)
    _emit_end(handle, data if value is None else value, annotation, metadata, timestamp)


def request_intercepts(name: str, args: Json) -> Any:
    """Run the tool request-intercept chain alone and return the rewritten args.

    As in Relay: outside an event loop the args come back directly; inside one an awaitable
    is returned, and coroutine intercepts run on the caller's loop.
    """
    if _in_loop():
        return _icpt.run_tool_request_chain_async(name, args)
    return _icpt.run_tool_request_chain(name, args)


def conditional_execution(name: str, args: Json, *, handle: ScopeHandle | None = None) -> Any:
    """Run the tool guardrails alone (``GuardrailRejected`` on rejection).

    Returns ``None`` outside an event loop, an awaitable inside one (as in Relay).
    """
    if _in_loop():
        return _guardrails.check_tool_async(name, args, handle)
    _guardrails.check_tool(name, args, handle)
    return None


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _begin(
    name: str,
    args: Json,
    handle: ScopeHandle | None,
    attributes: ToolAttributes | int | None,
    data: Json | None,
    metadata: Json | None,
    tool_call_id: str | None,
    prepared: bool = False,
) -> tuple[ToolHandle, Json]:
    # Guardrails and request intercepts run before the start event: a failure leaves no
    # lifecycle, and the start event records the rewritten args. ``prepared``: the async
    # path already ran them on the caller's event loop.
    if not prepared:
        _guardrails.check_tool(name, args, handle)
        if _icpt.TOOL_REQUEST.chain:
            args = _icpt.run_tool_request_chain(name, args)
    tool = call(
        name,
        args,
        handle=handle,
        attributes=attributes,
        data=data,
        metadata=metadata,
        tool_call_id=tool_call_id,
    )
    return tool, args


EndMetadata = Callable[[Any], Json]


def _finish(
    tool: ToolHandle,
    outcome: Any,
    marks: list[PendingMarkSpec],
    end_metadata: EndMetadata | None,
) -> None:
    value, annotation = _unwrap(outcome)
    extra = None if end_metadata is None else end_metadata(value)
    ended = _emit_end(tool, value, annotation, ok_metadata(extra), None)
    if marks:
        # Tool execution intercept marks follow the tool end (end + 1 µs), under the tool.
        emit_pending_marks(marks, tool.uuid, tool.propagation_root_uuid, ended + 1_000)


def _fail(tool: ToolHandle, exc: BaseException) -> None:
    _emit_end(tool, None, None, error_metadata(None, exc), None)


def _sync_only(name: str, func: Callable[[Json], Any]) -> Callable[[Json], Any]:
    def run(args: Json) -> Any:
        outcome = func(args)
        if inspect.isawaitable(outcome):
            if inspect.iscoroutine(outcome):
                outcome.close()
            raise TypeError(f"tool {name!r}: execute_sync needs a synchronous func")
        return outcome

    return run


def _checked(value: Any) -> ToolExecutionResult[Any]:
    """A tool's return as Relay's ``tools.execute`` takes it: a ``ToolExecutionResult`` whose
    result (and annotation) convert to JSON, else Relay's ``RuntimeError``."""
    if not isinstance(value, ToolExecutionResult):
        shown = "'None' is" if value is None else f"'{type(value).__name__}' object is"
        raise RelayInvalidArgument(
            "invalid argument: tool execution callback must return ToolExecutionResult; "
            "return ToolExecutionResult(payload), not a raw dict: "
            f"{shown} not an instance of 'ToolExecutionResult'"
        )
    try:
        result = to_json_value(value.result)
        annotation = None if value.annotation is None else to_json_value(value.annotation)
    except JsonConversionError as exc:
        raise RelayInternalError(f"internal error: ValueError: {exc}") from None
    return ToolExecutionResult(result, annotation)


async def _checked_later(value: Awaitable[Any]) -> ToolExecutionResult[Any]:
    return _checked(await value)


def _strict(func: Callable[[Json], Any]) -> Callable[[Json], Any]:
    """``func`` whose return (awaited, if it is awaitable) passes :func:`_checked`."""

    def run(args: Json) -> Any:
        value = func(args)
        if inspect.isawaitable(value):
            return _checked_later(value)
        return _checked(value)

    return run


async def execute(
    name: str,
    args: Json,
    func: Callable[[Json], ToolExecutionResult[Any] | Json | Awaitable[Any]],
    *,
    handle: ScopeHandle | None = None,
    attributes: ToolAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    tool_call_id: str | None = None,
    end_metadata: EndMetadata | None = None,
) -> Any:
    """Run ``func(args)`` (sync or async) inside a managed tool span and return its value.

    Order: tool conditional-execution guardrails and tool request intercepts (a failure
    raises before any event), the start event with the rewritten args, ``func`` wrapped by
    tool execution intercepts, the end event (result, annotation, ``otel.status_code: "OK"``)
    and then the intercepts' pending marks at end + 1 µs. As in Relay, ``func`` must return
    a ``ToolExecutionResult`` (anything else raises Relay's ``invalid argument`` error) whose
    result converts to JSON (a cycle or an unsupported type raises Relay's ``internal error``);
    the outermost outcome comes back as a new ``ToolExecutionResult`` of plain JSON. If the
    call raises, the end event has ``data: null`` and error status, pending marks are
    discarded, and the exception propagates. ``end_metadata(result)`` (wayline extension)
    returns metadata merged into a successful end event. :func:`execute_sync` also takes a
    plain JSON return.
    """
    func = _strict(func)
    if _guardrails.TOOL_CONDITIONAL.chain:
        await _guardrails.check_tool_async(name, args, handle)
    if _icpt.TOOL_REQUEST.chain:
        args = await _icpt.run_tool_request_chain_async(name, args)
    tool, call_args = _begin(
        name, args, handle, attributes, data, metadata, tool_call_id, prepared=True
    )
    chain = _icpt.TOOL_EXECUTION.chain
    marks: list[PendingMarkSpec] = []
    try:
        with running_in(tool.uuid, tool.propagation_root_uuid):
            if chain and _icpt.all_async(chain):
                outcome: Any = await _icpt.run_tool_execution_chain_async(
                    chain, name, call_args, tool_call_id, func, marks
                )
            elif chain:
                loop = asyncio.get_running_loop()

                def blocking(current: Json) -> Any:
                    value = func(current)
                    if inspect.isawaitable(value):
                        value = asyncio.run_coroutine_threadsafe(_awaited(value), loop).result()
                    return value

                outcome = await asyncio.to_thread(
                    _icpt.run_tool_execution_chain,
                    chain,
                    name,
                    call_args,
                    tool_call_id,
                    blocking,
                    marks,
                )
            else:
                outcome = func(call_args)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
    except Exception as exc:
        _fail(tool, exc)
        raise
    _finish(tool, outcome, marks, end_metadata)
    return outcome


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def execute_sync(
    name: str,
    args: Json,
    func: Callable[[Json], ToolExecutionResult[Any] | Json],
    *,
    handle: ScopeHandle | None = None,
    attributes: ToolAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    tool_call_id: str | None = None,
    end_metadata: EndMetadata | None = None,
) -> Any:
    """:func:`execute` for synchronous callers and a synchronous ``func`` (wayline extension)."""
    tool, call_args = _begin(name, args, handle, attributes, data, metadata, tool_call_id)
    run = _sync_only(name, func)
    chain = _icpt.TOOL_EXECUTION.chain
    marks: list[PendingMarkSpec] = []
    try:
        with running_in(tool.uuid, tool.propagation_root_uuid):
            if chain:
                outcome: Any = _icpt.run_tool_execution_chain(
                    chain, name, call_args, tool_call_id, run, marks
                )
            else:
                outcome = run(call_args)
    except Exception as exc:
        _fail(tool, exc)
        raise
    _finish(tool, outcome, marks, end_metadata)
    return outcome
