"""``nemo_relay.observability`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._components.observability_config`.
"""

from __future__ import annotations

from wayline.relay._components.observability_config import (
    OBSERVABILITY_PLUGIN_KIND,
    AtifConfig,
    AtofConfig,
    AtofEndpointConfig,
    AtofFileSinkConfig,
    AtofStreamSinkConfig,
    ComponentSpec,
    ConfigPolicy,
    HttpStorageConfig,
    ObservabilityConfig,
    OpenTelemetryEndpointConfig,
    OpenTelemetryLogSectionConfig,
    OpenTelemetryMetricSectionConfig,
    OpenTelemetrySectionConfig,
    OpenTelemetrySignalEndpointConfig,
    S3StorageConfig,
)

__all__ = [
    "OBSERVABILITY_PLUGIN_KIND",
    "AtifConfig",
    "AtofConfig",
    "AtofEndpointConfig",
    "AtofFileSinkConfig",
    "AtofStreamSinkConfig",
    "ComponentSpec",
    "ConfigPolicy",
    "HttpStorageConfig",
    "ObservabilityConfig",
    "OpenTelemetryEndpointConfig",
    "OpenTelemetryLogSectionConfig",
    "OpenTelemetryMetricSectionConfig",
    "OpenTelemetrySectionConfig",
    "OpenTelemetrySignalEndpointConfig",
    "S3StorageConfig",
]
