"""Managed streaming LLM calls (``llm.stream_execute``), with Relay's lifecycle rules.

Setup is the same as :func:`wayline.relay._calls.llm.execute`: guardrails, codec, request
intercepts (a failure raises before any event), then the LLM start at T and the pending marks
at T + 1 µs. The provider ``func(request)`` returns an iterable of chunks (wrapped by
LLM stream execution intercepts). While the caller iterates, each chunk goes to
``collector(chunk)`` and an ``llm.chunk`` mark (``{"chunk_index": i, "provider": "unknown"}``)
is emitted under the LLM span. When the stream ends, ``finalizer()`` returns the aggregate
response, which becomes the end event's ``data`` (with ``time_to_first_chunk`` in seconds in
the profile). A failing source, collector or finalizer ends the span with ``data: null`` and
error status and the original exception propagates. A stream closed early (``close()``,
leaving a ``with`` block, or garbage collection) ends with ``otel.status_code: "UNSET"``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import TracebackType
from typing import Any, Final

from wayline.relay._calls import llm as _llm
from wayline.relay._intercepts import chains as _icpt
from wayline.relay._scopes.datatypes import Json, LLMAttributes, LLMRequest
from wayline.relay._scopes.handles import LLMHandle, ScopeHandle
from wayline.relay._scopes.managed import running_in
from wayline.relay._scopes.pyjson import to_json_value
from wayline.relay._scopes.uuid7 import uuid7_at
from wayline.relay.clock import now_ns
from wayline.relay.events import emit_mark

__all__ = ["LLMStream", "stream_execute", "stream_execute_sync"]

_log = logging.getLogger("wayline.relay")

CHUNK_MARK: Final = "llm.chunk"
Collector = Callable[[Json], Any]
Finalizer = Callable[[], Json]


class _Lifecycle:
    """Chunk accounting and the single end event of one streaming span."""

    def __init__(
        self, span: LLMHandle, collector: Collector, finalizer: Finalizer, response_codec: object
    ) -> None:
        self.span = span
        self.collector = collector
        self.finalizer = finalizer
        self.response_codec = response_codec
        self.index = 0
        self.first_ns: int | None = None
        self.done = False

    def _profile(self) -> dict[str, Any] | None:
        if self.first_ns is None:
            return None
        return {"time_to_first_chunk": (self.first_ns - self.span.started_ns) / 1e9}

    def chunk(self, chunk: Json) -> None:
        """Collect one chunk and mark it (a collector failure ends the span)."""
        try:
            self.collector(chunk)
        except Exception as exc:
            self.fail(exc)
            raise
        now = now_ns()
        if self.first_ns is None:
            self.first_ns = now
        span = self.span
        # Chunk marks never precede the pending marks at start + 1 µs.
        emit_mark(
            uuid7_at(now),
            span.uuid,
            span.propagation_root_uuid,
            max(now, span.started_ns + 1_000),
            CHUNK_MARK,
            None,
            None,
            {"chunk_index": self.index, "provider": "unknown"},
            None,
        )
        self.index += 1

    def _aggregate(self) -> Any:
        try:
            return to_json_value(self.finalizer())
        except Exception as exc:
            # As Relay: the chunks were delivered, so the call completed; only its aggregate
            # is missing from the record.
            _log.warning(
                "LLM stream %r: the finalizer failed (%s: %s); its end records no output",
                self.span.name,
                type(exc).__name__,
                exc,
            )
            return None

    def complete(self) -> None:
        """End the span with the finalizer's aggregate response."""
        if not self.done:
            self.done = True
            _llm._finish(self.span, self._aggregate(), self.response_codec, self._profile())

    async def complete_async(self) -> None:
        """:meth:`complete` with coroutine response sanitizers awaited in the caller's task."""
        if not self.done:
            self.done = True
            response = self._aggregate()
            await _llm._finish_async(self.span, response, self.response_codec, self._profile())

    def fail(self, exc: BaseException) -> None:
        """End the span with error status (once)."""
        if not self.done:
            self.done = True
            _llm._fail(self.span, exc, self._profile())

    def abandon(self) -> None:
        """End a stream the consumer stopped reading (status UNSET)."""
        if not self.done:
            self.done = True
            unset = {"otel.status_code": "UNSET"}
            _llm._emit_end(self.span, None, unset, None, None, self._profile())


