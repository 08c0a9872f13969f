"""OpenAI-compatible Chat Completions through the ``openai`` SDK, one attempt at a time.

The SDK's own retries are off (``max_retries=0``): the agent loop owns retries so
every failed attempt is visible as an ``api_request_error`` hook. This module
classifies failures (status, retryable, reason) and normalises responses,
streaming or not, into one shape.

Requests go through the SDK's async client, each on an event loop run by the calling thread
(:mod:`wayline.runtime.lanes`): a cancelled turn cancels the request's task, which closes its
HTTP response and connection, so the server sees the client go away.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import weakref
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from wayline.contract.errors import ControlRejected
from wayline.contract.ids import new_tool_call_id
from wayline.runtime.cancel import TurnInterrupted
from wayline.runtime.lanes import ClientFactory, LanePool


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """Where and how to call the model."""

    base_url: str
    model: str
    api_key: str = "wayline"
    provider: str = "custom"
    api_mode: str = "chat_completions"
    max_retries: int = 3
    timeout: float = 120.0
    stream: bool = False
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    max_tokens: int | None = None
    transport: Any = field(default=None, repr=False)
    """An async transport the SDK client sends every request through instead of the network
    (a replay serves recorded answers this way): an ``AsyncBaseTransport`` of the package the
    installed SDK is built on, ``httpx`` (or its fork ``httpx2`` in newer SDKs). ``base_url``
    still names the endpoint in requests and records. ``None``: the network."""


@dataclass(slots=True)
class ToolCall:
    """One tool call requested by the model (``arguments`` is the raw JSON string)."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class NormalizedResponse:
    """A provider response reduced to what the agent loop needs."""

    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    model: str | None
    usage: dict[str, int] | None
    raw: Any = field(default=None, repr=False)


