"""Bundled observability plugins (discovered like third-party ones).

Importing this loads neither relay machinery nor OpenTelemetry: the plugins register their
hooks before their observers are built.
"""

__all__ = ["OTEL_HOOKS", "RELAY_HOOKS"]

RELAY_HOOKS = (
    "on_session_start",
    "on_session_end",
    "on_session_finalize",
    "on_session_reset",
    "pre_llm_call",
    "post_llm_call",
    "pre_api_request",
    "post_api_request",
    "api_request_error",
    "pre_tool_call",
    "post_tool_call",
    "pre_approval_request",
    "post_approval_response",
    "subagent_start",
    "subagent_stop",
)
"""The hooks ``observability/relay`` observes."""

OTEL_HOOKS = tuple(hook for hook in RELAY_HOOKS if hook != "on_session_reset")
"""The hooks ``observability/otel`` observes."""
