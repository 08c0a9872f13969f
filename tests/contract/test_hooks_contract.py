"""The observer-hook contract in ``wayline.contract.hooks`` against seed 000's text.

The expected names and fields below are copied by hand from the seed (Hermes observer-hook
README), not derived from the code, so a drift on either side fails here.
"""

from __future__ import annotations

import pytest

from wayline.contract.hooks import (
    EMITTED_HOOKS,
    HOOK_SPECS,
    MIDDLEWARE_KINDS,
    MIDDLEWARE_SCHEMA_VERSION,
    TELEMETRY_SCHEMA_VERSION,
    TOOL_STATUSES,
    VALID_HOOKS,
    missing_fields,
)

# Seed 000, "Correlation IDs" table.
CORRELATION_IDS = frozenset(
    {
        "session_id",
        "task_id",
        "turn_id",
        "api_request_id",
        "api_call_count",
        "tool_call_id",
        "parent_session_id",
        "child_session_id",
        "parent_subagent_id",
        "child_subagent_id",
        "parent_turn_id",
    }
)

# Seed 000, "Event Families" tables plus the return-value table.
SEED_HOOKS = frozenset(
    {
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
        "transform_tool_result",
        "transform_llm_output",
        "pre_approval_request",
        "post_approval_response",
        "subagent_start",
        "subagent_stop",
    }
)

_API_IDENTITY = {"session_id", "task_id", "turn_id", "api_request_id"}
_API_RUNTIME = {"platform", "model", "provider", "base_url", "api_mode"}
_TOOL = {"tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id"}
_APPROVAL = {"command", "description", "pattern_key", "pattern_keys", "session_key", "surface"}

# Per-hook field lists as the seed states them.
CONTRACT_FIELDS: dict[str, set[str]] = {
    "pre_llm_call": {
        "session_id",
        "turn_id",
        "user_message",
        "conversation_history",
        "is_first_turn",
        "model",
        "platform",
        "sender_id",
    },
    "post_llm_call": {
        "session_id",
        "turn_id",
        "user_message",
        "assistant_response",
        "conversation_history",
        "model",
        "platform",
    },
    "pre_api_request": _API_IDENTITY
    | _API_RUNTIME
    | {
        "api_call_count",
        "message_count",
        "tool_count",
        "approx_input_tokens",
        "request_char_count",
        "max_tokens",
        "started_at",
        "request",
    },
    "post_api_request": _API_IDENTITY
    | _API_RUNTIME
    | {
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
    },
    "api_request_error": _API_IDENTITY
    | _API_RUNTIME
    | {
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
    },
    "pre_tool_call": _TOOL,
    "post_tool_call": _TOOL | {"result", "duration_ms", "status", "error_type", "error_message"},
    "pre_approval_request": _APPROVAL,
    "post_approval_response": _APPROVAL | {"choice"},
    "subagent_start": {
        "parent_session_id",
        "parent_turn_id",
        "parent_subagent_id",
        "child_session_id",
        "child_subagent_id",
        "child_role",
        "child_goal",
    },
    "subagent_stop": {
        "parent_session_id",
        "child_session_id",
        "child_role",
        "child_status",
        "child_summary",
        "duration_ms",
    },
}

# Session hooks share one "common fields ... where available" list.
SESSION_HOOKS = ("on_session_start", "on_session_end", "on_session_finalize", "on_session_reset")
SESSION_COMMON = {
    "session_id",
    "completed",
    "interrupted",
    "reason",
    "old_session_id",
    "new_session_id",
}

# Hermes Agent 0.19.0's VALID_HOOKS (23 names; reference §1.2).
HERMES_0_19_HOOKS = frozenset(
    {
        "pre_tool_call",
        "post_tool_call",
        "transform_terminal_output",
        "transform_tool_result",
        "transform_llm_output",
        "pre_llm_call",
        "post_llm_call",
        "pre_verify",
        "pre_api_request",
        "post_api_request",
        "api_request_error",
        "on_session_start",
        "on_session_end",
        "on_session_finalize",
        "on_session_reset",
        "subagent_start",
        "subagent_stop",
        "pre_gateway_dispatch",
        "pre_approval_request",
        "post_approval_response",
        "kanban_task_claimed",
        "kanban_task_completed",
        "kanban_task_blocked",
    }
)


