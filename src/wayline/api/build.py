"""The one way an agent is put together, for ``wayline chat`` and for :class:`wayline.Agent`.

Order matters and is the same for both: config and settings, built-in tools, discovered
plugins (``plugins.enabled`` plus names asked for), the caller's function tools, the caller's
in-process plugins, then the caller's own hooks and middleware. Built-ins come before every
plugin so none can silently shadow one; the caller's callbacks come last so a plugin's
observers see a payload before the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wayline.runtime import Runtime, build_runtime
from wayline.runtime.loop import TurnLoop
from wayline.runtime.settings import check_toolsets

if TYPE_CHECKING:
    from wayline.api.functions import Tool

__all__ = ["SETTING_NAMES", "AgentSpec", "build_agent"]

#: Keyword settings both entry points accept (``wayline chat`` flags, ``Agent(**settings)``).
SETTING_NAMES: frozenset[str] = frozenset(
    {
        "provider",
        "max_retries",
        "timeout",
        "stream",
        "max_turns",
        "approval_mode",
        "yolo",
        "system_prompt",
        "max_tokens",
    }
)


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """Everything that makes one agent: what CLI flags and ``Agent(...)`` arguments become.

    ``settings`` override ``config.yaml`` and the environment (``None`` values are ignored);
    ``toolsets`` replaces the configured toolsets (``None`` keeps them); ``tools`` are offered
    on top of the toolsets. ``plugin_names`` are discovered plugins enabled for this run only.
    """

    home: Path | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    toolsets: tuple[str, ...] | None = None
    tools: tuple[Tool, ...] = ()
    plugins: tuple[object, ...] = ()
    plugin_names: tuple[str, ...] = ()
    hooks: tuple[tuple[str, Callable[..., Any]], ...] = ()
    middleware: tuple[tuple[str, Callable[..., Any]], ...] = ()
    owner: str = "<python>"
    platform: str = "cli"
    cwd: Path | None = None
    resume: str | None = None


def build_agent(spec: AgentSpec) -> tuple[Runtime, TurnLoop]:
    """Build the runtime and a top-level agent for ``spec``.

    Raises ``ConfigError`` for bad config or flags, ``ValueError``/``TypeError`` for a bad
    tool, plugin or setting handed over in code, and whatever an in-process plugin's
    ``register(ctx)`` raises.
    """
    unknown = sorted(set(spec.settings) - SETTING_NAMES)
    if unknown:
        raise TypeError(
            f"unknown setting {unknown[0]!r}; known settings: {', '.join(sorted(SETTING_NAMES))}"
        )
    overrides = {k: v for k, v in spec.settings.items() if k not in ("system_prompt", "max_tokens")}
    runtime = build_runtime(
        spec.home,
        extra_plugins=spec.plugin_names,
        model=spec.model,
        base_url=spec.base_url,
        api_key=spec.api_key,
        **overrides,
    )
    manager = runtime.manager
    missing = [name for name in spec.plugin_names if name in manager.missing]
    if missing:
        raise ValueError(
            f"plugin {missing[0]!r} was not found: {manager.plugins[missing[0]].error}"
        )
    for function_tool in spec.tools:
        taken = manager.tools.get(function_tool.name)
        if taken is not None:
            owner = "a built-in tool" if taken.builtin else f"a tool of {taken.plugin or 'code'}"
            raise ValueError(f"tool name {function_tool.name!r} is already {owner}")
        manager.tools.register(
            function_tool.name,
            "python",
            function_tool.schema(),
            function_tool.handler,
            parallel_safe=function_tool.parallel_safe,
        )
    for plugin_object in spec.plugins:
        manager.add_plugin(plugin_object)
    if spec.toolsets is not None:
        source = "--toolsets" if spec.platform == "cli" else "toolsets="
        check_toolsets(manager.tools, spec.toolsets, source)
    for hook_name, callback in spec.hooks:
        manager.hooks.register(hook_name, callback, spec.owner)
    for kind, callback in spec.middleware:
        manager.middleware.register(kind, callback, spec.owner)
    runtime.settings = _final_settings(runtime, spec)
    agent = runtime.agent(cwd=spec.cwd or Path.cwd(), platform=spec.platform)
    if spec.resume:
        agent.resume(spec.resume)
    return runtime, agent


def _final_settings(runtime: Runtime, spec: AgentSpec) -> Any:
    """Settings with what ``load_settings`` does not take as an override applied."""
    settings = runtime.settings
    toolsets = spec.toolsets if spec.toolsets is not None else settings.toolsets
    changes: dict[str, Any] = {"toolsets": (*toolsets, *(t.name for t in spec.tools))}
    prompt = spec.settings.get("system_prompt")
    if prompt is not None:
        changes["system_prompt"] = str(prompt)
    max_tokens = spec.settings.get("max_tokens")
    if max_tokens is not None:
        from dataclasses import replace

        changes["provider"] = replace(settings.provider, max_tokens=int(max_tokens))
    return settings.with_(**changes)


def split_toolsets(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"terminal,file"`` or a list as a tuple of names; ``None`` keeps the configured ones."""
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return tuple(value)
