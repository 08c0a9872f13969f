"""wayline: a pure-Python LLM agent runtime whose every step is observable and interceptable."""

from typing import TYPE_CHECKING

from wayline.lazy import lazy_names

if TYPE_CHECKING:
    from wayline.api import Agent, Tool, TurnResult, UntypedParameterWarning, tool
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

# Every public name loads on first use: importing any ``wayline.*`` module runs this file
# first, and a command imports only the layers it uses (``wayline --help`` none of them).
_LAZY = {
    **dict.fromkeys(
        (
            "HOOK_SPECS",
            "MIDDLEWARE_KINDS",
            "MIDDLEWARE_SCHEMA_VERSION",
            "TELEMETRY_SCHEMA_VERSION",
            "VALID_HOOKS",
            "ControlRejected",
            "HookSpec",
            "RunContext",
        ),
        "wayline.contract",
    ),
    **dict.fromkeys(
        (
            "ConfigError",
            "HookBus",
            "MiddlewareChains",
            "PluginContext",
            "PluginManager",
            "ToolRegistry",
            "wayline_home",
        ),
        "wayline.host",
    ),
    **dict.fromkeys(
        ("Agent", "Tool", "TurnResult", "UntypedParameterWarning", "tool"), "wayline.api"
    ),
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "HOOK_SPECS",
    "MIDDLEWARE_KINDS",
    "MIDDLEWARE_SCHEMA_VERSION",
    "TELEMETRY_SCHEMA_VERSION",
    "VALID_HOOKS",
    "Agent",
    "ConfigError",
    "ControlRejected",
    "HookBus",
    "HookSpec",
    "MiddlewareChains",
    "PluginContext",
    "PluginManager",
    "RunContext",
    "Tool",
    "ToolRegistry",
    "TurnResult",
    "UntypedParameterWarning",
    "__version__",
    "tool",
    "wayline_home",
]
