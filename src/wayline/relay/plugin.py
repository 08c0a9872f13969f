"""``nemo_relay.plugin``: component plugin configuration (Relay 0.10.4's names).

The plugin host (:class:`PluginConfig`, :class:`ComponentSpec`, :func:`validate`,
:func:`initialize`, :func:`register`, :func:`clear`, :func:`list_kinds` …) lives in
:mod:`wayline.relay._components.host`; the ``plugins.toml`` loader that starts the
observability component's exporters (:func:`load_plugins_toml`, :func:`activate_exporters`)
in :mod:`wayline.relay._components.plugins_toml`. This module only re-exports them.
"""

from __future__ import annotations

from wayline.relay._components.host import (
    ComponentSpec,
    ConfigDiagnostic,
    ConfigPolicy,
    ConfigReport,
    Plugin,
    PluginConfig,
    PluginContext,
    PluginHostReport,
    clear,
    clear_async,
    deregister,
    initialize,
    list_kinds,
    register,
    report,
    validate,
)
from wayline.relay._components.plugins_toml import (
    ADAPTIVE_MODES,
    Activation,
    AtifSettings,
    AtofSettings,
    PluginsToml,
    PluginsTomlError,
    StreamSink,
    activate_exporters,
    atof_exporter,
    load_plugins_toml,
    merge_layers,
    stream_exporter,
)

__all__ = [
    "ADAPTIVE_MODES",
    "Activation",
    "AtifSettings",
    "AtofSettings",
    "ComponentSpec",
    "ConfigDiagnostic",
    "ConfigPolicy",
    "ConfigReport",
    "Plugin",
    "PluginConfig",
    "PluginContext",
    "PluginHostReport",
    "PluginsToml",
    "PluginsTomlError",
    "StreamSink",
    "activate_exporters",
    "atof_exporter",
    "clear",
    "clear_async",
    "deregister",
    "initialize",
    "list_kinds",
    "load_plugins_toml",
    "merge_layers",
    "register",
    "report",
    "stream_exporter",
    "validate",
]
