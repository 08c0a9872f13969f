"""The agent runtime: loop, provider, tools, approvals, delegation, sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wayline.host.config import ConfigError, wayline_home
from wayline.host.manager import PluginManager
from wayline.redaction import KnownValues
from wayline.runtime.loop import TurnLoop, TurnResult
from wayline.runtime.provider import Provider, ProviderConfig
from wayline.runtime.sessions import SessionStore
from wayline.runtime.settings import AgentSettings, check_toolsets, load_settings


@dataclass(slots=True)
class Runtime:
    """A plugin host with built-in tools, settings and a session store.

    ``known`` holds the secrets the agent was given (its API key, configured headers,
    credential-like environment variables, the config's ``redaction`` section): they are
    masked in every record while the runtime lives (see ``runtime.known_values``).
    """

    manager: PluginManager
    settings: AgentSettings
    store: SessionStore
    provider: Provider | None = None
    known: KnownValues = field(default_factory=KnownValues)

    def agent(self, **kwargs: Any) -> TurnLoop:
        """A new top-level agent's turn loop (``platform="cli"`` unless given).

        Agents of one runtime share one provider: the SDK client and its connection
        pool are built once, not per conversation, and before the agent's first turn.
        Built inside the first model call instead, that call's measured duration would
        include importing the SDK, and the plugins' own set-up (on their hook thread, at
        the first hooks) would compete with that import rather than overlap the model's
        latency.
        """
        if self.provider is None:
            self.provider = Provider(self.settings.provider)
            self.provider.client()
        kwargs.setdefault("provider", self.provider)
        kwargs.setdefault("known", self.known.child())  # what this session will learn
        return TurnLoop(self.manager, self.settings, store=self.store, **kwargs)


def build_runtime(
    home: Path | None = None,
    *,
    extra_plugins: tuple[str, ...] = (),
    record_home: Path | None = None,
    **overrides: Any,
) -> Runtime:
    """Load config, register built-in tools, load enabled plugins, build settings.

    Built-ins register before plugins load so a plugin cannot silently shadow one.
    ``record_home``: where the plugins write their records (default: ``home``).
    Raises ``ConfigError`` for bad user input.
    """
    from wayline.runtime.delegation import register_delegation_tool
    from wayline.runtime.known_values import agent_known_values
    from wayline.runtime.tools import register_builtin_tools

    home = home or wayline_home()
    if home.exists() and not home.is_dir():
        raise ConfigError(home, None, "not a directory (WAYLINE_HOME must name a directory)")
    manager = PluginManager(home, record_home=record_home)
    register_builtin_tools(manager.tools)
    register_delegation_tool(manager.tools)
    settings = load_settings(manager.config_doc, **overrides)
    known = agent_known_values(manager.config_doc, settings)  # as they are at the start
    manager.discover_and_load(extra_enabled=extra_plugins)
    # Toolsets are known once plugins have registered theirs: a typo is refused here.
    doc = manager.config_doc
    configured = (doc.data or {}).get("agent") or {}
    if configured.get("toolsets") is not None:
        check_toolsets(manager.tools, _names(configured["toolsets"]), "config.yaml", doc)
    if overrides.get("toolsets") is not None:
        check_toolsets(manager.tools, settings.toolsets, "toolsets")
    return Runtime(manager, settings, SessionStore(home / "sessions"), known=known)


def _names(value: Any) -> tuple[str, ...]:
    """A toolsets value (already checked by ``load_settings``) as a tuple of names."""
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    return tuple(value)


__all__ = [
    "AgentSettings",
    "ProviderConfig",
    "Runtime",
    "SessionStore",
    "TurnLoop",
    "TurnResult",
    "build_runtime",
    "load_settings",
]
