"""LLM and tool spans: payloads, profiles, credential stripping, session headers, errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wayline import relay

Agent, Function = relay.ScopeType.Agent, relay.ScopeType.Function


def _request(**headers: str) -> relay.LLMRequest:
    return relay.LLMRequest(
        headers, {"messages": [{"role": "user", "content": "hi"}], "model": "m"}
    )


def test_credential_headers_are_stripped_from_the_event_only(
    captured: list[relay.Event],
) -> None:
    """Relay's credential headers (any case) never reach events; the caller's request is kept."""
    headers = {
        "Authorization": "Bearer sk",
        "PROXY-AUTHORIZATION": "p",
        "cookie": "c",
        "X-Api-Key": "k",
        "api-key": "k",
        "anthropic-api-key": "k",
        "x-goog-api-key": "k",
        "x-keep": "1",
        "set-cookie": "kept: not on Relay's list",
    }
    request = relay.LLMRequest(headers, {"model": "m"})
    handle = relay.llm.call("openai", request)
    relay.llm.call_end(handle, {"ok": True})
    assert captured[0].data["headers"] == {"x-keep": "1", "set-cookie": "kept: not on Relay's list"}
    assert request.headers == headers
    assert "sk" not in captured[0].to_json()


def test_manual_llm_profile_metadata_and_null_response(captured: list[relay.Event]) -> None:
    """model_name is the profile; end metadata adds OK status; a None response records data=."""
    handle = relay.llm.call("p", _request(), model_name="gpt", metadata={"a": 1}, data={"h": 1})
    relay.llm.call_end(handle, None, data={"fallback": True}, metadata={"b": 2})
    start, end = (e.to_dict() for e in captured)
    assert start["category_profile"] == end["category_profile"] == {"model_name": "gpt"}
    assert start["metadata"] == {"a": 1}
    assert end["metadata"] == {"a": 1, "b": 2, "otel.status_code": "OK"}
    assert end["data"] == {"fallback": True}
    plain = relay.llm.call("p", _request())
    relay.llm.call_end(plain, {"r": 1}, annotated_response={"message": "x"})
    assert captured[2].category_profile == {}
    assert captured[3].category_profile == {"annotated_response": {"message": "x"}}


def test_managed_llm_injects_session_headers_and_traceparent(
    captured: list[relay.Event],
) -> None:
    """Session ids come from the two innermost Agent scopes; traceparent goes to the provider."""
    seen: list[relay.LLMRequest] = []

    def provider(request: relay.LLMRequest) -> dict[str, Any]:
        seen.append(request)
        return {"choices": []}

    original = _request(**{"content-type": "application/json"})
    with relay.scope.scope("parent-agent", Agent):
        relay.llm.execute_sync("openai", original, provider)
        with relay.scope.scope("sub", Agent, metadata={"session_id": "sess-2"}):
            relay.llm.execute_sync("openai", original, provider)
    starts = [e for e in captured if e.name == "openai" and e.scope_category == "start"]
    first, second = (e.data["headers"] for e in starts)
    assert first == {"content-type": "application/json", "x-dynamo-session-id": "parent-agent"}
    assert second == {
        "content-type": "application/json",
        "x-dynamo-parent-session-id": "parent-agent",
        "x-dynamo-session-id": "sess-2",
    }
    assert all(r.headers["traceparent"].startswith("00-") for r in seen)
    assert original.headers == {"content-type": "application/json"}
    ends = [e for e in captured if e.name == "openai" and e.scope_category == "end"]
    assert [e.metadata for e in ends] == [{"otel.status_code": "OK"}] * 2


def test_provider_error_records_error_end_and_reraises(captured: list[relay.Event]) -> None:
    """A failing provider yields an end with data null and error status; the error propagates."""

    def provider(request: relay.LLMRequest) -> Any:
        raise RuntimeError("provider down")

    with pytest.raises(RuntimeError, match="provider down"):
        relay.llm.execute_sync("openai", _request(), provider)
    end = captured[-1].to_dict()
    assert end["data"] is None
    assert end["metadata"] == {
        "error.type": "internal_error",
        "exception.type": "RuntimeError",
        "otel.status_code": "ERROR",
        "otel.status_description": "internal error: RuntimeError: provider down",
    }


def test_async_execute_with_sync_and_async_providers(captured: list[relay.Event]) -> None:
    """llm.execute and tools.execute are awaitable and accept sync or async callbacks."""

    async def async_provider(request: relay.LLMRequest) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"id": "a"}

    async def run() -> tuple[Any, Any, Any]:
        first = await relay.llm.execute("p", _request(), async_provider, model_name="m")
        second = await relay.llm.execute("p", _request(), lambda r: {"id": "s"})
        tool = await relay.tools.execute(
            "t", {"x": 1}, lambda args: relay.ToolExecutionResult({"y": args["x"] + 1})
        )
        return first, second, tool.result

    assert asyncio.run(run()) == ({"id": "a"}, {"id": "s"}, {"y": 2})
    assert [e.data for e in captured if e.scope_category == "end"] == [
        {"id": "a"},
        {"id": "s"},
        {"y": 2},
    ]


def test_sync_execute_rejects_async_callbacks(captured: list[relay.Event]) -> None:
    """execute_sync cannot await: an async callback is a TypeError and an error end."""

    async def provider(request: relay.LLMRequest) -> dict[str, Any]:
        return {}

    with pytest.raises(TypeError, match="synchronous"):
        relay.llm.execute_sync("p", _request(), provider)
    assert captured[-1].metadata["otel.status_code"] == "ERROR"


def test_managed_tool_with_annotation(captured: list[relay.Event]) -> None:
    """Args are start data; result and annotation land on the end; the value is returned as is."""
    result = relay.ToolExecutionResult({"sum": 3}, annotation={"note": "ann"})
    returned = relay.tools.execute_sync(
        "add", {"a": 1, "b": 2}, lambda args: result, tool_call_id="call_1", metadata={"m": 1}
    )
    assert returned is result
    start, end = (e.to_dict() for e in captured)
    assert (start["data"], start["category_profile"]) == (
        {"a": 1, "b": 2},
        {"tool_call_id": "call_1"},
    )
    assert end["data"] == {"sum": 3}
    assert end["category_profile"] == {
        "tool_call_id": "call_1",
        "tool_result_annotation": {"note": "ann"},
    }
    assert end["metadata"] == {"m": 1, "otel.status_code": "OK"}


def test_manual_tool_without_call_id_has_empty_profile(captured: list[relay.Event]) -> None:
    """A tool without tool_call_id has profile {} (never null); manual ends add no status."""
    handle = relay.tools.call("t", {"a": 1})
    relay.tools.call_end(handle, None, data={"fallback": 1})
    start, end = (e.to_dict() for e in captured)
    assert start["category_profile"] == end["category_profile"] == {}
    assert end["data"] == {"fallback": 1} and end["metadata"] is None


def test_tool_error_records_error_end(captured: list[relay.Event]) -> None:
    """A raising tool yields an end with data null, no annotation and error status."""

    def tool(args: Any) -> Any:
        raise ValueError("bad args")

    with pytest.raises(ValueError, match="bad args"):
        relay.tools.execute_sync("t", {}, tool, tool_call_id="c")
    end = captured[-1]
    assert end.data is None and end.category_profile == {"tool_call_id": "c"}
    assert end.metadata["otel.status_description"] == "internal error: ValueError: bad args"


def test_spans_are_not_pushed_on_the_stack(captured: list[relay.Event]) -> None:
    """A scope opened inside a tool callback is parented to the enclosing scope, not the tool."""

    def delegate(args: Any) -> Any:
        with relay.scope.scope("sub-agent", Agent):
            return {"ok": True}

    with relay.scope.scope("agent", Agent) as agent:
        relay.tools.execute_sync("delegate", {}, delegate)
    tool_start = next(e for e in captured if e.name == "delegate")
    sub_start = next(e for e in captured if e.name == "sub-agent")
    assert tool_start.parent_uuid == sub_start.parent_uuid == agent.uuid
    assert sub_start.propagation_root_uuid == agent.uuid


def test_spans_accept_an_explicit_parent_and_llm_request_checks_types(
    captured: list[relay.Event],
) -> None:
    """handle= parents spans explicitly; LLMRequest needs mappings."""
    with relay.scope.scope("a", Agent) as a, relay.scope.scope("b", Function):
        relay.tools.call_end(relay.tools.call("t", {}, handle=a), {"r": 1})
        relay.llm.call_end(relay.llm.call("l", _request(), handle=a), {"r": 1})
    assert {e.parent_uuid for e in captured if e.name in ("t", "l")} == {a.uuid}
    with pytest.raises(TypeError):
        relay.LLMRequest({}, ["not", "a", "mapping"])  # type: ignore[arg-type]
