"""Hook names, payload fields and schema versions: the Hermes observer contract.

Every hook is written down once here: its contract fields (what a consumer may rely
on), the extra fields Hermes Agent 0.19.0 was observed to send (so a Hermes
plugin finds them), and how its return value is used. The runtime builds its
payloads from these specs and the tests check emitted payloads against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

TELEMETRY_SCHEMA_VERSION = "hermes.observer.v1"
MIDDLEWARE_SCHEMA_VERSION = "hermes.middleware.v1"

HookReturn = Literal["ignored", "context", "block", "first_str", "first_nonempty_str"]


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One observer hook: when it fires, which fields it carries, what its return does."""

    name: str
    fires: str
    contract_fields: frozenset[str]
    hermes_fields: frozenset[str] = frozenset()
    returns: HookReturn = "ignored"
    sanitized_fields: frozenset[str] = frozenset()

    @property
    def fields(self) -> frozenset[str]:
        """Every field wayline emits for this hook (the contract's ∪ observed Hermes)."""
        return self.contract_fields | self.hermes_fields


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


_IDENT = _f("session_id", "task_id", "turn_id", "api_request_id")
_RUNTIME = _f("platform", "model", "provider", "base_url", "api_mode")
_TOOL_IDENT = _f(
    "tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id"
)
_TOOL_RESULT = _f("result", "duration_ms", "status", "error_type", "error_message")
_APPROVAL = _f("command", "description", "pattern_key", "pattern_keys", "session_key", "surface")

HOOK_SPECS: dict[str, HookSpec] = {
    spec.name: spec
    for spec in (
        HookSpec(
            "on_session_start",
            "A brand-new session starts, after its system prompt is built (children too).",
            _f("session_id"),
            _f("model", "platform"),
        ),
        HookSpec(
            "on_session_end",
            "A run of one user turn ends: completed, interrupted or failed.",
            _f("session_id", "completed", "interrupted"),
            _f("task_id", "turn_id", "model", "platform", "reason"),
        ),
        HookSpec(
            "on_session_finalize",
            "A session identity is torn down (exit, /new, one-shot end).",
            _f("session_id"),
            _f("platform", "reason"),
        ),
        HookSpec(
            "on_session_reset",
            "The CLI moves from an old session identity to a new one (/new).",
            _f("session_id", "old_session_id", "new_session_id"),
            _f("platform", "reason"),
        ),
        HookSpec(
            "pre_llm_call",
            "Once per user turn, before the tool loop.",
            _f(
                "session_id",
                "turn_id",
                "user_message",
                "conversation_history",
                "is_first_turn",
                "model",
                "platform",
                "sender_id",
            ),
            _f("task_id"),
            returns="context",
        ),
        HookSpec(
            "post_llm_call",
            "The turn completed with final assistant output.",
            _f(
                "session_id",
                "turn_id",
                "user_message",
                "assistant_response",
                "conversation_history",
                "model",
                "platform",
            ),
            _f("task_id"),
        ),
        HookSpec(
            "pre_api_request",
            "Immediately before each provider attempt (after llm_request middleware).",
            _IDENT
            | _RUNTIME
            | _f(
                "api_call_count",
                "message_count",
                "tool_count",
                "approx_input_tokens",
                "request_char_count",
                "max_tokens",
                "started_at",
                "request",
            ),
            _f(
                "user_message",
                "conversation_history",
                "request_messages",
                "middleware_trace",
                "original_request_fields",
            ),
            sanitized_fields=_f("request"),
        ),
        HookSpec(
            "post_api_request",
            "After a successful provider response.",
            _IDENT
            | _RUNTIME
            | _f(
                "api_duration",
                "started_at",
                "ended_at",
                "finish_reason",
                "message_count",
                "response_model",
                "usage",
                "assistant_content_chars",
                "assistant_tool_call_count",
                "response",
                "assistant_message",
            ),
            _f("api_call_count"),
            sanitized_fields=_f("response"),
        ),
        HookSpec(
            "api_request_error",
            "After each failed provider attempt (retryable or final).",
            _IDENT
            | _RUNTIME
            | _f(
                "api_duration",
                "started_at",
                "ended_at",
                "status_code",
                "retry_count",
                "max_retries",
                "retryable",
                "reason",
                "error",
                "request",
            ),
            _f("api_call_count"),
            sanitized_fields=_f("request", "error"),
        ),
        HookSpec(
            "pre_tool_call",
            "Before a tool call is dispatched (after tool_request middleware, before approval).",
            _TOOL_IDENT,
            _f("middleware_trace"),
            returns="block",
        ),
        HookSpec(
            "post_tool_call",
            "After every tool call: ok, error, blocked, cancelled or timeout.",
            _TOOL_IDENT | _TOOL_RESULT,
            _f("middleware_trace"),
        ),
        HookSpec(
            "transform_tool_result",
            "After post_tool_call, before the result is appended to model context.",
            _TOOL_IDENT | _TOOL_RESULT,
            returns="first_str",
        ),
        HookSpec(
            "transform_llm_output",
            "Once per completed turn with non-empty output, before post_llm_call.",
            _f("response_text", "session_id", "model", "platform"),
            _f("turn_id", "task_id"),
            returns="first_nonempty_str",
        ),
        HookSpec(
            "pre_approval_request",
            "Before a dangerous-command approval is requested.",
            _APPROVAL,
            _f("session_id", "turn_id", "tool_call_id"),
        ),
        HookSpec(
            "post_approval_response",
            "After the approval is answered, denied or timed out.",
            _APPROVAL | _f("choice"),
            _f("session_id", "turn_id", "tool_call_id"),
        ),
        HookSpec(
            "subagent_start",
            "A delegated child agent is created, before it runs.",
            _f(
                "parent_session_id",
                "parent_turn_id",
                "parent_subagent_id",
                "child_session_id",
                "child_subagent_id",
                "child_role",
                "child_goal",
            ),
            _f("parent_tool_call_id"),
        ),
        HookSpec(
            "subagent_stop",
            "A delegated child agent returned, failed, timed out or was interrupted.",
            _f(
                "parent_session_id",
                "child_session_id",
                "child_role",
                "child_status",
                "child_summary",
                "duration_ms",
            ),
            _f("parent_turn_id", "parent_subagent_id", "child_subagent_id", "parent_tool_call_id"),
        ),
        HookSpec(
            "transform_terminal_output",
            "A foreground terminal command finished, before output is bounded (Hermes hook).",
            _f("command", "output", "returncode", "task_id", "env_type"),
            returns="first_str",
        ),
    )
}

