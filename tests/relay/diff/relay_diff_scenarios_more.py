"""Differential scenarios for the top-level names and the config modules.

Top-level names, ``AnnotatedLLMRequest``/``Response`` and severities; then ``adaptive`` and
``observability``. Config classes are compared by their ``to_dict()`` documents (defaults and
filled in), the adaptive validator by its diagnostics, and ``AdaptiveRuntime`` by its
lifecycle and errors.
"""

from __future__ import annotations

import asyncio
from typing import Any

from relay_diff_base import _error, scenario

_REQUEST_ID = "00000000-0000-0000-0000-000000000101"


@scenario
def adaptive__config_documents(nr: Any, rec: Any) -> None:
    ad = nr.adaptive
    rec("kind", ad.ADAPTIVE_PLUGIN_KIND)
    rec("default", ad.ComponentSpec(ad.AdaptiveConfig()).to_dict())
    full = ad.AdaptiveConfig(
        agent_id="agent-1",
        state=ad.StateConfig(backend=ad.BackendSpec.redis("redis://127.0.0.1:6379")),
        telemetry=ad.TelemetryConfig(learners=["latency_sensitivity"]),
        adaptive_hints=ad.AdaptiveHintsConfig(inject_header=False),
        tool_parallelism=ad.ToolParallelismConfig(mode="schedule"),
        acg=ad.AcgConfig(
            provider="openai",
            stability_thresholds=ad.AcgStabilityThresholds(stable_threshold=0.99),
        ),
        policy=ad.ConfigPolicy(unknown_field="error"),
        response_cache=ad.ResponseCacheConfig(
            namespace="dev",
            key_strategy=ad.ResponseCacheKeyStrategy.LOGICAL,
            tools=ad.ToolCacheConfig(
                enabled=True,
                classes={"read": ad.ToolClass(cacheable=True, members=["docs_*"])},
                overrides={"docs_get": ad.ToolOverride(tool_version="v2", arg_skip=[])},
            ),
        ),
    )
    rec("full", full.to_dict())
    rec(
        "sections",
        [ad.TelemetryConfig().to_dict(), ad.AcgConfig(stability_thresholds=None).to_dict()],
    )
    rec("in_memory", ad.BackendSpec.in_memory().to_dict())


@scenario
def adaptive__validate_config(nr: Any, rec: Any) -> None:
    ad = nr.adaptive
    cases = {
        "empty": {},
        "telemetry_without_state": {"version": 1, "telemetry": {}},
        "acg_without_state": ad.AdaptiveConfig(acg=ad.AcgConfig()).to_dict(),
        "bad_mode": {"version": 1, "tool_parallelism": {"mode": "nope"}},
        "bad_mode_warn": {
            "version": 1,
            "policy": {"unsupported_value": "warn"},
            "tool_parallelism": {"mode": "nope"},
        },
        "bad_provider": {
            "version": 1,
            "state": {"backend": {"kind": "in_memory"}},
            "acg": {"provider": "zzz"},
        },
        "bad_version": {"version": 2},
        "unknown_backend": ad.AdaptiveConfig(
            state=ad.StateConfig(ad.BackendSpec("weird")), telemetry=ad.TelemetryConfig()
        ).to_dict(),
        "cache_no_namespace": ad.AdaptiveConfig(response_cache=ad.ResponseCacheConfig()).to_dict(),
        "cache_bad_values": ad.AdaptiveConfig(
            response_cache=ad.ResponseCacheConfig(namespace="n", ttl_seconds=0, bypass_rate=2.0)
        ).to_dict(),
        "clean": ad.AdaptiveConfig(
            state=ad.StateConfig(ad.BackendSpec.in_memory()),
            telemetry=ad.TelemetryConfig(),
            acg=ad.AcgConfig(provider="anthropic"),
        ).to_dict(),
    }
    rec("reports", {name: ad.validate_config(doc) for name, doc in cases.items()})


@scenario
def adaptive__runtime_lifecycle(nr: Any, rec: Any) -> None:
    ad = nr.adaptive
    config = ad.AdaptiveConfig(
        agent_id="agent-1",
        state=ad.StateConfig(backend=ad.BackendSpec.in_memory()),
        acg=ad.AcgConfig(provider="anthropic"),
    ).to_dict()
    runtime = ad.AdaptiveRuntime(config)
    rec("report", runtime.report())
    request = nr.AnnotatedLLMRequest([{"role": "user", "content": "hi"}], model="m")

    def facts(request_id: str = _REQUEST_ID) -> Any:
        return runtime.build_cache_request_facts(
            provider="anthropic",
            request_id=request_id,
            annotated_request=request,
            agent_id="agent-1",
        )

    with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
        rec("bind_unregistered", _error(lambda: runtime.bind_scope(handle)))
    rec("facts_unregistered", _error(facts))

    async def main() -> None:
        await runtime.register()
        await runtime.register()
        with nr.scope.scope("agent", nr.ScopeType.Agent) as handle:
            runtime.bind_scope(handle)
        rec("facts", facts())
        rec("bad_id", _error(lambda: facts("not-a-uuid")))
        runtime.wait_for_idle()
        runtime.deregister()
        runtime.deregister()
        await runtime.shutdown()
        try:
            await runtime.register()
            rec("register_after_shutdown", None)
        except Exception as exc:
            rec("register_after_shutdown", type(exc).__name__)

    asyncio.run(main())
    bad = {"version": 1, "tool_parallelism": {"mode": "nope"}}
    rec("invalid_config", _error(lambda: ad.AdaptiveRuntime(bad)))


