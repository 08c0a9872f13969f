"""Behaviours that NeMo Relay's own test suite pins, checked on ``wayline.relay`` directly."""

from __future__ import annotations

import asyncio
import math
import threading
from collections import UserDict, UserList
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wayline import relay


def _local_flag(name: str, args: Any) -> Any:
    return {**args, "local": True}


def _request(args: Any) -> Any:
    return relay.tools.request_intercepts("t", args)


def test_a_stack_continued_from_propagation_has_none_of_the_parents_scope_locals() -> None:
    """A propagated stack (thread or forked task) does not run the parent's scope-locals."""
    seen: dict[str, Any] = {}
    with relay.scope.scope("parent", relay.ScopeType.Agent) as parent:
        relay.scope_local.register_tool_request(parent, "local", 1, False, _local_flag)
        seen["same"] = _request({"x": 1})
        context = relay.capture_propagation_context()
        shared = relay.propagate_scope_to_thread()

        def continued() -> None:
            relay.set_thread_scope_stack(relay.create_scope_stack_from_propagation(context))
            seen["continued"] = _request({"x": 1})

        def handed() -> None:
            relay.set_thread_scope_stack(shared)
            seen["handed"] = _request({"x": 1})

        for target in (continued, handed):
            worker = threading.Thread(target=target)
            worker.start()
            worker.join()

        async def forked() -> None:
            seen["fork_top"] = relay.scope.get_handle()
            seen["forked"] = await relay.tools.request_intercepts("t", {"x": 1})

        async def main() -> None:
            await asyncio.create_task(forked(), context=relay.fork_asyncio_context())

        asyncio.run(main())
    assert seen["same"] == {"x": 1, "local": True}
    assert seen["handed"] == {"x": 1, "local": True}
    assert seen["continued"] == {"x": 1}
    assert seen["forked"] == {"x": 1}
    assert seen["fork_top"].uuid == parent.uuid
    assert seen["fork_top"].name == "propagated-root"


def test_a_scope_local_on_a_forked_root_stays_in_the_fork() -> None:
    """Registering on a forked task's root applies there and not in the parent's stack."""
    seen: dict[str, Any] = {}

    async def child() -> None:
        top = relay.scope.get_handle()
        relay.scope_local.register_tool_request(top, "child-local", 1, False, _local_flag)
        seen["child"] = await relay.tools.request_intercepts("t", {"x": 1})

    async def main() -> None:
        with relay.scope.scope("parent", relay.ScopeType.Agent):
            await asyncio.create_task(child(), context=relay.fork_asyncio_context())
            seen["parent"] = await relay.tools.request_intercepts("t", {"x": 1})

    asyncio.run(main())
    assert seen == {"child": {"x": 1, "local": True}, "parent": {"x": 1}}


def test_exporters_repr_and_deregister_as_relay(tmp_path: Path) -> None:
    """Both exporters' repr starts as Relay's; deregister says whether the name was theirs."""
    config = relay.AtofExporterConfig()
    config.output_directory = str(tmp_path)
    config.filename = "events.jsonl"
    atof = relay.AtofExporter(config)
    atif = relay.AtifExporter("s-1", "agent", "1.0")
    try:
        assert repr(atof).startswith("<AtofExporter> ")
        assert repr(atif).startswith("<AtifExporter> ")
        atif.register("parity-atif")
        assert atif.deregister("parity-atif") is True
        assert atif.deregister("parity-atif") is False
        assert "parity-atif" not in relay.subscribers.registered()
    finally:
        atof.shutdown()


def test_a_stream_sink_without_url_is_refused_in_relays_words() -> None:
    """An ATOF stream sink with no url raises ``ValueError('... stream sink requires url')``."""
    config = relay.AtofExporterConfig()
    config.sink_type = "stream"
    with pytest.raises(ValueError, match="stream sink requires url"):
        relay.AtofExporter(config)


