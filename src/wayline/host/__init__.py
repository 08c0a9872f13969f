"""The plugin host: discovery, the hook bus, middleware chains and the tool registry."""

from wayline.host.bus import FailureLog, HookBus, QueuedObserver, Registration
from wayline.host.config import ConfigError, YamlDoc, load_config, load_yaml, wayline_home
from wayline.host.context import PluginContext
from wayline.host.exit import ExitHook
from wayline.host.manager import LoadedPlugin, PluginManager
from wayline.host.manifest import ENTRY_POINT_GROUP, PluginManifest, discover
from wayline.host.middleware import MiddlewareChains, RequestResult, safe_copy
from wayline.host.tools import ToolEntry, ToolOverrideError, ToolRegistry

__all__ = [
    "ENTRY_POINT_GROUP",
    "ConfigError",
    "ExitHook",
    "FailureLog",
    "HookBus",
    "LoadedPlugin",
    "MiddlewareChains",
    "PluginContext",
    "PluginManager",
    "PluginManifest",
    "QueuedObserver",
    "Registration",
    "RequestResult",
    "ToolEntry",
    "ToolOverrideError",
    "ToolRegistry",
    "YamlDoc",
    "discover",
    "load_config",
    "load_yaml",
    "safe_copy",
    "wayline_home",
]
