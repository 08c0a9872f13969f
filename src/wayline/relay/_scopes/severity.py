"""``LogSeverity``: the severity a mark records in ``metadata["nemo_relay.log.severity"]``."""

from __future__ import annotations

from enum import Enum
from typing import Final

__all__ = ["SEVERITY_KEY", "LogSeverity"]

SEVERITY_KEY: Final = "nemo_relay.log.severity"


class LogSeverity(Enum):
    """Severity of a mark (``scope.event(..., severity=)``), recorded in its metadata."""

    Trace = "trace"
    Debug = "debug"
    Info = "info"
    Warn = "warn"
    Error = "error"
