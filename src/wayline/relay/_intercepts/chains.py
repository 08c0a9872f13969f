"""Intercept registries with the nemo_relay ``intercepts`` names, and the chains that run them.

Intercepts are CONTROL callbacks and fail closed: an intercept that raises (the exception
keeps its own type), returns the wrong type or breaks the codec rules fails the call before
any lifecycle event, and every pending mark gathered so far is discarded. They run on the
calling thread (tool workers included), synchronously, and may block; they must be
thread-safe. Each chain is ordered by ``(priority, name)``, lower priority first.

* LLM request: ``fn(name, request, annotated) -> LLMRequestInterceptOutcome``; each entry
  sees the previous outcome's request and annotation; ``break_chain`` stops after it.
* LLM execution: ``fn(name, request, ctx, next) -> response``; ``next(request)`` runs the
  rest of the chain and the provider (the first entry is outermost).
* LLM stream execution: the same, returning an iterable of chunks.
* Tool request: ``fn(name, args) -> args``; ``break_chain`` stops after it.
* Tool execution: ``fn(ctx, next) -> ToolExecutionInterceptOutcome``; ``next(args)`` returns
  the downstream ``ToolExecutionResult``. Calling ``next`` after the intercept settled
  (returned or raised) is a ``RuntimeError``, as in Relay.

Intercepts get deep copies of the request/annotation/args, so mutating and returning them
is safe. With no intercepts registered nothing is copied.
"""

from __future__ import annotations

import copy
import inspect
import threading
from collections.abc import Callable
from typing import Any

from wayline.relay._intercepts import registrations as _reg
from wayline.relay._intercepts.awaiting import resolve, settle
from wayline.relay._intercepts.outcomes import (
    LLMExecutionContext,
    LLMRequestInterceptOutcome,
    PendingMarkSpec,
    ToolExecutionContext,
    ToolExecutionInterceptOutcome,
)
from wayline.relay._scopes.datatypes import Json, LLMRequest, ToolExecutionResult
from wayline.relay._scopes.status import RelayInvalidArgument

__all__ = [
    "LlmExecutionIntercept",
    "LlmRequestIntercept",
    "LlmStreamExecutionIntercept",
    "ToolExecutionIntercept",
    "ToolRequestIntercept",
    "deregister_llm_execution",
    "deregister_llm_request",
    "deregister_llm_stream_execution",
    "deregister_tool_execution",
    "deregister_tool_request",
    "register_llm_execution",
    "register_llm_request",
    "register_llm_stream_execution",
    "register_tool_execution",
    "register_tool_request",
]

LlmRequestIntercept = Callable[[str, LLMRequest, Any], LLMRequestInterceptOutcome]
LlmExecutionIntercept = Callable[[str, LLMRequest, LLMExecutionContext, Callable[..., Any]], Any]
LlmStreamExecutionIntercept = Callable[
    [str, LLMRequest, LLMExecutionContext, Callable[..., Any]], Any
]
ToolRequestIntercept = Callable[[str, Json], Json]
ToolExecutionIntercept = Callable[
    [ToolExecutionContext, Callable[[Json], ToolExecutionResult[Any]]],
    ToolExecutionInterceptOutcome,
]


Entry = _reg.Entry
_SETTLED = (
    "execution continuation is no longer active: next() was called after its intercept "
    "returned or raised"
)
REGISTRIES: list[Registry] = []


