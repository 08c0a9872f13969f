"""The scripted model across several user turns: a rule's `scope`, the `user_turn` condition,
and `TurnResult.api_calls` counting the turn's own model calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.testing import ScriptedServer
from wayline.testing.script import ScriptError, load_script


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _script(scope: str | None) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "match": {},
        "turns": [
            {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
            {"content": "the sum is in"},
        ],
    }
    if scope is not None:
        rule["scope"] = scope
    return {"default": {"content": "default answer"}, "rules": [rule]}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``$WAYLINE_HOME`` with no model variables set."""
    monkeypatch.setenv("WAYLINE_HOME", str(tmp_path / "home"))
    for var in ("WAYLINE_API_KEY", "OPENAI_API_KEY", "WAYLINE_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "home"


def _two_turns(script: dict[str, Any], home: Path) -> list[wayline.TurnResult]:
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent,
    ):
        return [agent.run("add please"), agent.run("and again")]


def test_scope_user_turn_starts_the_turns_again_at_each_user_message(home: Path) -> None:
    """With `scope: user_turn`, the second user turn gets the tool call and the answer again."""
    first, second = _two_turns(_script("user_turn"), home)
    assert (first.text, second.text) == ("the sum is in", "the sum is in")
    assert (first.api_calls, second.api_calls) == (2, 2)


def test_by_default_turns_count_over_the_conversation(home: Path) -> None:
    """Without a scope (as documented) the turns are used up by the first user turn, so the
    second gets `default`; its api_calls is its own one call, not the session's three."""
    first, second = _two_turns(_script(None), home)
    assert (first.text, second.text) == ("the sum is in", "default answer")
    assert (first.api_calls, second.api_calls) == (2, 1)


def test_api_calls_counts_this_turns_calls_and_the_hooks_agree(home: Path) -> None:
    """`TurnResult.api_calls` is 2, 2, 2 over three turns (not 2, 4, 6), and each turn's
    `pre_api_request` hooks count 1, 2 again (`api_call_count` is per turn)."""
    counts: list[int] = []
    with (
        ScriptedServer(_script("user_turn")) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent,
    ):
        agent.on("pre_api_request", lambda **kw: counts.append(kw["api_call_count"]))
        results = [agent.run(f"turn {n}") for n in range(3)]
    assert [r.api_calls for r in results] == [2, 2, 2]
    assert counts == [1, 2, 1, 2, 1, 2]


def test_the_user_turn_condition_picks_a_users_second_message(home: Path) -> None:
    """`match: {user_turn: 2}` answers only the second user turn."""
    script = {
        "default": {"content": "any turn"},
        "rules": [{"match": {"user_turn": 2}, "respond": {"content": "second turn"}}],
    }
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, home=home) as agent,
    ):
        texts = [agent.run(f"message {n}").text for n in range(3)]
    assert texts == ["any turn", "second turn", "any turn"]


def test_a_fault_with_times_fails_once_in_each_user_turn(home: Path) -> None:
    """In a `user_turn` rule a fault's `times: 1` counts per user turn: each turn's first call
    fails once and is retried, so both turns complete after a retry each."""
    script = {
        "rules": [
            {
                "scope": "user_turn",
                "match": {},
                "turns": [{"content": "recovered", "fault": {"status": 500, "times": 1}}],
            }
        ]
    }
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, home=home) as agent,
    ):
        texts = [agent.run("one").text, agent.run("two").text]
        faults = [r.fault for r in srv.requests]
    assert texts == ["recovered", "recovered"]
    assert faults == ["status:500", None, "status:500", None]


def test_a_bad_scope_names_the_field() -> None:
    """A scope other than conversation or user_turn is a ScriptError at `rules[0].scope`."""
    with pytest.raises(ScriptError, match=r"rules\[0\]\.scope: must be 'conversation' or"):
        load_script({"rules": [{"scope": "turn", "respond": {"content": "x"}}]})
