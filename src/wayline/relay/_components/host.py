"""The component plugin host: Relay 0.10.4's ``nemo_relay.plugin`` API without native plugins.

A :class:`PluginConfig` lists components (``{"kind", "enabled", "config"}``). Built-in kinds
are ``observability`` (its ATOF/ATIF file and stream sinks start through the plugins.toml
loader) and ``adaptive`` (validated; the runtime itself is :mod:`wayline.relay.adaptive`).
Python plugins registered with :func:`register` get ``validate(config)`` and then
``register(config, context)``; everything they register through the
:class:`PluginContext` is removed again by :func:`clear`. Native dynamic plugins (shared
libraries and worker processes) are not ported.

``validate``/``register`` of a plugin are CONTROL callbacks run on the caller's thread; an
exception from ``register`` rolls back what that activation registered and propagates.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, Literal, Protocol, TypedDict

from wayline.relay._components.configdoc import ConfigPolicy
from wayline.relay._components.plugins_toml import Activation, activate_exporters
from wayline.relay._intercepts import chains as _intercepts
from wayline.relay._intercepts import guardrails as _guardrails
from wayline.relay._intercepts import runtime_registrations as _runtime
from wayline.relay._scopes import subscribers as _subscribers
from wayline.relay._scopes.event_metadata import deregister_injector, register_injector
from wayline.relay.typing_names import JsonObject

__all__ = [
    "ComponentSpec",
    "ConfigDiagnostic",
    "ConfigPolicy",
    "ConfigReport",
    "Plugin",
    "PluginConfig",
    "PluginContext",
    "PluginHostReport",
    "clear",
    "clear_async",
    "deregister",
    "initialize",
    "list_kinds",
    "register",
    "report",
    "validate",
]

BUILTIN_KINDS = ("adaptive", "observability")


class _DiagnosticRequired(TypedDict):
    level: Literal["warning", "error"]
    code: str
    message: str


class ConfigDiagnostic(_DiagnosticRequired, total=False):
    """One validation finding (``component``/``field`` say where)."""

    component: str
    field: str


class ConfigReport(TypedDict):
    """Validation findings of a plugin configuration."""

    diagnostics: list[ConfigDiagnostic]
    runtime_diagnostics: list[Any]


def _normalize(value: object) -> Any:
    """JSON form of a config value: ``to_dict()``, dataclasses and containers recursively."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _normalize(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_normalize(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _normalize(v) for k, v in value.items()}
    return value


@dataclasses.dataclass
class ComponentSpec:
    """One component of a plugin configuration: ``{"kind", "enabled", "config"}``."""

    kind: str
    enabled: bool = True
    config: Any = dataclasses.field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """The component as a JSON object (dataclass configs normalized)."""
        return {"kind": self.kind, "enabled": self.enabled, "config": _normalize(self.config)}


@dataclasses.dataclass
class PluginConfig:
    """A whole plugin configuration document (``version = 1``)."""

    version: int = 1
    components: list[object] = dataclasses.field(default_factory=list)
    policy: ConfigPolicy = dataclasses.field(default_factory=ConfigPolicy)

    def to_dict(self) -> JsonObject:
        """The document as a JSON object."""
        return {
            "version": self.version,
            "components": [_normalize(c) for c in self.components],
            "policy": self.policy.to_dict(),
        }


class Plugin(Protocol):
    """A Python plugin: ``validate(config)`` findings, then ``register(config, context)``."""

    def validate(self, plugin_config: JsonObject) -> list[ConfigDiagnostic] | None:
        """Findings for this component's config (``None``: none)."""
        ...

    def register(self, plugin_config: JsonObject, context: PluginContext) -> None:
        """Register the plugin's callbacks through ``context``."""
        ...


