"""Relay 0.10.4 names outside the port's scope: importable, refusing to be constructed.

The OpenTelemetry/OpenInference subscriber types are not ported (wayline exports spans through
its own exporter plugins; see docs/relay-porting.md). Their names exist so that a module that
imports them alongside ported names still imports; constructing one raises
``NotImplementedError`` saying so.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = [
    "OpenTelemetryConfig",
    "OpenTelemetryFileSinkConfig",
    "OpenTelemetryLogConfig",
    "OpenTelemetryLogSubscriber",
    "OpenTelemetryMetricConfig",
    "OpenTelemetryMetricSubscriber",
    "OpenTelemetryRuntimeDiagnostic",
    "OpenTelemetryRuntimeDiagnostics",
    "OpenTelemetrySubscriber",
]


class _NotPorted:
    """Base of the names that are not ported: construction raises ``NotImplementedError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._refuse()

    @classmethod
    def _refuse(cls) -> NoReturn:
        raise NotImplementedError(
            f"wayline.relay does not port nemo_relay.{cls.__name__} (the OpenTelemetry "
            "subscriber types); see docs/relay-porting.md"
        )


class OpenTelemetryConfig(_NotPorted):
    """Not ported: Relay's OTLP trace subscriber configuration."""


class OpenTelemetryFileSinkConfig(_NotPorted):
    """Not ported: Relay's OTLP file sink configuration."""


class OpenTelemetryLogConfig(_NotPorted):
    """Not ported: Relay's OTLP log subscriber configuration."""


class OpenTelemetryLogSubscriber(_NotPorted):
    """Not ported: Relay's OTLP log subscriber."""


class OpenTelemetryMetricConfig(_NotPorted):
    """Not ported: Relay's OTLP metric subscriber configuration."""


class OpenTelemetryMetricSubscriber(_NotPorted):
    """Not ported: Relay's OTLP metric subscriber."""


class OpenTelemetryRuntimeDiagnostic(_NotPorted):
    """Not ported: one OTLP subscriber diagnostic."""


class OpenTelemetryRuntimeDiagnostics(_NotPorted):
    """Not ported: OTLP subscriber diagnostics."""


class OpenTelemetrySubscriber(_NotPorted):
    """Not ported: Relay's OTLP trace subscriber."""
