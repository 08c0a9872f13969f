"""``observability/otel``: observer hooks → OpenTelemetry spans and metrics (hermes-otel's mapping).

Configured under ``plugins.entries.observability/otel`` in ``config.yaml`` and by
``WAYLINE_OTEL_*`` and the standard ``OTEL_*`` variables (docs/otel.md). The plugin builds its
own TracerProvider and MeterProvider and never touches the global ones. OpenTelemetry is
imported neither here nor in :func:`register` (the pipeline is built by the first hook).
Works unchanged in Hermes Agent (entry point ``wayline_otel``): only ``ctx.register_hook`` is
used and every payload field is optional.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wayline.plugins.observability.otel.settings import OtelConfigError, load_settings

if TYPE_CHECKING:
    from wayline.plugins.observability.otel.plugin import OtelPlugin

__all__ = ["OtelConfigError", "register"]

log = logging.getLogger("wayline.plugins.otel")


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it (nor the SDK)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


def register(ctx: Any) -> OtelPlugin | None:
    """Plugin entry point: build this host's instance and subscribe its hooks; returns it.

    A bad setting raises :class:`OtelConfigError` naming the field (the host reports it as
    the plugin's load error); a missing ``otel`` extra or ``exporter: none`` registers
    nothing. The ``file`` exporter writes under ``ctx.home`` unless configured elsewhere.
    """
    config = getattr(ctx, "config", None)
    home = getattr(ctx, "home", None)
    settings = load_settings(
        config if isinstance(config, dict) else None, home=Path(home) if home else None
    )
    if not settings.enabled or settings.exporter == "none":
        log.info(
            "observability/otel: disabled (enabled=%s, exporter=%s)",
            settings.enabled,
            settings.exporter,
        )
        return None
    if not _installed("opentelemetry.sdk"):
        log.warning(
            "observability/otel: OpenTelemetry is not installed; install 'wayline[otel]' to "
            "record spans — the plugin registers nothing"
        )
        return None
    grpc = settings.exporter == "otlp" and settings.protocol == "grpc"
    if grpc and not _installed("opentelemetry.exporter.otlp.proto.grpc"):
        raise OtelConfigError(
            "plugins.entries.observability/otel.protocol: grpc needs "
            "pip install 'wayline[otel-grpc]'"
        )
    from wayline.plugins.observability.otel.plugin import create

    plugin = create(settings)
    plugin.bind(ctx)
    log.debug("observability/otel registered (exporter=%s)", settings.exporter)
    return plugin
