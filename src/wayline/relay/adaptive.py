"""``nemo_relay.adaptive`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._adaptive.runtime`.
"""

from __future__ import annotations

from wayline.relay._adaptive.runtime import (
    ADAPTIVE_PLUGIN_KIND,
    AcgConfig,
    AcgStabilityThresholds,
    AdaptiveConfig,
    AdaptiveHintsConfig,
    AdaptiveRuntime,
    BackendSpec,
    ComponentSpec,
    ConfigDiagnostic,
    ConfigPolicy,
    ConfigReport,
    ResponseCacheConfig,
    ResponseCacheKeyStrategy,
    StateConfig,
    TelemetryConfig,
    ToolCacheConfig,
    ToolClass,
    ToolOverride,
    ToolParallelismConfig,
    UnsupportedBehavior,
    build_cache_telemetry_event,
    latency_sensitivity,
    set_latency_sensitivity,
    validate_config,
)

__all__ = [
    "ADAPTIVE_PLUGIN_KIND",
    "AcgConfig",
    "AcgStabilityThresholds",
    "AdaptiveConfig",
    "AdaptiveHintsConfig",
    "AdaptiveRuntime",
    "BackendSpec",
    "ComponentSpec",
    "ConfigDiagnostic",
    "ConfigPolicy",
    "ConfigReport",
    "ResponseCacheConfig",
    "ResponseCacheKeyStrategy",
    "StateConfig",
    "TelemetryConfig",
    "ToolCacheConfig",
    "ToolClass",
    "ToolOverride",
    "ToolParallelismConfig",
    "UnsupportedBehavior",
    "build_cache_telemetry_event",
    "latency_sensitivity",
    "set_latency_sensitivity",
    "validate_config",
]