class ProviderError(Exception):
    """A failed attempt, classified for the retry policy and the error hook."""

    def __init__(
        self,
        message: str,
        *,
        error_type: str,
        reason: str,
        retryable: bool,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.reason = reason
        self.retryable = retryable
        self.status_code = status_code
        self.retry_after = retry_after
        # Filled in by the retry loop when it gives up (for the turn's final message).
        self.attempts = 1
        self.base_url: str | None = None


_STATUS_REASONS = {
    400: ("format_error", False),
    401: ("auth", False),
    403: ("auth", False),
    404: ("model_not_found", False),
    408: ("timeout", True),
    409: ("conflict", True),
    413: ("context_overflow", False),
    422: ("format_error", False),
    429: ("rate_limit", True),
}


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def classify(exc: BaseException) -> ProviderError:
    """Map an SDK/transport exception to a :class:`ProviderError`."""
    import openai

    if isinstance(exc, ProviderError):
        return exc
    message = str(exc) or type(exc).__name__
    if isinstance(exc, ControlRejected):
        cause = exc.__cause__
        return ProviderError(
            message,
            error_type=type(cause).__name__ if cause is not None else "ControlRejected",
            reason="rejected",
            retryable=False,
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        reason, retryable = _STATUS_REASONS.get(status, ("server_error", status >= 500))
        if status == 503:
            reason = "overloaded"
        return ProviderError(
            message,
            error_type=type(exc).__name__,
            reason=reason,
            retryable=retryable,
            status_code=status,
            retry_after=_retry_after(exc.response.headers),
        )
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(
            message, error_type="APITimeoutError", reason="timeout", retryable=True
        )
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError(
            message, error_type=type(exc).__name__, reason="connection_error", retryable=True
        )
    return ProviderError(
        message, error_type=type(exc).__name__, reason="invalid_response", retryable=True
    )


def backoff_delay(cfg: ProviderConfig, retry_count: int, retry_after: float | None) -> float:
    """Exponential backoff with full jitter; a server's Retry-After wins (capped)."""
    if retry_after is not None:
        return min(retry_after, cfg.backoff_max)
    ceiling = min(cfg.backoff_max, cfg.backoff_base * (2**retry_count))
    return random.uniform(ceiling / 2, ceiling)


class Provider:
    """Makes single Chat Completions attempts; thread-safe.

    Each call runs on its calling thread, on a lane (an event loop and an SDK async client)
    taken from the provider's pool for the call: calls from any number of threads run side
    by side, and a thread that calls again reuses a lane and its connection
    (:mod:`wayline.runtime.lanes`). :meth:`close` ends them; a provider that is
    garbage-collected unclosed closes its clients too.
    """

    def __init__(self, cfg: ProviderConfig) -> None:
        self.cfg = cfg
        self._lanes = LanePool(
            ClientFactory(cfg.base_url, cfg.api_key or "wayline", cfg.timeout, cfg.transport)
        )
        weakref.finalize(self, self._lanes.close)

    def client(self) -> Any:
        """An SDK async client of the provider, built now if none is idle, so ``import
        openai`` stays off the start of commands that make no model call and a first model
        call does not pay for it."""
        lane = self._lanes.take()
        self._lanes.give(lane)
        return lane.client

    def build_request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The provider kwargs for one call (what ``llm_request`` middleware rewrites)."""
        request: dict[str, Any] = {"model": self.cfg.model, "messages": messages}
        if tools:
            request["tools"] = tools
        if self.cfg.max_tokens is not None:
            request["max_tokens"] = self.cfg.max_tokens
        if self.cfg.stream:
            request["stream"] = True
            request["stream_options"] = {"include_usage": True}
        return request

    def call(self, request: dict[str, Any], cancel: threading.Event | None = None) -> Any:
        """One attempt; returns the raw SDK response or raises :class:`ProviderError`.

        Blocks the calling thread until the answer arrives. When ``cancel`` is set meanwhile
        (from any thread), the request's task is cancelled, which closes its connection, and
        this raises :class:`TurnInterrupted`; Ctrl-C does the same and then propagates.
        """
        lane = self._lanes.take()
        try:
            return lane.run(partial(_attempt, request=request), cancel)
        except asyncio.CancelledError:
            raise TurnInterrupted("the model request was cancelled") from None
        except ProviderError:
            raise
        except Exception as exc:
            raise classify(exc) from exc
        finally:
            self._lanes.give(lane)

    def close(self) -> None:
        """Cancel the calls in flight and close the clients' connections; idempotent. A
        later call builds a fresh client."""
        self._lanes.close()


async def _attempt(client: Any, request: dict[str, Any]) -> Any:
    """The request on a lane's loop; a cancelled task closes the HTTP response it holds."""
    kwargs = _sdk_kwargs(request)
    if kwargs.get("stream"):
        stream = await client.chat.completions.create(**kwargs)
        async with stream:
            return await _collect_stream(stream)
    kwargs.pop("stream_options", None)
    kwargs.pop("stream", None)
    return await client.chat.completions.create(**kwargs)


def _sdk_kwargs(request: dict[str, Any]) -> dict[str, Any]:
    """``create()`` keyword arguments for ``request``, with its JSON arrays in ``extra_body``.

    The SDK's ``maybe_transform`` walks every message and tool with TypedDict introspection
    (about 0.1 ms per message, so a long session's calls grow quadratically) and returns them
    unchanged, since chat messages and tools have no aliased or formatted fields. ``extra_body``
    is merged over the body as it is, so the request on the wire is the same.
    """
    kwargs = dict(request)
    extra = dict(kwargs.get("extra_body") or {})
    for key in ("messages", "tools"):
        value = kwargs.get(key)
        if isinstance(value, list) and key not in extra:
            extra[key] = value
            kwargs[key] = []
    if extra:
        kwargs["extra_body"] = extra
    if not kwargs.get("tools"):
        kwargs.pop("tools", None)
    return kwargs


async def _collect_stream(stream: Any) -> dict[str, Any]:
    """Fold SSE chunks into one Chat Completions-shaped dict."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: Any = None
    model: str | None = None
    response_id: str | None = None
    async for chunk in stream:
        model = getattr(chunk, "model", None) or model
        response_id = getattr(chunk, "id", None) or response_id
        if getattr(chunk, "usage", None) is not None:
            usage = chunk.usage
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta is not None and delta.content:
                content.append(delta.content)
            for tc in (delta.tool_calls if delta is not None else None) or []:
                slot = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = tc.id or slot["id"]
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
            finish = choice.finish_reason or finish
    if finish is None:
        raise ProviderError(
            "stream ended before a finish_reason",
            error_type="IncompleteStream",
            reason="invalid_response",
            retryable=True,
        )
    tool_calls = [
        {
            "id": c["id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": c["arguments"]},
        }
        for _, c in sorted(calls.items())
    ]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": response_id,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage.model_dump() if hasattr(usage, "model_dump") else usage,
    }


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def normalize(raw: Any) -> NormalizedResponse:
    """Reduce an SDK object or a dict (middleware may return either) to our shape."""
    choices = _get(raw, "choices")
    if not choices:
        raise ProviderError(
            "provider returned no choices",
            error_type="InvalidAPIResponse",
            reason="invalid_response",
            retryable=True,
        )
    choice = choices[0]
    message = _get(choice, "message")
    if message is None:
        raise ProviderError(
            "provider returned a choice without a message",
            error_type="InvalidAPIResponse",
            reason="invalid_response",
            retryable=True,
        )
    tool_calls: list[ToolCall] = []
    for tc in _get(message, "tool_calls") or []:
        fn = _get(tc, "function")
        args = _get(fn, "arguments")
        if not isinstance(args, str):
            args = json.dumps(args if args is not None else {})
        # A server that sends no id gets one here, before any hook or the transcript sees
        # the call: every record of it (store, hooks, exports) then names the same id.
        call_id = str(_get(tc, "id") or new_tool_call_id())
        tool_calls.append(ToolCall(call_id, str(_get(fn, "name") or ""), args))
    content = _get(message, "content")
    return NormalizedResponse(
        content=content if isinstance(content, str) else None,
        tool_calls=tool_calls,
        finish_reason=_get(choice, "finish_reason"),
        model=_get(raw, "model"),
        usage=normalize_usage(_get(raw, "usage")),
        raw=raw,
    )


def normalize_usage(usage: Any) -> dict[str, int] | None:
    """Input/output/cached/reasoning token counts, when the server reports them."""
    if usage is None:
        return None
    prompt = _get(usage, "prompt_tokens") or 0
    completion = _get(usage, "completion_tokens") or 0
    out = {
        "input_tokens": int(prompt),
        "output_tokens": int(completion),
        "prompt_tokens": int(prompt),
        "completion_tokens": int(completion),
        "total_tokens": int(_get(usage, "total_tokens") or prompt + completion),
    }
    cached = _get(_get(usage, "prompt_tokens_details"), "cached_tokens")
    if cached is not None:
        out["cache_read_tokens"] = int(cached)
    reasoning = _get(_get(usage, "completion_tokens_details"), "reasoning_tokens")
    if reasoning is not None:
        out["reasoning_tokens"] = int(reasoning)
    return out
