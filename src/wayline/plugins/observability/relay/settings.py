"""Configuration of ``observability/relay``: env vars under two prefixes, plus plugins.toml.

``WAYLINE_RELAY_<NAME>`` wins over Hermes' ``HERMES_NEMO_RELAY_<NAME>``. With neither
set, ATOF and ATIF are written under ``<home>/relay/``, where home is the host's
(``Agent(home=)``, else ``$WAYLINE_HOME``; enabling the plugin is the opt-in);
``*_ATOF_ENABLED=0`` / ``*_ATIF_ENABLED=0`` switch an exporter off, and ``*_ASYNC_HOOKS=0``
makes the hooks write on the calling thread.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wayline.plugins.observability import BOOLEANS, home_of, wayline_version
from wayline.relay.atif.files import check_template
from wayline.relay.plugin import (
    AtifSettings,
    AtofSettings,
    PluginsToml,
    PluginsTomlError,
    StreamSink,
    load_plugins_toml,
)

__all__ = [
    "DEFAULT_AGENT_NAME",
    "PREFIXES",
    "RelaySettings",
    "env",
    "load_settings",
    "wayline_version",  # the ATIF agent's version when nothing names one (from the package)
]

log = logging.getLogger("wayline.plugins.relay")

DEFAULT_AGENT_NAME = "wayline"

PREFIXES = ("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_")


def env(name: str) -> str | None:
    """The first non-empty value of ``<prefix><name>`` over both prefixes."""
    for prefix in PREFIXES:
        value = os.environ.get(prefix + name)
        if value not in (None, ""):
            return value
    return None


def _var(name: str) -> str:
    """The variable the value of ``name`` came from (for messages)."""
    return next((p + name for p in PREFIXES if os.environ.get(p + name)), PREFIXES[0] + name)


def _choice(name: str, allowed: Iterable[str], default: str) -> str:
    """The value of ``name`` (lower case) when it is one of ``allowed``; a bad one is logged
    and ``default`` used."""
    value = env(name)
    if value is None:
        return default
    if value.strip().lower() in allowed:
        return value.strip().lower()
    log.error(
        "observability/relay: %s=%r must be one of %s; using %r",
        _var(name),
        value,
        ", ".join(allowed),
        default,
    )
    return default


def _flag(name: str, default: bool) -> bool:
    return BOOLEANS[_choice(name, BOOLEANS, str(default).lower())]


def _template(default: str) -> str:
    value = env("ATIF_FILENAME_TEMPLATE")
    if value is None:
        return default
    try:
        check_template(value)
        if "{session_id}" not in value and "{trajectory_id}" not in value:
            raise ValueError("it names no {session_id}: every session would overwrite one file")
    except ValueError as exc:
        log.error(
            "observability/relay: %s: %s; using %r", _var("ATIF_FILENAME_TEMPLATE"), exc, default
        )
        return default
    return value


@dataclass(frozen=True, slots=True)
class RelaySettings:
    """Resolved exporter settings of one plugin instance (one host)."""

    atof: AtofSettings | None
    atif: AtifSettings | None
    toml: PluginsToml | None
    async_hooks: bool = True
    """Hooks are queued for the plugin's worker thread (``*_ASYNC_HOOKS``; managed mode
    ignores it: its middleware needs the session scopes at once)."""
    streams: tuple[StreamSink, ...] = ()
    """ATOF stream sinks of the plugins.toml (``type = "stream"`` in ``atof.sinks``)."""

    @property
    def adaptive_mode(self) -> str | None:
        """The adaptive component's tool_parallelism mode, when the toml enables it."""
        return self.toml.adaptive_mode if self.toml is not None else None


def load_settings(
    *,
    agent_name: str = DEFAULT_AGENT_NAME,
    agent_version: str | None = None,
    home: Path | None = None,
) -> RelaySettings:
    """Env fallbacks, skipped where a valid plugins.toml owns the exporter (as in Hermes).

    ``agent_name``/``agent_version`` are the ATIF defaults when the env does not set them
    (the plugin passes the host's name and version, e.g. ``Hermes Agent``); no version
    means wayline's own (:func:`wayline_version`). ``home``: the host's home, where the
    files go unless an output directory is configured (``None``: ``$WAYLINE_HOME``,
    ``$HERMES_HOME``, ``~/.wayline``).
    """
    toml: PluginsToml | None = None
    toml_path = env("PLUGINS_TOML")
    if toml_path:
        try:
            toml = load_plugins_toml(toml_path)
        except PluginsTomlError as exc:
            log.error("observability/relay: %s; using the environment settings instead", exc)
    base = home_of(home) / "relay"
    atof: AtofSettings | None = None
    atif: AtifSettings | None = None
    toml_owns = toml is not None and toml.observability_enabled
    streams: tuple[StreamSink, ...] = ()
    if toml_owns and toml is not None:
        atof, streams = toml.atof, toml.atof_streams
    elif _flag("ATOF_ENABLED", True):
        atof = AtofSettings(
            env("ATOF_OUTPUT_DIRECTORY") or str(base / "atof"),
            env("ATOF_FILENAME") or "wayline-atof.jsonl",
            _choice("ATOF_MODE", ("append", "overwrite"), "append"),
        )
    if toml is not None and toml.atif is not None:
        atif = toml.atif
    elif _flag("ATIF_ENABLED", True):
        atif = AtifSettings(
            env("ATIF_OUTPUT_DIRECTORY") or str(base / "atif"),
            _template("wayline-atif-{session_id}.json"),
            env("ATIF_AGENT_NAME") or agent_name,
            env("ATIF_AGENT_VERSION") or agent_version or wayline_version(),
            env("ATIF_MODEL_NAME") or "unknown",
            _choice("ATIF_SUBAGENT_EXPORT_MODE", ("embedded", "all"), "embedded"),
        )
    return RelaySettings(atof, atif, toml, _flag("ASYNC_HOOKS", True), streams)