def test_schema_versions() -> None:
    """The injected schema versions are Hermes' observer and middleware v1 strings."""
    assert TELEMETRY_SCHEMA_VERSION == "hermes.observer.v1"
    assert MIDDLEWARE_SCHEMA_VERSION == "hermes.middleware.v1"


def test_every_seed_hook_is_valid_and_specified() -> None:
    """Every hook seed 000 names is in VALID_HOOKS and has a spec that wayline emits."""
    assert SEED_HOOKS <= VALID_HOOKS
    assert set(HOOK_SPECS) >= SEED_HOOKS
    assert SEED_HOOKS <= EMITTED_HOOKS
    for name, spec in HOOK_SPECS.items():
        assert spec.name == name and spec.fires


def test_valid_hooks_match_hermes_0_19() -> None:
    """VALID_HOOKS is exactly Hermes 0.19.0's set, so Hermes plugins register without warnings."""
    assert VALID_HOOKS == HERMES_0_19_HOOKS


@pytest.mark.parametrize("hook", sorted(CONTRACT_FIELDS))
def test_contract_fields_match_the_seed(hook: str) -> None:
    """A hook's contract_fields hold the seed's list; any extra is a seed correlation id."""
    spec = HOOK_SPECS[hook]
    expected = CONTRACT_FIELDS[hook]
    assert expected <= spec.contract_fields, sorted(expected - spec.contract_fields)
    assert spec.contract_fields - expected <= CORRELATION_IDS, sorted(
        spec.contract_fields - expected
    )
    assert spec.contract_fields <= spec.fields


def test_session_hooks_cover_the_common_fields() -> None:
    """Each session hook carries session_id; together they carry every seed session field."""
    union: set[str] = set()
    for hook in SESSION_HOOKS:
        assert "session_id" in HOOK_SPECS[hook].contract_fields
        union |= HOOK_SPECS[hook].fields
    assert union >= SESSION_COMMON
    assert {"completed", "interrupted"} <= HOOK_SPECS["on_session_end"].contract_fields
    assert {"old_session_id", "new_session_id"} <= HOOK_SPECS["on_session_reset"].fields


def test_transform_tool_result_carries_post_tool_call_fields() -> None:
    """transform_tool_result fires after post_tool_call and sees the same result fields."""
    assert CONTRACT_FIELDS["post_tool_call"] <= HOOK_SPECS["transform_tool_result"].fields


def test_return_rules_follow_the_seed_table() -> None:
    """Only the four seed behaviour hooks (and Hermes' terminal transform) use their returns."""
    returns = {name: spec.returns for name, spec in HOOK_SPECS.items() if spec.returns != "ignored"}
    assert returns == {
        "pre_llm_call": "context",
        "pre_tool_call": "block",
        "transform_tool_result": "first_str",
        "transform_llm_output": "first_nonempty_str",
        "transform_terminal_output": "first_str",
    }


def test_sanitized_fields_are_the_seed_payload_fields() -> None:
    """Seed 000's "Payload Safety" list: request, response, and the error's request + error."""
    sanitized = {name: spec.sanitized_fields for name, spec in HOOK_SPECS.items()}
    assert {k: set(v) for k, v in sanitized.items() if v} == {
        "pre_api_request": {"request"},
        "post_api_request": {"response"},
        "api_request_error": {"request", "error"},
    }


def test_tool_statuses_include_the_seed_values() -> None:
    """post_tool_call status covers the seed's ok/error/blocked/cancelled."""
    assert {"ok", "error", "blocked", "cancelled"} <= TOOL_STATUSES


def test_middleware_kinds() -> None:
    """The four seed 002 middleware kinds, no more."""
    assert {"llm_request", "tool_request", "llm_execution", "tool_execution"} == MIDDLEWARE_KINDS


def test_missing_fields_reports_absent_contract_fields() -> None:
    """missing_fields names the seed fields a payload lacks; unknown hooks report nothing."""
    payload = dict.fromkeys(CONTRACT_FIELDS["pre_tool_call"] - {"tool_call_id"}, "x")
    assert missing_fields("pre_tool_call", payload) == {"tool_call_id"}
    full = dict.fromkeys(HOOK_SPECS["pre_tool_call"].contract_fields, "x")
    assert missing_fields("pre_tool_call", full) == frozenset()
    assert missing_fields("no_such_hook", {}) == frozenset()
