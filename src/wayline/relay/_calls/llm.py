"""LLM call lifecycle with the nemo_relay ``llm`` names.

An LLM span is not pushed on the scope stack: its events are parented to the active scope.
The start event's ``data`` is ``{"content": <body>, "headers": <headers>}`` with credential
headers removed; the end event's ``data`` is the raw provider response.

Managed calls (``execute``, ``execute_sync``, ``stream_execute``) follow Relay 0.10.4's
managed-call contract: conditional-execution guardrails (:mod:`~wayline.relay.guardrails`),
then codec decode, the request-intercept chain and codec encode
(:mod:`~wayline.relay.intercepts`) — any failure raises before a single event — then the
start at T, the intercepts' pending marks
at exactly T + 1 µs, and the provider wrapped by execution intercepts.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Final

from wayline.relay._calls.llm_prepare import (
    Prepared,
    conditional_execution,
    intercept,
    intercept_async,
    request_intercepts,
)
from wayline.relay._intercepts import chains as _icpt
from wayline.relay._intercepts import guardrails as _guardrails
from wayline.relay._intercepts import sanitize as _sanitize
from wayline.relay._intercepts.outcomes import (
    LLMExecutionContext,
    emit_pending_marks,
)
from wayline.relay._scopes import subscribers as _subs
from wayline.relay._scopes.datatypes import Json, LLMAttributes, LLMRequest, attribute_bits
from wayline.relay._scopes.handles import LLMHandle, ScopeHandle
from wayline.relay._scopes.managed import running_in
from wayline.relay._scopes.stack_ops import (
    agent_session_ids,
    current,
    end_timestamp_ns,
    outermost_scope_uuid,
)
from wayline.relay._scopes.status import annotation_json, error_metadata, ok_metadata
from wayline.relay._scopes.uuid7 import uuid7_at
from wayline.relay.clock import now_ns
from wayline.relay.events import ScopeEvent, merge_json
from wayline.relay.jsonfmt import JsonText, dumps
from wayline.relay.timefmt import datetime_to_ns

__all__ = [
    "CREDENTIAL_HEADERS",
    "call",
    "call_end",
    "call_fail",
    "conditional_execution",
    "execute",
    "execute_sync",
    "request_intercepts",
]

_log = logging.getLogger("wayline.relay")

CREDENTIAL_HEADERS: Final = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "x-api-key",
        "api-key",
        "anthropic-api-key",
        "x-goog-api-key",
    }
)
"""Headers Relay 0.10.4 removes (case-insensitively) from the request copy recorded on events.

