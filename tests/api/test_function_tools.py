"""Function tools: schemas from type hints and docstrings (via pydantic), argument checking."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

import wayline
from wayline.api.functions import Tool
from wayline.testing import ScriptedServer


class Unit(Enum):
    """Temperature units."""

    C = "c"
    F = "f"


def forecast(city: str, days: int = 3, unit: Unit = Unit.C, tags: list[str] | None = None) -> str:
    """Forecast for a city.

    Several lines of detail that are not part of the summary.

    Args:
        city: The city, e.g. "Paris".
        days: How many days ahead,
            counted from today.
        unit: Temperature unit.
    """
    return f"{city}:{days}:{unit.value}:{tags}"


def test_schema_comes_from_hints_defaults_and_google_docstring() -> None:
    """Required/optional, enum, list and the Args section all land in the JSON schema."""
    schema = Tool(forecast).schema()
    params = schema["parameters"]
    assert schema["name"] == "forecast"
    assert schema["description"] == "Forecast for a city."
    assert params["required"] == ["city"]
    assert params["properties"]["city"] == {
        "type": "string",
        "description": 'The city, e.g. "Paris".',
    }
    assert params["properties"]["days"]["description"] == "How many days ahead, counted from today."
    assert params["properties"]["days"]["default"] == 3
    assert "title" not in json.dumps(params)
    unit = params["properties"]["unit"]
    assert unit["default"] == "c" and unit["description"] == "Temperature unit."
    assert params["$defs"]["Unit"]["enum"] == ["c", "f"]


def test_annotated_field_description_and_sphinx_params() -> None:
    """``Annotated[..., Field(description=...)]`` wins over ``:param x:`` lines."""

    def search(
        query: Annotated[str, Field(description="from Field")],
        limit: Literal[10, 50] = 10,
        title: str = "",
    ) -> list[str]:
        """Search the notes.

        :param query: from the docstring
        :param limit: at most this many hits
        """
        return [query] * limit

    params = Tool(search).schema()["parameters"]
    assert params["properties"]["query"]["description"] == "from Field"
    assert params["properties"]["limit"] == {
        "default": 10,
        "description": "at most this many hits",
        "enum": [10, 50],
        "type": "integer",
    }
    assert "title" in params["properties"]  # a parameter called title survives title-stripping


def test_handler_validates_coerces_and_encodes() -> None:
    """Arguments are validated (a numeric string becomes an int); non-str results are JSON."""

    @dataclass
    class Point:
        x: int
        y: int

    def make_point(x: int, y: int) -> Point:
        """Make a point."""
        return Point(x, y)

    point = Tool(make_point)
    assert json.loads(point.handler({"x": "3", "y": 4})) == {"x": 3, "y": 4}
    error = json.loads(point.handler({"x": "three"}))["error"]
    assert error.startswith("invalid arguments for 'make_point': ")
    assert "x: Input should be a valid integer" in error and "y: Field required" in error
    assert point(1, 2) == Point(1, 2)  # the Tool stays callable like the function


def test_decorator_options_and_bad_signatures() -> None:
    """``@tool(name=...)`` renames; ``*args`` and bad names are refused with the reason."""

    @wayline.tool(name="sum_two", description="Adds.", parallel_safe=True)
    def add(a: int, b: int) -> int:
        return a + b

    assert (add.name, add.description, add.parallel_safe) == ("sum_two", "Adds.", True)
    assert isinstance(wayline.tool(forecast), Tool)

    def spread(*values: int) -> int:
        return sum(values)

    with pytest.raises(TypeError, match=r"\*values parameters are not supported"):
        Tool(spread)
    with pytest.raises(ValueError, match="must be 1-64 letters"):
        Tool(forecast, name="has space")


def test_invalid_arguments_become_a_tool_error_the_observers_see(home: Path) -> None:
    """The model's bad arguments end the call with status ``error`` and a message it can read."""
    script: dict[str, Any] = {
        "default": {"content": "ok"},
        "rules": [
            {
                "match": {"first_user_contains": "go"},
                "turns": [
                    {"tool_calls": [{"name": "forecast", "arguments": {"days": 2}}]},
                    {"content": "retried later"},
                ],
            }
        ],
    }
    posts: list[dict[str, Any]] = []
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(
            model="m", base_url=srv.base_url, tools=[forecast], toolsets=[], home=home
        ) as agent,
    ):
        agent.on("post_tool_call", lambda **kw: posts.append(kw))
        agent.run("go")
    assert posts[0]["status"] == "error"
    assert "city: Field required" in posts[0]["result"]


def test_a_raising_tool_is_reported_as_an_error_not_raised(home: Path) -> None:
    """An exception in the function becomes ``status=error`` with its type and message."""

    def forecast(city: str) -> str:
        """Always fails."""
        raise LookupError(f"no data for {city}")

    script: dict[str, Any] = {
        "default": {"content": "ok"},
        "rules": [
            {
                "match": {"first_user_contains": "go"},
                "turns": [
                    {"tool_calls": [{"name": "forecast", "arguments": {"city": "Oslo"}}]},
                    {"content": "sorry"},
                ],
            }
        ],
    }
    posts: list[dict[str, Any]] = []
    with (
        ScriptedServer(script) as srv,
        wayline.Agent(
            model="m", base_url=srv.base_url, tools=[forecast], toolsets=[], home=home
        ) as agent,
    ):
        agent.on("post_tool_call", lambda **kw: posts.append(kw))
        result = agent.run("go")
    assert result.text == "sorry"
    assert (posts[0]["status"], posts[0]["error_message"]) == (
        "error",
        "LookupError: no data for Oslo",
    )
