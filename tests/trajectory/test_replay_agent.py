"""Replaying a Python agent (``replay(path, agent=...)`` and ``wayline replay --agent``): the
recorded model answers drive the agent as the user built it, function tools and ``.use``
middleware included; a changed tool or middleware diverges at its step."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import replay_agents
from replay_agents import lookup_price, make_agent, record_shop, to_euros
from traj_support import load, run_cli

import wayline
from wayline.testing import ReplayAgentError, ScriptedServer, replay

pytestmark = pytest.mark.timeout(120)

AGENTS_MODULE = Path(replay_agents.__file__)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop assistant's recorded session (function tools, euro middleware)."""
    return record_shop(tmp_path_factory.mktemp("shop"))


def test_the_agent_replays_clean(shop: Path, tmp_path: Path) -> None:
    """The unchanged agent, built by its factory, reproduces the recording with recorded and
    with live tools; the new trajectory is its own run, with the middleware's euros."""
    for tools in ("recorded", "live"):
        out = tmp_path / f"{tools}.json"
        report = replay(shop, agent=make_agent, tools=tools, output=out)
        assert report.reproduced, report.describe()
        assert report.notes == []
        new = load(out)
        assert new["session_id"] != load(shop)["session_id"]
        convert = next(
            c
            for s in new["steps"]
            for c in s.get("tool_calls") or []
            if c["tool_call_id"] == "call_convert"
        )
        assert convert["extra"]["executed_arguments"] == {"amount": 3.0, "currency": "EUR"}


def test_without_the_agent_the_middleware_is_missing(shop: Path) -> None:
    """Replayed from config, the agent has no ``.use`` middleware: the first divergence is the
    currency it rewrote (USD instead of EUR), at the convert call."""
    report = replay(shop)
    first = report.first
    assert first is not None
    assert (first.trajectory, first.step, first.tool_call) == ("main", 3, "call_convert (convert)")
    assert (first.kind, first.path, first.old, first.new) == (
        "arguments",
        "arguments.currency",
        "EUR",
        "USD",
    )


def _with_convert(convert: Any) -> Any:
    """A factory for the shop assistant with ``convert`` replaced."""

    def factory(**kw: Any) -> wayline.Agent:
        agent = wayline.Agent(model="shop-model", tools=[lookup_price, convert], **kw)
        agent.use("tool_request", to_euros)
        return agent

    return factory


def test_a_changed_tool_diverges_at_its_step(shop: Path) -> None:
    """A new exchange rate in ``convert``: with live tools the replay diverges at step 3, the
    convert call's result, old and new values shown; recorded tools do not run it."""

    def convert(amount: float, currency: str) -> str:
        """Convert an amount of US dollars to another currency."""
        return f"{amount * 0.95:.2f} {currency}"

    live = replay(shop, agent=_with_convert(convert), tools="live")
    assert not live.reproduced
    first = live.first
    assert first is not None
    assert (first.trajectory, first.step, first.tool_call, first.kind) == (
        "main",
        3,
        "call_convert (convert)",
        "result",
    )
    assert (first.path, first.old, first.new) == (
        "observation.results[0].content",
        "2.76 EUR",
        "2.85 EUR",
    )
    assert len(live.differences) == 1, live.differences
    assert replay(shop, agent=_with_convert(convert)).reproduced


def test_changed_middleware_diverges_at_its_step(shop: Path) -> None:
    """Middleware that quotes pounds: the convert call's arguments differ at step 3."""

    def to_pounds(args: dict[str, Any], tool_name: str, **kw: Any) -> dict[str, Any] | None:
        if tool_name == "convert":
            return {"args": {**args, "currency": "GBP"}}
        return None

    def factory(**kw: Any) -> wayline.Agent:
        agent = wayline.Agent(model="shop-model", tools=[lookup_price, replay_agents.convert], **kw)
        agent.use("tool_request", to_pounds)
        return agent

    report = replay(shop, agent=factory)
    first = report.first
    assert first is not None
    assert (first.step, first.tool_call, first.path, first.old, first.new) == (
        3,
        "call_convert (convert)",
        "arguments.currency",
        "EUR",
        "GBP",
    )


def test_an_agent_instance_replays_and_is_closed(shop: Path, tmp_path: Path) -> None:
    """A fresh ``Agent`` reproduces too; the replay runs its session and closes it."""
    agent = make_agent(base_url="http://unused.invalid/v1", home=tmp_path / "home")
    report = replay(shop, agent=agent)
    assert report.reproduced, report.describe()
    with pytest.raises(RuntimeError, match="closed"):
        agent.run("again")


def test_factory_keywords(shop: Path, tmp_path: Path) -> None:
    """A factory gets the keywords it declares: ``home`` (the isolated one) without
    ``base_url`` still builds when the home's config names one; one with none gets none."""
    seen: list[Path] = []

    def only_home(home: Path) -> wayline.Agent:
        seen.append(home)
        (home / "config.yaml").write_text("model:\n  base_url: http://unused.invalid/v1\n")
        return make_agent(home=home)

    def nothing() -> wayline.Agent:
        return make_agent(base_url="http://unused.invalid/v1", home=tmp_path / "h2")

    assert replay(shop, agent=only_home).reproduced
    assert seen and seen[0].name == "home" and not seen[0].exists()  # isolated, removed after
    assert replay(shop, agent=nothing).reproduced