class PluginContext:
    """What a plugin registers through; :func:`clear` removes all of it again."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._undo: list[Callable[[], object]] = []

    def _name(self, name: str) -> str:
        return f"{self.kind}/{name}"

    def _add(
        self, register: Callable[..., None], remove: Callable[[str], object], *args: Any
    ) -> None:
        name = self._name(args[0])
        register(name, *args[1:])
        self._undo.append(lambda: remove(name))

    def register_subscriber(self, name: str, callback: Callable[..., None]) -> None:
        """A subscriber (observer) owned by this plugin."""
        self._add(_subscribers.register, _subscribers.deregister, name, callback)

    def register_conditional_middleware_guardrail(
        self, name: str, kinds: set[Any], target: str, callback: Callable[..., Any]
    ) -> None:
        """A gate that disables ``target`` while ``callback`` returns a reason."""
        self._add(
            _runtime.register_conditional_middleware_guardrail,
            _runtime.deregister_conditional_middleware_guardrail,
            name,
            kinds,
            target,
            callback,
        )

    def register_event_metadata_injector(
        self, name: str, priority: int, callback: Callable[..., Any]
    ) -> None:
        """An event metadata injector owned by this plugin."""
        self._add(register_injector, deregister_injector, name, priority, callback)

    def _guardrail(self, what: str, name: str, priority: int, callback: Any) -> None:
        register = getattr(_guardrails, f"register_{what}")
        remove = getattr(_guardrails, f"deregister_{what}")
        self._add(register, remove, name, priority, callback)

    def register_mark_sanitize_guardrail(self, name: str, priority: int, callback: Any) -> None:
        """A mark sanitizer owned by this plugin."""
        self._guardrail("mark_sanitize", name, priority, callback)

    def register_scope_sanitize_start_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """A scope-start sanitizer owned by this plugin."""
        self._guardrail("scope_sanitize_start", name, priority, callback)

    def register_scope_sanitize_end_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """A scope-end sanitizer owned by this plugin."""
        self._guardrail("scope_sanitize_end", name, priority, callback)

    def register_tool_sanitize_request_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """A tool sanitize-request guardrail owned by this plugin."""
        self._guardrail("tool_sanitize_request", name, priority, callback)

    def register_tool_sanitize_response_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """A tool sanitize-response guardrail owned by this plugin."""
        self._guardrail("tool_sanitize_response", name, priority, callback)

    def register_tool_conditional_execution_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """A tool conditional-execution guardrail owned by this plugin."""
        self._guardrail("tool_conditional_execution", name, priority, callback)

    def register_llm_sanitize_request_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """An LLM sanitize-request guardrail owned by this plugin."""
        self._guardrail("llm_sanitize_request", name, priority, callback)

    def register_llm_sanitize_response_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """An LLM sanitize-response guardrail owned by this plugin."""
        self._guardrail("llm_sanitize_response", name, priority, callback)

    def register_llm_conditional_execution_guardrail(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """An LLM conditional-execution guardrail owned by this plugin."""
        self._guardrail("llm_conditional_execution", name, priority, callback)

    def _intercept(self, what: str, name: str, priority: int, *rest: Any) -> None:
        register = getattr(_intercepts, f"register_{what}")
        remove = getattr(_intercepts, f"deregister_{what}")
        self._add(register, remove, name, priority, *rest)

    def register_llm_request_intercept(
        self, name: str, priority: int, break_chain: bool, callback: Any
    ) -> None:
        """An LLM request intercept owned by this plugin."""
        self._intercept("llm_request", name, priority, break_chain, callback)

    def register_llm_execution_intercept(self, name: str, priority: int, callback: Any) -> None:
        """An LLM execution intercept owned by this plugin."""
        self._intercept("llm_execution", name, priority, callback)

    def register_llm_stream_execution_intercept(
        self, name: str, priority: int, callback: Any
    ) -> None:
        """An LLM stream execution intercept owned by this plugin."""
        self._intercept("llm_stream_execution", name, priority, callback)

    def register_tool_request_intercept(
        self, name: str, priority: int, break_chain: bool, callback: Any
    ) -> None:
        """A tool request intercept owned by this plugin."""
        self._intercept("tool_request", name, priority, break_chain, callback)

    def register_tool_execution_intercept(self, name: str, priority: int, callback: Any) -> None:
        """A tool execution intercept owned by this plugin."""
        self._intercept("tool_execution", name, priority, callback)

    def undo(self) -> None:
        """Remove everything registered through this context (latest first)."""
        while self._undo:
            self._undo.pop()()


class _Host:
    """The registered Python plugins and the active configuration (one per process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.plugins: dict[str, Plugin] = {}
        self.contexts: list[PluginContext] = []
        self.exporters: list[Activation] = []
        self.report: PluginHostReport | None = None


_HOST = _Host()


def register(plugin_kind: str, plugin: Plugin) -> None:
    """Make ``plugin`` the handler of components of kind ``plugin_kind``."""
    if not isinstance(plugin_kind, str) or not plugin_kind.strip():
        raise ValueError("plugin kind must be a non-empty string")
    if plugin_kind in BUILTIN_KINDS:
        raise RuntimeError(f"plugin kind {plugin_kind!r} is built in")
    with _HOST.lock:
        if plugin_kind in _HOST.plugins:
            raise RuntimeError(f"plugin kind {plugin_kind!r} is already registered")
        _HOST.plugins[plugin_kind] = plugin


def deregister(plugin_kind: str) -> bool:
    """Forget the plugin of ``plugin_kind``; ``True`` if there was one."""
    with _HOST.lock:
        return _HOST.plugins.pop(plugin_kind, None) is not None


def list_kinds() -> list[str]:
    """The component kinds this process can activate (built-in and registered)."""
    with _HOST.lock:
        return sorted({*BUILTIN_KINDS, *_HOST.plugins})


def _document(config: PluginConfig | JsonObject) -> JsonObject:
    doc = config.to_dict() if isinstance(config, PluginConfig) else _normalize(config)
    if not isinstance(doc, dict):
        raise TypeError(f"plugin config must be a PluginConfig or a mapping, not {type(config)}")
    return doc


def _components(doc: JsonObject) -> list[dict[str, Any]]:
    components = doc.get("components") or []
    if not isinstance(components, list):
        raise ValueError("plugin config 'components' must be a list")
    return [c if isinstance(c, dict) else _normalize(c) for c in components]


class PluginHostReport(TypedDict):
    """What :func:`validate`/:func:`initialize` report (no native plugins: lists stay empty)."""

    config: ConfigReport
    dynamic_plugins: list[Any]
    config_paths: list[str]
    resolved_config: JsonObject


def validate(config: PluginConfig | JsonObject) -> PluginHostReport:
    """Validation findings for ``config`` without activating anything."""
    doc = _document(config)
    return _host_report(_config_report(doc), doc)


def _host_report(found: ConfigReport, doc: JsonObject) -> PluginHostReport:
    return {"config": found, "dynamic_plugins": [], "config_paths": [], "resolved_config": doc}


def _config_report(config: PluginConfig | JsonObject) -> ConfigReport:
    from wayline.relay._adaptive.config import validate_config as validate_adaptive

    doc = _document(config)
    out: list[ConfigDiagnostic] = []
    if doc.get("version", 1) != 1:
        out.append(_diag("error", "plugin.unsupported_version", "plugin config version must be 1"))
    for component in _components(doc):
        kind, body = component.get("kind"), component.get("config") or {}
        if not component.get("enabled", True):
            continue
        if kind == "adaptive":
            out.extend(validate_adaptive(body)["diagnostics"])
        elif kind in _HOST.plugins:
            out.extend(_HOST.plugins[str(kind)].validate(body) or [])
        elif kind != "observability":
            message = f"unknown component kind {kind!r}"
            out.append(_diag("warning", "plugin.unknown_component", message, str(kind)))
    return {"diagnostics": out, "runtime_diagnostics": []}


def _diag(level: str, code: str, message: str, component: str | None = None) -> ConfigDiagnostic:
    found: dict[str, Any] = {"level": level, "code": code, "message": message}
    if component is not None:
        found["component"] = component
    return found  # type: ignore[return-value]


def _activate(doc: JsonObject) -> PluginHostReport:
    found = _config_report(doc)
    errors = [d for d in found["diagnostics"] if d.get("level") == "error"]
    if errors:
        raise ValueError(f"invalid plugin config: {errors[0]['message']}")
    for component in _components(doc):
        if not component.get("enabled", True):
            continue
        kind, body = str(component.get("kind")), component.get("config") or {}
        if kind == "observability":
            layer = {"version": 1, "components": [{"kind": kind, "enabled": True, "config": body}]}
            _HOST.exporters.append(activate_exporters(layer))
        elif kind in _HOST.plugins:
            context = PluginContext(kind)
            try:
                _HOST.plugins[kind].register(body, context)
            except BaseException:
                context.undo()
                raise
            _HOST.contexts.append(context)
    return _host_report(found, doc)


async def initialize(config: PluginConfig | JsonObject) -> PluginHostReport:
    """Replace the active configuration with ``config``; its validation report."""
    doc = _document(config)
    clear()
    try:
        found = _activate(doc)
    except BaseException:
        clear()
        raise
    _HOST.report = found
    return found


def report() -> PluginHostReport | None:
    """The report of the active configuration (``None`` when nothing is active)."""
    return _HOST.report


def clear() -> None:
    """Deactivate the active configuration: every plugin registration and exporter."""
    while _HOST.contexts:
        _HOST.contexts.pop().undo()
    while _HOST.exporters:
        _HOST.exporters.pop().close()
    _HOST.report = None


async def clear_async() -> None:
    """:func:`clear`, awaitable (Relay's async form)."""
    clear()
