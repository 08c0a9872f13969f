"""Tool arguments no parser should trust end that tool call, never the run.

The scripted server sends the model's raw argument strings as they are: 10,000 levels of
objects or arrays, an integer of 5,000 digits. Each call ends with an error the model reads
on its next request, every observer sees the call end, and ``Agent.run`` returns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.contract.hooks import EMITTED_HOOKS
from wayline.runtime.dispatch import MAX_ARGUMENT_DEPTH
from wayline.testing import ScriptedServer

DEEP_OBJECT = '{"text": ' + '{"a": ' * 10_000 + "1" + "}" * 10_000 + "}"
DEEP_ARRAY = '{"text": ' + "[" * 10_000 + "]" * 10_000 + "}"
JUST_TOO_DEEP = '{"text": ' + "[" * MAX_ARGUMENT_DEPTH + "]" * MAX_ARGUMENT_DEPTH + "}"
HUGE_NUMBER = '{"text": ' + "7" * 5_000 + "}"


def echo(text: str) -> str:
    """Echo the text back."""
    return text


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (DEEP_OBJECT, "nested deeper than"),
        (DEEP_ARRAY, "nested deeper than"),
        (JUST_TOO_DEEP, "nested deeper than"),
        (HUGE_NUMBER, "invalid JSON arguments"),
    ],
    ids=["object-10000", "array-10000", "one-level-too-deep", "5000-digit-integer"],
)
def test_hostile_arguments_end_the_call_with_an_error_the_model_reads(
    home: Path, arguments: str, expected: str
) -> None:
    """The turn completes; the tool never runs; the model's next request carries the error;
    ``post_tool_call`` reports ``error`` and every hook was delivered without failing."""
    script: dict[str, Any] = {
        "default": {"content": "done"},
        "rules": [
            {
                "match": {"first_user_contains": "go"},
                "turns": [
                    {"tool_calls": [{"name": "echo", "arguments": arguments}]},
                    {"content": "recovered"},
                ],
            }
        ],
    }
    statuses: list[str] = []
    delivered: list[str] = []
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[echo], home=home) as agent,
    ):
        for hook in sorted(EMITTED_HOOKS):
            agent.on(hook, lambda hook=hook, **kw: delivered.append(hook))
        agent.on("post_tool_call", lambda **kw: statuses.append(kw["status"]))
        result = agent.run("go")
        tool_messages = [m for m in srv.requests[1].body["messages"] if m["role"] == "tool"]
    assert (result.text, result.reason) == ("recovered", "completed")
    assert statuses == ["error"]
    assert len(tool_messages) == 1
    assert expected in json.loads(tool_messages[0]["content"])["error"]
    assert {"pre_tool_call", "post_tool_call", "on_session_end"} <= set(delivered)


def test_arguments_nested_to_the_bound_still_reach_the_tool(home: Path) -> None:
    """Nesting up to the bound is ordinary input: the tool runs and gets it."""
    nested = "[" * (MAX_ARGUMENT_DEPTH - 1) + "]" * (MAX_ARGUMENT_DEPTH - 1)
    got: list[Any] = []

    def take(value: list[Any]) -> str:
        """Take a nested list."""
        got.append(value)
        return "ok"

    script: dict[str, Any] = {
        "default": {"content": "done"},
        "rules": [
            {
                "match": {"first_user_contains": "go"},
                "turns": [
                    {"tool_calls": [{"name": "take", "arguments": '{"value": ' + nested + "}"}]}
                ],
            }
        ],
    }
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[take], home=home) as agent,
    ):
        assert agent.run("go").completed
    depth, value = 0, got[0]
    while isinstance(value, list):
        depth, value = depth + 1, value[0] if value else None
    assert depth == MAX_ARGUMENT_DEPTH - 1  # the lists inside {"value": ...}


def test_the_relay_record_keeps_a_model_call_with_hostile_arguments(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The relay plugin records the model call whose arguments are 10,000 deep: its llm end
    event keeps the model's text as sent instead of failing on the parse."""
    out = tmp_path / "atof"
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY", str(out))
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_FILENAME", "events.jsonl")
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_ENABLED", "false")
    script: dict[str, Any] = {
        "default": {"content": "done"},
        "rules": [
            {
                "match": {"first_user_contains": "go"},
                "turns": [
                    {"tool_calls": [{"name": "echo", "arguments": DEEP_OBJECT}]},
                    {"content": "recovered"},
                ],
            }
        ],
    }
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(
            model="m",
            base_url=srv.base_url,
            tools=[echo],
            plugins=["observability/relay"],
            home=home,
        ) as agent,
    ):
        assert agent.run("go").text == "recovered"
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    llm_ends = [e for e in events if e["category"] == "llm" and e.get("scope_category") == "end"]
    assert len(llm_ends) == 2