class LLMStream:
    """The chunks of a managed streaming call: iterate it (``for`` or ``async for``)."""

    def __init__(self, life: _Lifecycle, source: Any) -> None:
        self._life = life
        self._sync: Iterator[Any] | None = None
        self._async: AsyncIterator[Any] | None = None
        self._cleanup: asyncio.Future[Any] | None = None
        if hasattr(source, "__aiter__"):
            self._async = source.__aiter__()
        else:
            self._sync = iter(source)

    @property
    def handle(self) -> LLMHandle:
        """The LLM span this stream belongs to."""
        return self._life.span

    def __iter__(self) -> LLMStream:
        if self._sync is None:
            raise TypeError("this stream's provider is asynchronous: use `async for`")
        return self

    def __next__(self) -> Json:
        assert self._sync is not None
        if self._life.done:
            raise StopIteration
        span = self._life.span
        try:
            with running_in(span.uuid, span.propagation_root_uuid):
                chunk = next(self._sync)
        except StopIteration:
            self._life.complete()
            raise
        except Exception as exc:
            self._life.fail(exc)
            raise
        self._life.chunk(chunk)
        return chunk

    def __aiter__(self) -> LLMStream:
        return self

    async def __anext__(self) -> Json:
        if self._life.done:
            raise StopAsyncIteration
        if self._async is None:
            try:
                return self.__next__()
            except StopIteration:
                raise StopAsyncIteration from None
        span = self._life.span
        try:
            with running_in(span.uuid, span.propagation_root_uuid):
                chunk = await self._async.__anext__()
        except StopAsyncIteration:
            await self._life.complete_async()
            raise
        except Exception as exc:
            self._life.fail(exc)
            self._start_cleanup()
            raise
        self._life.chunk(chunk)
        return chunk

    def _start_cleanup(self) -> None:
        """Close a failed async source now (its producer may hold resources)."""
        close = getattr(self._async, "aclose", None)
        if self._cleanup is None and callable(close):
            self._cleanup = asyncio.ensure_future(close())

    async def aclose(self) -> None:
        """Close the source and end the span with what was read so far (as Relay).

        Waits for the source's own clean-up, including one started after a failure.
        Closing again does nothing.
        """
        if self._life.done:
            if self._cleanup is not None:
                await asyncio.shield(self._cleanup)
            return
        try:
            self._start_cleanup()
            close = getattr(self._sync, "close", None)
            if callable(close):
                close()
            if self._cleanup is not None:
                await asyncio.shield(self._cleanup)
        finally:
            await self._life.complete_async()

    def close(self) -> None:
        """Stop early: close the source and end the span with status UNSET."""
        if self._life.done:
            return
        self._life.abandon()
        close = getattr(self._sync, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> LLMStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        # A stream dropped half-read would otherwise leave a start without an end.
        try:
            life = self.__dict__.get("_life")
            if life is not None and not life.done:
                life.abandon()
        except Exception:
            pass  # never raise from a finalizer


def _check(collector: Collector, finalizer: Finalizer) -> None:
    if not callable(collector) or not callable(finalizer):
        raise TypeError("stream_execute needs callable collector and finalizer")


def _open(
    name: str,
    begun: tuple[LLMHandle, LLMRequest, Any],
    func: Callable[[LLMRequest], Any],
    collector: Collector,
    finalizer: Finalizer,
    response_codec: object,
) -> tuple[_Lifecycle, Any]:
    span, provider_request, annotated = begun
    life = _Lifecycle(span, collector, finalizer, response_codec)
    chain = _icpt.LLM_STREAM_EXECUTION.chain
    try:
        with running_in(span.uuid, span.propagation_root_uuid):
            if chain:
                ctx = _llm._context(span, annotated, response_codec)
                source = _icpt.run_llm_execution_chain(chain, name, provider_request, ctx, func)
            else:
                source = func(provider_request)
    except Exception as exc:
        life.fail(exc)
        raise
    return life, source


def stream_execute_sync(
    name: str,
    request: LLMRequest,
    func: Callable[[LLMRequest], Any],
    collector: Collector,
    finalizer: Finalizer,
    *,
    handle: ScopeHandle | None = None,
    attributes: LLMAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    model_name: str | None = None,
    codec: object = None,
    response_codec: object = None,
) -> LLMStream:
    """Start a managed streaming call whose ``func`` returns a (sync) iterable of chunks.

    Wayline extension for synchronous callers: returns an :class:`LLMStream` to iterate with
    ``for``. Setup failures (guardrails, intercepts, ``func`` itself) raise here.
    """
    _check(collector, finalizer)
    begun = _llm._begin(name, request, handle, attributes, data, metadata, model_name, codec)
    life, source = _open(name, begun, func, collector, finalizer, response_codec)
    try:
        return LLMStream(life, source)
    except Exception as exc:
        life.fail(exc)
        raise


async def stream_execute(
    name: str,
    request: LLMRequest,
    func: Callable[[LLMRequest], Any],
    collector: Collector,
    finalizer: Finalizer,
    *,
    handle: ScopeHandle | None = None,
    attributes: LLMAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    model_name: str | None = None,
    codec: object = None,
    response_codec: object = None,
) -> LLMStream:
    """Start a managed streaming call; ``await`` it, then ``async for chunk in stream``.

    ``func(request)`` may return an async iterable, a sync iterable, or an awaitable of
    either. The ``streaming`` attribute is not set automatically (as in Relay).
    """
    _check(collector, finalizer)
    begun = await _llm._begin_async(
        name, request, handle, attributes, data, metadata, model_name, codec
    )
    life, source = _open(name, begun, func, collector, finalizer, response_codec)
    try:
        if inspect.isawaitable(source):
            span = life.span
            with running_in(span.uuid, span.propagation_root_uuid):
                source = await _resolve(source)
        return LLMStream(life, source)
    except Exception as exc:
        life.fail(exc)
        raise


async def _resolve(value: Awaitable[Any]) -> Any:
    return await value