class Registry:
    """Named entries with a sorted snapshot that readers take without a lock.

    ``kind`` names the registry in errors; ``reg_kind`` is its runtime-registration kind
    (``RuntimeRegistrationKind`` value). ``chain`` adds scope-local entries and applies
    registration gates when any exist (see :mod:`wayline.relay._intercepts.registrations`).
    """

    def __init__(self, kind: str, reg_kind: str) -> None:
        self.kind = kind
        self.reg_kind = reg_kind
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._chain: tuple[Entry, ...] = ()
        REGISTRIES.append(self)

    @property
    def chain(self) -> tuple[Entry, ...]:
        """The entries that run in the current context, in ``(priority, name)`` order."""
        if not _reg.state.active:
            return self._chain
        return _reg.effective(self.reg_kind, self._chain)

    def names(self) -> list[str]:
        """Registered global names in chain order."""
        return [entry.name for entry in self._chain]

    def check(self, name: str, priority: int, fn: Callable[..., Any]) -> None:
        """Raise ``TypeError`` for a bad name, priority or callback."""
        if not isinstance(name, str):
            raise TypeError(f"{self.kind} name must be a str, not {type(name).__name__}")
        if not callable(fn):
            raise TypeError(f"{self.kind} {name!r}: callback must be callable")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"{self.kind} {name!r}: priority must be an int")

    def register(self, name: str, priority: int, break_chain: bool, fn: Callable[..., Any]) -> None:
        """Add ``fn`` as ``name``; ``RuntimeError`` when the name is taken."""
        self.check(name, priority, fn)
        with self._lock:
            if name in self._entries:
                raise RuntimeError(f"already exists: {self.kind} {name!r} is already registered")
            self._entries[name] = Entry(priority, name, bool(break_chain), fn)
            self._chain = tuple(sorted(self._entries.values(), key=lambda e: (e.priority, e.name)))

    def deregister(self, name: str) -> bool:
        """Remove ``name``; ``True`` if it was registered."""
        with self._lock:
            if self._entries.pop(name, None) is None:
                return False
            self._chain = tuple(sorted(self._entries.values(), key=lambda e: (e.priority, e.name)))
            return True


LLM_REQUEST = Registry("LLM request intercept", "llm_request_intercept")
LLM_EXECUTION = Registry("LLM execution intercept", "llm_execution_intercept")
LLM_STREAM_EXECUTION = Registry("LLM stream execution intercept", "llm_stream_execution_intercept")
TOOL_REQUEST = Registry("tool request intercept", "tool_request_intercept")
TOOL_EXECUTION = Registry("tool execution intercept", "tool_execution_intercept")


def register_llm_request(
    name: str, priority: int, break_chain: bool, fn: LlmRequestIntercept
) -> None:
    """Register ``fn(name, request, annotated) -> LLMRequestInterceptOutcome`` (control)."""
    LLM_REQUEST.register(name, priority, break_chain, fn)


def deregister_llm_request(name: str) -> bool:
    """Remove an LLM request intercept; ``True`` if it existed."""
    return LLM_REQUEST.deregister(name)


def register_llm_execution(name: str, priority: int, fn: LlmExecutionIntercept) -> None:
    """Register ``fn(name, request, ctx, next) -> response`` around the provider (control)."""
    LLM_EXECUTION.register(name, priority, False, fn)


def deregister_llm_execution(name: str) -> bool:
    """Remove an LLM execution intercept; ``True`` if it existed."""
    return LLM_EXECUTION.deregister(name)


def register_llm_stream_execution(
    name: str, priority: int, fn: LlmStreamExecutionIntercept
) -> None:
    """Register ``fn(name, request, ctx, next) -> chunks`` around a streaming provider."""
    LLM_STREAM_EXECUTION.register(name, priority, False, fn)


def deregister_llm_stream_execution(name: str) -> bool:
    """Remove a streaming LLM execution intercept; ``True`` if it existed."""
    return LLM_STREAM_EXECUTION.deregister(name)


def register_tool_request(
    name: str, priority: int, break_chain: bool, fn: ToolRequestIntercept
) -> None:
    """Register ``fn(name, args) -> args``, run before the tool start event (control)."""
    TOOL_REQUEST.register(name, priority, break_chain, fn)


def deregister_tool_request(name: str) -> bool:
    """Remove a tool request intercept; ``True`` if it existed."""
    return TOOL_REQUEST.deregister(name)


def register_tool_execution(name: str, priority: int, fn: ToolExecutionIntercept) -> None:
    """Register ``fn(ctx, next) -> ToolExecutionInterceptOutcome`` around the tool (control)."""
    TOOL_EXECUTION.register(name, priority, False, fn)


def deregister_tool_execution(name: str) -> bool:
    """Remove a tool execution intercept; ``True`` if it existed."""
    return TOOL_EXECUTION.deregister(name)


# -- LLM request chain ---------------------------------------------------------------------


def _copy_request(request: LLMRequest) -> LLMRequest:
    return LLMRequest(copy.deepcopy(request.headers), copy.deepcopy(request.content))


def _type_name(value: object) -> str:
    return type(value).__name__


