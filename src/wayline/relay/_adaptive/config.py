"""The adaptive component's config dataclasses (the config half of nemo_relay ``adaptive``).

Plain dataclasses whose ``to_dict()`` gives the canonical config document, as Relay 0.10.4
writes it: ``None`` fields of a section are omitted, while the top-level
:class:`AdaptiveConfig` keeps every key. :func:`validate_config` reports the diagnostics
Relay's validator reports for the same document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, TypedDict

from wayline.relay._components.configdoc import ConfigPolicy, to_json, to_json_object
from wayline.relay.typing_names import JsonObject

__all__ = [
    "ADAPTIVE_PLUGIN_KIND",
    "AcgConfig",
    "AcgStabilityThresholds",
    "AdaptiveConfig",
    "AdaptiveHintsConfig",
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
    "validate_config",
]

ADAPTIVE_PLUGIN_KIND = "adaptive"


class _DiagnosticRequired(TypedDict):
    level: Literal["warning", "error"]
    code: str
    message: str


class ConfigDiagnostic(_DiagnosticRequired, total=False):
    """One adaptive validation diagnostic."""

    component: str
    field: str


class ConfigReport(TypedDict):
    """Validation report for adaptive configuration."""

    diagnostics: list[ConfigDiagnostic]


class ResponseCacheKeyStrategy(str, Enum):  # noqa: UP042  (Relay subclasses str and Enum)
    """Supported LLM response-cache key derivation strategies."""

    EXACT_REQUEST = "exact_request"
    LOGICAL = "logical"


@dataclass(slots=True)
class BackendSpec:
    """Adaptive state backend selection (``kind`` plus backend-specific ``config``)."""

    kind: str
    config: JsonObject = field(default_factory=dict)

    @staticmethod
    def in_memory() -> BackendSpec:
        """An in-memory backend."""
        return BackendSpec(kind="in_memory")

    @staticmethod
    def redis(url: str, key_prefix: str = "nemo_relay:") -> BackendSpec:
        """A Redis backend at ``url``."""
        return BackendSpec(kind="redis", config={"url": url, "key_prefix": key_prefix})

    def to_dict(self) -> JsonObject:
        """The backend as ``{"kind", "config"}``."""
        return {"kind": self.kind, "config": to_json_object(self.config)}


@dataclass(slots=True)
class StateConfig:
    """Where adaptive features keep learned state."""

    backend: BackendSpec

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return {"backend": to_json_object(self.backend)}


@dataclass(slots=True)
class TelemetryConfig:
    """Built-in adaptive telemetry subscriber settings."""

    subscriber_name: str | None = None
    learners: list[str] = field(default_factory=list)

    def to_dict(self) -> JsonObject:
        """The section as a JSON object (an unset subscriber name omitted)."""
        return to_json_object({"subscriber_name": self.subscriber_name, "learners": self.learners})


@dataclass(slots=True)
class AdaptiveHintsConfig:
    """Built-in adaptive hints injection settings."""

    priority: int = 100
    break_chain: bool = False
    inject_header: bool = True
    inject_body_path: str = "nvext.agent_hints"

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object(_slots(self))


@dataclass(slots=True)
class ToolParallelismConfig:
    """Built-in adaptive tool scheduling settings."""

    priority: int = 100
    mode: Literal["observe_only", "inject_hints", "schedule"] = "observe_only"

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object(_slots(self))


@dataclass(slots=True)
class AcgStabilityThresholds:
    """Prompt-stability classification thresholds for the Adaptive Cache Governor."""

    stable_threshold: float = 0.95
    semi_stable_threshold: float = 0.50
    min_observations_for_full_confidence: int = 20

    def to_dict(self) -> JsonObject:
        """The thresholds as a JSON object."""
        return to_json_object(_slots(self))


@dataclass(slots=True)
class AcgConfig:
    """Adaptive Cache Governor settings."""

    provider: Literal["anthropic", "openai", "passthrough"] = "passthrough"
    observation_window: int = 100
    priority: int = 50
    stability_thresholds: AcgStabilityThresholds | None = field(
        default_factory=AcgStabilityThresholds
    )

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object(_slots(self))


@dataclass(slots=True)
class ToolClass:
    """One tool caching class (also the shape of the ``default`` bucket)."""

    cacheable: bool = False
    ttl_seconds: int | None = None
    bypass_rate: float | None = None
    tool_version: str | None = None
    arg_skip: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)

    def to_dict(self) -> JsonObject:
        """The class as a JSON object (unset optionals omitted)."""
        return to_json_object(_slots(self))


@dataclass(slots=True)
class ToolOverride:
    """Per-tool refinement applied on top of the tool's resolved class."""

    cacheable: bool | None = None
    ttl_seconds: int | None = None
    bypass_rate: float | None = None
    tool_version: str | None = None
    arg_skip: list[str] | None = None

    def to_dict(self) -> JsonObject:
        """The override as a JSON object (unset fields omitted)."""
        return to_json_object(_slots(self))


@dataclass(slots=True)
class ToolCacheConfig:
    """Opt-in tool-result cache settings."""

    enabled: bool = False
    priority: int = 150
    cache_errors: bool = False
    default: ToolClass = field(default_factory=ToolClass)
    classes: dict[str, ToolClass] = field(default_factory=dict)
    overrides: dict[str, ToolOverride] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """The section as a JSON object."""
        return to_json_object(_slots(self))


