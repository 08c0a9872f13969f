"""Observability component config classes (the nemo_relay ``observability`` module).

Plain dataclasses whose ``to_dict()`` gives the canonical plugin config document (``None``
fields omitted). They describe configuration only; wayline's plugin loader reads the same
shapes from ``plugins.toml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from wayline.relay._components.configdoc import ConfigPolicy, to_json, to_json_object
from wayline.relay.typing_names import JsonObject

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

OBSERVABILITY_PLUGIN_KIND = "observability"
Transport = Literal["http_binary", "grpc"]


def _headers(
    headers: dict[str, str], header_env: dict[str, str], header_file: dict[str, str]
) -> dict[str, Any]:
    return {"headers": headers, "header_env": header_env, "header_file": header_file or None}


@dataclass(slots=True)
class AtofStreamSinkConfig:
    """An ATOF stream sink (HTTP POST, WebSocket or NDJSON)."""

    url: str
    transport: Literal["http_post", "websocket", "ndjson"] = "http_post"
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    timeout_millis: int = 3000
    field_name_policy: Literal["preserve", "replace_dots"] = "preserve"
    name: str | None = None
    header_file: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """The sink as ``{"type": "stream", ...}``."""
        doc: dict[str, Any] = {"type": "stream", "name": self.name, "url": self.url}
        doc["transport"] = self.transport
        doc.update(_headers(self.headers, self.header_env, self.header_file))
        doc.update(timeout_millis=self.timeout_millis, field_name_policy=self.field_name_policy)
        return to_json_object(doc)


AtofEndpointConfig = AtofStreamSinkConfig


@dataclass(slots=True)
class AtofFileSinkConfig:
    """An ATOF JSONL file sink."""

    output_directory: str | None = None
    filename: str | None = None
    mode: Literal["append", "overwrite"] = "append"

    def to_dict(self) -> JsonObject:
        """The sink as ``{"type": "file", ...}``."""
        return to_json_object(
            {
                "type": "file",
                "output_directory": self.output_directory,
                "filename": self.filename,
                "mode": self.mode,
            }
        )


@dataclass(slots=True)
class AtofConfig:
    """Raw ATOF export over any number of sinks."""

    enabled: bool = False
    sinks: list[AtofFileSinkConfig | AtofStreamSinkConfig] | None = None

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object({"enabled": self.enabled, "sinks": self.sinks})


@dataclass(slots=True)
class S3StorageConfig:
    """S3-compatible upload of ATIF trajectories (secrets named by env var)."""

    bucket: str = ""
    key_prefix: str | None = None
    access_key_id: str | None = None
    secret_access_key_var: str | None = None
    session_token_var: str | None = None
    region: str | None = None
    endpoint_url: str | None = None
    allow_http: bool | None = None

    def to_dict(self) -> JsonObject:
        """The storage as ``{"type": "s3", ...}``."""
        return to_json_object({"type": "s3", **to_json_object(_fields(self))})


@dataclass(slots=True)
class HttpStorageConfig:
    """HTTP upload of ATIF trajectories."""

    endpoint: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    timeout_millis: int = 3000
    header_file: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """The storage as ``{"type": "http", ...}``."""
        doc: dict[str, Any] = {"type": "http", "endpoint": self.endpoint}
        doc.update(_headers(self.headers, self.header_env, self.header_file))
        doc["timeout_millis"] = self.timeout_millis
        return to_json_object(doc)


@dataclass(slots=True)
class AtifConfig:
    """Per-top-level-agent ATIF trajectory export."""

    enabled: bool = False
    agent_name: str = "NeMo Relay"
    agent_version: str | None = None
    model_name: str = "unknown"
    tool_definitions: list[JsonObject] | None = None
    extra: JsonObject | None = None
    output_directory: str | None = None
    filename_template: str = "nemo-relay-atif-{session_id}.json"
    storage: list[S3StorageConfig | HttpStorageConfig] | None = None

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object(_fields(self))


@dataclass(slots=True)
class OpenTelemetryEndpointConfig:
    """One OTLP trace destination."""

    type: Literal["full", "gen_ai", "openinference"]
    endpoint: str
    mark_projection: Literal["inherit", "event", "tool"] = "inherit"
    mark_exclude_names: list[str] = field(default_factory=lambda: ["llm.chunk"])
    attribute_mappings: list[dict[str, str]] = field(default_factory=list)
    transport: Transport = "http_binary"
    service_name: str = "unknown_service"
    service_namespace: str | None = None
    service_version: str | None = None
    instrumentation_scope: str = "opentelemetry"
    timeout_millis: int = 3000
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    resource_attributes: dict[str, str] = field(default_factory=dict)
    max_queue_size: int | None = None
    max_export_batch_size: int | None = None
    scheduled_delay_millis: int | None = None
    completed_span_context_ttl_millis: int | None = None
    promote_metadata_prefixes: list[str] = field(default_factory=list)
    promote_resource_metadata_prefixes: list[str] = field(default_factory=list)
    header_file: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """The endpoint as a JSON object (an empty ``header_file`` is omitted)."""
        doc = _fields(self)
        doc["header_file"] = self.header_file or None
        return to_json_object(doc)


@dataclass(slots=True)
class OpenTelemetrySignalEndpointConfig:
    """One OTLP destination for logs or metrics."""

    endpoint: str
    transport: Transport = "http_binary"
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    resource_attributes: dict[str, str] = field(default_factory=dict)
    service_name: str = "unknown_service"
    service_namespace: str | None = None
    service_version: str | None = None
    instrumentation_scope: str = "opentelemetry"
    timeout_millis: int = 3000
    header_file: dict[str, str] = field(default_factory=dict)
    promote_resource_metadata_prefixes: list[str] = field(default_factory=list)

    def to_dict(self) -> JsonObject:
        """The endpoint as a JSON object (empty ``header_file``/prefixes omitted)."""
        doc = _fields(self)
        doc["header_file"] = self.header_file or None
        doc["promote_resource_metadata_prefixes"] = self.promote_resource_metadata_prefixes or None
        return to_json_object(doc)


@dataclass(slots=True)
class OpenTelemetryLogSectionConfig:
    """OTLP logs from non-metric marks."""

    enabled: bool = False
    endpoints: list[OpenTelemetrySignalEndpointConfig] | None = None
    minimum_severity: Literal["trace", "debug", "info", "warn", "warning", "error"] = "info"
    max_queue_size: int = 2048
    max_export_batch_size: int = 512
    scheduled_delay_millis: int = 1000
    completed_span_context_ttl_millis: int = 60000

    def to_dict(self) -> JsonObject:
        """The section as a JSON object (the span-context TTL is not serialized)."""
        doc = _fields(self)
        doc.pop("completed_span_context_ttl_millis")
        return to_json_object(doc)


@dataclass(slots=True)
class OpenTelemetryMetricSectionConfig:
    """OTLP metrics from metric marks."""

    enabled: bool = False
    endpoints: list[OpenTelemetrySignalEndpointConfig] | None = None
    export_interval_millis: int = 60_000
    temporality: Literal["cumulative", "delta", "low_memory"] = "cumulative"
    max_instruments: int = 256
    cardinality_limit: int = 2000

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object(_fields(self))


@dataclass(slots=True)
class OpenTelemetrySectionConfig:
    """OpenTelemetry export over any number of endpoints, plus logs and metrics."""

    enabled: bool = False
    endpoints: list[OpenTelemetryEndpointConfig] = field(default_factory=list)
    logs: OpenTelemetryLogSectionConfig | None = None
    metrics: OpenTelemetryMetricSectionConfig | None = None

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object(_fields(self))


@dataclass(slots=True)
class ObservabilityConfig:
    """The observability component's config document (schema version 4)."""

    version: int = 4
    atof: AtofConfig | None = None
    atif: AtifConfig | None = None
    opentelemetry: OpenTelemetrySectionConfig | None = None
    policy: ConfigPolicy = field(default_factory=ConfigPolicy)
    enable_full_payloads: bool = False

    def to_dict(self) -> JsonObject:
        """The document as a JSON object."""
        return to_json_object(_fields(self))


@dataclass(slots=True)
class ComponentSpec:
    """The top-level observability component: ``{"kind", "enabled", "config"}``."""

    config: ObservabilityConfig | JsonObject
    enabled: bool = True

    def to_dict(self) -> JsonObject:
        """The component as a JSON object."""
        return {
            "kind": OBSERVABILITY_PLUGIN_KIND,
            "enabled": self.enabled,
            "config": to_json_object(self.config),
        }


def _fields(value: object) -> dict[str, Any]:
    names = getattr(type(value), "__slots__", ())
    return {name: to_json(getattr(value, name)) for name in names}