class LLMRequestChain:
    """The state of one request-intercept run: current request, annotation and marks."""

    __slots__ = ("annotated", "codec_active", "marks", "name", "request")

    def __init__(self, name: str, request: LLMRequest, annotated: Any, codec_active: bool) -> None:
        self.name = name
        self.request = request
        self.annotated = annotated
        self.codec_active = codec_active
        self.marks: list[PendingMarkSpec] = []

    def arguments(self) -> tuple[str, LLMRequest, Any]:
        """What the next intercept is called with (copies: it may mutate them freely)."""
        return self.name, _copy_request(self.request), copy.deepcopy(self.annotated)

    def accept(self, entry: Entry, outcome: object) -> bool:
        """Check and take one intercept's outcome; ``True`` when the chain should stop."""
        if not isinstance(outcome, LLMRequestInterceptOutcome):
            raise RuntimeError(
                "internal error: LLM request intercept must return LLMRequestInterceptOutcome: "
                f"'{_type_name(outcome)}' object cannot be converted to "
                f"'LLMRequestInterceptOutcome' (intercept {entry.name!r})"
            )
        if self.codec_active:
            if outcome.request.content != self.request.content:
                raise RuntimeError(
                    f"invalid argument: LLM request intercept '{entry.name}' changed "
                    "request.content while a request codec is active; modify annotated_request "
                    "instead"
                )
            if outcome.annotated_request is None:
                raise RuntimeError(
                    f"invalid argument: LLM request intercept '{entry.name}' omitted "
                    "annotated_request while a request codec is active"
                )
        self.request = outcome.request
        self.annotated = outcome.annotated_request
        self.marks.extend(outcome.pending_marks)
        return entry.break_chain

    def outcome(self) -> LLMRequestInterceptOutcome:
        """The chain's final request, annotation and every pending mark in chain order."""
        return LLMRequestInterceptOutcome(self.request, self.annotated, self.marks)


def run_llm_request_chain(
    name: str, request: LLMRequest, annotated: Any, codec_active: bool
) -> LLMRequestInterceptOutcome:
    """Run the registered LLM request intercepts (synchronous callbacks)."""
    state = LLMRequestChain(name, request, annotated, codec_active)
    for entry in LLM_REQUEST.chain:
        if state.accept(entry, resolve(entry.fn(*state.arguments()))):
            break
    return state.outcome()


# -- execution chains ----------------------------------------------------------------------


def run_llm_execution_chain(
    chain: tuple[Entry, ...],
    name: str,
    request: LLMRequest,
    ctx: LLMExecutionContext,
    provider: Callable[[LLMRequest], Any],
) -> Any:
    """``provider(request)`` wrapped by ``chain`` (first entry outermost)."""

    def call(index: int, req: LLMRequest) -> Any:
        if not isinstance(req, LLMRequest):
            raise TypeError(f"LLM execution next() needs an LLMRequest, not {_type_name(req)}")
        if index == len(chain):
            return provider(req)
        return chain[index].fn(name, req, ctx, lambda nxt: call(index + 1, nxt))

    return call(0, request)


def run_tool_request_chain(name: str, args: Json) -> Json:
    """Run the registered tool request intercepts over ``args``."""
    for entry in TOOL_REQUEST.chain:
        args = _json_args(resolve(entry.fn(name, copy.deepcopy(args))), entry.name)
        if entry.break_chain:
            break
    return args


def _json_args(value: Any, name: str) -> Json:
    """A tool request intercept's return, refused (as Relay) unless it is JSON data."""
    bad = _non_json(value, 0)
    if bad is not None:
        raise RelayInvalidArgument(
            f"invalid argument: tool request intercept returned unsupported type {bad}",
            f" (intercept {name!r})",
        )
    return value


def _non_json(value: Any, depth: int) -> str | None:
    if value is None or isinstance(value, str | int | float | bool):
        return None
    if depth < 200 and isinstance(value, dict):
        for key, item in value.items():
            found = "non-string key" if not isinstance(key, str) else _non_json(item, depth + 1)
            if found is not None:
                return found
        return None
    if depth < 200 and isinstance(value, list | tuple):
        return next((f for f in (_non_json(v, depth + 1) for v in value) if f is not None), None)
    return type(value).__name__


def _not_an_outcome(outcome: object, name: str) -> RelayInvalidArgument:
    return RelayInvalidArgument(
        "invalid argument: tool execution intercept must return ToolExecutionInterceptOutcome; "
        "after await next(args), return ToolExecutionInterceptOutcome(result=downstream.result, "
        f"annotation=downstream.annotation): '{_type_name(outcome)}' object is not an instance "
        "of 'ToolExecutionInterceptOutcome'",
        f" (intercept {name!r})",
    )


