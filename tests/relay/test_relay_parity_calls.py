"""Managed calls as NeMo Relay's own tests pin them: callback context, streams, async hooks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

from wayline import relay


def _request() -> relay.LLMRequest:
    return relay.LLMRequest({}, {"messages": [], "model": "m"})


def _starts(captured: list[relay.Event]) -> dict[str, str]:
    return {e.name: e.uuid for e in captured if getattr(e, "scope_category", None) == "start"}


def test_callbacks_capture_their_managed_span_as_parent(captured: list[relay.Event]) -> None:
    """Provider, stream source and tool see their own span in capture_propagation_context."""
    seen: dict[str, Any] = {}

    def provider(request: relay.LLMRequest) -> Any:
        seen["provider"] = relay.capture_propagation_context().parent_uuid
        seen["provider_top"] = relay.scope.get_handle().uuid
        with relay.scope.scope("inner", relay.ScopeType.Function) as inner:
            seen["inner_parent"] = inner.parent_uuid
            seen["inside_inner"] = relay.capture_propagation_context().parent_uuid
        return {"ok": True}

    def streaming(request: relay.LLMRequest) -> Any:
        async def chunks() -> AsyncIterator[Any]:
            seen["source"] = relay.capture_propagation_context().parent_uuid
            yield {"a": 1}

        return chunks()

    def tool(args: Any) -> Any:
        seen["tool"] = relay.capture_traceparent()
        return relay.ToolExecutionResult({})

    async def main() -> None:
        with relay.scope.scope("owner", relay.ScopeType.Agent) as owner:
            seen["owner"] = owner.uuid
            await relay.llm.execute("plain", _request(), provider)
            stream = await relay.llm.stream_execute(
                "streamed", _request(), streaming, lambda c: None, lambda: {}
            )
            seen["between"] = relay.capture_propagation_context().parent_uuid
            assert [chunk async for chunk in stream] == [{"a": 1}]
            await relay.tools.execute("t", {}, tool)

    asyncio.run(main())
    starts = _starts(captured)
    assert seen["provider"] == starts["plain"]
    assert seen["provider_top"] == seen["owner"] == seen["inner_parent"] == seen["between"]
    assert seen["inside_inner"] == starts["inner"]
    assert seen["source"] == starts["streamed"]
    assert seen["tool"].split("-")[2] == starts["t"].replace("-", "")[-16:]


def test_async_llm_request_intercepts_run_on_the_callers_loop() -> None:
    """A coroutine request intercept of llm.execute runs on the loop that awaits the call."""
    loops: list[object] = []

    async def intercept(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        await asyncio.sleep(0)
        loops.append(asyncio.get_running_loop())
        content = {**request.content, "intercepted": True}
        return relay.LLMRequestInterceptOutcome(relay.LLMRequest(request.headers, content))

    async def main() -> Any:
        loops.append(asyncio.get_running_loop())
        return await relay.llm.execute(
            "e", _request(), lambda r: {"intercepted": r.content.get("intercepted")}
        )

    # The alias names the synchronous form; Relay (and wayline) also take a coroutine one.
    relay.intercepts.register_llm_request("loop-check", 1, False, intercept)  # type: ignore[arg-type]
    try:
        assert asyncio.run(main()) == {"intercepted": True}
    finally:
        relay.intercepts.deregister_llm_request("loop-check")
    assert loops[0] is loops[1]


def test_aclose_closes_the_source_and_ends_the_call(captured: list[relay.Event]) -> None:
    """aclose() of a half-read stream closes its producer; the end is OK with the aggregate."""
    closed: list[bool] = []

    async def source(request: relay.LLMRequest) -> AsyncIterator[Any]:
        try:
            yield {"token": "first"}
            await asyncio.Event().wait()  # never set: only aclose() ends this producer
        finally:
            closed.append(True)

    async def main() -> list[Any]:
        stream = await relay.llm.stream_execute(
            "s", _request(), source, lambda c: None, lambda: {"text": "first"}
        )
        first = await stream.__anext__()
        await stream.aclose()
        await stream.aclose()
        rest = [chunk async for chunk in stream]
        return [first, *rest]

    assert asyncio.run(main()) == [{"token": "first"}]
    assert closed == [True]
    end = captured[-1]
    assert isinstance(end, relay.ScopeEvent) and end.scope_category == "end"
    assert end.data == {"text": "first"}
    assert end.metadata["otel.status_code"] == "OK"


def test_a_failed_source_is_cleaned_up_and_aclose_waits_for_it(
    captured: list[relay.Event],
) -> None:
    """A source that fails is closed at once; aclose() returns only after its clean-up."""
    order: list[str] = []

    class Failing:
        def __init__(self) -> None:
            self.release = asyncio.Event()

        def __aiter__(self) -> Failing:
            return self

        async def __anext__(self) -> Any:
            raise RuntimeError("provider stream failed")

        async def aclose(self) -> None:
            order.append("cleanup started")
            await self.release.wait()
            order.append("cleanup finished")

    async def main() -> None:
        failing = Failing()
        stream = await relay.llm.stream_execute(
            "s", _request(), lambda r: failing, lambda c: None, lambda: {}
        )
        try:
            await stream.__anext__()
        except RuntimeError as exc:
            order.append(str(exc))
        closing = asyncio.ensure_future(stream.aclose())
        await asyncio.sleep(0)
        order.append(f"closing done: {closing.done()}")
        failing.release.set()
        await closing
        order.append("closed")

    asyncio.run(main())
    assert order == [
        "provider stream failed",
        "cleanup started",
        "closing done: False",
        "cleanup finished",
        "closed",
    ]
    assert captured[-1].metadata["otel.status_code"] == "ERROR"


def test_llm_sanitizers_run_without_subscribers_and_see_the_calls_codec() -> None:
    """Each sanitizer runs once per call with no subscriber; its context names the codec."""
    seen: list[tuple[str, str, str | None, object]] = []

    def on_request(request: relay.LLMRequest, context: Any) -> Any:
        seen.append(("request", context.codec.kind, context.codec.id, context.resolve_codec()))
        return request

    def on_response(response: Any, context: Any) -> Any:
        seen.append(("response", context.codec.kind, context.codec.id, context.resolve_codec()))
        return response

    codec = relay.codecs.OpenAIChatCodec()
    response = {"id": "r", "model": "m", "choices": [{"index": 0, "message": {"content": "ok"}}]}
    relay.guardrails.register_llm_sanitize_request("ctx-request", 1, on_request)
    relay.guardrails.register_llm_sanitize_response("ctx-response", 1, on_response)
    try:
        assert relay.subscribers.registered() == []
        handle = relay.llm.call("manual", _request())
        relay.llm.call_end(handle, {"response": "ok"})
        asyncio.run(
            relay.llm.execute(
                "managed", _request(), lambda r: response, codec=codec, response_codec=codec
            )
        )
    finally:
        relay.guardrails.deregister_llm_sanitize_request("ctx-request")
        relay.guardrails.deregister_llm_sanitize_response("ctx-response")
    assert seen == [
        ("request", "none", None, None),
        ("response", "none", None, None),
        ("request", "builtin", "openai_chat", codec),
        ("response", "builtin", "openai_chat", codec),
    ]


def test_async_response_sanitizers_run_in_the_callers_task(captured: list[relay.Event]) -> None:
    """A coroutine response sanitizer of execute and of a stream's end sees the caller's
    loop and context variables, and what it returns is recorded."""
    request_id: ContextVar[str] = ContextVar("request_id", default="unset")
    seen: list[tuple[str, bool]] = []

    async def sanitize(response: Any, context: Any) -> Any:
        await asyncio.sleep(0)
        seen.append((request_id.get(), asyncio.get_running_loop() is caller_loop[0]))
        return {"sanitized": response["raw"]}

    async def source(request: relay.LLMRequest) -> AsyncIterator[Any]:
        yield {"token": "hello"}

    caller_loop: list[object] = []

    async def main() -> None:
        caller_loop.append(asyncio.get_running_loop())
        request_id.set("caller")
        await relay.llm.execute("plain", _request(), lambda r: {"raw": 1})
        stream = await relay.llm.stream_execute(
            "streamed", _request(), source, lambda c: None, lambda: {"raw": 2}
        )
        assert [chunk async for chunk in stream] == [{"token": "hello"}]

    relay.guardrails.register_llm_sanitize_response("in-task", 1, sanitize)
    try:
        asyncio.run(main())
    finally:
        relay.guardrails.deregister_llm_sanitize_response("in-task")
    assert seen == [("caller", True), ("caller", True)]
    ends = [e.data for e in captured if getattr(e, "scope_category", None) == "end"]
    assert ends == [{"sanitized": 1}, {"sanitized": 2}]
