"""A wayline host hands queued observers payloads it never changes afterwards.

Without middleware the bus gives a :class:`~wayline.host.QueuedObserver` the payload itself
(``enqueue_owned``): nothing in it may change once the hook has fired, however the session
goes on (more turns, tools, a tool that edits its own arguments). With middleware, which may
rewrite in place what a payload refers to, it uses ``enqueue`` and the observer copies.
"""

from __future__ import annotations

import copy
import json
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import wayline
from wayline.host import QueuedObserver
from wayline.redaction.unsanitized import Unsanitized
from wayline.testing.server import ScriptedServer

_TOOLS = {
    "tool_calls": [
        {"name": "edit_args", "arguments": {"items": [1, 2], "meta": {"k": "v"}}},
        {"name": "read_file", "arguments": {"path": "a.txt"}},
    ]
}
# The script's turns count over the whole conversation: two user turns, each tools then done.
TOOLS_THEN_ANSWER = {
    "rules": [{"match": {}, "turns": [_TOOLS, {"content": "done"}, _TOOLS, {"content": "done"}]}]
}


def _plain(value: Any) -> Any:
    """``value`` as plain data (an unsanitized field as its raw value), copied."""
    if type(value) is Unsanitized:
        return _plain(value.raw)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, str | int | float | bool | type(None)):
        return value
    return repr(value)


class Keeper(QueuedObserver):
    """Keeps every payload it is handed, with a copy taken at the hook and how it came."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, dict[str, Any], Any]] = []

    def enqueue(self, payload: dict[str, Any]) -> None:
        """A payload its host may change: kept with its copy, marked ``copy``."""
        self.kept.append(("copy", payload, copy.deepcopy(_plain(payload))))

    def enqueue_owned(self, payload: dict[str, Any]) -> None:
        """A payload its host never changes: kept with its copy, marked ``owned``."""
        self.kept.append(("owned", payload, copy.deepcopy(_plain(payload))))


def _edit_args(args: dict[str, Any], **_: Any) -> str:
    """A tool that changes the arguments it is given, in place."""
    args["items"].append(3)
    args["meta"]["k"] = "changed"
    args["added"] = True
    return json.dumps({"ok": True})


def _plugin(keeper: Keeper, *, middleware: bool = False) -> types.ModuleType:
    """A plugin with the arguments-editing tool, ``keeper`` on seven hooks, and maybe a
    middleware that changes nothing."""
    plugin = types.ModuleType("keeper_plugin")

    def register(ctx: wayline.PluginContext) -> None:
        ctx.register_tool(
            "edit_args",
            "edits",
            {"name": "edit_args", "parameters": {"type": "object", "properties": {}}},
            _edit_args,
        )
        for hook in HOOKS:
            ctx.register_hook(hook, keeper)
        if middleware:
            ctx.register_middleware("tool_request", lambda **kw: None)

    plugin.register = register  # type: ignore[attr-defined]
    return plugin


HOOKS = (
    "pre_llm_call",
    "pre_api_request",
    "post_api_request",
    "pre_tool_call",
    "post_tool_call",
    "post_llm_call",
    "on_session_end",
)


@contextmanager
def _agent(
    keeper: Keeper, home: Path, workdir: Path, *, middleware: bool = False
) -> Iterator[wayline.Agent]:
    """An agent with the keeper's plugin against the scripted model that calls the tools."""
    with (
        ScriptedServer(TOOLS_THEN_ANSWER) as srv,
        wayline.Agent(
            model="m",
            base_url=srv.base_url,
            plugins=[_plugin(keeper, middleware=middleware)],
            toolsets=["edits", "file"],
            home=home,
            cwd=workdir,
        ) as agent,
    ):
        yield agent


def test_payloads_stay_as_they_were_at_the_hook(home: Path, workdir: Path) -> None:
    """Two turns with tools (one edits its arguments): every owned payload still equals the
    copy taken when its hook fired, and the recorded arguments are the model's."""
    keeper = Keeper()
    with _agent(keeper, home, workdir) as agent:
        assert agent.run("first").text == "done"
        assert agent.run("second").text == "done"
    kinds = {kind for kind, _, _ in keeper.kept}
    assert kinds == {"owned"}, kinds
    changed = [
        (i, _plain(live)) for i, (_, live, then) in enumerate(keeper.kept) if _plain(live) != then
    ]
    assert changed == []
    edits = [p for _, p, _ in keeper.kept if p.get("tool_name") == "edit_args"]
    assert len(edits) == 4  # pre and post, two turns
    assert all(p["args"] == {"items": [1, 2], "meta": {"k": "v"}} for p in edits)


def test_middleware_make_the_host_hand_over_copies(home: Path, workdir: Path) -> None:
    """With a middleware registered the same hooks arrive through ``enqueue``: the observer
    must copy what it reads later."""
    keeper = Keeper()
    with _agent(keeper, home, workdir, middleware=True) as agent:
        assert agent.run("first").text == "done"
    assert {kind for kind, _, _ in keeper.kept} == {"copy"}


def test_a_synchronous_observer_makes_the_host_hand_over_copies(home: Path, workdir: Path) -> None:
    """An observer called on the hook's own thread gets the live objects and could change
    them: with one registered, the queued observer gets ``enqueue`` and copies."""
    keeper = Keeper()
    seen: list[str] = []
    with _agent(keeper, home, workdir) as agent:
        agent.on("post_tool_call", lambda **kw: seen.append(kw["tool_name"]))
        assert agent.run("first").text == "done"
    assert seen and {kind for kind, _, _ in keeper.kept} == {"copy"}