#: The observer contract's hooks plus Hermes' ``transform_terminal_output``; all emitted.
EMITTED_HOOKS: frozenset[str] = frozenset(HOOK_SPECS)

#: Hermes 0.19.0 hook names wayline accepts without a warning but never emits
#: (gateway, kanban, verification); Hermes plugins register them unconditionally.
HERMES_ONLY_HOOKS: frozenset[str] = _f(
    "pre_verify",
    "pre_gateway_dispatch",
    "kanban_task_claimed",
    "kanban_task_completed",
    "kanban_task_blocked",
)

VALID_HOOKS: frozenset[str] = EMITTED_HOOKS | HERMES_ONLY_HOOKS

MiddlewareKind = Literal["llm_request", "tool_request", "llm_execution", "tool_execution"]
MIDDLEWARE_KINDS: frozenset[str] = _f(
    "llm_request", "tool_request", "llm_execution", "tool_execution"
)
REQUEST_MIDDLEWARE: dict[str, str] = {"llm_request": "request", "tool_request": "args"}
EXECUTION_MIDDLEWARE: dict[str, str] = {"llm_execution": "request", "tool_execution": "args"}

#: Middleware runtime-context fields (the Hermes middleware contract plus Hermes' observed keys).
LLM_MIDDLEWARE_CONTEXT: frozenset[str] = _IDENT | _RUNTIME | _f("api_call_count")
TOOL_MIDDLEWARE_CONTEXT: frozenset[str] = _f(
    "session_id", "task_id", "turn_id", "api_request_id", "tool_name", "tool_call_id"
)

ToolStatus = Literal["ok", "error", "blocked", "cancelled", "timeout"]
TOOL_STATUSES: frozenset[str] = _f("ok", "error", "blocked", "cancelled", "timeout")
ApprovalChoice = Literal["once", "session", "always", "deny", "timeout"]
SubagentStatus = Literal["completed", "failed", "timeout", "interrupted", "error"]


class TraceEntry(TypedDict, total=False):
    """One ``middleware_trace`` entry left by a request middleware that rewrote a payload."""

    source: str
    reason: str
    name: str


class ApiError(TypedDict):
    """The structured ``error`` field of ``api_request_error``."""

    type: str
    message: str


class Usage(TypedDict, total=False):
    """Token usage as reported in ``post_api_request.usage``."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    request_count: int


class PreToolCallPayload(TypedDict, total=False):
    """Payload of ``pre_tool_call`` (typed example; :data:`HOOK_SPECS` lists every hook)."""

    telemetry_schema_version: str
    tool_name: str
    args: dict[str, Any]
    task_id: str
    session_id: str
    tool_call_id: str
    turn_id: str
    api_request_id: str
    middleware_trace: list[TraceEntry]


class PostToolCallPayload(PreToolCallPayload, total=False):
    """Payload of ``post_tool_call`` and ``transform_tool_result``."""

    result: str
    duration_ms: int
    status: ToolStatus
    error_type: str | None
    error_message: str | None


class BlockDirective(TypedDict):
    """The one ``pre_tool_call`` return that changes behaviour."""

    action: Literal["block"]
    message: str


def missing_fields(hook: str, payload: dict[str, Any]) -> frozenset[str]:
    """Contract fields of ``hook`` absent from ``payload`` (empty for unknown hooks)."""
    spec = HOOK_SPECS.get(hook)
    if spec is None:
        return frozenset()
    return spec.contract_fields - payload.keys()