def as_tool_result(value: object) -> ToolExecutionResult[Any]:
    """A tool callback's return as a ``ToolExecutionResult`` (plain JSON is wrapped)."""
    return value if isinstance(value, ToolExecutionResult) else ToolExecutionResult(value)


def run_tool_execution_chain(
    chain: tuple[Entry, ...],
    name: str,
    args: Json,
    tool_call_id: str | None,
    func: Callable[[Json], Any],
    marks: list[PendingMarkSpec],
) -> ToolExecutionResult[Any]:
    """``func(args)`` wrapped by ``chain``; pending marks are appended to ``marks``."""

    def call(index: int, current: Json) -> ToolExecutionResult[Any]:
        if index == len(chain):
            return as_tool_result(func(current))
        entry = chain[index]
        ctx = ToolExecutionContext(name, current, tool_call_id)
        active = [True]

        def next_call(nxt: Json) -> ToolExecutionResult[Any]:
            if not active[0]:
                raise RuntimeError(_SETTLED)
            return call(index + 1, nxt)

        try:
            outcome = entry.fn(ctx, next_call)
        finally:
            active[0] = False
        if not isinstance(outcome, ToolExecutionInterceptOutcome):
            raise _not_an_outcome(outcome, entry.name)
        marks.extend(outcome.pending_marks)
        return outcome.to_result()

    return call(0, args)


# -- async chains (coroutine-function intercepts, as Relay accepts them) ---------------------


def all_async(chain: tuple[Entry, ...]) -> bool:
    """Whether every entry is a coroutine function (the chain then runs on the event loop)."""
    return all(inspect.iscoroutinefunction(entry.fn) for entry in chain)


async def run_tool_execution_chain_async(
    chain: tuple[Entry, ...],
    name: str,
    args: Json,
    tool_call_id: str | None,
    func: Callable[[Json], Any],
    marks: list[PendingMarkSpec],
) -> ToolExecutionResult[Any]:
    """:func:`run_tool_execution_chain` for async intercepts: ``await next(args)``."""

    async def call(index: int, current: Json) -> ToolExecutionResult[Any]:
        if index == len(chain):
            return as_tool_result(await settle(func(current)))
        entry = chain[index]
        ctx = ToolExecutionContext(name, current, tool_call_id)
        active = [True]  # the continuation is valid only while this intercept runs

        async def next_call(nxt: Json) -> ToolExecutionResult[Any]:
            if not active[0]:
                raise RuntimeError(_SETTLED)
            return await call(index + 1, nxt)

        try:
            outcome = await settle(entry.fn(ctx, next_call))
        finally:
            active[0] = False
        if not isinstance(outcome, ToolExecutionInterceptOutcome):
            raise _not_an_outcome(outcome, entry.name)
        marks.extend(outcome.pending_marks)
        return outcome.to_result()

    return await call(0, args)


async def run_tool_request_chain_async(name: str, args: Json) -> Json:
    """:func:`run_tool_request_chain` awaiting coroutine-function intercepts."""
    for entry in TOOL_REQUEST.chain:
        args = _json_args(await settle(entry.fn(name, copy.deepcopy(args))), entry.name)
        if entry.break_chain:
            break
    return args


async def run_llm_request_chain_async(
    name: str, request: LLMRequest, annotated: Any, codec_active: bool
) -> LLMRequestInterceptOutcome:
    """:func:`run_llm_request_chain` awaiting coroutine-function intercepts."""
    state = LLMRequestChain(name, request, annotated, codec_active)
    for entry in LLM_REQUEST.chain:
        if state.accept(entry, await settle(entry.fn(*state.arguments()))):
            break
    return state.outcome()


async def run_llm_execution_chain_async(
    chain: tuple[Entry, ...],
    name: str,
    request: LLMRequest,
    ctx: LLMExecutionContext,
    provider: Callable[[LLMRequest], Any],
) -> Any:
    """:func:`run_llm_execution_chain` for async intercepts: ``await next(request)``."""

    async def call(index: int, req: LLMRequest) -> Any:
        if not isinstance(req, LLMRequest):
            raise TypeError(f"LLM execution next() needs an LLMRequest, not {_type_name(req)}")
        if index == len(chain):
            return await settle(provider(req))

        async def next_call(nxt: LLMRequest) -> Any:
            return await call(index + 1, nxt)

        return await settle(chain[index].fn(name, req, ctx, next_call))

    return await call(0, request)
