"""``nemo_relay.intercepts`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._intercepts.chains`.
"""

from __future__ import annotations

from wayline.relay._intercepts.chains import (
    LlmExecutionIntercept,
    LlmRequestIntercept,
    LlmStreamExecutionIntercept,
    ToolExecutionIntercept,
    ToolRequestIntercept,
    deregister_llm_execution,
    deregister_llm_request,
    deregister_llm_stream_execution,
    deregister_tool_execution,
    deregister_tool_request,
    register_llm_execution,
    register_llm_request,
    register_llm_stream_execution,
    register_tool_execution,
    register_tool_request,
)

__all__ = [
    "LlmExecutionIntercept",
    "LlmRequestIntercept",
    "LlmStreamExecutionIntercept",
    "ToolExecutionIntercept",
    "ToolRequestIntercept",
    "deregister_llm_execution",
    "deregister_llm_request",
    "deregister_llm_stream_execution",
    "deregister_tool_execution",
    "deregister_tool_request",
    "register_llm_execution",
    "register_llm_request",
    "register_llm_stream_execution",
    "register_tool_execution",
    "register_tool_request",
]
