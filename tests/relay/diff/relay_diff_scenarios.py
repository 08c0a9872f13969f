# ruff: noqa: SIM117  (nested scopes spell out the stack each scenario builds)
"""Scenarios run unchanged on ``nemo_relay`` 0.10.4 and on ``wayline.relay`` (passed in as ``nr``).

Each scenario is ``fn(nr, rec)``: it emits events (the runner captures them) and records
plain values with ``rec(key, value)``. Scenarios clean up every registration they make, so
they can run in any order. Names start with the module they cover (``<module>__<case>``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from relay_diff_base import A_REQUEST, A_RESPONSE, _error, _provider, _run, _tool, scenario

# -- scope stacks and propagation ---------------------------------------------------------------


@scenario
def stack__active_and_get(nr: Any, rec: Any) -> None:
    rec("before", nr.scope_stack_active())
    stack = nr.get_scope_stack()
    rec("after", nr.scope_stack_active())
    rec("same", nr.get_scope_stack() is stack or repr(nr.get_scope_stack()) == repr(stack))
    rec("propagate_error", None)


@scenario
def stack__propagate_without_stack_raises(nr: Any, rec: Any) -> None:
    rec("error", _error(nr.propagate_scope_to_thread))


@scenario
def stack__use_scope_stack_isolates(nr: Any, rec: Any) -> None:
    with nr.scope.scope("outer", nr.ScopeType.Agent):
        other = nr.create_scope_stack()
        with nr.use_scope_stack(other), nr.scope.scope("isolated", nr.ScopeType.Function):
            nr.scope.event("inside")
        nr.scope.event("back")


@scenario
def stack__thread_propagation(nr: Any, rec: Any) -> None:
    with nr.scope.scope("parent", nr.ScopeType.Agent) as handle:
        stack = nr.propagate_scope_to_thread()

        def worker() -> None:
            nr.set_thread_scope_stack(stack)
            nr.scope.event("worker-mark")
            with nr.scope.scope("worker-scope", nr.ScopeType.Function):
                nr.scope.event("nested")
            nr.scope.event("explicit", handle=handle)

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        nr.scope.event("after")


@scenario
def stack__thread_without_propagation(nr: Any, rec: Any) -> None:
    with nr.scope.scope("parent", nr.ScopeType.Agent):

        def worker() -> None:
            nr.scope.event("orphan")

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()


@scenario
def stack__capture_and_rebuild(nr: Any, rec: Any) -> None:
    with nr.scope.scope("agent", nr.ScopeType.Agent) as agent:
        with nr.scope.scope("step", nr.ScopeType.Function) as step:
            ctx = nr.capture_propagation_context()
            rec("ids", [ctx.parent_uuid == step.uuid, ctx.root_uuid == agent.uuid, ctx.version])
            rec("traceparent_set", ctx.traceparent is not None)

    def worker() -> None:
        stack = nr.create_scope_stack_from_propagation(ctx)
        with nr.use_scope_stack(stack), nr.scope.scope("remote", nr.ScopeType.Function):
            nr.scope.event("remote-mark")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()


@scenario
def stack__propagation_context_json(nr: Any, rec: Any) -> None:
    ctx = nr.PropagationContext(
        "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a50"
    )
    back = nr.PropagationContext.from_json(ctx.to_json())
    rec("roundtrip", [back.parent_uuid, back.root_uuid, back.version, back.traceparent])
    rec("traceparent", ctx.to_traceparent())
    rec("bad_json", _error(lambda: nr.PropagationContext.from_json("{}")))


@scenario
def stack__capture_traceparent(nr: Any, rec: Any) -> None:
    with nr.scope.scope("agent", nr.ScopeType.Agent) as agent:
        with nr.scope.scope("step", nr.ScopeType.Function):
            tp = nr.capture_traceparent()
            parts = tp.split("-")
            rec("shape", [len(p) for p in parts])
            rec("trace_is_root", parts[1] == agent.uuid.replace("-", ""))
            nr.scope.event("mark", data={"tp": tp})


@scenario
def stack__fork_asyncio_context(nr: Any, rec: Any) -> None:
    async def worker(name: str) -> None:
        with nr.scope.scope(name, nr.ScopeType.Function):
            await asyncio.sleep(0)
            nr.scope.event(f"{name}-mark")
            await asyncio.sleep(0)

    async def main() -> None:
        with nr.scope.scope("parent", nr.ScopeType.Agent):
            first = asyncio.create_task(worker("a"), context=nr.fork_asyncio_context())
            second = asyncio.create_task(worker("b"), context=nr.fork_asyncio_context())
            await first
            await second
            nr.scope.event("joined")

    asyncio.run(main())


@scenario
def stack__rootless_and_with_root(nr: Any, rec: Any) -> None:
    with nr.scope.scope("agent", nr.ScopeType.Agent) as agent:
        rootless = nr.capture_rootless_propagation_context()
        custom = nr.capture_propagation_context_with_root("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a50")
        rec("rootless", [rootless.parent_uuid == agent.uuid, rootless.root_uuid])
        rec("custom", [custom.parent_uuid == agent.uuid, custom.root_uuid])


# -- event metadata ----------------------------------------------------------------------------


@scenario
def event_metadata__injector_all_kinds(nr: Any, rec: Any) -> None:
    rec.pin("metadata")
    seen: list[str] = []

    def inject(event: Any) -> Any:
        seen.append(f"{event.kind}:{event.name}")
        return {"tenant": "t1", "tags": ["a", "b"]}

    nr.event_metadata.register_injector("tenant", 10, inject)
    try:
        with nr.scope.scope("agent", nr.ScopeType.Agent, metadata={"own": 1}):
            nr.scope.event("mark", metadata={"tenant": "mine"})
            tool = nr.tools.call("t", {"a": 1})
            nr.tools.call_end(tool, nr.ToolExecutionResult({"ok": True}))
            span = nr.llm.call("llm", nr.LLMRequest({}, A_REQUEST))
            nr.llm.call_end(span, A_RESPONSE)
    finally:
        nr.subscribers.flush()  # Relay runs injectors on its publication queue
        rec("deregistered", nr.event_metadata.deregister_injector("tenant"))
    rec("again", nr.event_metadata.deregister_injector("tenant"))
    rec("seen", sorted(set(seen)))


@scenario
def event_metadata__priority_and_async(nr: Any, rec: Any) -> None:
    rec.pin("metadata")

    async def late(event: Any) -> Any:
        return {"k": "late", "only_late": True}

    def early(event: Any) -> Any:
        return {"k": "early"}

    nr.event_metadata.register_injector("late", 20, late)
    nr.event_metadata.register_injector("early", 10, early)
    try:
        nr.scope.event("m")
    finally:
        nr.event_metadata.deregister_injector("late")
        nr.event_metadata.deregister_injector("early")


@scenario
def event_metadata__bad_values_and_errors(nr: Any, rec: Any) -> None:
    rec.pin("metadata")

    def nested(event: Any) -> Any:
        return {"nested": {"x": 1}, "ok": 1}

    def boom(event: Any) -> Any:
        raise ValueError("no")

    nr.event_metadata.register_injector("nested", 1, nested)
    nr.event_metadata.register_injector("boom", 2, boom)
    try:
        nr.scope.event("m", metadata={"keep": True})
    finally:
        nr.event_metadata.deregister_injector("nested")
        nr.event_metadata.deregister_injector("boom")


@scenario
def event_metadata__duplicate_name(nr: Any, rec: Any) -> None:
    nr.event_metadata.register_injector("dup", 1, lambda e: {})
    try:
        rec("error", _error(lambda: nr.event_metadata.register_injector("dup", 1, lambda e: {})))
    finally:
        nr.event_metadata.deregister_injector("dup")


# -- sanitize guardrails -----------------------------------------------------------------------


@scenario
def guardrails__mark_and_scope_sanitize(nr: Any, rec: Any) -> None:
    rec.pin("data", "metadata")

    def mark(event: Any, fields: Any) -> Any:
        return {
            "data": {"redacted": True},
            "category_profile": fields["category_profile"],
            "metadata": fields["metadata"],
        }

    def start(event: Any, fields: Any) -> Any:
        return {**fields, "metadata": {"start": "clean"}}

    async def end(event: Any, fields: Any) -> Any:
        return {**fields, "data": None}

    nr.guardrails.register_mark_sanitize("mark", 1, mark)
    nr.guardrails.register_scope_sanitize_start("start", 1, start)
    nr.guardrails.register_scope_sanitize_end("end", 1, end)
    try:
        with nr.scope.scope("s", nr.ScopeType.Agent, input={"secret": 1}, metadata={"m": 1}):
            nr.scope.event("mark", data={"secret": 2})
    finally:
        rec(
            "removed",
            [
                nr.guardrails.deregister_mark_sanitize("mark"),
                nr.guardrails.deregister_scope_sanitize_start("start"),
                nr.guardrails.deregister_scope_sanitize_end("end"),
            ],
        )


@scenario
def guardrails__sanitize_raises_fails_closed(nr: Any, rec: Any) -> None:
    rec.pin("data", "metadata")

    def boom(event: Any, fields: Any) -> Any:
        raise RuntimeError("sanitizer failed")

    nr.guardrails.register_mark_sanitize("boom", 1, boom)
    try:
        nr.scope.event("mark", data={"secret": 2}, metadata={"m": 1})
    finally:
        nr.guardrails.deregister_mark_sanitize("boom")


@scenario
def guardrails__tool_sanitize(nr: Any, rec: Any) -> None:
    rec.pin("data")

    def request(name: str, args: Any) -> Any:
        return {**args, "key": "***"}

    def response(name: str, result: Any) -> Any:  # sync: Relay races async ones at loop exit
        return {"sanitized": name}

    nr.guardrails.register_tool_sanitize_request("req", 1, request)
    nr.guardrails.register_tool_sanitize_response("resp", 1, response)
    try:
        out = _run(lambda: nr.tools.execute("t", {"key": "secret"}, _tool(nr)))
        rec("caller_sees", out)
    finally:
        nr.guardrails.deregister_tool_sanitize_request("req")
        nr.guardrails.deregister_tool_sanitize_response("resp")


@scenario
def guardrails__llm_sanitize(nr: Any, rec: Any) -> None:
    rec.pin("data")

    def request(req: Any, ctx: Any) -> Any:
        rec("codec_kind", ctx.codec.kind)
        return nr.LLMRequest({"x-clean": "1"}, {"model": "redacted"})

    def response(resp: Any, ctx: Any) -> Any:
        return None

    nr.guardrails.register_llm_sanitize_request("req", 1, request)
    nr.guardrails.register_llm_sanitize_response("resp", 1, response)
    try:
        out = _run(lambda: nr.llm.execute("llm", nr.LLMRequest({}, A_REQUEST), _provider))
        rec("caller_sees", out)
    finally:
        nr.guardrails.deregister_llm_sanitize_request("req")
        nr.guardrails.deregister_llm_sanitize_response("resp")


@scenario
def guardrails__async_conditional(nr: Any, rec: Any) -> None:
    rec.pin("data")

    async def deny_tool(name: str, args: Any) -> Any:
        return "no tools" if name == "blocked" else None

    async def allow_llm(request: Any) -> Any:
        return None

    nr.guardrails.register_tool_conditional_execution("deny", 1, deny_tool)
    nr.guardrails.register_llm_conditional_execution("allow", 1, allow_llm)
    try:
        with nr.scope.scope("agent", nr.ScopeType.Agent):
            _run(lambda: nr.tools.execute("ok", {}, _tool(nr)))
            rec("blocked", _error(lambda: _run(lambda: nr.tools.execute("blocked", {}, _tool(nr)))))
            _run(lambda: nr.llm.execute("llm", nr.LLMRequest({}, A_REQUEST), _provider))
    finally:
        nr.guardrails.deregister_tool_conditional_execution("deny")
        nr.guardrails.deregister_llm_conditional_execution("allow")


# -- async intercepts --------------------------------------------------------------------------


@scenario
def intercepts__async_tool_execution(nr: Any, rec: Any) -> None:
    rec.pin("data")

    async def wrap(ctx: Any, nxt: Any) -> Any:
        inner = await nxt({**ctx.args, "wrapped": True})
        return nr.ToolExecutionInterceptOutcome(
            {"outer": inner.result},
            pending_marks=[nr.PendingMarkSpec("after-tool", data={"n": 1})],
        )

    nr.intercepts.register_tool_execution("wrap", 1, wrap)
    try:
        with nr.scope.scope("agent", nr.ScopeType.Agent):
            out = _run(lambda: nr.tools.execute("t", {"a": 1}, _tool(nr), tool_call_id="c1"))
        rec("result", [out.result, out.annotation])
    finally:
        nr.intercepts.deregister_tool_execution("wrap")


@scenario
def intercepts__async_tool_execution_short_circuit(nr: Any, rec: Any) -> None:
    rec.pin("data")

    async def cached(ctx: Any, nxt: Any) -> Any:
        return nr.ToolExecutionInterceptOutcome({"cached": ctx.tool_name}, annotation={"hit": True})

    nr.intercepts.register_tool_execution("cache", 1, cached)
    try:
        out = _run(lambda: nr.tools.execute("t", {"a": 1}, _tool(nr)))
        rec("result", [out.result, out.annotation])
    finally:
        nr.intercepts.deregister_tool_execution("cache")


@scenario
def intercepts__async_tool_request(nr: Any, rec: Any) -> None:
    rec.pin("data")

    async def rewrite(name: str, args: Any) -> Any:
        return {**args, "added": name}

    nr.intercepts.register_tool_request("rw", 1, False, rewrite)
    try:
        rec("out", _run(lambda: nr.tools.execute("t", {"a": 1}, _tool(nr))))
    finally:
        nr.intercepts.deregister_tool_request("rw")


@scenario
def intercepts__async_llm_request_and_execution(nr: Any, rec: Any) -> None:
    rec.pin("data")

    async def add_header(name: str, request: Any, annotated: Any) -> Any:
        headers = {**request.headers, "x-added": "1"}
        return nr.LLMRequestInterceptOutcome(nr.LLMRequest(headers, request.content), annotated)

    async def around(name: str, request: Any, ctx: Any, nxt: Any) -> Any:
        response = await nxt(request)
        return {**response, "wrapped": True}

    nr.intercepts.register_llm_request("hdr", 1, False, add_header)
    nr.intercepts.register_llm_execution("around", 1, around)
    try:
        out = _run(lambda: nr.llm.execute("llm", nr.LLMRequest({}, A_REQUEST), _provider))
        rec("wrapped", out.get("wrapped"))
    finally:
        nr.intercepts.deregister_llm_request("hdr")
        nr.intercepts.deregister_llm_execution("around")


# -- scope-local registrations -----------------------------------------------------------------


@scenario
def scope_local__tool_request_lifetime(nr: Any, rec: Any) -> None:
    rec.pin("data")

    def rewrite(name: str, args: Any) -> Any:
        return {**args, "local": True}

    with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
        nr.scope_local.register_tool_request(handle, "rw", 1, False, rewrite)
        _run(lambda: nr.tools.execute("inside", {"a": 1}, _tool(nr)))
    _run(lambda: nr.tools.execute("outside", {"a": 1}, _tool(nr)))
    rec("after_pop", nr.scope_local.deregister_tool_request(handle, "rw"))


@scenario
def scope_local__subscriber(nr: Any, rec: Any) -> None:
    seen: list[str] = []
    with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
        nr.scope_local.register_subscriber(handle, "local", lambda e: seen.append(e.name))
        nr.scope.event("inside")
        with nr.scope.scope("child", nr.ScopeType.Function):
            nr.scope.event("deeper")
    nr.scope.event("outside")
    nr.subscribers.flush()
    rec("seen", seen)


@scenario
def scope_local__guardrail_and_injector(nr: Any, rec: Any) -> None:
    rec.pin("data", "metadata")

    def deny(name: str, args: Any) -> Any:
        return "local deny"

    with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
        nr.scope_local.register_tool_conditional_execution(handle, "deny", 1, deny)
        rec("blocked", _error(lambda: _run(lambda: nr.tools.execute("t", {}, _tool(nr)))))
        rec("removed", nr.scope_local.deregister_tool_conditional_execution(handle, "deny"))
        _run(lambda: nr.tools.execute("t", {}, _tool(nr)))


@scenario
def scope_local__injector(nr: Any, rec: Any) -> None:
    rec.pin("metadata")
    with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
        nr.scope_local.register_event_metadata_injector(handle, "inj", 1, lambda e: {"local": True})
        nr.scope.event("tagged")
        nr.subscribers.flush()
    nr.scope.event("untagged")


@scenario
def scope_local__execution_intercept(nr: Any, rec: Any) -> None:
    rec.pin("data")

    async def wrap(ctx: Any, nxt: Any) -> Any:
        inner = await nxt(ctx.args)
        return nr.ToolExecutionInterceptOutcome({"local": inner.result})

    def sanitize(name: str, args: Any) -> Any:
        return {"clean": True}

    with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
        nr.scope_local.register_tool_execution(handle, "wrap", 1, wrap)
        nr.scope_local.register_tool_sanitize_request(handle, "clean", 1, sanitize)
        _run(lambda: nr.tools.execute("t", {"secret": 1}, _tool(nr)))


# -- runtime registrations ---------------------------------------------------------------------


@scenario
def runtime_registrations__list(nr: Any, rec: Any) -> None:
    rr = nr.runtime_registrations
    nr.intercepts.register_tool_request("rr-tool", 1, False, lambda n, a: a)
    nr.guardrails.register_llm_conditional_execution("rr-llm", 1, lambda r: None)
    nr.subscribers.register("rr-sub", lambda e: None)
    try:
        kinds = {
            rr.RuntimeRegistrationKind.TOOL_REQUEST_INTERCEPT,
            rr.RuntimeRegistrationKind.LLM_CONDITIONAL_EXECUTION_GUARDRAIL,
            rr.RuntimeRegistrationKind.SUBSCRIBER,
        }
        found = [
            [str(r.kind), r.local_name, r.effective_name, str(r.owner.kind), r.owner.plugin_kind]
            for r in rr.list_runtime_registrations(kinds)
            if r.local_name.startswith("rr-")
        ]
        rec("found", found)
        rec("all_kinds", [k.value for k in rr.RuntimeRegistrationKind])
    finally:
        nr.intercepts.deregister_tool_request("rr-tool")
        nr.guardrails.deregister_llm_conditional_execution("rr-llm")
        nr.subscribers.deregister("rr-sub")


@scenario
def runtime_registrations__gate(nr: Any, rec: Any) -> None:
    rr = nr.runtime_registrations
    rec.pin("data")
    calls: list[Any] = []

    def gate(kinds: Any, name: str) -> Any:
        calls.append([sorted(k.value for k in kinds), name])
        return "gated off"

    def rewrite(name: str, args: Any) -> Any:
        return {**args, "rewritten": True}

    nr.intercepts.register_tool_request("gated", 1, False, rewrite)
    rr.register_conditional_middleware_guardrail(
        "gate", {rr.RuntimeRegistrationKind.TOOL_REQUEST_INTERCEPT}, "gated", gate
    )
    try:
        _run(lambda: nr.tools.execute("t", {"a": 1}, _tool(nr)))
    finally:
        rec("removed", rr.deregister_conditional_middleware_guardrail("gate"))
    _run(lambda: nr.tools.execute("t", {"a": 1}, _tool(nr)))
    nr.intercepts.deregister_tool_request("gated")
    rec("calls", calls[:1])