def test_async_tool_execute_requires_a_tool_execution_result(
    captured: list[relay.Event],
) -> None:
    """A raw return is Relay's invalid-argument error, recorded as the tool's error end."""
    with pytest.raises(RuntimeError, match="must return ToolExecutionResult") as caught:
        asyncio.run(relay.tools.execute("raw", {}, lambda args: {"raw": True}))
    assert "'dict' object is not an instance of 'ToolExecutionResult'" in str(caught.value)
    end = captured[-1]
    assert end.data is None
    assert end.metadata["error.type"] == "invalid_argument"
    assert end.metadata["otel.status_description"] == str(caught.value)


@dataclass
class _Node:
    child: object = None


def test_async_tool_results_are_converted_to_json(captured: list[relay.Event]) -> None:
    """Mappings, sequences, sets and dataclasses become JSON; NaN becomes null."""
    value = {"m": UserDict({"a": (1, 2)}), "l": UserList([{3}]), "d": _Node(1.5), "n": math.nan}
    result = asyncio.run(
        relay.tools.execute("conv", {}, lambda args: relay.ToolExecutionResult(value))
    )
    expected = {"m": {"a": [1, 2]}, "l": [[3]], "d": {"child": 1.5}, "n": None}
    assert isinstance(result, relay.ToolExecutionResult)
    assert result.result == expected
    assert captured[-1].data == expected


@pytest.mark.parametrize("kind", ["dict", "mapping", "sequence", "dataclass", "async"])
def test_a_cyclic_tool_result_is_refused_and_the_runtime_stays_usable(
    captured: list[relay.Event], kind: str
) -> None:
    """A cycle is Relay's internal JSON error; shared non-cyclic values still convert."""
    cyclic: Any
    if kind == "mapping":
        cyclic = UserDict()
        cyclic["self"] = cyclic
    elif kind == "sequence":
        cyclic = UserList()
        cyclic.append(cyclic)
    elif kind == "dataclass":
        cyclic = _Node()
        cyclic.child = cyclic
    else:
        cyclic = {}
        cyclic["self"] = cyclic

    def tool(args: Any) -> Any:
        return relay.ToolExecutionResult(cyclic)

    async def async_tool(args: Any) -> Any:
        return tool(args)

    with pytest.raises(RuntimeError, match="circular reference detected") as caught:
        asyncio.run(relay.tools.execute("cyclic", {}, async_tool if kind == "async" else tool))
    assert str(caught.value).startswith("internal error: ValueError: Failed to convert to JSON")
    assert captured[-1].metadata["error.type"] == "internal_error"
    shared = {"v": True}
    result = asyncio.run(
        relay.tools.execute("ok", {}, lambda a: relay.ToolExecutionResult([shared, shared]))
    )
    assert result.result == [{"v": True}, {"v": True}]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({1: 2}, "unexpected type: 'int' object is not an instance of 'str'"),
        (object(), "unsupported type object"),
        (b"x", "invalid type: byte array"),
        (10**30, "JSON number out of range"),
    ],
)
def test_unconvertible_tool_results_name_the_reason(value: Any, reason: str) -> None:
    """Non-string keys, unknown types, bytes and huge integers are refused as Relay words it."""
    with pytest.raises(RuntimeError, match="Failed to convert to JSON") as caught:
        asyncio.run(relay.tools.execute("bad", {}, lambda a: relay.ToolExecutionResult(value)))
    assert reason in str(caught.value)


def test_annotations_take_extra_none_as_no_extra_keys() -> None:
    """``extra=None`` (as an integration codec passes it) is an empty ``extra``, as in Relay."""
    # The annotations say dict; None is what integration codecs pass at run time.
    request = relay.AnnotatedLLMRequest(
        [{"role": "user", "content": "hi"}],
        extra=None,  # type: ignore[arg-type]
    )
    response = relay.AnnotatedLLMResponse(extra=None)  # type: ignore[arg-type]
    assert request.extra == {} and response.extra == {}
    assert request.to_dict() == {"messages": [{"role": "user", "content": "hi"}]}
    assert response.to_dict() == {}
