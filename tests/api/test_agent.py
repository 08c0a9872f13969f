"""``wayline.Agent``: turns, hooks, middleware, plugins and lifetime against the scripted server."""

from __future__ import annotations

import asyncio
import json
import threading
import types
from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.testing import ScriptedServer

TOOL_THEN_ANSWER: dict[str, Any] = {
    "default": {"content": "plain answer"},
    "rules": [
        {
            "match": {"first_user_contains": "add"},
            "turns": [
                {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
                {"content": "the sum is in"},
            ],
        }
    ],
}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_one_turn_calls_the_typed_tool_and_returns_the_answer(home: Path) -> None:
    """A turn runs the function tool with the model's arguments and sends its result back."""
    with ScriptedServer(TOOL_THEN_ANSWER) as srv:
        with wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent:
            result = agent.run("please add")
        second = srv.requests[1].body["messages"]
    assert isinstance(result, wayline.TurnResult)
    assert (result.text, result.completed, result.reason) == ("the sum is in", True, "completed")
    tool_messages = [m for m in second if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["5"]


def test_only_the_functions_are_offered_unless_toolsets_are_named(home: Path) -> None:
    """By default (and with ``toolsets=[]``) only the function tools are sent; naming a
    toolset adds its built-in tools, and nothing else."""
    with ScriptedServer({"default": {"content": "ok"}}) as srv:
        for toolsets in (None, [], ["file"]):
            with wayline.Agent(
                model="m", base_url=srv.base_url, tools=[add], toolsets=toolsets, home=home
            ) as agent:
                agent.run("hi")
        offered = [sorted(t["function"]["name"] for t in r.body["tools"]) for r in srv.requests]
    assert offered == [
        ["add"],
        ["add"],
        ["add", "read_file", "search_files", "write_file"],
    ]


def test_settings_reach_the_request_and_unknown_ones_are_refused(home: Path) -> None:
    """``system_prompt``/``max_tokens`` shape the request; a misspelt setting is a TypeError."""
    with ScriptedServer({"default": {"content": "ok"}}) as srv:
        with wayline.Agent(
            model="m",
            base_url=srv.base_url,
            home=home,
            toolsets=[],
            system_prompt="You are terse.",
            max_tokens=64,
        ) as agent:
            agent.run("hi")
        body = srv.requests[0].body
    assert body["messages"][0] == {"role": "system", "content": "You are terse."}
    assert body["max_tokens"] == 64
    with pytest.raises(TypeError, match=r"unknown setting 'max_turn'.*max_turns"):
        wayline.Agent(model="m", base_url="http://127.0.0.1:9/v1", home=home, max_turn=3)


def test_missing_base_url_is_a_config_error_naming_the_setting(home: Path) -> None:
    """Without a base URL anywhere the constructor raises ConfigError naming model.base_url."""
    with pytest.raises(wayline.ConfigError, match=r"model\.base_url is not set"):
        wayline.Agent(model="m", home=home)


def test_observer_hooks_fail_open_and_see_every_tool_call(home: Path) -> None:
    """A raising observer is skipped; the next one and the turn still run."""
    seen: list[tuple[str, str]] = []

    def broken(**kw: Any) -> None:
        raise RuntimeError("observer bug")

    with (
        ScriptedServer(TOOL_THEN_ANSWER) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent,
    ):
        agent.on("post_tool_call", broken)
        agent.on("post_tool_call", lambda **kw: seen.append((kw["tool_name"], kw["status"])))
        result = agent.run("add them")
    assert result.completed
    assert seen == [("add", "ok")]


def test_hook_return_values_follow_the_contract(home: Path) -> None:
    """``pre_llm_call`` context reaches the model and ``transform_llm_output`` replaces text."""
    with ScriptedServer({"default": {"content": "raw"}}) as srv:
        with wayline.Agent(model="m", base_url=srv.base_url, home=home, toolsets=[]) as agent:
            agent.on("pre_llm_call", lambda **kw: {"context": "CTX-42"})
            agent.on("transform_llm_output", lambda **kw: kw["response_text"].upper())
            result = agent.run("hello")
        user = srv.requests[0].body["messages"][-1]["content"]
    assert user == "hello\n\nCTX-42"
    assert result.text == "RAW"


def test_unknown_hook_and_middleware_names_are_refused(home: Path) -> None:
    """``on``/``use`` raise ValueError listing the valid names instead of a silent no-op."""
    agent = wayline.Agent(model="m", base_url="http://127.0.0.1:9/v1", home=home)
    with agent:
        with pytest.raises(ValueError, match=r"unknown hook 'post_tool'.*post_tool_call"):
            agent.on("post_tool", lambda **kw: None)
        with pytest.raises(ValueError, match=r"unknown middleware kind 'tool'.*tool_request"):
            agent.use("tool", lambda **kw: None)


def test_request_middleware_chains_and_leaves_a_trace(home: Path) -> None:
    """Two ``tool_request`` middlewares chain in order; hooks see the rewrite and the trace."""
    pre: list[dict[str, Any]] = []

    def double_a(**kw: Any) -> dict[str, Any]:
        return {"args": {**kw["args"], "a": kw["args"]["a"] * 2}, "reason": "double"}

    def bump_b(**kw: Any) -> dict[str, Any]:
        assert kw["args"]["a"] == 4  # sees the first middleware's rewrite
        return {"args": {**kw["args"], "b": 10}, "source": "bumper"}

    with ScriptedServer(TOOL_THEN_ANSWER) as srv:
        with wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent:
            agent.use("tool_request", double_a)
            agent.use("tool_request", bump_b)
            agent.on("pre_tool_call", lambda **kw: pre.append(kw))
            agent.run("add")
        tool_message = [m for m in srv.requests[1].body["messages"] if m["role"] == "tool"]
    assert tool_message[0]["content"] == "14"
    assert pre[0]["args"] == {"a": 4, "b": 10}
    assert [e["source"] for e in pre[0]["middleware_trace"]] == ["<agent>", "bumper"]


def test_execution_middleware_wraps_the_call_and_fails_open_before_next_call(home: Path) -> None:
    """A ``tool_execution`` middleware that raises before ``next_call`` is skipped; an outer
    one still wraps the real call and may change its result."""
    order: list[str] = []

    def outer(**kw: Any) -> str:
        order.append("outer")
        return f"[{kw['next_call']()}]"

    def broken(**kw: Any) -> Any:
        raise RuntimeError("middleware bug")

    with ScriptedServer(TOOL_THEN_ANSWER) as srv:
        with wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent:
            agent.use("tool_execution", outer)
            agent.use("tool_execution", broken)
            agent.run("add")
        tool_message = [m for m in srv.requests[1].body["messages"] if m["role"] == "tool"]
    assert order == ["outer"]
    assert tool_message[0]["content"] == "[5]"


def test_closing_finalizes_the_session_once(home: Path) -> None:
    """Leaving the ``with`` block fires ``on_session_finalize`` once; later turns are refused."""
    finalized: list[str] = []
    with ScriptedServer({"default": {"content": "ok"}}) as srv:
        with wayline.Agent(model="m", base_url=srv.base_url, home=home, toolsets=[]) as agent:
            agent.on("on_session_finalize", lambda **kw: finalized.append(kw["session_id"]))
            agent.run("hi")
            assert finalized == []
        agent.close()
    assert finalized == [agent.session_id]
    assert (home / "sessions" / f"{agent.session_id}.jsonl").exists()
    with pytest.raises(RuntimeError, match="closed"):
        agent.run("again")


def test_arun_runs_async_tools_on_the_callers_loop(home: Path) -> None:
    """Under ``arun`` an async tool runs on the awaiting loop; under ``run`` on its own loop."""
    loops: list[asyncio.AbstractEventLoop] = []

    async def add(a: int, b: int) -> int:
        """Add two integers, asynchronously."""
        loops.append(asyncio.get_running_loop())
        return a + b

    async def main(agent: wayline.Agent) -> tuple[wayline.TurnResult, asyncio.AbstractEventLoop]:
        return await agent.arun("add"), asyncio.get_running_loop()

    with ScriptedServer(TOOL_THEN_ANSWER) as srv:
        with wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent:
            result, caller_loop = asyncio.run(main(agent))
        with wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent:
            agent.run("add")  # a new session: the script answers with the tool call again
    assert result.text == "the sum is in"
    assert loops[0] is caller_loop
    assert loops[1] is not caller_loop


def test_cancelling_arun_interrupts_the_turn_for_the_observers(home: Path) -> None:
    """Cancelling the awaiting task raises CancelledError after ``on_session_end`` reported
    the turn as interrupted."""
    started = threading.Event()
    release = threading.Event()
    ends: list[dict[str, Any]] = []

    def add(a: int, b: int) -> int:
        """Add slowly: waits until the test lets it finish."""
        started.set()
        release.wait(10)
        return a + b

    async def main(agent: wayline.Agent) -> None:
        task = asyncio.create_task(agent.arun("add"))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        await asyncio.sleep(0)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    with (
        ScriptedServer(TOOL_THEN_ANSWER) as srv,
        wayline.Agent(model="m", base_url=srv.base_url, tools=[add], home=home) as agent,
    ):
        agent.on("on_session_end", lambda **kw: ends.append(kw))
        asyncio.run(main(agent))
    assert [(e["interrupted"], e["reason"]) for e in ends] == [(True, "interrupted")]


def test_plugin_objects_register_like_plugin_directories(home: Path) -> None:
    """A module with ``register(ctx)`` gets hooks, middleware and tools through ``ctx``."""
    calls: list[str] = []
    plugin = types.ModuleType("audit_plugin")

    def register(ctx: wayline.PluginContext) -> None:
        ctx.register_hook("post_tool_call", lambda **kw: calls.append(kw["tool_name"]))
        ctx.register_tool(
            "add",
            "math",
            {"name": "add", "parameters": {"type": "object", "properties": {}}},
            lambda args, **kw: json.dumps(args["a"] + args["b"]),
        )

    plugin.register = register  # type: ignore[attr-defined]
    with (
        ScriptedServer(TOOL_THEN_ANSWER) as srv,
        wayline.Agent(
            model="m", base_url=srv.base_url, plugins=[plugin], toolsets=["math"], home=home
        ) as agent,
    ):
        result = agent.run("add")
    assert result.completed and calls == ["add"]


def test_bad_plugins_raise_at_construction(home: Path) -> None:
    """An object without ``register``, a failing ``register`` or an unknown plugin name raise."""
    url = "http://127.0.0.1:9/v1"

    class Failing:
        def register(self, ctx: Any) -> None:
            raise RuntimeError("cannot register")

    with pytest.raises(TypeError, match="has no register"):
        wayline.Agent(model="m", base_url=url, home=home, plugins=[object()])
    with pytest.raises(RuntimeError, match="cannot register"):
        wayline.Agent(model="m", base_url=url, home=home, plugins=[Failing()])
    with pytest.raises(ValueError, match="'nosuch' was not found"):
        wayline.Agent(model="m", base_url=url, home=home, plugins=["nosuch"])


def test_a_function_tool_may_not_take_a_builtin_name(home: Path) -> None:
    """A function called like a built-in tool is refused instead of replacing it silently."""

    def terminal(command: str) -> str:
        """Not the real terminal."""
        return command

    with pytest.raises(ValueError, match="'terminal' is already a built-in tool"):
        wayline.Agent(model="m", base_url="http://127.0.0.1:9/v1", home=home, tools=[terminal])


def test_named_plugins_are_enabled_for_this_agent_only(home: Path) -> None:
    """``plugins=["name"]`` loads an installed plugin without touching config.yaml."""
    plugin_dir = home / "plugins" / "counter"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "plugin.yaml").write_text("name: counter\n")
    (plugin_dir / "__init__.py").write_text(
        "import os\n"
        "def register(ctx):\n"
        "    ctx.register_hook('on_session_start', lambda **kw: open(os.environ['MARK'], 'w'))\n"
    )
    mark = home / "started"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MARK", str(mark))
        with (
            ScriptedServer({"default": {"content": "ok"}}) as srv,
            wayline.Agent(
                model="m", base_url=srv.base_url, home=home, plugins=["counter"], toolsets=[]
            ) as agent,
        ):
            agent.run("hi")
    assert mark.exists()
    assert not (home / "config.yaml").exists()


def test_the_sdk_client_exists_before_the_first_turn(home: Path) -> None:
    """An agent's provider has its SDK client before the first turn (Runtime.agent), so the
    first model call's measured duration does not include the SDK's import and set-up."""
    from wayline.api.build import AgentSpec, build_agent

    _, loop = build_agent(AgentSpec(home=home, model="m", base_url="http://127.0.0.1:9/v1"))
    assert loop.provider._lanes.idle_count == 1
