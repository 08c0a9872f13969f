"""§6 LLM request-intercept contract: chain order, authority, failures, lifecycle timing.

Each rule is pinned against the verbatim Relay 0.10.4 lines in ``relay_samples`` (uuids are
renamed pairwise, timestamps compared as offsets).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from relay_samples import INTERCEPT_CHAIN_SEVERITY, MANUAL_SCENARIO, PROVIDER_ERROR

from wayline import relay
from wayline.relay._intercepts import chains as icpt
from wayline.relay.codecs import AnnotatedLLMRequest, OpenAIChatCodec
from wayline.relay.timefmt import parse_timestamp_ns

Agent = relay.ScopeType.Agent
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMESTAMP = re.compile(r'"timestamp":"[^"]*"')
OK_RESPONSE = {
    "choices": [
        {"finish_reason": "stop", "index": 0, "message": {"content": "ok", "role": "assistant"}}
    ],
    "id": "x",
    "model": "m",
    "object": "chat.completion",
}


@pytest.fixture(autouse=True)
def clean_registries() -> Iterator[None]:
    """Every intercept a test registers is gone afterwards."""
    yield
    for registry in (icpt.LLM_REQUEST, icpt.LLM_EXECUTION, icpt.LLM_STREAM_EXECUTION):
        for entry in registry.chain:
            registry.deregister(entry.name)


def same_as_relay(events: list[relay.Event], reference: list[str]) -> list[int]:
    """Assert the events equal ``reference`` up to uuids and timestamps; return their ns times."""
    ours = [e.to_json() for e in events]
    assert len(ours) == len(reference)
    mapping: dict[str, str] = {}
    theirs: list[str] = []
    for line in reference:
        theirs += [u for u in dict.fromkeys(_UUID.findall(line)) if u not in theirs]
    for line in ours:
        for u in _UUID.findall(line):
            if u not in mapping:
                mapping[u] = theirs[len(mapping)]
    renamed = [_UUID.sub(lambda m: mapping[m.group(0)], line) for line in ours]
    assert [_TIMESTAMP.sub("", x) for x in renamed] == [_TIMESTAMP.sub("", x) for x in reference]
    return [e.timestamp_ns for e in events]


def offsets(reference: list[str]) -> list[int]:
    """Timestamps of reference lines relative to the first, in ns."""
    times = [parse_timestamp_ns(json.loads(line)["timestamp"]) for line in reference]
    return [t - times[0] for t in times]


def _request(**headers: str) -> relay.LLMRequest:
    return relay.LLMRequest(
        headers, {"messages": [{"content": "hi", "role": "user"}], "model": "m"}
    )


def _trail_intercept(tag: str) -> Any:
    def intercept(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        request.content["trail"] = [*request.content.get("trail", []), tag]
        request.headers[f"x-{tag}"] = tag
        mark = relay.PendingMarkSpec(f"mark.{tag}", data={"tag": tag}, severity="warn")
        return relay.LLMRequestInterceptOutcome(request, annotated, [mark])

    return intercept


def test_chain_order_break_chain_and_pending_mark_timing(captured: list[relay.Event]) -> None:
    """(priority, name) order, each sees the previous request, break_chain keeps its marks;
    start at T, every mark at exactly T + 1 µs under the LLM, end ≥ T + 1 µs (§6 sample)."""
    for tag, priority in (("d", 40), ("b", 20), ("a2", 10), ("a", 10)):
        icpt.register_llm_request(tag, priority, False, _trail_intercept(tag))
    icpt.deregister_llm_request("c")
    icpt.register_llm_request("c", 30, True, _trail_intercept("c"))
    seen: list[relay.LLMRequest] = []

    def provider(request: relay.LLMRequest) -> Any:
        seen.append(request)
        return OK_RESPONSE

    with relay.scope.scope("agent", Agent) as agent:
        relay.llm.execute_sync("openai", _request(), provider, model_name="m")
    events = [e for e in captured if e.uuid != agent.uuid]
    times = same_as_relay(events, INTERCEPT_CHAIN_SEVERITY)
    start = times[0]
    assert [t - start for t in times[:5]] == [0, 1_000, 1_000, 1_000, 1_000]
    assert times[5] >= start + 1_000
    assert offsets(INTERCEPT_CHAIN_SEVERITY)[1:5] == [1_000] * 4
    assert [k for k in seen[0].headers if k.startswith("x-")] == [
        "x-a",
        "x-a2",
        "x-b",
        "x-c",
        "x-dynamo-session-id",
    ]
    assert seen[0].headers["traceparent"].startswith("00-")


def test_codec_annotation_is_authoritative_headers_stay_writable(
    captured: list[relay.Event],
) -> None:
    """With a codec, intercepts edit annotated_request, the body is encode(final annotation),
    intercept headers reach the provider, and the §1.4 events come out byte for byte."""

    def append(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        assert isinstance(annotated, AnnotatedLLMRequest)
        annotated.messages.append({"content": "appended-by-intercept", "role": "user"})
        request.headers["x-demo"] = "1"
        marks = [
            relay.PendingMarkSpec(
                "intercept.mark1",
                category="custom",
                category_profile={"subtype": "demo.tag"},
                data={"i": 1},
                metadata={"m": 1},
            ),
            relay.PendingMarkSpec("intercept.mark2", data={"i": 2}),
        ]
        return relay.LLMRequestInterceptOutcome(request, annotated, marks)

    def sees_previous(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        assert annotated.messages[-1]["content"] == "appended-by-intercept"
        return relay.LLMRequestInterceptOutcome(request, annotated)

    icpt.register_llm_request("append", 1, False, append)
    icpt.register_llm_request("check", 2, False, sees_previous)
    reference = [json.loads(line) for line in MANUAL_SCENARIO]
    response = reference[5]["data"]
    sent: list[relay.LLMRequest] = []
    content = {
        "messages": reference[2]["data"]["content"]["messages"][:2],
        "model": "gpt-4.1",
        "tools": reference[2]["data"]["content"]["tools"],
    }
    codec = OpenAIChatCodec()
    with relay.scope.scope(
        "demo-agent", Agent, input={"task": "add 1 and 2"}, metadata={"session_id": "session-123"}
    ):
        relay.scope.event("workflow_start", data={"hello": "world"}, metadata={"x": 1})
        relay.llm.execute_sync(
            "openai",
            relay.LLMRequest({"content-type": "application/json"}, content),
            lambda r: sent.append(r) or response,
            model_name="gpt-4.1",
            codec=codec,
            response_codec=codec,
        )
        relay.tools.execute_sync(
            "add",
            {"a": 1, "b": 2},
            lambda args: relay.ToolExecutionResult({"sum": 3}, annotation={"note": "ann"}),
            tool_call_id="call_1",
        )
    times = same_as_relay(captured[:8], MANUAL_SCENARIO[:8])
    assert times[3] - times[2] == times[4] - times[2] == 1_000
    assert sent[0].content == reference[2]["data"]["content"]
    assert sent[0].headers["x-demo"] == "1"


def test_codec_rejects_content_change_and_discards_marks(captured: list[relay.Event]) -> None:
    """Changing request.content under a codec fails with Relay's exact message: no event,
    no provider call, and the marks of earlier intercepts are discarded."""

    def marks_only(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        return relay.LLMRequestInterceptOutcome(
            request, annotated, [relay.PendingMarkSpec("discarded")]
        )

    def mutates(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        request.content["messages"].append({"role": "user", "content": "sneaky"})
        return relay.LLMRequestInterceptOutcome(request, annotated)

    icpt.register_llm_request("first", 1, False, marks_only)
    icpt.register_llm_request("raw-edit", 2, False, mutates)
    calls: list[Any] = []
    expected = (
        "invalid argument: LLM request intercept 'raw-edit' changed request.content while a "
        "request codec is active; modify annotated_request instead"
    )
    with pytest.raises(RuntimeError) as err:
        relay.llm.execute_sync("openai", _request(), calls.append, codec=OpenAIChatCodec())
    assert str(err.value) == expected
    assert captured == [] and calls == []


def test_codec_rejects_an_omitted_annotation(captured: list[relay.Event]) -> None:
    """Returning no annotated_request under a codec fails with Relay's exact message."""
    icpt.register_llm_request("lazy", 1, False, lambda n, r, a: relay.LLMRequestInterceptOutcome(r))
    with pytest.raises(RuntimeError) as err:
        relay.llm.execute_sync("openai", _request(), lambda r: {}, codec=OpenAIChatCodec())
    assert str(err.value) == (
        "invalid argument: LLM request intercept 'lazy' omitted annotated_request while a "
        "request codec is active"
    )
    assert captured == []