@scenario
def adaptive__latency_and_telemetry(nr: Any, rec: Any) -> None:
    ad = nr.adaptive
    ad.set_latency_sensitivity(3)
    rec("zero", _error(lambda: ad.set_latency_sensitivity(0)))
    rec("text", _error(lambda: ad.set_latency_sensitivity("high")))
    identity = {
        "agent_id": "agent-1",
        "template_version": "unknown",
        "toolset_hash": "unknown",
        "model_family": "m",
        "tenant_scope": "default",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    usages = {
        "anthropic_miss": ("anthropic", {"prompt_tokens": 300, "cache_read_tokens": 0}),
        "anthropic_hit": (
            "anthropic",
            {"prompt_tokens": 300, "cache_read_tokens": 100, "cache_write_tokens": 20},
        ),
        "openai_hit": (
            "openai",
            {"prompt_tokens": 300, "cache_read_tokens": 150, "cache_write_tokens": 9},
        ),
        "no_usage": ("openai", None),
    }
    facts = {
        "provider": "anthropic",
        "stable_prefix_length": 0,
        "missing_facts": ["acg_stability_unavailable"],
    }
    for label, (provider, usage) in usages.items():
        event = ad.build_cache_telemetry_event(
            provider=provider,
            request_id=_REQUEST_ID,
            usage=usage,
            request_facts=facts,
            **identity,
        )
        rec(label, event)
    rec(
        "unsupported",
        _error(
            lambda: ad.build_cache_telemetry_event(
                provider="other", request_id=_REQUEST_ID, usage={}, **identity
            )
        ),
    )


@scenario
def observability__config_documents(nr: Any, rec: Any) -> None:
    ob = nr.observability
    rec("kind", ob.OBSERVABILITY_PLUGIN_KIND)
    rec("default", ob.ComponentSpec(ob.ObservabilityConfig()).to_dict())
    config = ob.ObservabilityConfig(
        atof=ob.AtofConfig(
            enabled=True,
            sinks=[
                ob.AtofFileSinkConfig(output_directory="/tmp/atof", mode="overwrite"),
                ob.AtofStreamSinkConfig(url="http://127.0.0.1:9/ingest", headers={"a": "b"}),
            ],
        ),
        atif=ob.AtifConfig(
            enabled=True,
            agent_version="1.0",
            storage=[
                ob.S3StorageConfig(bucket="b", region="us-east-1"),
                ob.HttpStorageConfig(endpoint="http://127.0.0.1:9/atif"),
            ],
        ),
        opentelemetry=ob.OpenTelemetrySectionConfig(
            enabled=True,
            endpoints=[
                ob.OpenTelemetryEndpointConfig(type="gen_ai", endpoint="http://127.0.0.1:4318")
            ],
            logs=ob.OpenTelemetryLogSectionConfig(enabled=True, minimum_severity="warn"),
            metrics=ob.OpenTelemetryMetricSectionConfig(enabled=True, temporality="delta"),
        ),
        enable_full_payloads=True,
    )
    rec("full", config.to_dict())
    rec("policy", ob.ConfigPolicy(unknown_component="error").to_dict())


# -- top level --------------------------------------------------------------------------------


@scenario
def toplevel__names(nr: Any, rec: Any) -> None:
    names = [
        "AnnotatedLLMRequest",
        "AnnotatedLLMResponse",
        "JsonObject",
        "JsonValue",
        "JsonPrimitive",
        "Json",
        "LogSeverity",
        "EventSanitizeFields",
        "DataSchema",
        "ScopeStack",
        "PropagationContext",
        "UnsupportedBehavior",
        "EventMetadata",
        "ToolExecutionIntercept",
        "LlmRequestIntercept",
        "LlmExecutionIntercept",
        "LlmStreamExecutionIntercept",
        "ToolRequestIntercept",
        "ToolSanitizeGuardrail",
        "EventSanitizeGuardrail",
        "LlmSanitizeRequestGuardrail",
        "LlmSanitizeResponseGuardrail",
        "ToolConditionalExecutionGuardrail",
        "LlmConditionalExecutionGuardrail",
        "EventMetadataInjectorCallback",
        "LlmCodecIdentity",
        "LlmSanitizeRequestContext",
        "LlmSanitizeResponseContext",
        "event_metadata",
        "scope_local",
        "observability",
        "adaptive",
        "runtime_registrations",
    ]
    rec("present", [n for n in names if hasattr(nr, n)])
    rec(
        "severities",
        [str(getattr(nr.LogSeverity, n)) for n in ("Trace", "Debug", "Info", "Warn", "Error")],
    )


@scenario
def toplevel__annotated_request(nr: Any, rec: Any) -> None:
    ann = nr.AnnotatedLLMRequest(
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {
                "role": "assistant",
                "content": "x",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "user", "content": "second"},
        ],
        model="m1",
    )
    rec("fields", [ann.model, len(ann.messages), ann.params, ann.tools, ann.extra])
    rec("helpers", [ann.system_prompt(), ann.last_user_message(), ann.has_tool_calls()])
    ann.model = "m2"
    rec("set", ann.model)


@scenario
def toplevel__annotated_response(nr: Any, rec: Any) -> None:
    resp = nr.AnnotatedLLMResponse(message="hello", finish_reason="complete")
    rec("fields", [resp.id, resp.model, resp.finish_reason, resp.tool_calls, resp.usage])
    rec("helpers", [resp.response_text(), resp.has_tool_calls()])
    with_calls = nr.AnnotatedLLMResponse(tool_calls=[{"id": "c", "name": "t", "arguments": {}}])
    rec("calls", [with_calls.has_tool_calls(), with_calls.response_text()])


@scenario
def toplevel__severity_mark(nr: Any, rec: Any) -> None:
    rec.pin("metadata")
    with nr.scope.scope("s", nr.ScopeType.Agent):
        nr.scope.event("m", severity=nr.LogSeverity.Warn)
