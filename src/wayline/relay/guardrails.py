"""``nemo_relay.guardrails`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._intercepts.guardrails`.
"""

from __future__ import annotations

from wayline.relay._intercepts.guardrails import (
    GuardrailRejected,
    LlmConditionalExecutionGuardrail,
    LlmSanitizeRequestGuardrail,
    LlmSanitizeResponseGuardrail,
    ToolConditionalExecutionGuardrail,
    ToolSanitizeGuardrail,
    deregister_llm_conditional_execution,
    deregister_llm_sanitize_request,
    deregister_llm_sanitize_response,
    deregister_mark_sanitize,
    deregister_scope_sanitize_end,
    deregister_scope_sanitize_start,
    deregister_tool_conditional_execution,
    deregister_tool_sanitize_request,
    deregister_tool_sanitize_response,
    register_llm_conditional_execution,
    register_llm_sanitize_request,
    register_llm_sanitize_response,
    register_mark_sanitize,
    register_scope_sanitize_end,
    register_scope_sanitize_start,
    register_tool_conditional_execution,
    register_tool_sanitize_request,
    register_tool_sanitize_response,
)

__all__ = [
    "GuardrailRejected",
    "LlmConditionalExecutionGuardrail",
    "LlmSanitizeRequestGuardrail",
    "LlmSanitizeResponseGuardrail",
    "ToolConditionalExecutionGuardrail",
    "ToolSanitizeGuardrail",
    "deregister_llm_conditional_execution",
    "deregister_llm_sanitize_request",
    "deregister_llm_sanitize_response",
    "deregister_mark_sanitize",
    "deregister_scope_sanitize_end",
    "deregister_scope_sanitize_start",
    "deregister_tool_conditional_execution",
    "deregister_tool_sanitize_request",
    "deregister_tool_sanitize_response",
    "register_llm_conditional_execution",
    "register_llm_sanitize_request",
    "register_llm_sanitize_response",
    "register_mark_sanitize",
    "register_scope_sanitize_end",
    "register_scope_sanitize_start",
    "register_tool_conditional_execution",
    "register_tool_sanitize_request",
    "register_tool_sanitize_response",
]
