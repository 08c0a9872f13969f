"""One provider call with its retries, middleware and API hooks.

Per attempt: ``llm_request`` middleware → ``pre_api_request`` → ``llm_execution``
middleware around the real call → ``post_api_request`` or ``api_request_error``.
Retries of one call keep one ``api_request_id`` and ``api_call_count``; each
attempt has its own ``started_at``/``ended_at`` (so durations are per attempt).
Payloads are built only when a hook listens (``has_hook``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from wayline.contract.ids import RunContext
from wayline.host.manager import PluginManager
from wayline.redaction.sanitize import SanitizeMemo, redact_bounded, sanitize
from wayline.redaction.unsanitized import Unsanitized
from wayline.runtime.cancel import TurnInterrupted
from wayline.runtime.provider import (
    NormalizedResponse,
    Provider,
    ProviderError,
    backoff_delay,
    classify,
    normalize,
)


@dataclass(slots=True)
class TurnView:
    """Legacy fields the API hooks carry for Hermes plugins (raw, not sanitized)."""

    user_message: Any
    conversation_history: list[dict[str, Any]]
    # The agent's memo for its messages (depth 3 of the sanitized request): they never change.
    memo: SanitizeMemo | None = None
    sizes: ContentSizes | None = None


class ContentSizes:
    """The ``request_char_count`` of an agent's requests, kept as its message list grows."""

    __slots__ = ("_items", "_total")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._total = 0

    def count(self, messages: list[Any]) -> int:
        """Sum of ``len(str(content))`` over ``messages``, reusing the last call's prefix."""
        n = len(self._items)
        # Each request's list is the last one plus new messages; list equality checks
        # identity first, in C, so the unchanged prefix costs no per-message Python work
        # (a message rebuilt equal, such as a turn's user message with context, still matches).
        try:
            grown = len(messages) >= n and messages[:n] == self._items
        except Exception:  # an odd __eq__ in a message: count them all
            grown = False
        if grown:
            total, tail = self._total, messages[n:]
        else:
            total, tail = 0, messages
        total += _content_chars(tail)
        self._items, self._total = list(messages), total
        return total


def _content_chars(messages: Any) -> int:
    return sum(len(str(m.get("content") or "")) for m in messages if isinstance(m, dict))


REQUEST_MEMO_DEPTH = 3  # {"method", "body": {"messages": [<message>, ...]}}


def _raw_request(request: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in request.items() if k not in ("timeout", "http_client")}
    return {"method": "POST", "body": body}


def _original_fields(original: Any, effective: dict[str, Any], trace: list[Any]) -> dict[str, Any]:
    """``original_request_fields`` when request middleware changed the request: each top-level
    field it changed, as it was before (null: the middleware added it), sanitized, so the
    record keeps what the agent asked for next to what was sent."""
    if not trace or not isinstance(original, dict) or original is effective:
        return {}
    changed = {
        key: original.get(key)
        for key in sorted(set(original) | set(effective), key=str)
        if original.get(key) != effective.get(key)
    }
    return {"original_request_fields": sanitize(changed)} if changed else {}


def _sanitized_request(
    request: dict[str, Any], memo: SanitizeMemo | None = None, *, defer: bool = False
) -> Any:
    """The ``request`` field; ``defer`` (every callback is a queued observer, and the memo may
    be used, i.e. no request middleware rewrote messages) leaves the sanitizing to the
    observers' thread."""
    if defer and memo is not None:
        return Unsanitized(_raw_request(request), REQUEST_MEMO_DEPTH, memo)
    return sanitize(_raw_request(request), memo=memo)


def _response_payload(resp: NormalizedResponse, *, defer: bool = False) -> Any:
    raw = {
        "model": resp.model,
        "finish_reason": resp.finish_reason,
        "assistant_message": {
            "role": "assistant",
            "content": resp.content,
            "tool_calls": [
                {"id": tc.id, "name": tc.name, "arguments": tc.arguments} for tc in resp.tool_calls
            ],
        },
        "usage": resp.usage,
    }
    return Unsanitized(raw) if defer else sanitize(raw)


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One attempt's identity and timing, for its ``api_request_error`` payload."""

    fields: dict[str, Any]
    request: dict[str, Any]
    memo: SanitizeMemo | None
    started_at: float
    t0: float
    retry_count: int


