"""Typos are refused where they are made: toolset names (flag, config, keyword) and untyped
function tool parameters."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.testing import ScriptedServer

WAYLINE = Path(sys.executable).with_name("wayline")


def _chat(home: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(WAYLINE), "chat", "-q", "hi", "--base-url", base_url, "-m", "m", "-Q", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "WAYLINE_HOME": str(home)},
        timeout=60,
        check=False,
    )


def test_cli_toolset_flag_typo_exits_2_with_one_error_line(home: Path) -> None:
    """``wayline chat -t termnal`` makes no model call: one ``error:`` line naming the flag,
    the near name and the known toolsets, and exit code 2."""
    with ScriptedServer({"default": {"content": "ok"}}) as srv:
        proc = _chat(home, srv.base_url, "-t", "termnal")
        assert srv.requests == []
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr
    assert "--toolsets: unknown toolset 'termnal'; did you mean 'terminal'?" in errors[0]
    assert "known toolsets: delegation, file, terminal" in errors[0]
    assert proc.stdout == ""


def test_config_toolset_typo_names_file_and_line(home: Path) -> None:
    """``agent.toolsets: [file, bogus]`` is refused by the CLI (exit 2) and by the API
    (``ValueError``), both naming config.yaml, the item's line and the known toolsets."""
    config = home / "config.yaml"
    config.write_text("agent:\n  toolsets:\n    - file\n    - bogus\n")
    with ScriptedServer({"default": {"content": "ok"}}) as srv:
        proc = _chat(home, srv.base_url)
        with pytest.raises(ValueError) as info:
            wayline.Agent(model="m", base_url=srv.base_url, home=home)
        assert srv.requests == []
    assert proc.returncode == 2
    where = f"{config}:4: agent.toolsets.1: unknown toolset 'bogus';"
    assert where in proc.stderr
    assert str(info.value).startswith(where)
    assert "known toolsets: delegation, file, terminal" in str(info.value)


def test_toolsets_keyword_typo_raises_value_error(home: Path) -> None:
    """``Agent(toolsets=["fille"])`` raises ``ValueError`` with a did-you-mean."""
    with pytest.raises(
        ValueError, match=r"toolsets=: unknown toolset 'fille'; did you mean 'file'"
    ):
        wayline.Agent(model="m", base_url="http://127.0.0.1:9/v1", home=home, toolsets=["fille"])


def test_a_single_tool_name_is_a_valid_toolset_entry(home: Path) -> None:
    """An entry may name one tool (``read_file``): only that tool is offered."""
    with ScriptedServer({"default": {"content": "ok"}}) as srv:
        with wayline.Agent(
            model="m", base_url=srv.base_url, home=home, toolsets=["read_file"]
        ) as agent:
            agent.run("hi")
        tools = [t["function"]["name"] for t in srv.requests[0].body["tools"]]
    assert tools == ["read_file"]


def test_untyped_parameters_warn_by_name_at_the_function(home: Path) -> None:
    """Each parameter without a type hint gets an ``UntypedParameterWarning`` naming it, at
    the tool function's own file; typed ones do not."""

    def add(a, b: int):  # type: ignore[no-untyped-def]
        return a + b

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wayline.tool(add)
    untyped = [w for w in caught if issubclass(w.category, wayline.UntypedParameterWarning)]
    assert [str(w.message).split(":")[0] for w in untyped] == ["tool 'add'"]
    assert "parameter 'a' has no type hint" in str(untyped[0].message)
    assert untyped[0].filename == __file__


def test_untyped_parameters_get_the_json_values_the_model_sent(home: Path) -> None:
    """No hint, no coercion: numbers sent as numbers add up, strings stay strings (so the
    warning matters); a hint coerces the model's numeric strings."""
    script: dict[str, Any] = {
        "default": {"content": "done"},
        "rules": [
            {
                "match": {"first_user_contains": "sum"},
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "loose", "arguments": {"a": 2, "b": 3}},
                            {"name": "loose", "arguments": {"a": "2", "b": "3"}},
                            {"name": "typed", "arguments": {"a": "2", "b": "3"}},
                        ]
                    },
                    {"content": "summed"},
                ],
            }
        ],
    }

    def loose(a, b):  # type: ignore[no-untyped-def]
        """Add without hints."""
        return a + b

    def typed(a: int, b: int) -> int:
        """Add integers."""
        return a + b

    with ScriptedServer(script) as srv:
        with pytest.warns(wayline.UntypedParameterWarning):
            agent = wayline.Agent(model="m", base_url=srv.base_url, home=home, tools=[loose, typed])
        with agent:
            agent.run("sum")
        results = [m["content"] for m in srv.requests[1].body["messages"] if m["role"] == "tool"]
    assert results == ["5", "23", "5"]
