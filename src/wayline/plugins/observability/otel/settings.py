"""Configuration of ``observability/otel``: ``plugins.entries.observability/otel`` + environment.

Precedence, highest first: the plugin's own variables (``WAYLINE_OTEL_EXPORTER``,
``WAYLINE_OTEL_FILE``), the standard ``OTEL_*`` variables, the ``config.yaml`` section, the
defaults. With nothing configured the plugin writes JSON lines under
``$WAYLINE_HOME/otel/`` and sends nothing anywhere (enabling the plugin is the opt-in);
``OTEL_EXPORTER_OTLP_ENDPOINT`` alone switches it to OTLP. No OpenTelemetry import here,
so a bad setting is reported even when the ``otel`` extra is missing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from wayline.contract.credentials import shown_url, url_credentials
from wayline.plugins.observability import BOOLEANS, home_of
from wayline.redaction.scrub import ScrubFilter, scrub

__all__ = [
    "EXPORTERS",
    "PROTOCOLS",
    "SECTION",
    "CredentialFilter",
    "OtelConfigError",
    "OtelSettings",
    "load_settings",
    "scrub",
    "shown_url",
]

SECTION = "plugins.entries.observability/otel"
EXPORTERS = ("otlp", "console", "file", "none")
PROTOCOLS = ("http/protobuf", "grpc")


class OtelConfigError(ValueError):
    """A bad setting; the message names the config field or variable and the bad value."""


@dataclass(frozen=True, slots=True)
class OtelSettings:
    """Resolved settings for one plugin instance."""

    enabled: bool = True
    exporter: str = "file"
    file: Path | None = None
    metrics_file: Path | None = None
    endpoint: str | None = field(default=None, repr=False)  # may hold credentials
    protocol: str = "http/protobuf"
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    service_name: str = "wayline"
    project_name: str | None = None
    resource_attributes: dict[str, str] = field(default_factory=dict)
    sample_rate: float | None = None
    metrics: bool = True
    metric_export_interval_ms: int = 60_000
    capture_content: bool = True
    content_max_chars: int = 4_000
    capture_conversation_history: bool = False
    history_max_chars: int = 20_000
    agent_name: str = "wayline"
    root_span_ttl_ms: int = 600_000
    async_hooks: bool = True
    force_flush_on_session_end: bool = False
    flush_timeout_ms: int = 2_000
    shutdown_timeout_ms: int = 2_000
    max_queue_size: int = 2_048
    max_export_batch_size: int = 512
    schedule_delay_ms: int = 1_000
    export_timeout_ms: int = 10_000

    def traces_endpoint(self) -> str | None:
        """The OTLP traces URL, or None to let the SDK read ``OTEL_EXPORTER_OTLP_*``."""
        return self._endpoint_for("traces")

    def metrics_endpoint(self) -> str | None:
        """The OTLP metrics URL, or None to let the SDK read ``OTEL_EXPORTER_OTLP_*``."""
        return self._endpoint_for("metrics")

    def _endpoint_for(self, signal: str) -> str | None:
        if self.protocol == "grpc":  # one endpoint for every signal, no path
            return self.endpoint or None
        return _signal_url(self.endpoint, signal)


def _signal_url(endpoint: str | None, signal: str) -> str | None:
    """The base URL with ``/v1/<signal>`` joined to its path, before any query string."""
    if not endpoint:
        return None
    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    for known in ("/v1/traces", "/v1/metrics"):
        path = path.removesuffix(known)
    return urlunsplit(parts._replace(path=f"{path}/v1/{signal}"))


class CredentialFilter(ScrubFilter):
    """A logging filter that hides the credentials of an exporter's settings (header values,
    the endpoint's userinfo, password and query values) in every record (the OTLP SDK's retry
    messages quote the request URL). An observer: it never drops a record and never raises;
    it runs on the logging thread, and does not block."""

    def __init__(self, settings: OtelSettings) -> None:
        found = {f"header {k}": v for k, v in settings.headers.items() if v}
        super().__init__(found | (url_credentials(settings.endpoint) if settings.endpoint else {}))


_KEYS = frozenset(OtelSettings.__dataclass_fields__)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_INTS = (  # variable, setting, its minimum
    ("OTEL_METRIC_EXPORT_INTERVAL", "metric_export_interval_ms", 1),
    ("OTEL_BSP_MAX_QUEUE_SIZE", "max_queue_size", 1),
    ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "max_export_batch_size", 1),
    ("OTEL_BSP_SCHEDULE_DELAY", "schedule_delay_ms", 1),
    ("OTEL_BSP_EXPORT_TIMEOUT", "export_timeout_ms", 1),
    ("WAYLINE_OTEL_ROOT_SPAN_TTL_MS", "root_span_ttl_ms", 0),
)


def _where(key: str) -> str:
    return f"{SECTION}.{key}"


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in BOOLEANS:
        return BOOLEANS[value.strip().lower()]
    raise OtelConfigError(f"{where}: must be true or false (got {value!r})")


def _int(value: Any, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool):
        raise OtelConfigError(f"{where}: must be an integer (got {value!r})")
    try:
        number = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise OtelConfigError(f"{where}: must be an integer (got {value!r})") from None
    if number < minimum:
        raise OtelConfigError(f"{where}: must be at least {minimum} (got {number})")
    return number


def _rate(value: Any, where: str) -> float:
    try:
        rate = float(value)
    except (TypeError, ValueError):
        rate = -1.0
    if not 0.0 <= rate <= 1.0:
        raise OtelConfigError(f"{where}: must be a number from 0 to 1 (got {value!r})")
    return rate


def _str_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise OtelConfigError(f"{where}: must be a mapping of names to strings")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(v, str | int | float) or isinstance(v, bool):
            # A header's value may be a credential: its type is named, never the value.
            got = type(v).__name__ if where.endswith(".headers") else repr(v)
            raise OtelConfigError(f"{where}.{k}: must be a string (got {got})")
        out[str(k)] = str(v)
    return out


def _one_of(value: str, allowed: tuple[str, ...], source: str) -> str:
    if value not in allowed:
        raise OtelConfigError(f"{source}: must be one of {', '.join(allowed)} (got {value!r})")
    return value


def _interpolate(headers: dict[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """``${VAR}`` in header values comes from the environment (keeps tokens out of config)."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise OtelConfigError(f"{_where('headers')}: ${{{name}}} is not set")
        return env[name]

    return {k: _VAR.sub(sub, v) for k, v in headers.items()}


