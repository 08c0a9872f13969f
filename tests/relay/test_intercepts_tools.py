"""§6 tool analogue: request intercepts rewrite args, execution intercepts annotate and mark."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from relay_samples import TOOL_INTERCEPT_MARK
from test_intercepts_llm import same_as_relay

from wayline import relay
from wayline.relay._intercepts import chains as icpt

Agent = relay.ScopeType.Agent


@pytest.fixture(autouse=True)
def clean_registries() -> Iterator[None]:
    """Every intercept a test registers is gone afterwards."""
    yield
    for registry in (icpt.TOOL_REQUEST, icpt.TOOL_EXECUTION):
        for entry in registry.chain:
            registry.deregister(entry.name)


def _wrap(ctx: relay.ToolExecutionContext, nxt: Any) -> relay.ToolExecutionInterceptOutcome:
    downstream = nxt(ctx.args)
    return relay.ToolExecutionInterceptOutcome(
        {"wrapped": downstream.result},
        [relay.PendingMarkSpec("tool.mark", data={"k": 1})],
        annotation={"a": 1},
    )


def test_execution_intercept_marks_follow_the_tool_end(captured: list[relay.Event]) -> None:
    """Result and annotation come from the outcome; its marks come after the end, at end +
    1 µs, parented to the tool (§6 sample)."""
    icpt.register_tool_execution("wrap", 1, _wrap)
    with relay.scope.scope("agent", Agent) as agent:
        returned = relay.tools.execute_sync(
            "double", {"x": 2}, lambda args: {"v": args["x"] * 2}, tool_call_id="tc9"
        )
    assert returned == relay.ToolExecutionResult({"wrapped": {"v": 4}}, annotation={"a": 1})
    times = same_as_relay([e for e in captured if e.uuid != agent.uuid], TOOL_INTERCEPT_MARK)
    assert times[2] == times[1] + 1_000 and times[1] >= times[0] + 1_000


def test_nested_execution_intercepts_see_downstream_results_only(
    captured: list[relay.Event],
) -> None:
    """Each intercept gets a ToolExecutionResult from next(); marks accumulate inner first."""
    seen: list[Any] = []

    def outer(ctx: relay.ToolExecutionContext, nxt: Any) -> Any:
        result = nxt({**ctx.args, "outer": True})
        seen.append(result)
        return relay.ToolExecutionInterceptOutcome(
            result.result, [relay.PendingMarkSpec("outer")], annotation=result.annotation
        )

    def inner(ctx: relay.ToolExecutionContext, nxt: Any) -> Any:
        assert ctx.args == {"x": 1, "outer": True} and ctx.tool_call_id == "c1"
        result = nxt(ctx.args)
        return relay.ToolExecutionInterceptOutcome(
            result.result, [relay.PendingMarkSpec("inner")], annotation={"by": "inner"}
        )

    icpt.register_tool_execution("outer", 1, outer)
    icpt.register_tool_execution("inner", 2, inner)
    relay.tools.execute_sync("t", {"x": 1}, lambda args: "plain", tool_call_id="c1")
    assert seen == [relay.ToolExecutionResult("plain", annotation={"by": "inner"})]
    assert [e.name for e in captured] == ["t", "t", "inner", "outer"]
    assert captured[1].category_profile == {
        "tool_call_id": "c1",
        "tool_result_annotation": {"by": "inner"},
    }


def test_tool_failure_discards_marks_and_annotation(captured: list[relay.Event]) -> None:
    """A failing tool under an intercept: error end without annotation, no marks, same error."""

    def annotating(ctx: relay.ToolExecutionContext, nxt: Any) -> Any:
        result = nxt(ctx.args)
        return relay.ToolExecutionInterceptOutcome(result.result, annotation={"never": 1})

    def fails(args: Any) -> Any:
        raise KeyError("missing")

    icpt.register_tool_execution("annotating", 1, annotating)
    with pytest.raises(KeyError):
        relay.tools.execute_sync("t", {}, fails)
    assert [(e.name, e.kind) for e in captured] == [("t", "scope"), ("t", "scope")]
    end = captured[1]
    assert end.data is None and end.category_profile == {}
    assert end.metadata["otel.status_code"] == "ERROR"


def test_wrong_tool_outcome_type_fails_the_call(captured: list[relay.Event]) -> None:
    """An execution intercept must return ToolExecutionInterceptOutcome (internal error)."""
    icpt.register_tool_execution("plain", 1, lambda ctx, nxt: nxt(ctx.args).result)
    with pytest.raises(RuntimeError, match="must return ToolExecutionInterceptOutcome"):
        relay.tools.execute_sync("t", {}, lambda args: "r")
    assert captured[-1].metadata["otel.status_code"] == "ERROR"


def test_request_intercepts_rewrite_args_before_the_start(captured: list[relay.Event]) -> None:
    """Tool request intercepts run in order before the start; break_chain stops the chain."""
    icpt.register_tool_request("b", 2, True, lambda name, args: {**args, "b": name})
    icpt.register_tool_request("a", 1, False, lambda name, args: {**args, "a": 1})
    icpt.register_tool_request("c", 3, False, lambda name, args: {**args, "c": 1})
    received: list[Any] = []
    original = {"x": 0}
    relay.tools.execute_sync("t", original, lambda args: received.append(args) or "ok")
    assert received == [{"x": 0, "a": 1, "b": "t"}]
    assert captured[0].data == {"x": 0, "a": 1, "b": "t"}
    assert original == {"x": 0}
    assert relay.tools.request_intercepts("t", {"x": 5}) == {"x": 5, "a": 1, "b": "t"}


def test_request_intercept_failure_leaves_no_lifecycle(captured: list[relay.Event]) -> None:
    """A raising tool request intercept fails the call before the start event."""

    def reject(name: str, args: Any) -> Any:
        raise PermissionError("no")

    icpt.register_tool_request("reject", 1, False, reject)
    ran: list[Any] = []
    with pytest.raises(PermissionError):
        relay.tools.execute_sync("t", {}, ran.append)
    assert captured == [] and ran == []


def test_async_tool_execute_runs_intercepts_around_an_async_tool(
    captured: list[relay.Event],
) -> None:
    """tools.execute awaits an async tool even when (synchronous) intercepts wrap it."""
    icpt.register_tool_execution("wrap", 1, _wrap)

    async def tool(args: Any) -> Any:
        await asyncio.sleep(0)
        return relay.ToolExecutionResult({"v": args["x"] * 2})

    result = asyncio.run(relay.tools.execute("double", {"x": 3}, tool, tool_call_id="a1"))
    assert result.result == {"wrapped": {"v": 6}}
    assert [e.name for e in captured] == ["double", "double", "tool.mark"]


def test_end_metadata_extension_merges_into_a_successful_end(
    captured: list[relay.Event],
) -> None:
    """end_metadata(result) adds keys to the success end only (wayline extension)."""
    relay.tools.execute_sync(
        "t", {}, lambda args: "out", metadata={"m": 1}, end_metadata=lambda r: {"len": len(r)}
    )
    assert captured[1].metadata == {"m": 1, "len": 3, "otel.status_code": "OK"}