@dataclass(slots=True)
class ResponseCacheConfig:
    """Opt-in LLM response and tool-result cache settings (``namespace`` is required)."""

    ttl_seconds: int = 3600
    namespace: str = ""
    priority: int = 150
    bypass_rate: float = 0.0
    cache_nondeterministic: bool = False
    key_strategy: ResponseCacheKeyStrategy = ResponseCacheKeyStrategy.EXACT_REQUEST
    header_allowlist: list[str] = field(default_factory=list)
    backend: BackendSpec = field(default_factory=BackendSpec.in_memory)
    tools: ToolCacheConfig | None = None

    def to_dict(self) -> JsonObject:
        """The section as a JSON object (the key strategy as its string value)."""
        doc = _slots(self)
        if isinstance(self.key_strategy, ResponseCacheKeyStrategy):
            doc["key_strategy"] = self.key_strategy.value
        return to_json_object(doc)


@dataclass(slots=True)
class AdaptiveConfig:
    """The adaptive component's config document (every top-level key is written)."""

    version: int = 1
    agent_id: str | None = None
    state: StateConfig | None = None
    telemetry: TelemetryConfig | None = None
    adaptive_hints: AdaptiveHintsConfig | None = None
    tool_parallelism: ToolParallelismConfig | None = None
    acg: AcgConfig | None = None
    policy: ConfigPolicy = field(default_factory=ConfigPolicy)
    response_cache: ResponseCacheConfig | None = None

    def to_dict(self) -> JsonObject:
        """The document as a JSON object, ``None`` sections kept as ``null``."""
        doc = _slots(self)
        doc["policy"] = doc.pop("policy")  # Relay writes the policy last
        return doc


@dataclass(slots=True)
class ComponentSpec:
    """The top-level adaptive component: ``{"kind": "adaptive", "enabled", "config"}``."""

    config: AdaptiveConfig | JsonObject
    enabled: bool = True

    def to_dict(self) -> JsonObject:
        """The component as a JSON object."""
        return {
            "kind": ADAPTIVE_PLUGIN_KIND,
            "enabled": self.enabled,
            "config": to_json_object(self.config),
        }


def _slots(value: object) -> dict[str, Any]:
    return {name: to_json(getattr(value, name)) for name in getattr(type(value), "__slots__", ())}


_MODES = ("observe_only", "inject_hints", "schedule")
_PROVIDERS = ("anthropic", "openai", "passthrough")
_BACKENDS = ("in_memory", "redis")


def _diag(level: str, code: str, message: str, **where: str) -> ConfigDiagnostic:
    out: dict[str, Any] = {"level": level, "code": code, **where, "message": message}
    return out  # type: ignore[return-value]


def _section(doc: JsonObject, name: str) -> dict[str, Any] | None:
    value = doc.get(name)
    return value if isinstance(value, dict) else None


def validate_config(config: AdaptiveConfig | JsonObject) -> ConfigReport:
    """Diagnostics for an adaptive config document, without building a runtime.

    Checks the schema version, sections that need a state backend, unsupported enumerated
    values (their level follows ``policy.unsupported_value``), backend kinds and the
    response cache's namespace, TTL and bypass rate.
    """
    doc = to_json_object(config)
    policy = _section(doc, "policy") or {}
    unsupported = "warning" if policy.get("unsupported_value") in ("warn", "ignore") else "error"
    out: list[ConfigDiagnostic] = []
    version = doc.get("version", 1)
    if version != 1:
        message = f"adaptive config version {version} is unsupported"
        out.append(_diag("error", "adaptive.unsupported_config_version", message, field="version"))
    state = _section(doc, "state")
    backend = _section(state, "backend") if state else None
    kind = backend.get("kind") if backend else None
    if isinstance(kind, str) and kind not in _BACKENDS:
        message = f"backend kind '{kind}' is unsupported"
        out.append(_diag("warning", "adaptive.unknown_backend", message, component=kind))
    for name in ("telemetry", "acg"):
        if _section(doc, name) is not None and state is None:
            message = f"{name} requires state backend and will be disabled"
            code = "adaptive.section_disabled_missing_state"
            out.append(_diag("warning", code, message, component=name))
    checks = (("tool_parallelism", "mode", _MODES), ("acg", "provider", _PROVIDERS))
    for section_name, key, allowed in checks:
        section = _section(doc, section_name)
        value = section.get(key) if section else None
        if value is not None and value not in allowed:
            expected = f"{', '.join(allowed[:-1])}, or {allowed[-1]}"
            message = f"{section_name} {key} '{value}' is unsupported; expected {expected}"
            code = "adaptive.unsupported_value"
            out.append(_diag(unsupported, code, message, component=section_name, field=key))
    out.extend(_response_cache(_section(doc, "response_cache")))
    return {"diagnostics": out}


def _response_cache(section: dict[str, Any] | None) -> list[ConfigDiagnostic]:
    if section is None:
        return []
    out: list[ConfigDiagnostic] = []
    where = {"component": "response_cache"}
    if not str(section.get("namespace") or "").strip():
        message = (
            "namespace must identify one trusted cache-sharing domain; do not enable one "
            "response cache across mutually untrusted tenants or upstreams"
        )
        out.append(
            _diag("error", "response_cache.missing_namespace", message, **where, field="namespace")
        )
    ttl = section.get("ttl_seconds", 3600)
    if isinstance(ttl, int) and ttl <= 0:
        message = "ttl_seconds must be greater than 0"
        code = "response_cache.invalid_ttl"
        out.append(_diag("error", code, message, **where, field="ttl_seconds"))
    rate = section.get("bypass_rate", 0.0)
    if isinstance(rate, (int, float)) and not 0.0 <= rate <= 1.0:
        message = "bypass_rate must be in [0.0, 1.0]"
        code = "response_cache.invalid_bypass_rate"
        out.append(_diag("error", code, message, **where, field="bypass_rate"))
    return out
