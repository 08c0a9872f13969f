"""Agent settings: ``config.yaml`` (the Hermes layout) + environment + CLI flags."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from wayline.host.config import ConfigError, YamlDoc
from wayline.host.tools import ToolRegistry
from wayline.runtime.provider import ProviderConfig

DEFAULT_TOOLSETS = ("terminal", "file", "delegation")
SYSTEM_PROMPT = (
    "You are wayline, a careful assistant that uses tools to act on the user's machine. "
    "Use the tools when they help, then answer concisely."
)


@dataclass(frozen=True, slots=True)
class DelegationSettings:
    """Limits and overrides for delegated child agents."""

    max_spawn_depth: int = 1
    max_concurrent_children: int = 3
    child_timeout_seconds: float = 0.0  # 0 = no limit
    model: str = ""
    provider: str = ""
    base_url: str = ""
    api_key: str = ""
    max_turns: int = 30


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """Everything one agent run needs besides the plugin host."""

    provider: ProviderConfig
    toolsets: tuple[str, ...] = DEFAULT_TOOLSETS
    max_turns: int = 90
    system_prompt: str = SYSTEM_PROMPT
    approval_mode: str = "manual"
    approval_timeout: float = 60.0
    max_tool_workers: int = 8
    delegation: DelegationSettings = field(default_factory=DelegationSettings)

    def with_(self, **changes: Any) -> AgentSettings:
        """A copy with some fields changed."""
        return replace(self, **changes)


def _section(doc: YamlDoc, name: str) -> dict[str, Any]:
    value = (doc.data or {}).get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise doc.error("must be a mapping", name)
    return value


def _num(
    doc: YamlDoc, section: str, key: str, value: Any, kind: type, source: str | None = None
) -> Any:
    """A number ≥ 0; ``source`` names the flag or argument it came from (None: config.yaml)."""

    def error(message: str) -> ConfigError:
        if source is None:
            return doc.error(message, section, key)
        return ConfigError(source, None, message)

    try:
        if isinstance(value, bool):
            raise TypeError(value)
        out = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise error(f"must be a {kind.__name__}, got {value!r}") from None
    if out != out or out in (float("inf"), float("-inf")):
        raise error(f"must be a finite number, got {value!r}")
    if out < 0:
        raise error(f"must be ≥ 0, got {value!r}")
    return out


def _given(overrides: dict[str, Any], name: str) -> str | None:
    """How a setting passed as a flag or argument is named in an error, else None."""
    if overrides.get(name) is None:
        return None
    return f"--{name.replace('_', '-')} ({name}=)"


def _text(doc: YamlDoc, section: str, key: str, value: Any, *, secret: bool = False) -> str | None:
    """A string setting (numbers are accepted as their text); None when unset."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        got = type(value).__name__ if secret else repr(value)  # never echo a credential
        raise doc.error(f"must be a string, got {got}", section, key)
    return str(value)


