"""wayline: a pure-Python LLM agent runtime whose every step is observable and interceptable."""

from wayline.contract import (
    HOOK_SPECS,
    MIDDLEWARE_KINDS,
    MIDDLEWARE_SCHEMA_VERSION,
    TELEMETRY_SCHEMA_VERSION,
    VALID_HOOKS,
    ControlRejected,
    HookSpec,
    RunContext,
)
from wayline.host import (
    ConfigError,
    HookBus,
    MiddlewareChains,
    PluginContext,
    PluginManager,
    ToolRegistry,
    wayline_home,
)

__version__ = "0.1.0"

__all__ = [
    "HOOK_SPECS",
    "MIDDLEWARE_KINDS",
    "MIDDLEWARE_SCHEMA_VERSION",
    "TELEMETRY_SCHEMA_VERSION",
    "VALID_HOOKS",
    "ConfigError",
    "ControlRejected",
    "HookBus",
    "HookSpec",
    "MiddlewareChains",
    "PluginContext",
    "PluginManager",
    "RunContext",
    "ToolRegistry",
    "__version__",
    "wayline_home",
]
