"""The Python API: ``Agent``, typed function tools, and the builder ``wayline chat`` shares.

This package sits beside ``cli/`` on top of the runtime: both build agents through
:func:`wayline.api.build.build_agent`, so a flag and the matching keyword behave the same.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wayline.api.agent import Agent
    from wayline.api.build import AgentSpec, build_agent
    from wayline.api.functions import Tool, UntypedParameterWarning, tool
    from wayline.runtime.loop import TurnResult

# Loaded on first use: ``wayline chat`` imports only the builder, not ``Agent`` and the
# function-tool machinery (pydantic schemas, docstring parsing) it never uses.
_LAZY = {
    "Agent": "wayline.api.agent",
    "AgentSpec": "wayline.api.build",
    "build_agent": "wayline.api.build",
    "Tool": "wayline.api.functions",
    "UntypedParameterWarning": "wayline.api.functions",
    "tool": "wayline.api.functions",
    "TurnResult": "wayline.runtime.loop",
}


def __getattr__(name: str) -> Any:
    """Load a public name (``Agent``, ``tool``…) on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wayline.api' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Module attributes, the lazily loaded ones included."""
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Agent",
    "AgentSpec",
    "Tool",
    "TurnResult",
    "UntypedParameterWarning",
    "build_agent",
    "tool",
]