def test_agents_that_cannot_be_replayed(shop: Path, tmp_path: Path) -> None:
    """A used agent, a factory that raises or returns something else, and plugins= next to
    an agent are refused with what is wrong."""
    with ScriptedServer({"default": {"content": "ok"}}) as server:
        used = make_agent(base_url=server.base_url, home=tmp_path / "home")
        used.run("hi")
    with pytest.raises(ReplayAgentError, match="already run a turn"):
        replay(shop, agent=used)
    used.close()

    def broken(**kw: Any) -> wayline.Agent:
        raise KeyError("no such currency")

    with pytest.raises(ReplayAgentError, match=r"the agent factory raised KeyError"):
        replay(shop, agent=broken)

    def not_an_agent() -> Any:
        return "agent"

    with pytest.raises(ReplayAgentError, match=r"returned str, not a wayline\.Agent"):
        replay(shop, agent=not_an_agent)
    with pytest.raises(ValueError, match="give your agent its plugins"):
        replay(shop, agent=make_agent, plugins=["observability/otel"])


def _cli(tmp_path: Path, *args: str | Path) -> Any:
    """``wayline replay`` in ``tmp_path``, where ``replay_agents.py`` is importable."""
    shutil.copy(AGENTS_MODULE, tmp_path / AGENTS_MODULE.name)
    return run_cli("replay", *args, home=tmp_path / "home", cwd=tmp_path)


def test_cli_replays_the_named_agent(shop: Path, tmp_path: Path) -> None:
    """``--agent replay_agents:make_agent`` reproduces (exit 0); without it the missing
    middleware is a divergence (exit 1) at the convert call."""
    ok = _cli(tmp_path, shop, "--agent", "replay_agents:make_agent", "-o", tmp_path / "a.json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("reproduced ")
    assert (tmp_path / "a.json").exists()
    without = _cli(tmp_path, shop, "-o", tmp_path / "b.json")
    assert without.returncode == 1, without.stdout + without.stderr
    assert without.stdout.splitlines()[0] == (
        "diverged at step 3 of main, tool call call_convert (convert): arguments differ at "
        "arguments.currency"
    )


def test_cli_agent_errors_exit_2(shop: Path, tmp_path: Path) -> None:
    """A factory that cannot be imported, is missing, is not callable, is malformed or fails
    is one ``error:`` line naming ``--agent`` with exit 2, never a traceback."""
    (tmp_path / "broken_agents.py").write_text("import no_such_dependency\n")
    (tmp_path / "failing_agents.py").write_text(
        "def make_agent(**kw):\n    raise RuntimeError('no model configured')\n"
    )
    cases = {
        "nosuch:make_agent": "cannot import nosuch: ModuleNotFoundError",
        "broken_agents:make": "cannot import broken_agents: ModuleNotFoundError",
        "replay_agents:missing": "replay_agents has no 'missing'",
        "replay_agents:RATES": "RATES is a dict, not a function that returns a wayline.Agent",
        "replay_agents": "give MODULE:FUNCTION",
        "failing_agents:make_agent": "the agent factory raised RuntimeError: no model configured",
    }
    for spec, expected in cases.items():
        proc = _cli(tmp_path, shop, "--agent", spec, "-o", tmp_path / "n.json")
        assert proc.returncode == 2, (spec, proc.stdout, proc.stderr)
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"error: --agent {spec}: {expected}"), (spec, line)
    plugin = _cli(tmp_path, shop, "--agent", "replay_agents:make_agent", "--plugin", "x")
    assert plugin.returncode == 2 and "give your agent its plugins" in plugin.stderr


def test_json_report_with_an_agent(shop: Path, tmp_path: Path) -> None:
    """``--json`` with ``--agent`` prints the report: reproduced, no differences."""
    proc = _cli(
        tmp_path, shop, "--agent", "replay_agents:make_agent", "--json", "-o", tmp_path / "n.json"
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["reproduced"], report["differences"]) == (True, [])


def test_a_streaming_agent_replays_clean(shop: Path) -> None:
    """An agent that streams gets the recorded answers as server-sent events: it reproduces."""
    report = replay(shop, agent=lambda **kw: make_agent(stream=True, **kw))
    assert report.reproduced, report.describe()


def test_a_delegating_agent_replays_clean(recorded: dict[str, Path], tmp_path: Path) -> None:
    """A Python agent with built-in toolsets replays the session recorded by ``wayline chat``:
    its delegated child is a real child agent, answered from its own recorded steps."""

    def factory(**kw: Any) -> wayline.Agent:
        return wayline.Agent(toolsets=["delegation", "terminal", "file"], yolo=True, **kw)

    report = replay(recorded["trajectory"], agent=factory, cwd=recorded["work"], tools="live")
    assert report.reproduced, report.describe()
    assert report.new is not None
    (child,) = report.new["subagent_trajectories"]
    assert child["steps"][-1]["message"] == "child read both"
