"""wayline.relay: a pure-Python event runtime with the nemo_relay (0.10.4) Python names.

Code written for ``nemo_relay`` ports by changing its import::

    from wayline import relay as nemo_relay

    with nemo_relay.scope.scope("agent", nemo_relay.ScopeType.Agent):
        nemo_relay.scope.event("checkpoint", data={"step": 1})

Intercepts (:mod:`~wayline.relay.intercepts`), conditional-execution guardrails
(:mod:`~wayline.relay.guardrails`) and provider codecs (:mod:`~wayline.relay.codecs`) shape
managed ``llm.execute``/``tools.execute`` calls as in Relay 0.10.4.

Events are ATOF 0.1 (see :mod:`wayline.relay.events`); :class:`AtofExporter` writes them
byte-for-byte as Relay does. Subscribers are observers called synchronously on the emitting
thread (see :mod:`wayline.relay.subscribers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wayline.relay import (
        adaptive,
        atof,
        codecs,
        event_metadata,
        guardrails,
        intercepts,
        llm,
        observability,
        runtime_registrations,
        scope,
        scope_local,
        subscribers,
        tools,
    )
    from wayline.relay._codecs.openai_chat import AnnotatedLLMRequest, AnnotatedLLMResponse
    from wayline.relay._intercepts.outcomes import (
        LLMExecutionContext,
        LLMRequestInterceptOutcome,
        PendingMarkSpec,
        ToolExecutionContext,
        ToolExecutionInterceptOutcome,
    )
    from wayline.relay._intercepts.outcomes import LLMExecutionContext as LlmExecutionContext
    from wayline.relay._intercepts.sanitize import (
        LlmCodecIdentity,
        LlmSanitizeRequestContext,
        LlmSanitizeResponseContext,
    )
    from wayline.relay._not_ported import (
        OpenTelemetryConfig,
        OpenTelemetryFileSinkConfig,
        OpenTelemetryLogConfig,
        OpenTelemetryLogSubscriber,
        OpenTelemetryMetricConfig,
        OpenTelemetryMetricSubscriber,
        OpenTelemetryRuntimeDiagnostic,
        OpenTelemetryRuntimeDiagnostics,
        OpenTelemetrySubscriber,
    )
    from wayline.relay._scopes.bindings import ScopeStackVar
    from wayline.relay._scopes.datatypes import (
        Json,
        LLMAttributes,
        LLMRequest,
        ScopeAttributes,
        ScopeType,
        ToolAttributes,
        ToolExecutionResult,
    )
    from wayline.relay._scopes.handles import LLMHandle, ScopeHandle, ToolHandle
    from wayline.relay._scopes.metrics import (
        MetricKind,
        MetricMeasurement,
        MetricTemporality,
        MetricValueType,
    )
    from wayline.relay._scopes.propagation import (
        PropagationContext,
        ScopeStack,
        capture_propagation_context,
        capture_propagation_context_with_root,
        capture_rootless_propagation_context,
        capture_traceparent,
        create_scope_stack,
        create_scope_stack_from_propagation,
        fork_asyncio_context,
        get_scope_stack,
        propagate_scope_to_thread,
        scope_stack_active,
        set_thread_scope_stack,
        use_scope_stack,
    )
    from wayline.relay.atif import AtifExporter
    from wayline.relay.atof import (
        AtofExporter,
        AtofExporterConfig,
        AtofExporterMode,
        AtofFormatError,
    )
    from wayline.relay.atof_stream import AtofStreamExporter
    from wayline.relay.events import ATOF_VERSION, Event, MarkEvent, ScopeEvent
    from wayline.relay.typing_names import (
        DataSchema,
        EventMetadata,
        EventMetadataInjectorCallback,
        EventMetadataScalar,
        EventMetadataValue,
        EventSanitizeFields,
        EventSanitizeGuardrail,
        JsonObject,
        JsonPrimitive,
        JsonValue,
        LlmConditionalExecutionGuardrail,
        LlmExecutionIntercept,
        LlmRequestIntercept,
        LlmSanitizeRequestGuardrail,
        LlmSanitizeResponseGuardrail,
        LlmStreamExecutionIntercept,
        LogSeverity,
        ToolConditionalExecutionGuardrail,
        ToolExecutionIntercept,
        ToolRequestIntercept,
        ToolSanitizeGuardrail,
        UnsupportedBehavior,
    )

    _scope_stack_var: ScopeStackVar

__all__ = [
    "ATOF_VERSION",
    "AnnotatedLLMRequest",
    "AnnotatedLLMResponse",
    "AtifExporter",
    "AtofExporter",
    "AtofExporterConfig",
    "AtofExporterMode",
    "AtofFormatError",
    "AtofStreamExporter",
    "DataSchema",
    "Event",
    "EventMetadata",
    "EventMetadataInjectorCallback",
    "EventMetadataScalar",
    "EventMetadataValue",
    "EventSanitizeFields",
    "EventSanitizeGuardrail",
    "Json",
    "JsonObject",
    "JsonPrimitive",
    "JsonValue",
    "LLMAttributes",
    "LLMExecutionContext",
    "LLMHandle",
    "LLMRequest",
    "LLMRequestInterceptOutcome",
    "LlmCodecIdentity",
    "LlmConditionalExecutionGuardrail",
    "LlmExecutionContext",
    "LlmExecutionIntercept",
    "LlmRequestIntercept",
    "LlmSanitizeRequestContext",
    "LlmSanitizeRequestGuardrail",
    "LlmSanitizeResponseContext",
    "LlmSanitizeResponseGuardrail",
    "LlmStreamExecutionIntercept",
    "LogSeverity",
    "MarkEvent",
    "MetricKind",
    "MetricMeasurement",
    "MetricTemporality",
    "MetricValueType",
    "OpenTelemetryConfig",
    "OpenTelemetryFileSinkConfig",
    "OpenTelemetryLogConfig",
    "OpenTelemetryLogSubscriber",
    "OpenTelemetryMetricConfig",
    "OpenTelemetryMetricSubscriber",
    "OpenTelemetryRuntimeDiagnostic",
    "OpenTelemetryRuntimeDiagnostics",
    "OpenTelemetrySubscriber",
    "PendingMarkSpec",
    "PropagationContext",
    "ScopeAttributes",
    "ScopeEvent",
    "ScopeHandle",
    "ScopeStack",
    "ScopeType",
    "ToolAttributes",
    "ToolConditionalExecutionGuardrail",
    "ToolExecutionContext",
    "ToolExecutionIntercept",
    "ToolExecutionInterceptOutcome",
    "ToolExecutionResult",
    "ToolHandle",
    "ToolRequestIntercept",
    "ToolSanitizeGuardrail",
    "UnsupportedBehavior",
    "adaptive",
    "atof",
    "capture_propagation_context",
    "capture_propagation_context_with_root",
    "capture_rootless_propagation_context",
    "capture_traceparent",
    "codecs",
    "create_scope_stack",
    "create_scope_stack_from_propagation",
    "event_metadata",
    "fork_asyncio_context",
    "get_scope_stack",
    "guardrails",
    "intercepts",
    "llm",
    "observability",
    "propagate_scope_to_thread",
    "runtime_registrations",
    "scope",
    "scope_local",
    "scope_stack_active",
    "set_thread_scope_stack",
    "subscribers",
    "tools",
    "use_scope_stack",
]

# Every name loads on first use: ``import wayline.relay`` (which any ``wayline.relay.*`` import
# runs first) costs nothing, and a user of a few names (the relay exporter plugin: scopes, the
# llm and tools calls, ATOF) imports only the modules behind them. Name -> its module.
_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
            "AnnotatedLLMRequest",
            "AnnotatedLLMResponse",
        ),
        "wayline.relay._codecs.openai_chat",
    ),
    **dict.fromkeys(
        (
            "LLMExecutionContext",
            "LLMRequestInterceptOutcome",
            "LlmExecutionContext",
            "PendingMarkSpec",
            "ToolExecutionContext",
            "ToolExecutionInterceptOutcome",
        ),
        "wayline.relay._intercepts.outcomes",
    ),
    **dict.fromkeys(
        (
            "LlmCodecIdentity",
            "LlmSanitizeRequestContext",
            "LlmSanitizeResponseContext",
        ),
        "wayline.relay._intercepts.sanitize",
    ),
    **dict.fromkeys(
        (
            "OpenTelemetryConfig",
            "OpenTelemetryFileSinkConfig",
            "OpenTelemetryLogConfig",
            "OpenTelemetryLogSubscriber",
            "OpenTelemetryMetricConfig",
            "OpenTelemetryMetricSubscriber",
            "OpenTelemetryRuntimeDiagnostic",
            "OpenTelemetryRuntimeDiagnostics",
            "OpenTelemetrySubscriber",
        ),
        "wayline.relay._not_ported",
    ),
    "ScopeStackVar": "wayline.relay._scopes.bindings",
    **dict.fromkeys(
        (
            "Json",
            "LLMAttributes",
            "LLMRequest",
            "ScopeAttributes",
            "ScopeType",
            "ToolAttributes",
            "ToolExecutionResult",
        ),
        "wayline.relay._scopes.datatypes",
    ),
    **dict.fromkeys(
        (
            "LLMHandle",
            "ScopeHandle",
            "ToolHandle",
        ),
        "wayline.relay._scopes.handles",
    ),
    **dict.fromkeys(
        (
            "MetricKind",
            "MetricMeasurement",
            "MetricTemporality",
            "MetricValueType",
        ),
        "wayline.relay._scopes.metrics",
    ),
    **dict.fromkeys(
        (
            "PropagationContext",
            "ScopeStack",
            "capture_propagation_context",
            "capture_propagation_context_with_root",
            "capture_rootless_propagation_context",
            "capture_traceparent",
            "create_scope_stack",
            "create_scope_stack_from_propagation",
            "fork_asyncio_context",
            "get_scope_stack",
            "propagate_scope_to_thread",
            "scope_stack_active",
            "set_thread_scope_stack",
            "use_scope_stack",
        ),
        "wayline.relay._scopes.propagation",
    ),
    **dict.fromkeys(
        (
            "AtofExporter",
            "AtofExporterConfig",
            "AtofExporterMode",
            "AtofFormatError",
        ),
        "wayline.relay.atof",
    ),
    **dict.fromkeys(
        (
            "ATOF_VERSION",
            "Event",
            "MarkEvent",
            "ScopeEvent",
        ),
        "wayline.relay.events",
    ),
    **dict.fromkeys(
        (
            "DataSchema",
            "EventMetadata",
            "EventMetadataInjectorCallback",
            "EventMetadataScalar",
            "EventMetadataValue",
            "EventSanitizeFields",
            "EventSanitizeGuardrail",
            "JsonObject",
            "JsonPrimitive",
            "JsonValue",
            "LlmConditionalExecutionGuardrail",
            "LlmExecutionIntercept",
            "LlmRequestIntercept",
            "LlmSanitizeRequestGuardrail",
            "LlmSanitizeResponseGuardrail",
            "LlmStreamExecutionIntercept",
            "LogSeverity",
            "ToolConditionalExecutionGuardrail",
            "ToolExecutionIntercept",
            "ToolRequestIntercept",
            "ToolSanitizeGuardrail",
            "UnsupportedBehavior",
        ),
        "wayline.relay.typing_names",
    ),
    "AtifExporter": "wayline.relay.atif",
    "AtofStreamExporter": "wayline.relay.atof_stream",
}
# Names Relay spells two ways: this one -> the module's own.
_ALIASES = {"LlmExecutionContext": "LLMExecutionContext"}

# Submodules ``from wayline import relay`` users reach as attributes (``relay.scope``).
_SUBMODULES = frozenset(
    {
        "atof",
        "codecs",
        "event_metadata",
        "guardrails",
        "intercepts",
        "llm",
        "runtime_registrations",
        "scope",
        "scope_local",
        "subscribers",
        "tools",
        "observability",
        "adaptive",
        "plugin",
        "utils",
        "_native",
    }
)


def __getattr__(name: str) -> Any:
    """Load a public name or submodule (``scope``, ``ScopeType``, ``AtofExporter``…) on first
    access, and keep it as a module attribute."""
    import importlib

    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), _ALIASES.get(name, name))
    elif name in _SUBMODULES:
        value = importlib.import_module(f"wayline.relay.{name}")
    elif name == "_scope_stack_var":
        # Relay's ContextVar-like handle on the current stack (its tests and some callers set
        # it); stateless, so two threads racing here build equal handles.
        from wayline.relay._scopes.bindings import ScopeStackVar

        value = ScopeStackVar()
    else:
        raise AttributeError(f"module 'wayline.relay' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Module attributes, the lazily loaded ones included."""
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
