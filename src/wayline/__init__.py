"""wayline: a pure-Python LLM agent runtime whose every step is observable and interceptable."""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from wayline.api import Agent, Tool, TurnResult, UntypedParameterWarning, tool

__version__ = "0.1.0"

# The Python API pulls in the runtime; loaded on first use so `wayline --help` stays fast.
_LAZY = {
    "Agent": "wayline.api",
    "Tool": "wayline.api",
    "TurnResult": "wayline.api",
    "UntypedParameterWarning": "wayline.api",
    "tool": "wayline.api",
}


def __getattr__(name: str) -> Any:
    """Load the Python API's names (``Agent``, ``tool``…) on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wayline' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Module attributes, the lazily loaded ones included."""
    return sorted(set(globals()) | set(_LAZY))


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
