"""Differential scenarios for the groups where Relay's own test suite found differences (issue 31).

One scenario (or more) per group: the plugin module, guardrail classes, stream intercepts,
execution intercepts, guardrail rejection, errors, subscribers, async, scope-local; plus the
names that kept Relay's test modules from importing (metrics, ``_native``, ``utils``, OCI).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from relay_diff_base import A_REQUEST, _error, _run, _tool, scenario


@scenario
def port__plugin_module(nr: Any, rec: Any) -> None:
    import importlib

    plugin = importlib.import_module(f"{nr.__name__}.plugin")

    class Marker:
        def validate(self, plugin_config: Any) -> Any:
            return [{"level": "warning", "code": "diff.seen", "message": "seen"}]

        def register(self, plugin_config: Any, context: Any) -> None:
            return None

    plugin.register("diff.marker", Marker())
    try:
        rec("listed", "diff.marker" in plugin.list_kinds())
        rec("builtin", "observability" in plugin.list_kinds())
        spec = plugin.ComponentSpec(kind="diff.marker", config={"rules": [{"a": 1}]})
        rec("spec", spec.to_dict())
        report = plugin.validate(plugin.PluginConfig(components=[spec]))
        rec("keys", sorted(report))
        rec("codes", sorted(d["code"] for d in report["config"]["diagnostics"]))
        rec("plugin_protocol", hasattr(plugin, "Plugin"))
    finally:
        rec("deregistered", plugin.deregister("diff.marker"))


@scenario
def port__guardrail_and_intercept_names(nr: Any, rec: Any) -> None:
    names = (
        "LlmSanitizeRequestGuardrail",
        "LlmSanitizeResponseGuardrail",
        "LlmConditionalExecutionGuardrail",
        "ToolSanitizeGuardrail",
        "ToolConditionalExecutionGuardrail",
    )
    rec("guardrails", [hasattr(nr.guardrails, n) for n in names])
    rec("stream", hasattr(nr.intercepts, "LlmStreamExecutionIntercept"))


@scenario
def port__tool_execution_next_after_settlement(nr: Any, rec: Any) -> None:
    rec.pin("data")
    late: list[Any] = []

    async def wrap(ctx: Any, nxt: Any) -> Any:
        late.append(nxt)
        inner = await nxt(ctx.args)
        return nr.ToolExecutionInterceptOutcome({"outer": inner.result})

    nr.intercepts.register_tool_execution("wrap", 1, wrap)
    try:
        out = _run(lambda: nr.tools.execute("t", {"a": 1}, _tool(nr)))
        rec("result", out.result)
        rec("late_next", _error(lambda: asyncio.run(late[0]({"a": 2}))))
    finally:
        nr.intercepts.deregister_tool_execution("wrap")


@scenario
def port__tool_execution_legacy_raw_result(nr: Any, rec: Any) -> None:
    rec.pin("metadata")
    nr.intercepts.register_tool_execution("legacy", 1, lambda ctx, nxt: {"raw": True})
    try:
        rec("error", _error(lambda: _run(lambda: nr.tools.execute("t", {}, _tool(nr)))))
    finally:
        nr.intercepts.deregister_tool_execution("legacy")


@scenario
def port__guardrail_blocked_directly(nr: Any, rec: Any) -> None:
    rec.pin("data")
    nr.guardrails.register_llm_conditional_execution("block", 1, lambda request: "blocked")
    try:
        request = nr.LLMRequest({}, A_REQUEST)
        rec("direct", _error(lambda: nr.llm.conditional_execution(request)))
    finally:
        nr.guardrails.deregister_llm_conditional_execution("block")


@scenario
def port__errors(nr: Any, rec: Any) -> None:
    rec.pin("data", "metadata")
    nr.guardrails.register_tool_conditional_execution("odd", 1, lambda name, args: 123)
    try:
        rec("verdict", _error(lambda: nr.tools.conditional_execution("t", {})))
    finally:
        nr.guardrails.deregister_tool_conditional_execution("odd")
    register = nr.guardrails.register_llm_sanitize_request
    rec("one_arg_sanitizer", _error(lambda: register("legacy", 1, lambda request: request)))
    naive = datetime(2026, 1, 1)
    rec("naive", _error(lambda: nr.scope.event("m", timestamp=naive)))
    rec("text", _error(lambda: nr.scope.event("m", timestamp="2026-01-01T00:00:00Z")))


@scenario
def port__subscribers_metrics_and_severity(nr: Any, rec: Any) -> None:
    rec.pin("data", "data_schema", "metadata")
    measurement = nr.MetricMeasurement(
        "relay.tokens", nr.MetricKind.Counter, nr.MetricValueType.U64, 3, unit="{token}"
    )
    nr.scope.metric("usage", [measurement], timestamp=datetime(2026, 1, 1, tzinfo=UTC))
    bad = nr.MetricMeasurement("x", nr.MetricKind.Counter, nr.MetricValueType.I64, -1)
    rec("invalid", _error(lambda: nr.scope.metric("bad", [bad])))
    nr.scope.event("warned", severity=nr.LogSeverity.Warn)


@scenario
def port__async_guardrail_on_caller_loop(nr: Any, rec: Any) -> None:
    rec.pin("data")
    seen: list[bool] = []

    async def main() -> Any:
        loop = asyncio.get_running_loop()

        async def allow(name: str, args: Any) -> None:
            seen.append(asyncio.get_running_loop() is loop)
            return None

        nr.guardrails.register_tool_conditional_execution("on_loop", 1, allow)
        try:
            return await nr.tools.execute("t", {"a": 1}, _tool(nr))
        finally:
            nr.guardrails.deregister_tool_conditional_execution("on_loop")

    out = asyncio.run(main())
    rec("result", out.result)
    rec("same_loop", seen)


@scenario
def port__scope_local_sanitizer_leaves_result(nr: Any, rec: Any) -> None:
    rec.pin("data")
    order: list[str] = []

    def local(name: str, args: Any) -> Any:
        order.append("local")
        args["sanitized"] = True
        return args

    def global_(name: str, args: Any) -> Any:
        order.append("global")
        return args

    nr.guardrails.register_tool_sanitize_request("global", 10, global_)
    try:
        with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
            nr.scope_local.register_tool_sanitize_request(handle, "local", 5, local)
            out = _run(lambda: nr.tools.execute("t", {"a": 1}, lambda a: nr.ToolExecutionResult(a)))
        rec("result", out.result)
        rec("order", order)
    finally:
        nr.guardrails.deregister_tool_sanitize_request("global")


@scenario
def port__native_utils_and_oci(nr: Any, rec: Any) -> None:
    import importlib

    native = importlib.import_module(f"{nr.__name__}._native")
    utils = importlib.import_module(f"{nr.__name__}.utils")
    binding = native.capture_thread_scope_stack()
    native.restore_thread_scope_stack(binding)
    rec("native", isinstance(native.list_runtime_registrations(), list))
    stack = nr.get_scope_stack()

    async def same_stack() -> bool:
        return nr.get_scope_stack() is stack

    rec("run_sync", utils.run_sync(same_stack()))
    codec = nr.codecs.OCIGenAIChatCodec()
    body = {
        "compartmentId": "c",
        "servingMode": {"servingType": "ON_DEMAND", "modelId": "meta.llama"},
        "chatRequest": {
            "apiFormat": "GENERIC",
            "messages": [{"role": "USER", "content": [{"type": "TEXT", "text": "hi"}]}],
            "maxTokens": 5,
        },
    }
    original = nr.LLMRequest({}, body)
    annotated = codec.decode(original)
    rec("model", annotated.model)
    rec("identity", codec.encode(annotated, original).content == body)
    annotated.messages = [{"role": "user", "content": "bye"}]
    rec("edited", codec.encode(annotated, original).content["chatRequest"]["messages"])