def load_settings(
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    home: Path | None = None,
) -> OtelSettings:
    """Resolve the settings; raises :class:`OtelConfigError` naming the bad field.

    ``home``: the host's home, where the ``file`` exporter writes unless ``file`` or
    ``WAYLINE_OTEL_FILE`` names another file (``None``: ``$WAYLINE_HOME``, ``~/.wayline``).
    """
    env = os.environ if env is None else env
    cfg = dict(config or {})
    unknown = sorted(set(cfg) - _KEYS - {"allow_tool_override"})
    if unknown:
        raise OtelConfigError(
            f"{_where(unknown[0])}: unknown setting (known: {', '.join(sorted(_KEYS))})"
        )
    values: dict[str, Any] = {}
    defaults = OtelSettings()
    for key, value in cfg.items():
        if key == "allow_tool_override" or value is None:
            continue
        default = getattr(defaults, key)
        where = _where(key)
        if isinstance(default, bool):
            values[key] = _bool(value, where)
        elif isinstance(default, int):
            values[key] = _int(value, where, minimum=1 if key != "root_span_ttl_ms" else 0)
        elif key in ("headers", "resource_attributes"):
            values[key] = _str_map(value, where)
        elif key == "sample_rate":
            values[key] = _rate(value, where)
        elif key in ("file", "metrics_file"):
            values[key] = Path(str(value)).expanduser()
        elif not isinstance(value, str):
            raise OtelConfigError(f"{where}: must be a string (got {value!r})")
        else:
            values[key] = value
    s = OtelSettings(**values)
    changes: dict[str, Any] = {}
    exporter, source = s.exporter, _where("exporter")
    traces_env = (env.get("OTEL_TRACES_EXPORTER") or "").strip().lower()
    if traces_env:
        exporter, source = traces_env.split(",")[0].strip(), "OTEL_TRACES_EXPORTER"
    elif "exporter" not in values and (
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    ):
        exporter = "otlp"  # an endpoint alone is the standard way to ask for OTLP
    own = (env.get("WAYLINE_OTEL_EXPORTER") or "").strip().lower()
    if own:
        exporter, source = own, "WAYLINE_OTEL_EXPORTER"
    changes["exporter"] = _one_of(exporter, EXPORTERS, source)
    protocol, source = s.protocol, _where("protocol")
    for name in ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        if env.get(name):
            protocol, source = env[name].strip().lower(), name
            break
    changes["protocol"] = _one_of(protocol, PROTOCOLS, source)
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or ""
    signal_own = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
    )
    if not s.endpoint and "?" in base and not signal_own:
        # The SDK would append /v1/traces after the query string; the signal path is joined
        # here instead (before the query), as for a configured endpoint.
        changes["endpoint"] = base
    file = Path(env["WAYLINE_OTEL_FILE"]).expanduser() if env.get("WAYLINE_OTEL_FILE") else s.file
    if file is None:
        file = home_of(home, env) / "otel" / "spans.jsonl"
    changes["file"] = file
    changes["metrics_file"] = s.metrics_file or file.with_name(f"{file.stem}.metrics.jsonl")
    if env.get("OTEL_SERVICE_NAME"):
        changes["service_name"] = env["OTEL_SERVICE_NAME"]
    if (env.get("OTEL_SDK_DISABLED") or "").strip().lower() == "true":
        changes["enabled"] = False
    if (env.get("OTEL_METRICS_EXPORTER") or "").strip().lower() == "none":
        changes["metrics"] = False
    changes["headers"] = _interpolate(s.headers, env)
    for name, key, minimum in _ENV_INTS:
        if env.get(name):
            changes[key] = _int(env[name], name, minimum=minimum)
    return replace(s, **changes)
