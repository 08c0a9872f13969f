"""The Python API: ``Agent``, typed function tools, and the builder ``wayline chat`` shares.

This package sits beside ``cli/`` on top of the runtime: both build agents through
:func:`wayline.api.build.build_agent`, so a flag and the matching keyword behave the same.
"""

from typing import TYPE_CHECKING

from wayline.lazy import lazy_names

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


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "Agent",
    "AgentSpec",
    "Tool",
    "TurnResult",
    "UntypedParameterWarning",
    "build_agent",
    "tool",
]