def test_wrong_return_type_is_an_internal_error(captured: list[relay.Event]) -> None:
    """A tuple (the removed pre-outcome API) is rejected with a clear internal error."""
    icpt.register_llm_request("old-style", 1, False, lambda n, r, a: (r, a))
    with pytest.raises(RuntimeError) as err:
        relay.llm.execute_sync("openai", _request(), lambda r: {})
    message = str(err.value)
    assert message.startswith(
        "internal error: LLM request intercept must return LLMRequestInterceptOutcome: "
    )
    assert "'tuple'" in message and "'old-style'" in message
    assert captured == []


def test_intercept_exception_keeps_its_type_and_discards_marks(
    captured: list[relay.Event],
) -> None:
    """An intercept's own exception reaches the caller unchanged; nothing is emitted."""

    def boom(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        raise ValueError("intercept exploded")

    icpt.register_llm_request(
        "marks",
        1,
        False,
        lambda n, r, a: relay.LLMRequestInterceptOutcome(r, a, [relay.PendingMarkSpec("m")]),
    )
    icpt.register_llm_request("boom", 2, False, boom)
    with pytest.raises(ValueError, match="intercept exploded"):
        relay.llm.execute_sync("openai", _request(), lambda r: {})
    assert captured == []


def test_provider_failure_keeps_marks_and_ends_with_error(captured: list[relay.Event]) -> None:
    """After a successful chain the marks stay, the end has data null and error metadata,
    and the original exception object is re-raised (§6 sample)."""

    def header_and_mark(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        request.headers["x-a"] = "1"
        return relay.LLMRequestInterceptOutcome(
            request, annotated, [relay.PendingMarkSpec("discarded")]
        )

    icpt.register_llm_request("a", 1, False, header_and_mark)
    failure = RuntimeError("provider down")

    def provider(request: relay.LLMRequest) -> Any:
        raise failure

    with relay.scope.scope("agent", Agent) as agent, pytest.raises(RuntimeError) as err:
        relay.llm.execute_sync("openai", _request(), provider)
    assert err.value is failure
    times = same_as_relay([e for e in captured if e.uuid != agent.uuid], PROVIDER_ERROR)
    assert times[1] - times[0] == 1_000 and times[2] >= times[0] + 1_000


def test_invalid_pending_marks_are_dropped_alone(captured: list[relay.Event]) -> None:
    """A mark with a bad severity or a custom category without subtype is dropped; the rest stay."""
    marks = [
        relay.PendingMarkSpec("bad-severity", severity="loud"),
        relay.PendingMarkSpec("no-subtype", category="custom"),
        relay.PendingMarkSpec("kept", severity="error", data_schema={"name": "s", "version": "1"}),
    ]
    icpt.register_llm_request(
        "m", 1, False, lambda n, r, a: relay.LLMRequestInterceptOutcome(r, a, marks)
    )
    relay.llm.execute_sync("openai", _request(), lambda r: OK_RESPONSE)
    names = [e.name for e in captured]
    assert names == ["openai", "kept", "openai"]
    assert captured[1].metadata == {"nemo_relay.log.severity": "error"}
    assert captured[1].data_schema == {"name": "s", "version": "1"}


def test_standalone_request_intercepts_returns_outcome_and_emits_nothing(
    captured: list[relay.Event],
) -> None:
    """llm.request_intercepts runs the chain alone: full outcome back, marks not emitted."""
    icpt.register_llm_request("a", 1, False, _trail_intercept("a"))
    icpt.register_llm_request("b", 2, False, _trail_intercept("b"))
    original = _request()
    outcome = relay.llm.request_intercepts("openai", original)
    assert isinstance(outcome, relay.LLMRequestInterceptOutcome)
    assert outcome.request.content["trail"] == ["a", "b"]
    assert outcome.request.headers == {"x-a": "a", "x-b": "b"}
    assert [m.name for m in outcome.pending_marks] == ["mark.a", "mark.b"]
    assert "trail" not in original.content and original.headers == {}
    assert captured == []


def test_execution_intercepts_wrap_and_may_replace_the_provider(
    captured: list[relay.Event],
) -> None:
    """LLM execution intercepts nest by priority around the provider; one may short-circuit."""
    order: list[str] = []

    def outer(name: str, request: relay.LLMRequest, ctx: Any, nxt: Any) -> Any:
        order.append(f"outer:{ctx.model_name}")
        return {**nxt(request), "wrapped": True}

    def cache(name: str, request: relay.LLMRequest, ctx: Any, nxt: Any) -> Any:
        order.append("cache")
        return {"cached": True} if request.content.get("model") == "cached" else nxt(request)

    icpt.register_llm_execution("outer", 1, outer)
    icpt.register_llm_execution("cache", 2, cache)
    providers: list[str] = []

    def provider(request: relay.LLMRequest) -> Any:
        providers.append(request.content["model"])
        return {"id": "live"}

    first = relay.llm.execute_sync("p", _request(), provider, model_name="m")
    cached = relay.llm.execute_sync("p", relay.LLMRequest({}, {"model": "cached"}), provider)
    assert first == {"id": "live", "wrapped": True}
    assert cached == {"cached": True, "wrapped": True}
    assert providers == ["m"] and order == ["outer:m", "cache", "outer:None", "cache"]
    assert [e.data for e in captured if e.scope_category == "end"] == [first, cached]


def test_async_execute_applies_intercepts_with_an_async_provider(
    captured: list[relay.Event],
) -> None:
    """The awaitable llm.execute runs the same chains; execution intercepts stay synchronous."""
    icpt.register_llm_request("a", 1, False, _trail_intercept("a"))
    icpt.register_llm_execution(
        "tag", 1, lambda n, r, ctx, nxt: {**nxt(r), "tagged": r.headers["x-a"]}
    )

    async def provider(request: relay.LLMRequest) -> Any:
        await asyncio.sleep(0)
        return {"trail": request.content["trail"]}

    async def run() -> Any:
        with relay.scope.scope("agent", Agent):
            return await relay.llm.execute("openai", _request(), provider)

    assert asyncio.run(run()) == {"trail": ["a"], "tagged": "a"}
    assert [e.name for e in captured] == ["agent", "openai", "mark.a", "openai", "agent"]
    assert captured[2].timestamp_ns == captured[1].timestamp_ns + 1_000


def test_registry_names_are_unique_and_deregister_reports() -> None:
    """A taken name raises; deregister says whether something was removed."""
    icpt.register_llm_request("x", 1, False, _trail_intercept("x"))
    with pytest.raises(RuntimeError, match="already exists"):
        icpt.register_llm_request("x", 2, False, _trail_intercept("x"))
    with pytest.raises(TypeError):
        icpt.register_llm_request("y", 1, False, "not callable")  # type: ignore[arg-type]
    assert icpt.deregister_llm_request("x") is True
    assert icpt.deregister_llm_request("x") is False
