"""Bundled observability plugins (discovered like third-party ones), and what both share.

Importing this loads neither relay machinery nor OpenTelemetry: the plugins register their
hooks before their observers are built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["BOOLEANS", "OTEL_HOOKS", "RELAY_HOOKS", "home_of", "wayline_version"]

RELAY_HOOKS = (
    "on_session_start",
    "on_session_end",
    "on_session_finalize",
    "on_session_reset",
    "pre_llm_call",
    "post_llm_call",
    "pre_api_request",
    "post_api_request",
    "api_request_error",
    "pre_tool_call",
    "post_tool_call",
    "pre_approval_request",
    "post_approval_response",
    "subagent_start",
    "subagent_stop",
)
"""The hooks ``observability/relay`` observes."""

OTEL_HOOKS = tuple(hook for hook in RELAY_HOOKS if hook != "on_session_reset")
"""The hooks ``observability/otel`` observes."""

BOOLEANS = {"1": True, "true": True, "yes": True, "on": True}
BOOLEANS.update(dict.fromkeys(("0", "false", "no", "off"), False))
"""The words a boolean setting may be (lower case)."""


def home_of(host_home: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """Where a plugin writes unless configured elsewhere: the host's home (``Agent(home=)``),
    else ``$WAYLINE_HOME``, ``$HERMES_HOME`` (a Hermes host), ``~/.wayline``."""
    if host_home is not None:
        return host_home
    env = os.environ if env is None else env
    home = env.get("WAYLINE_HOME") or env.get("HERMES_HOME")
    return Path(home).expanduser() if home else Path.home() / ".wayline"


def wayline_version() -> str:
    """The installed wayline's version (the ATIF agent's and the OTel service's, unless
    configured otherwise)."""
    try:
        return version("wayline")
    except PackageNotFoundError:  # a source tree run without installing
        return "unknown"
