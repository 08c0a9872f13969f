"""``PluginContext``: what ``register(ctx)`` may call (the Hermes plugin surface we support)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from wayline.host.tools import ToolHandler

if TYPE_CHECKING:
    from wayline.host.manifest import PluginManifest

log = logging.getLogger("wayline.plugins")


class PluginInstance(Protocol):
    """What a plugin hands to :meth:`PluginContext.register_instance`: its state for one host."""

    def close(self) -> None:
        """Release everything the instance holds (threads, files, subscriptions)."""


@dataclass(slots=True)
class Staged:
    """Registrations made by one ``register(ctx)`` call, applied only if it returns."""

    hooks: list[tuple[str, Any]] = field(default_factory=list)
    middleware: list[tuple[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    instance: PluginInstance | None = None


class PluginContext:
    """Handed to a plugin's ``register(ctx)``.

    Registrations are staged and applied after ``register`` returns, so a plugin
    whose ``register`` raises halfway leaves nothing half-registered.
    """

    def __init__(
        self,
        manifest: PluginManifest,
        config: dict[str, Any] | None = None,
        *,
        home: Path | None = None,
    ) -> None:
        self._manifest = manifest
        self._config = config or {}
        self._home = home
        self.staged = Staged()

    @property
    def home(self) -> Path | None:
        """The host's home (``Agent(home=...)`` or ``$WAYLINE_HOME``): where a plugin writes
        its record unless its own configuration names another place (wayline extension;
        Hermes' context has no such attribute, so read it with ``getattr(ctx, "home", None)``).
        """
        return self._home

    def register_instance(self, instance: PluginInstance) -> None:
        """Hand the host the object that holds this plugin's state for this host.

        Wayline extension (look it up with ``getattr``: Hermes has one host per process and no
        such call). The host calls ``instance.close()`` once when it closes (``Agent.close()``,
        the end of ``wayline chat``, or the process exit if it was never closed), after the
        session's ``on_session_finalize``, in reverse load order; ``Agent.plugin(key)`` returns
        it. One instance per ``register(ctx)``; it must have a ``close()`` method.
        """
        _check_callable(getattr(instance, "close", None), "close() of the plugin instance")
        if self.staged.instance is not None:
            raise ValueError(f"plugin {self._manifest.key!r} registered a second instance")
        self.staged.instance = instance

    @property
    def manifest(self) -> PluginManifest:
        """This plugin's manifest (name, key, version, source, path…)."""
        return self._manifest

    @property
    def config(self) -> dict[str, Any]:
        """This plugin's section of ``config.yaml`` (``plugins.entries.<key>``), or {}."""
        return self._config

    def register_hook(self, hook_name: str, callback: Any) -> None:
        """Subscribe an observer callback to ``hook_name`` (fails open)."""
        _check_callable(callback, f"callback for hook {hook_name!r}")
        self.staged.hooks.append((hook_name, callback))

    def register_middleware(self, kind: str, callback: Any) -> None:
        """Add a middleware callback of ``kind`` (a control callback)."""
        _check_callable(callback, f"middleware for {kind!r}")
        self.staged.middleware.append((kind, callback))

    def register_tool(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: ToolHandler,
        check_fn: Any = None,
        requires_env: Any = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        override: bool = False,
        *,
        parallel_safe: bool = False,
    ) -> None:
        """Add a tool ``handler(args: dict, **kw) -> str`` (JSON string) to ``toolset``."""
        del check_fn, requires_env, is_async, emoji  # accepted for Hermes compatibility
        _check_callable(handler, f"handler of tool {name!r}")
        if description and "description" not in schema:
            schema = {**schema, "description": description}
        self.staged.tools.append(
            {
                "name": name,
                "toolset": toolset,
                "schema": schema,
                "handler": handler,
                "parallel_safe": parallel_safe,
                "override": override,
            }
        )

    def _unsupported(self, what: str) -> None:
        log.info(
            "plugin %r: %s is a Hermes-only feature; ignored by wayline", self._manifest.key, what
        )

    def register_command(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Hermes slash commands: accepted and ignored (logged)."""
        self._unsupported(f"register_command({name!r})")

    def register_cli_command(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Hermes CLI subcommands: accepted and ignored (logged)."""
        self._unsupported(f"register_cli_command({name!r})")

    def register_skill(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Hermes skills: accepted and ignored (logged)."""
        self._unsupported(f"register_skill({name!r})")


def _check_callable(value: Any, what: str) -> None:
    # Checked while staging, so the mistake fails register(ctx) before anything is applied.
    if not callable(value):
        raise TypeError(f"{what} is not callable")
