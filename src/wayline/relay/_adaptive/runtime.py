"""The nemo_relay ``adaptive`` module: config classes, ``AdaptiveRuntime`` and cache telemetry.

wayline ports the adaptive component's configuration surface and its deterministic helpers.
:class:`AdaptiveRuntime` validates its config, tracks its registration lifecycle as Relay's
does and answers ``build_cache_request_facts``; it installs no learning intercepts (wayline has
no adaptive cache governor), so its facts always report ``acg_stability_unavailable``.
"""

from __future__ import annotations

import contextvars
import uuid
from datetime import UTC, datetime
from typing import Any

from wayline.relay._adaptive.config import (
    ADAPTIVE_PLUGIN_KIND,
    AcgConfig,
    AcgStabilityThresholds,
    AdaptiveConfig,
    AdaptiveHintsConfig,
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
    validate_config,
)
from wayline.relay._components.configdoc import to_json_object
from wayline.relay._scopes.handles import ScopeHandle
from wayline.relay.typing_names import JsonObject, UnsupportedBehavior

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

_LATENCY: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "wayline_relay_latency_sensitivity", default=None
)


def set_latency_sensitivity(level: int) -> None:
    """Set the latency-sensitivity hint (a positive integer) for the current context."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"'{type(level).__name__}' object cannot be interpreted as an integer")
    if level < 0:
        raise OverflowError("out of range integral type conversion attempted")
    if level == 0:
        raise ValueError("sensitivity must be positive (> 0)")
    _LATENCY.set(level)


def latency_sensitivity() -> int | None:
    """The current context's latency-sensitivity hint (wayline addition; Relay has no getter)."""
    return _LATENCY.get()


class AdaptiveRuntime:
    """A hosted adaptive runtime: validated config plus a register/deregister/shutdown lifecycle.

    Construction raises ``RuntimeError`` when the config has an error diagnostic.
    ``bind_scope`` and ``build_cache_request_facts`` need a registered runtime; a runtime that
    was shut down cannot register again.
    """

    def __init__(self, config: AdaptiveConfig | JsonObject) -> None:
        """Validate ``config`` (a document or :class:`AdaptiveConfig`) and keep it."""
        self._config = to_json_object(config)
        self._report = validate_config(self._config)
        for diagnostic in self._report["diagnostics"]:
            if diagnostic["level"] == "error":
                raise RuntimeError(diagnostic["message"])
        self._registered = False
        self._shut_down = False
        self._bound: list[str] = []

    async def register(self) -> None:
        """Activate the runtime (registering twice is harmless)."""
        if self._shut_down:
            raise RuntimeError("adaptive runtime already shut down")
        self._registered = True

    def deregister(self) -> None:
        """Deactivate the runtime (harmless when not registered)."""
        self._registered = False
        self._bound.clear()

    async def shutdown(self) -> None:
        """Deregister and refuse further registration."""
        self.deregister()
        self._shut_down = True

    def wait_for_idle(self) -> None:
        """Return once pending telemetry is processed (wayline processes it synchronously)."""

    def report(self) -> ConfigReport:
        """The validation report of this runtime's config."""
        return {"diagnostics": list(self._report["diagnostics"])}

    def bind_scope(self, scope_handle: ScopeHandle) -> None:
        """Bind the runtime's request rewriting to ``scope_handle`` (a pass-through here)."""
        if not self._registered:
            raise RuntimeError(
                "adaptive runtime must be registered before binding ACG request intercepts"
            )
        self._bound.append(scope_handle.uuid)

    def build_cache_request_facts(
        self,
        *,
        provider: str,
        request_id: str,
        annotated_request: object,
        agent_id: str,
        timestamp: str | None = None,
    ) -> JsonObject | None:
        """Cache-diagnostics facts for a request (no learned prompt stability in wayline)."""
        if not self._registered:
            raise RuntimeError(
                "adaptive runtime must be registered before building cache request facts"
            )
        _check_uuid(request_id)
        return {
            "missing_facts": ["acg_stability_unavailable"],
            "provider": provider,
            "stable_prefix_length": 0,
        }


def _check_uuid(value: str) -> None:
    try:
        uuid.UUID(value)
    except ValueError as exc:
        raise ValueError(f"invalid request_id UUID: {value!r}") from exc


def _tokens(usage: JsonObject, key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def build_cache_telemetry_event(
    *,
    provider: str,
    request_id: str,
    usage: JsonObject | None = None,
    request_facts: JsonObject | None = None,
    agent_id: str,
    template_version: str,
    toolset_hash: str,
    model_family: str,
    tenant_scope: str,
    timestamp: str | None = None,
) -> JsonObject | None:
    """One cache-telemetry event from normalized usage and request facts (``None`` without usage).

    Anthropic prompt totals include cache reads and writes; OpenAI's already include cached
    tokens and have no cache writes. A request with no cache reads carries an ``unknown`` miss
    diagnosis listing the request facts' ``missing_facts``.
    """
    if provider not in ("anthropic", "openai"):
        raise ValueError(f"unsupported provider: {provider}")
    if usage is None:
        return None
    read = _tokens(usage, "cache_read_tokens")
    prompt = _tokens(usage, "prompt_tokens")
    written = _tokens(usage, "cache_write_tokens") if provider == "anthropic" else 0
    total = prompt + read + written if provider == "anthropic" else prompt
    event: JsonObject = {
        "agent_identity": {
            "agent_id": agent_id,
            "model_family": model_family,
            "template_version": template_version,
            "tenant_scope": tenant_scope,
            "toolset_hash": toolset_hash,
        },
        "cache_creation_tokens": written,
        "cache_read_tokens": read,
        "hit_rate": read / total if total else 0.0,
        "provider": provider,
        "request_id": request_id,
        "timestamp": timestamp or _now(),
        "total_prompt_tokens": total,
    }
    if read == 0:
        facts: dict[str, Any] = request_facts or {}
        missing = facts.get("missing_facts")
        event["miss_reason"] = {"reason": "unknown"}
        event["miss_diagnosis"] = {
            "evidence": {"kind": "unknown", "missing_facts": missing or []},
            "recommendation": (
                "Capture request facts earlier or keep the miss classified as unknown."
            ),
            "summary": "Cache miss could not be classified from the available request facts.",
        }
    return event


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
