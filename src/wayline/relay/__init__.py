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

from typing import Any

from wayline.relay import (
    atof,
    codecs,
    event_metadata,
    guardrails,
    intercepts,
    llm,
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
from wayline.relay.atof import (
    AtofExporter,
    AtofExporterConfig,
    AtofExporterMode,
    AtofFormatError,
)
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

# Relay's ContextVar-like handle on the current stack (its tests and some callers set it).
_scope_stack_var = ScopeStackVar()


def __getattr__(name: str) -> Any:
    # The ATIF exporter lives in its own subpackage, which itself builds on this package:
    # importing it lazily keeps `import wayline.relay` cheap and free of import cycles.
    if name == "AtifExporter":
        from wayline.relay.atif import AtifExporter

        return AtifExporter
    if name in (
        "observability",
        "adaptive",
        "plugin",
        "utils",
        "_native",
    ):  # config helpers, imported on first use
        import importlib

        return importlib.import_module(f"wayline.relay.{name}")
    if name == "AtofStreamExporter":  # what AtofExporter(sink_type="stream") builds
        from wayline.relay.atof_stream import AtofStreamExporter

        return AtofStreamExporter
    raise AttributeError(f"module 'wayline.relay' has no attribute {name!r}")
