"""The Python API: ``Agent``, typed function tools, and the builder ``wayline chat`` shares.

This package sits beside ``cli/`` on top of the runtime: both build agents through
:func:`wayline.api.build.build_agent`, so a flag and the matching keyword behave the same.
"""

from wayline.api.agent import Agent
from wayline.api.build import AgentSpec, build_agent
from wayline.api.functions import Tool, UntypedParameterWarning, tool
from wayline.runtime.loop import TurnResult

__all__ = [
    "Agent",
    "AgentSpec",
    "Tool",
    "TurnResult",
    "UntypedParameterWarning",
    "build_agent",
    "tool",
]