Kept local rather than taken from a general sanitizer: the event bytes must match Relay's,
which strips exactly these and nothing else.
"""

SESSION_HEADER: Final = "x-dynamo-session-id"
PARENT_SESSION_HEADER: Final = "x-dynamo-parent-session-id"
TRACEPARENT_HEADER: Final = "traceparent"


def observable_headers(headers: Mapping[str, Json]) -> dict[str, Json]:
    """A copy of ``headers`` without credential headers (the caller's mapping is untouched)."""
    return {k: v for k, v in headers.items() if k.lower() not in CREDENTIAL_HEADERS}


def _start_event_data(request: LLMRequest) -> dict[str, Any]:
    content, headers = request.content, observable_headers(request.headers)
    data = {"content": content, "headers": headers}
    if content.__class__ is JsonText:
        # The body's text is known (see jsonfmt.with_text): the line reuses it.
        return JsonText(data, f'{{"content":{dumps(content)},"headers":{dumps(headers)}}}')
    return data


def _begin_span(
    name: str,
    request: LLMRequest,
    handle: ScopeHandle | None,
    attributes: LLMAttributes | int | None,
    data: Json | None,
    metadata: Json | None,
    model_name: str | None,
    timestamp: datetime | None,
    annotated_request: dict[str, Any] | None,
    codec: object = None,
) -> LLMHandle:
    if not isinstance(request, LLMRequest):
        raise TypeError(f"request must be an LLMRequest, not {type(request).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"LLM name must be a str, not {type(name).__name__}")
    parent = current() if handle is None else handle
    now = now_ns()
    started = now if timestamp is None else datetime_to_ns(timestamp)
    bits = attribute_bits(attributes, LLMAttributes)
    span = LLMHandle(
        uuid7_at(now),
        name,
        bits,
        LLMAttributes.strings_of(bits),
        parent.uuid,
        data,
        metadata,
        model_name,
        started,
        parent.propagation_root_uuid,
    )
    callbacks = _subs._callbacks
    if callbacks:
        profile = span.profile()
        recorded: LLMRequest | None = request
        if _sanitize.LLM_REQUEST.chain:
            recorded = _sanitize.llm_request(request, codec)
            if recorded is None:
                annotated_request = None
        if annotated_request is not None:
            profile["annotated_request"] = annotated_request
        _subs.dispatch(
            ScopeEvent(
                "start",
                span.uuid,
                span.parent_uuid,
                span.propagation_root_uuid,
                started,
                name,
                "llm",
                span._attr_strings,
                profile,
                None if recorded is None else _start_event_data(recorded),
                None,
                metadata,
            ),
            callbacks,
        )
    elif _sanitize.LLM_REQUEST.chain:
        # As Relay: sanitizers run on every start, even when no subscriber records it.
        _sanitize.llm_request(request, codec)
    return span


def call(
    name: str,
    request: LLMRequest,
    *,
    handle: ScopeHandle | None = None,
    attributes: LLMAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    model_name: str | None = None,
    timestamp: datetime | None = None,
    annotated_request: Mapping[str, Any] | None = None,
) -> LLMHandle:
    """Start a manual LLM span under ``handle`` (default: the active scope).

    ``model_name`` goes into ``category_profile``; ``data`` stays on the handle only;
    ``annotated_request`` (a mapping or an annotation with ``to_dict()``, wayline extension) is
    recorded as ``category_profile.annotated_request``. Manual calls run no intercepts.
    """
    return _begin_span(
        name,
        request,
        handle,
        attributes,
        data,
        metadata,
        model_name,
        timestamp,
        annotation_json(annotated_request, "annotated_request"),
    )


def _emit_end(
    span: LLMHandle,
    response: Any,
    metadata: Any,
    annotated_response: dict[str, Any] | None,
    timestamp: datetime | None,
    extra_profile: dict[str, Any] | None = None,
    response_codec: object = None,
    sanitize_codec: object = None,
    sanitized: tuple[Any, bool] | None = None,
) -> None:
    ended = end_timestamp_ns(span.started_ns, timestamp)
    callbacks = _subs._callbacks
    if sanitized is None and response is not None and _sanitize.LLM_RESPONSE.chain:
        # As Relay: sanitizers run on every end, even when no subscriber records it.
        sanitized = _sanitize.llm_response(response, sanitize_codec)
    if callbacks:
        profile = span.profile()
        if sanitized is not None:
            response, kept = sanitized
            if not kept:
                annotated_response = response_codec = None
        if annotated_response is None and response_codec is not None and response is not None:
            annotated_response = _decoded(response_codec, response)
        if annotated_response is not None and response is not None:
            profile["annotated_response"] = annotated_response
        if extra_profile:
            profile.update(extra_profile)
        _subs.dispatch(
            ScopeEvent(
                "end",
                span.uuid,
                span.parent_uuid,
                span.propagation_root_uuid,
                ended,
                span.name,
                "llm",
                span._attr_strings,
                profile,
                response,
                None,
                merge_json(span.metadata, metadata),
            ),
            callbacks,
        )


def _decoded(response_codec: object, response: Any) -> Any:
    """The codec's annotation of the recorded (sanitized) response; a failure only omits it."""
    try:
        decode = getattr(response_codec, "decode_response")  # noqa: B009
        return annotation_json(decode(response), "decoded response annotation")
    except Exception as exc:  # as Relay: a response codec failure never fails call_end
        _log.warning("response codec could not decode the LLM response; no annotation: %s", exc)
        return None


def call_end(
    handle: LLMHandle,
    response: Json,
    *,
    data: Json | None = None,
    metadata: Json | None = None,
    annotated_response: Mapping[str, Any] | None = None,
    response_codec: object = None,
    timestamp: datetime | None = None,
) -> None:
    """Finish a manual LLM span: the end event records ``response`` (``data`` if it is None).

    End metadata is the start metadata merged with ``metadata`` and
    ``otel.status_code: "OK"``. ``annotated_response`` (or ``response_codec.decode_response``)
    becomes ``category_profile.annotated_response``.
    """
    recorded = data if response is None else response
    if response_codec is not None and not callable(
        getattr(response_codec, "decode_response", None)
    ):
        raise TypeError("response_codec must have a decode_response(response) method")
    annotation = None
    sanitize_codec = response_codec
    if annotated_response is not None:
        annotation = annotation_json(annotated_response, "annotated_response")
        response_codec = None
    _emit_end(
        handle,
        recorded,
        ok_metadata(metadata),
        annotation,
        timestamp,
        response_codec=response_codec,
        sanitize_codec=sanitize_codec,
    )


def _provider_request(request: LLMRequest, span: LLMHandle) -> LLMRequest:
    headers = dict(request.headers)
    for key in [k for k in headers if k.lower() == TRACEPARENT_HEADER]:
        del headers[key]
    trace_id = (outermost_scope_uuid() or span.parent_uuid).replace("-", "")
    headers[TRACEPARENT_HEADER] = f"00-{trace_id}-{span.uuid.replace('-', '')[16:]}-01"
    return LLMRequest(headers, request.content)


def _begin(
    name: str,
    request: LLMRequest,
    handle: ScopeHandle | None,
    attributes: LLMAttributes | int | None,
    data: Json | None,
    metadata: Json | None,
    model_name: str | None,
    codec: object,
    prepared: Prepared | None = None,
) -> tuple[LLMHandle, LLMRequest, Any]:
    if not isinstance(request, LLMRequest):
        raise TypeError(f"request must be an LLMRequest, not {type(request).__name__}")
    if prepared is None:
        _guardrails.check_llm(name, request, handle)
        prepared = intercept(name, request, codec)
    # else: the async path ran the guardrails and intercepts on the caller's loop already
    request, annotated, marks = prepared
    annotation = annotation_json(annotated, "annotated_request")
    headers = dict(request.headers)
    ids = agent_session_ids()
    if ids is not None:
        headers[SESSION_HEADER] = ids[0]
        if ids[1] is None:
            headers.pop(PARENT_SESSION_HEADER, None)
        else:
            headers[PARENT_SESSION_HEADER] = ids[1]
    request = LLMRequest(headers, request.content)
    span = _begin_span(
        name, request, handle, attributes, data, metadata, model_name, None, annotation, codec
    )
    if marks:
        # Every pending mark at exactly start + 1 µs, in chain order, under the LLM span.
        emit_pending_marks(marks, span.uuid, span.propagation_root_uuid, span.started_ns + 1_000)
    return span, _provider_request(request, span), annotated


def _fail(span: LLMHandle, exc: BaseException, extra_profile: dict[str, Any] | None = None) -> None:
    _emit_end(span, None, error_metadata(None, exc), None, None, extra_profile)


def _finish(
    span: LLMHandle,
    response: Any,
    response_codec: object,
    extra_profile: dict[str, Any] | None = None,
    sanitized: tuple[Any, bool] | None = None,
) -> None:
    try:
        annotation = None
        if response_codec is not None and response is not None:
            decode = getattr(response_codec, "decode_response", None)
            if not callable(decode):
                raise TypeError("response_codec must have a decode_response(response) method")
            annotation = annotation_json(decode(response), "decoded response annotation")
    except Exception as exc:
        _fail(span, exc, extra_profile)
        raise
    _emit_end(
        span,
        response,
        ok_metadata(None),
        annotation,
        None,
        extra_profile,
        sanitize_codec=response_codec,
        sanitized=sanitized,
    )


async def _finish_async(
    span: LLMHandle,
    response: Any,
    response_codec: object,
    extra_profile: dict[str, Any] | None = None,
) -> None:
    """:func:`_finish` with coroutine response sanitizers awaited in the caller's task."""
    sanitized = None
    if response is not None and _sanitize.LLM_RESPONSE.chain:
        sanitized = await _sanitize.llm_response_async(response, response_codec)
    _finish(span, response, response_codec, extra_profile, sanitized)


async def _begin_async(
    name: str,
    request: LLMRequest,
    handle: ScopeHandle | None,
    attributes: LLMAttributes | int | None,
    data: Json | None,
    metadata: Json | None,
    model_name: str | None,
    codec: object,
) -> tuple[LLMHandle, LLMRequest, Any]:
    """:func:`_begin` with guardrails and request intercepts awaited on the caller's loop."""
    if _guardrails.LLM_CONDITIONAL.chain and isinstance(request, LLMRequest):
        await _guardrails.check_llm_async(name, request, handle)
    prepared = await intercept_async(name, request, codec)
    return _begin(name, request, handle, attributes, data, metadata, model_name, codec, prepared)


def _context(span: LLMHandle, annotated: Any, response_codec: object) -> LLMExecutionContext:
    return LLMExecutionContext(span.name, span.model_name, annotated, response_codec)


async def execute(
    name: str,
    request: LLMRequest,
    func: Callable[[LLMRequest], Json | Awaitable[Json]],
    *,
    handle: ScopeHandle | None = None,
    attributes: LLMAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    model_name: str | None = None,
    codec: object = None,
    response_codec: object = None,
) -> Json:
    """Call the provider ``func(request)`` (sync or async) inside a managed LLM span.

    Order (Relay's): conditional-execution guardrails, codec decode, request intercepts,
    codec encode — a failure there raises before any event. Then the start event (with
    ``x-dynamo-session-id``/``x-dynamo-parent-session-id`` of the innermost Agent scopes),
    the intercepts' pending marks at start + 1 µs, and ``func`` (wrapped by LLM execution
    intercepts) with an extra ``traceparent`` header that is not recorded. The end records
    the response with ``otel.status_code: "OK"``; if ``func`` raises, it records ``data: null``
    with error status and the original exception propagates. Returns the response.
    """
    span, provider_request, annotated = await _begin_async(
        name, request, handle, attributes, data, metadata, model_name, codec
    )
    chain = _icpt.LLM_EXECUTION.chain
    try:
        with running_in(span.uuid, span.propagation_root_uuid):
            if chain and _icpt.all_async(chain):
                response = await _icpt.run_llm_execution_chain_async(
                    chain, name, provider_request, _context(span, annotated, response_codec), func
                )
            elif chain:
                loop = asyncio.get_running_loop()
                ctx = _context(span, annotated, response_codec)

                def blocking(req: LLMRequest) -> Any:
                    value = func(req)
                    if inspect.isawaitable(value):
                        value = asyncio.run_coroutine_threadsafe(_awaited(value), loop).result()
                    return value

                response = await asyncio.to_thread(
                    _icpt.run_llm_execution_chain, chain, name, provider_request, ctx, blocking
                )
            else:
                response = func(provider_request)
                if inspect.isawaitable(response):
                    response = await response
    except Exception as exc:
        _fail(span, exc)
        raise
    await _finish_async(span, response, response_codec)
    return response


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _sync_only(name: str, func: Callable[[LLMRequest], Any]) -> Callable[[LLMRequest], Any]:
    def call(req: LLMRequest) -> Any:
        response = func(req)
        if inspect.isawaitable(response):
            if inspect.iscoroutine(response):
                response.close()
            raise TypeError(f"LLM {name!r}: execute_sync needs a synchronous func")
        return response

    return call


def execute_sync(
    name: str,
    request: LLMRequest,
    func: Callable[[LLMRequest], Json],
    *,
    handle: ScopeHandle | None = None,
    attributes: LLMAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    model_name: str | None = None,
    codec: object = None,
    response_codec: object = None,
) -> Json:
    """:func:`execute` for synchronous callers and a synchronous ``func`` (wayline extension)."""
    span, provider_request, annotated = _begin(
        name, request, handle, attributes, data, metadata, model_name, codec
    )
    provider = _sync_only(name, func)
    chain = _icpt.LLM_EXECUTION.chain
    try:
        with running_in(span.uuid, span.propagation_root_uuid):
            if chain:
                ctx = _context(span, annotated, response_codec)
                response = _icpt.run_llm_execution_chain(
                    chain, name, provider_request, ctx, provider
                )
            else:
                response = provider(provider_request)
    except Exception as exc:
        _fail(span, exc)
        raise
    _finish(span, response, response_codec)
    return response


def call_fail(
    handle: LLMHandle,
    error: Mapping[str, Any],
    *,
    metadata: Json | None = None,
    timestamp: datetime | None = None,
) -> None:
    """Finish a manual LLM span as failed (wayline extension for observer-driven hosts).

    The end event's ``data`` is ``{"error": error}``; its metadata carries
    ``otel.status_code: "ERROR"``, the error message as ``otel.status_description`` and
    its type as ``error.type``.
    """
    status = {
        "otel.status_code": "ERROR",
        "otel.status_description": str(error.get("message") or ""),
        "error.type": str(error.get("type") or "error"),
    }
    _emit_end(handle, {"error": dict(error)}, merge_json(metadata, status), None, timestamp)
