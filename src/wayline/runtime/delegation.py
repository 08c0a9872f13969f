"""``delegate_task``: child agents with their own sessions, linked to the parent turn.

``subagent_start`` fires before each child runs; ``subagent_stop`` always fires
(completed / failed / timeout / interrupted) with both parent and child ids.
A child's hooks carry its own session id and ``platform="subagent"``.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from wayline.contract.ids import RunContext, new_session_id, new_subagent_id
from wayline.host.tools import ToolRegistry
from wayline.runtime.cancel import CancelEvent, on_cancel
from wayline.runtime.provider import ProviderConfig
from wayline.runtime.tools.base import ToolCancelled, tool_error

if TYPE_CHECKING:
    from wayline.runtime.loop import TurnLoop, TurnResult

SCHEMA: dict[str, Any] = {
    "name": "delegate_task",
    "description": (
        "Delegate a self-contained task to a child agent with its own tools. Give a clear goal "
        "and any context it needs; use `tasks` to run several children concurrently."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "What the child must achieve."},
            "context": {"type": "string", "description": "Facts the child needs."},
            "toolsets": {"type": "array", "items": {"type": "string"}},
            "role": {"type": "string", "enum": ["leaf", "orchestrator"]},
            "tasks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "goal": {"type": "string"},
                        "context": {"type": "string"},
                        "toolsets": {"type": "array", "items": {"type": "string"}},
                        "role": {"type": "string"},
                    },
                    "required": ["goal"],
                },
            },
        },
    },
}


def register_delegation_tool(registry: ToolRegistry) -> None:
    """Register the ``delegate_task`` schema (executed by the agent, not the registry)."""

    def outside_agent(args: dict[str, Any], **_: Any) -> str:
        return tool_error("delegate_task can only run inside an agent turn")

    registry.register("delegate_task", "delegation", SCHEMA, outside_agent, builtin=True)


@dataclass(slots=True)
class _Child:
    index: int
    task: dict[str, Any]
    agent: TurnLoop
    cancel: threading.Event
    started: float = 0.0
    future: Future[TurnResult] | None = None
    status: str = "failed"
    summary: str = ""
    trace: list[dict[str, str]] = field(default_factory=list)


def _tasks(args: dict[str, Any]) -> list[dict[str, Any]] | str:
    tasks = args.get("tasks")
    if tasks is None:
        tasks = [args]
    if not isinstance(tasks, list) or not tasks:
        return "`tasks` must be a non-empty list"
    for i, task in enumerate(tasks):
        if (
            not isinstance(task, dict)
            or not isinstance(task.get("goal"), str)
            or not task["goal"].strip()
        ):
            return f"task {i}: `goal` must be a non-empty string"
    return tasks


def make_delegate_tool(parent: TurnLoop) -> Any:
    """The ``delegate_task`` implementation bound to ``parent``."""
    from wayline.runtime.loop import TurnLoop

    def child_settings(task: dict[str, Any]) -> Any:
        s = parent.settings
        d = s.delegation
        cfg: ProviderConfig = s.provider
        # Everything else (retry policy, timeouts, streaming, max_tokens) is the parent's.
        provider = replace(
            cfg,
            base_url=d.base_url or cfg.base_url,
            model=d.model or cfg.model,
            api_key=d.api_key or cfg.api_key,
            provider=d.provider or cfg.provider,
        )
        toolsets = task.get("toolsets")
        if not isinstance(toolsets, list) or not toolsets:
            toolsets = list(s.toolsets)
        return s.with_(
            provider=provider, toolsets=tuple(str(t) for t in toolsets), max_turns=d.max_turns
        )

    def delegate(args: dict[str, Any], ctx: RunContext, tool_call_id: str) -> str:
        tasks = _tasks(args)
        if isinstance(tasks, str):
            return tool_error(tasks)
        hooks = parent.manager.hooks
        limits = parent.settings.delegation
        children: list[_Child] = []
        for i, task in enumerate(tasks):
            child_id = new_subagent_id(i)
            cancel = CancelEvent()
            settings = child_settings(task)
            # Children on the parent's endpoint reuse its SDK client and connection pool.
            shared = parent.provider if settings.provider == parent.provider.cfg else None
            agent = TurnLoop(
                parent.manager,
                settings,
                provider=shared,
                session_id=new_session_id(),
                platform="subagent",
                cwd=parent.cwd,
                store=parent.store,
                approver=parent.approver,
                cancel=cancel,
                parent=ctx,
                subagent_id=child_id,
                depth=parent.depth + 1,
                known=parent.known,
            )
            children.append(_Child(i, task, agent, cancel))

        def link(child: _Child) -> dict[str, Any]:
            # The ids both subagent hooks carry, so observers can pair start and stop.
            return {
                "parent_session_id": ctx.session_id,
                "parent_turn_id": ctx.turn_id,
                "parent_subagent_id": ctx.subagent_id,
                "parent_tool_call_id": tool_call_id,
                "child_session_id": child.agent.session_id,
                "child_subagent_id": child.agent.subagent_id,
                "child_role": str(child.task.get("role") or "leaf"),
            }

        pool = ThreadPoolExecutor(
            max_workers=limits.max_concurrent_children, thread_name_prefix="wayline-child"
        )
        try:
            for child in children:
                if hooks.has_hook("subagent_start"):
                    hooks.invoke_hook(
                        "subagent_start", **link(child), child_goal=child.task["goal"]
                    )
                prompt = child.task["goal"]
                if child.task.get("context"):
                    prompt = f"{prompt}\n\nContext:\n{child.task['context']}"
                child.started = time.monotonic()
                child.future = pool.submit(_run_child, child.agent, prompt)

            # The parent's cancel reaches each child's model request and tools at once.
            def cancel_children() -> None:
                for child in children:
                    child.cancel.set()

            unlink = on_cancel(parent.cancel, cancel_children)
            try:
                _wait(children, parent.cancel, limits.child_timeout_seconds)
            finally:
                unlink()
        finally:
            pool.shutdown(wait=True)
            for child in children:
                if hooks.has_hook("subagent_stop"):
                    hooks.invoke_hook(
                        "subagent_stop",
                        **link(child),
                        child_status=child.status,
                        child_summary=child.summary[:4000],
                        duration_ms=int((time.monotonic() - child.started) * 1000)
                        if child.started
                        else 0,
                    )
        if parent.cancel.is_set():
            raise ToolCancelled("delegation interrupted")
        results = [
            {
                "task_index": c.index,
                "status": c.status,
                "summary": c.summary,
                "subagent_id": c.agent.subagent_id,
                "session_id": c.agent.session_id,
                "tool_trace": c.agent.tool_trace,
            }
            for c in children
        ]
        return json.dumps({"results": results})

    return delegate


def _run_child(agent: TurnLoop, prompt: str) -> TurnResult:
    try:
        return agent.run_turn(prompt)
    finally:
        agent.finalize("subagent_complete")


def _wait(children: list[_Child], parent_cancel: threading.Event, timeout: float) -> None:
    """Collect children; parent interrupt or a child's timeout cancels that child."""
    for child in children:
        assert child.future is not None
        deadline = child.started + timeout if timeout > 0 else None
        while True:
            if parent_cancel.is_set():
                child.cancel.set()
            if deadline is not None and time.monotonic() > deadline and not child.cancel.is_set():
                child.cancel.set()
                child.status = "timeout"
            try:
                result = child.future.result(timeout=0.05)
            except TimeoutError:
                continue
            except Exception as exc:
                child.status, child.summary = "failed", f"{type(exc).__name__}: {exc}"
                break
            if child.status != "timeout":
                if result.interrupted:
                    child.status = "interrupted"
                else:
                    child.status = "completed" if result.completed else "failed"
            child.summary = result.text
            break
