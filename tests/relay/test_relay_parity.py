"""Behaviours that NeMo Relay's own test suite pins, checked on ``wayline.relay`` directly."""

from __future__ import annotations

import asyncio
import threading
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