def _report_error(
    manager: PluginManager, max_retries: int, attempt: _Attempt, error: ProviderError
) -> None:
    """``api_request_error`` for a failed (or cancelled) attempt, when anyone listens."""
    hooks = manager.hooks
    if "api_request_error" not in hooks.active:
        return
    hooks.invoke_hook(
        "api_request_error",
        **attempt.fields,
        api_duration=time.perf_counter() - attempt.t0,
        started_at=attempt.started_at,
        ended_at=time.time(),
        status_code=error.status_code,
        retry_count=attempt.retry_count,
        max_retries=max_retries,
        retryable=error.retryable,
        reason=error.reason,
        error={"type": error.error_type, "message": redact_bounded(str(error), 2000)},
        request=_sanitized_request(
            attempt.request, attempt.memo, defer=hooks.queued_only("api_request_error")
        ),
    )


def call_llm(
    manager: PluginManager,
    provider: Provider,
    request: dict[str, Any],
    ctx: RunContext,
    view: TurnView,
    cancel: threading.Event,
    tool_count: int,
) -> NormalizedResponse:
    """Run one model call to success or final failure (raises :class:`ProviderError`)."""
    hooks = manager.hooks
    active = hooks.active
    chains = manager.middleware
    cfg = provider.cfg
    fields = ctx.llm_fields()
    retry_count = 0
    # Request middleware may rewrite messages in place, so only the agent's own request,
    # untouched by any middleware, may reuse sanitized messages.
    memo = None if chains.has_middleware("llm_request") else view.memo
    while True:
        result = chains.apply_request("llm_request", request, **fields)
        effective: dict[str, Any] = result.payload
        trace = list(result.trace)
        messages = effective.get("messages") or []
        started_at = time.time()
        t0 = time.perf_counter()
        if "pre_api_request" in active:
            sizes = view.sizes if memo is not None and type(messages) is list else None
            approx = sizes.count(messages) if sizes is not None else _content_chars(messages)
            hooks.invoke_hook(
                "pre_api_request",
                **fields,
                user_message=view.user_message,
                conversation_history=view.conversation_history,
                request_messages=list(messages),
                message_count=len(messages),
                tool_count=tool_count,
                approx_input_tokens=approx // 4,
                request_char_count=approx,
                max_tokens=effective.get("max_tokens"),
                started_at=started_at,
                middleware_trace=trace,
                **_original_fields(result.original, effective, trace),
                request=_sanitized_request(
                    effective, memo, defer=hooks.queued_only("pre_api_request")
                ),
            )
        try:
            raw = chains.execute(
                "llm_execution",
                effective,
                partial(provider.call, cancel=cancel),
                original=result.original,
                middleware_trace=trace,
                **fields,
            )
            response = normalize(raw)
        except (TurnInterrupted, KeyboardInterrupt) as exc:
            # The request was cancelled and its connection closed: the attempt still ends
            # for the observers (an open llm span would otherwise never close).
            cancelled = ProviderError(
                "the model request was cancelled",
                error_type=type(exc).__name__,
                reason="interrupted",
                retryable=False,
            )
            attempt = _Attempt(fields, effective, memo, started_at, t0, retry_count)
            _report_error(manager, cfg.max_retries, attempt, cancelled)
            raise
        except Exception as exc:
            error = classify(exc)
            attempt = _Attempt(fields, effective, memo, started_at, t0, retry_count)
            _report_error(manager, cfg.max_retries, attempt, error)
            if not error.retryable or retry_count >= cfg.max_retries:
                error.attempts, error.base_url = retry_count + 1, cfg.base_url
                raise error from exc
            delay = backoff_delay(cfg, retry_count, error.retry_after)
            retry_count += 1
            if cancel.wait(delay):
                raise TurnInterrupted("interrupted while waiting to retry") from exc
            continue
        if "post_api_request" in active:
            hooks.invoke_hook(
                "post_api_request",
                **fields,
                api_duration=time.perf_counter() - t0,
                started_at=started_at,
                ended_at=time.time(),
                finish_reason=response.finish_reason,
                message_count=len(messages),
                response_model=response.model,
                usage=response.usage,
                assistant_content_chars=len(response.content or ""),
                assistant_tool_call_count=len(response.tool_calls),
                response=_response_payload(response, defer=hooks.queued_only("post_api_request")),
                assistant_message=response,
            )
        return response


__all__ = ["ContentSizes", "ProviderError", "TurnInterrupted", "TurnView", "call_llm"]
