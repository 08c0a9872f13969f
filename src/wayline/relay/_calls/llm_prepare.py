"""What runs before a managed LLM call starts: codec decode, request intercepts, codec encode.

Also the two Relay entry points that run one stage alone (``llm.request_intercepts`` and
``llm.conditional_execution``). Nothing here emits an event: a failure propagates before the
call has a lifecycle, and the intercepts' pending marks are handed back to the caller.
"""

from __future__ import annotations

import asyncio
from typing import Any

from wayline.relay._intercepts import chains as _icpt
from wayline.relay._intercepts import guardrails as _guardrails
from wayline.relay._intercepts.outcomes import LLMRequestInterceptOutcome
from wayline.relay._scopes.datatypes import LLMRequest
from wayline.relay._scopes.handles import ScopeHandle

__all__ = [
    "Prepared",
    "conditional_execution",
    "intercept",
    "intercept_async",
    "request_intercepts",
]


def _decoder(request: LLMRequest, codec: object) -> tuple[Any, Any]:
    """The codec's view of ``request`` and its ``encode`` (both ``None`` without a codec)."""
    if not isinstance(request, LLMRequest):
        raise TypeError(f"request must be an LLMRequest, not {type(request).__name__}")
    if codec is None:
        return None, None
    decode = getattr(codec, "decode", None)
    encode = getattr(codec, "encode", None)
    if not callable(decode) or not callable(encode):
        raise TypeError("codec must have decode(request) and encode(annotated, original)")
    return decode(request), encode


def _encoded(request: LLMRequest, annotated: Any, encode: Any) -> LLMRequest:
    if encode is None:
        return request
    encoded = encode(annotated, request)
    if not isinstance(encoded, LLMRequest):
        raise TypeError(f"codec.encode must return an LLMRequest, not {type(encoded).__name__}")
    # Intercept headers win over whatever the codec carried over.
    return LLMRequest({**encoded.headers, **request.headers}, encoded.content)


Prepared = tuple[LLMRequest, Any, list[Any]]


def intercept(name: str, request: LLMRequest, codec: object) -> Prepared:
    """Codec decode → request intercepts → codec encode: (provider request, annotation, marks).

    Emits nothing; any failure propagates before a lifecycle exists (marks are discarded).
    """
    annotated, encode = _decoder(request, codec)
    marks: list[Any] = []
    if _icpt.LLM_REQUEST.chain:
        outcome = _icpt.run_llm_request_chain(name, request, annotated, codec is not None)
        request, annotated, marks = (
            outcome.request,
            outcome.annotated_request,
            outcome.pending_marks,
        )
    return _encoded(request, annotated, encode), annotated, marks


async def intercept_async(name: str, request: LLMRequest, codec: object) -> Prepared:
    """:func:`intercept` with coroutine intercepts awaited on the caller's event loop."""
    annotated, encode = _decoder(request, codec)
    marks: list[Any] = []
    if _icpt.LLM_REQUEST.chain:
        outcome = await _icpt.run_llm_request_chain_async(
            name, request, annotated, codec is not None
        )
        request, annotated, marks = (
            outcome.request,
            outcome.annotated_request,
            outcome.pending_marks,
        )
    return _encoded(request, annotated, encode), annotated, marks


def request_intercepts(name: str, request: LLMRequest, *, codec: object = None) -> Any:
    """Run the LLM request-intercept chain alone and return its outcome; emits nothing.

    The outcome's ``pending_marks`` are returned, never emitted (there is no LLM lifecycle to
    attach them to). ``codec`` (wayline extension) applies the codec rules and returns the
    encoded provider request. As in Relay, inside a running event loop the outcome comes back
    as an awaitable and coroutine intercepts run on the caller's loop.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        final, annotated, marks = intercept(name, request, codec)
        return LLMRequestInterceptOutcome(final, annotated, marks)
    if codec is None and isinstance(request, LLMRequest):
        return _icpt.run_llm_request_chain_async(name, request, None, False)
    final, annotated, marks = intercept(name, request, codec)
    return _ready(LLMRequestInterceptOutcome(final, annotated, marks))


async def _ready(value: Any) -> Any:
    return value


def conditional_execution(
    name: str | LLMRequest,
    request: LLMRequest | None = None,
    *,
    handle: ScopeHandle | None = None,
) -> Any:
    """Run the LLM guardrails alone (``GuardrailRejected`` on rejection).

    ``conditional_execution(request)`` is Relay's form (a rejection emits no mark);
    ``conditional_execution(name, request)`` (wayline) also marks the rejection under
    ``name``. Returns ``None`` outside an event loop and an awaitable inside one, so coroutine
    guardrails run on the caller's loop.
    """
    target: str | None
    if request is None:
        if not isinstance(name, LLMRequest):
            raise TypeError(f"conditional_execution needs an LLMRequest, not {type(name).__name__}")
        target, request = None, name
    elif isinstance(name, str):
        target = name
    else:
        raise TypeError(f"the LLM name must be a str, not {type(name).__name__}")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        _guardrails.check_llm(target, request, handle)
        return None
    return _guardrails.check_llm_async(target, request, handle)