def _flag(doc: YamlDoc, section: str, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise doc.error(f"must be true or false, got {value!r}", section, key)


def _url(doc: YamlDoc, value: Any, source: str | None, *keys: str) -> str:
    """A base URL; ``source`` names the flag or variable it came from (None: config.yaml)."""
    if isinstance(value, str) and value.strip().lower().startswith(("http://", "https://")):
        return value.strip()
    message = f"must be an http:// or https:// URL, got {value!r}"
    if source is None:
        raise doc.error(message, *keys)
    raise ConfigError(source, None, message)


def _toolsets(doc: YamlDoc, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if not isinstance(value, list | tuple):
        raise doc.error(f"must be a list of toolset names, got {value!r}", "agent", "toolsets")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise doc.error(f"must be a toolset name, got {item!r}", "agent", "toolsets", i)
    return tuple(value)


def check_toolsets(
    registry: ToolRegistry, names: Iterable[str], source: str, doc: YamlDoc | None = None
) -> None:
    """Raise ``ConfigError`` (a ``ValueError``) for the first name that is neither a
    toolset nor a tool of ``registry``, with a did-you-mean and the known toolsets.

    ``source`` names where the list came from (``--toolsets``, ``toolsets=``); with ``doc``
    the error points at the item's line in config.yaml (``agent.toolsets``).
    """
    toolsets = registry.toolsets()
    known = set(toolsets) | set(registry.names())
    for i, name in enumerate(names):
        if name in known:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ";"
        message = (
            f"unknown toolset {name!r}{hint} known toolsets: {', '.join(sorted(toolsets))} "
            "(or the name of a single tool)"
        )
        if doc is not None:
            raise doc.error(message, "agent", "toolsets", i)
        raise ConfigError(source, None, message)


def load_settings(doc: YamlDoc, **overrides: Any) -> AgentSettings:
    """Build settings from config.yaml; CLI ``overrides`` (non-None) win, then env, then file."""
    model = (doc.data or {}).get("model")
    if isinstance(model, str):
        model = {"default": model}
    if model is None:
        model = {}
    if not isinstance(model, dict):
        raise doc.error("must be a model name or a mapping", "model")
    agent = _section(doc, "agent")
    approvals = _section(doc, "approvals")
    deleg = _section(doc, "delegation")

    def pick(flag: str, *fallbacks: Any) -> Any:
        value = overrides.get(flag)
        if value is not None:
            return value
        return next((f for f in fallbacks if f not in (None, "")), None)

    api_key = pick(
        "api_key",
        os.environ.get("WAYLINE_API_KEY"),
        model.get("api_key"),
        os.environ.get("OPENAI_API_KEY"),
    )
    base_url = pick("base_url", os.environ.get("WAYLINE_BASE_URL"), model.get("base_url"))
    model_name = pick("model", _text(doc, "model", "default", model.get("default")))
    model_name = model_name or _text(doc, "model", "name", model.get("name"))
    if not base_url:
        raise ConfigError(
            doc.path,
            doc.line_of("model"),
            "model.base_url is not set (pass --base-url or set model.base_url in config.yaml)",
        )
    if overrides.get("base_url") is not None:
        url_source: str | None = "--base-url"
    elif os.environ.get("WAYLINE_BASE_URL"):
        url_source = "WAYLINE_BASE_URL"
    else:
        url_source = None
    provider = ProviderConfig(
        base_url=_url(doc, base_url, url_source, "model", "base_url"),
        model=str(model_name or "default"),
        api_key=str(api_key or "wayline"),
        provider=str(
            pick("provider", _text(doc, "model", "provider", model.get("provider"))) or "custom"
        ),
        max_retries=_num(
            doc,
            "model",
            "max_retries",
            pick("max_retries", model.get("max_retries"), 3),
            int,
            _given(overrides, "max_retries"),
        ),
        timeout=_num(
            doc,
            "model",
            "timeout",
            pick("timeout", model.get("timeout"), 120.0),
            float,
            _given(overrides, "timeout"),
        ),
        stream=_flag(doc, "model", "stream", pick("stream", model.get("stream"), False)),
    )
    mode = str(pick("approval_mode", approvals.get("mode"), "manual"))
    if overrides.get("yolo"):
        mode = "yolo"
    if mode in ("off", "auto"):
        mode = "yolo"
    if mode not in ("manual", "yolo", "deny"):
        raise doc.error(f"must be manual, off or deny, got {mode!r}", "approvals", "mode")
    configured = agent.get("toolsets")
    if configured is not None:
        _toolsets(doc, configured)  # a bad config.yaml is refused even when a flag wins
    toolsets = _toolsets(doc, overrides.get("toolsets") or configured or DEFAULT_TOOLSETS)
    delegation = DelegationSettings(
        max_spawn_depth=_num(
            doc, "delegation", "max_spawn_depth", deleg.get("max_spawn_depth", 1), int
        ),
        max_concurrent_children=max(
            1,
            _num(
                doc,
                "delegation",
                "max_concurrent_children",
                deleg.get("max_concurrent_children", 3),
                int,
            ),
        ),
        child_timeout_seconds=_num(
            doc, "delegation", "child_timeout_seconds", deleg.get("child_timeout_seconds", 0), float
        ),
        model=_text(doc, "delegation", "model", deleg.get("model")) or "",
        provider=_text(doc, "delegation", "provider", deleg.get("provider")) or "",
        base_url=_url(doc, deleg["base_url"], None, "delegation", "base_url")
        if deleg.get("base_url")
        else "",
        api_key=_text(doc, "delegation", "api_key", deleg.get("api_key"), secret=True) or "",
        max_turns=_num(doc, "delegation", "max_iterations", deleg.get("max_iterations", 30), int),
    )
    return AgentSettings(
        provider=provider,
        toolsets=toolsets,
        max_turns=_num(
            doc,
            "agent",
            "max_turns",
            pick("max_turns", agent.get("max_turns"), 90),
            int,
            _given(overrides, "max_turns"),
        ),
        system_prompt=_text(doc, "agent", "system_prompt", agent.get("system_prompt"))
        or SYSTEM_PROMPT,
        approval_mode=mode,
        approval_timeout=_num(doc, "approvals", "timeout", approvals.get("timeout", 60), float),
        delegation=delegation,
    )
