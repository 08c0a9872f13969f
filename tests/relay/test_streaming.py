"""llm.stream_execute: chunk marks, finalizer output, time_to_first_chunk, §6 mark timing."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from wayline import relay
from wayline.relay._intercepts import chains as icpt

CHUNKS = [{"delta": "Hel"}, {"delta": "lo"}]


@pytest.fixture(autouse=True)
def clean_registries() -> Iterator[None]:
    """Every intercept a test registers is gone afterwards."""
    yield
    for registry in (icpt.LLM_REQUEST, icpt.LLM_STREAM_EXECUTION):
        for entry in registry.chain:
            registry.deregister(entry.name)


class Collect:
    """A collector/finalizer pair that concatenates deltas."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def collector(self, chunk: Any) -> None:
        self.parts.append(chunk["delta"])

    def finalizer(self) -> Any:
        return {"content": "".join(self.parts)}


def _request() -> relay.LLMRequest:
    return relay.LLMRequest({}, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})


def _mark(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
    return relay.LLMRequestInterceptOutcome(request, annotated, [relay.PendingMarkSpec("pending")])


def test_sync_stream_lifecycle(captured: list[relay.Event]) -> None:
    """start, pending mark at +1 µs, one llm.chunk mark per chunk, end with the finalizer's
    output and time_to_first_chunk; chunks reach the caller unchanged."""
    icpt.register_llm_request("mark", 1, False, _mark)
    collect = Collect()
    stream = relay.llm.stream_execute_sync(
        "openai",
        _request(),
        lambda r: iter(CHUNKS),
        collect.collector,
        collect.finalizer,
        model_name="m",
    )
    assert list(stream) == CHUNKS
    names = [e.name for e in captured]
    assert names == ["openai", "pending", "llm.chunk", "llm.chunk", "openai"]
    start, pending, first, second, end = captured
    assert pending.timestamp_ns == start.timestamp_ns + 1_000
    assert {first.parent_uuid, second.parent_uuid, pending.parent_uuid} == {start.uuid}
    assert [first.data, second.data] == [
        {"chunk_index": 0, "provider": "unknown"},
        {"chunk_index": 1, "provider": "unknown"},
    ]
    assert first.timestamp_ns >= pending.timestamp_ns
    assert end.data == {"content": "Hello"}
    assert end.metadata == {"otel.status_code": "OK"}
    ttfc = end.category_profile["time_to_first_chunk"]
    assert ttfc == (first.timestamp_ns - start.timestamp_ns) / 1e9
    assert end.category_profile["model_name"] == "m"
    assert start.attributes == []  # the streaming flag is not set automatically


def test_async_stream_with_an_async_provider(captured: list[relay.Event]) -> None:
    """await stream_execute(...) then `async for`; the provider may be an async generator."""

    async def provider(request: relay.LLMRequest) -> AsyncIterator[Any]:
        for chunk in CHUNKS:
            await asyncio.sleep(0)
            yield chunk

    collect = Collect()

    async def run() -> list[Any]:
        stream = await relay.llm.stream_execute(
            "openai", _request(), provider, collect.collector, collect.finalizer
        )
        return [chunk async for chunk in stream]

    assert asyncio.run(run()) == CHUNKS
    assert captured[-1].data == {"content": "Hello"}
    assert [e.name for e in captured].count("llm.chunk") == 2


def test_source_failure_mid_stream_keeps_marks_and_reraises(captured: list[relay.Event]) -> None:
    """A provider error after the start: marks stay, end has data null + error metadata,
    and the original exception reaches the consumer."""
    icpt.register_llm_request("mark", 1, False, _mark)
    failure = ConnectionError("stream cut")

    def provider(request: relay.LLMRequest) -> Iterator[Any]:
        yield CHUNKS[0]
        raise failure

    collect = Collect()
    stream = relay.llm.stream_execute_sync(
        "openai", _request(), provider, collect.collector, collect.finalizer
    )
    with pytest.raises(ConnectionError) as err:
        list(stream)
    assert err.value is failure
    assert [e.name for e in captured] == ["openai", "pending", "llm.chunk", "openai"]
    end = captured[-1]
    assert end.data is None and end.metadata["otel.status_code"] == "ERROR"
    assert "time_to_first_chunk" in end.category_profile


def test_collector_and_finalizer_failures(
    captured: list[relay.Event], caplog: pytest.LogCaptureFixture
) -> None:
    """A raising collector fails the stream; a failing finalizer only loses the aggregate.

    As in Relay: a finalizer that raises or returns something that is not JSON is logged,
    the chunks are all delivered, and the end is OK with ``data: null``.
    """

    def bad_collector(chunk: Any) -> None:
        raise ValueError("cannot collect")

    stream = relay.llm.stream_execute_sync(
        "openai", _request(), lambda r: iter(CHUNKS), bad_collector, lambda: None
    )
    with pytest.raises(ValueError, match="cannot collect"):
        next(stream)

    def bad_finalizer() -> Any:
        raise LookupError("no aggregate")

    for finalizer in (bad_finalizer, object):
        stream = relay.llm.stream_execute_sync(
            "openai", _request(), lambda r: iter(CHUNKS), lambda c: None, finalizer
        )
        assert list(stream) == CHUNKS
    ends = [e for e in captured if e.kind == "scope" and e.scope_category == "end"]
    assert [e.metadata["otel.status_code"] for e in ends] == ["ERROR", "OK", "OK"]
    assert [e.data for e in ends] == [None, None, None]
    assert "LookupError: no aggregate" in caplog.text
    assert "Failed to convert to JSON: unsupported type object" in caplog.text


def test_early_close_and_garbage_collection_end_the_span(captured: list[relay.Event]) -> None:
    """A stream left half-read ends UNSET (close(), `with`, or dropped) — never dangling."""
    with relay.llm.stream_execute_sync(
        "a", _request(), lambda r: iter(CHUNKS), lambda c: None, lambda: {}
    ) as stream:
        next(stream)
    dropped = relay.llm.stream_execute_sync(
        "b", _request(), lambda r: iter(CHUNKS), lambda c: None, lambda: {}
    )
    next(dropped)
    del dropped
    gc.collect()
    ends = [e for e in captured if e.kind == "scope" and e.scope_category == "end"]
    assert [(e.name, e.metadata) for e in ends] == [
        ("a", {"otel.status_code": "UNSET"}),
        ("b", {"otel.status_code": "UNSET"}),
    ]


def test_stream_execution_intercepts_wrap_the_source(captured: list[relay.Event]) -> None:
    """An LLM stream execution intercept can transform the chunk source."""

    def upper(name: str, request: relay.LLMRequest, ctx: Any, nxt: Any) -> Any:
        return ({"delta": c["delta"].upper()} for c in nxt(request))

    icpt.register_llm_stream_execution("upper", 1, upper)
    collect = Collect()
    stream = relay.llm.stream_execute_sync(
        "openai", _request(), lambda r: iter(CHUNKS), collect.collector, collect.finalizer
    )
    assert [c["delta"] for c in stream] == ["HEL", "LO"]
    assert captured[-1].data == {"content": "HELLO"}


def test_setup_failures_raise_before_any_event(captured: list[relay.Event]) -> None:
    """A failing request intercept fails stream_execute itself, with no lifecycle."""

    def boom(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        raise RuntimeError("no stream")

    icpt.register_llm_request("boom", 1, False, boom)
    with pytest.raises(RuntimeError, match="no stream"):
        relay.llm.stream_execute_sync("openai", _request(), lambda r: iter(()), print, dict)
    assert captured == []
