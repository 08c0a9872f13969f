"""``observability/otel``: observer hooks → OpenTelemetry spans and metrics (hermes-otel's mapping).

Enable with ``wayline plugins enable observability/otel`` (needs ``pip install 'wayline[otel]'``)
and configure under ``plugins.entries.observability/otel`` in ``config.yaml`` or with
``WAYLINE_OTEL_EXPORTER`` / ``WAYLINE_OTEL_FILE`` and the standard ``OTEL_*`` variables
(see docs/otel.md). The plugin builds its own private TracerProvider and MeterProvider and
never touches the global ones. OpenTelemetry is not imported here nor in :func:`register`:
the pipeline is built on the hook thread when the first hook arrives (at once with
``async_hooks: false``), so neither ``wayline --help`` nor an agent's start-up pays for it.
Without the ``otel`` extra, :func:`register` logs one warning and registers nothing.

Works unchanged in Hermes Agent through the ``hermes_agent.plugins`` entry point
``wayline_otel``: only ``ctx.register_hook`` is used and every payload field is optional.

Open spans are ended and queued spans exported when the process ends: at ``atexit``, and
also when ``logging.shutdown()`` runs, because Hermes' one-shot mode (``hermes -z``) leaves
through ``os._exit``, which skips ``atexit`` but calls ``logging.shutdown()`` first.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from typing import TYPE_CHECKING, Any

from wayline.host.exit import ExitHook
from wayline.plugins.observability.otel.settings import OtelConfigError, load_settings

if TYPE_CHECKING:
    from wayline.plugins.observability.otel.plugin import OtelPlugin

__all__ = ["OtelConfigError", "current", "register", "shutdown"]

log = logging.getLogger("wayline.plugins.otel")
_lock = threading.Lock()
_state: dict[str, Any] = {}


_exit_hook = ExitHook(lambda: shutdown(), name="observability/otel")


def _install(plugin: OtelPlugin | None) -> None:
    with _lock:
        previous: OtelPlugin | None = _state.pop("plugin", None)
        if plugin is not None:
            _state["plugin"] = plugin
    if previous is not None:
        previous.shutdown()  # a re-registration (forced reload) replaces the old instance


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it (nor the SDK)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


def register(ctx: Any) -> None:
    """Plugin entry point: build the pipeline from the settings and subscribe the hooks.

    A bad setting raises :class:`OtelConfigError` naming the field (the host reports it as
    the plugin's load error); a missing ``otel`` extra or ``exporter: none`` registers
    nothing, so the agent pays nothing.
    """
    config = getattr(ctx, "config", None)
    settings = load_settings(config if isinstance(config, dict) else None)
    if not settings.enabled or settings.exporter == "none":
        log.info(
            "observability/otel: disabled (enabled=%s, exporter=%s)",
            settings.enabled,
            settings.exporter,
        )
        _install(None)
        return
    if not _installed("opentelemetry.sdk"):
        log.warning(
            "observability/otel: OpenTelemetry is not installed; install 'wayline[otel]' to "
            "record spans — the plugin registers nothing"
        )
        return
    grpc = settings.exporter == "otlp" and settings.protocol == "grpc"
    if grpc and not _installed("opentelemetry.exporter.otlp.proto.grpc"):
        raise OtelConfigError(
            "plugins.entries.observability/otel.protocol: grpc needs "
            "pip install 'wayline[otel-grpc]'"
        )
    from wayline.plugins.observability.otel.plugin import create

    plugin = create(settings)
    _install(plugin)
    for name, callback in plugin.hooks(arming=_exit_hook.arming).items():
        ctx.register_hook(name, callback)
    _exit_hook.arm()
    log.debug("observability/otel registered (exporter=%s)", settings.exporter)


def current() -> OtelPlugin | None:
    """The registered instance, if any (tests, the CLI and benches flush or inspect it)."""
    return _state.get("plugin")


def shutdown() -> None:
    """End open spans, export what is left (bounded by ``shutdown_timeout_ms``), stop threads."""
    with _lock:
        plugin: OtelPlugin | None = _state.pop("plugin", None)
    if plugin is not None:
        plugin.shutdown()
