"""wayline.relay: a pure-Python event runtime with the nemo_relay (0.10.4) Python names.

Code written for ``nemo_relay`` ports by changing its import::

    from wayline import relay as nemo_relay

    with nemo_relay.scope.scope("agent", nemo_relay.ScopeType.Agent):
        nemo_relay.scope.event("checkpoint", data={"step": 1})

Intercepts (:mod:`~wayline.relay.intercepts`), conditional-execution guardrails
(:mod:`~wayline.relay.guardrails`) and provider codecs (:mod:`~wayline.relay.codecs`) shape
managed ``llm.execute``/``tools.execute`` calls as in Relay 0.10.4 (§6 of the reference).

Events are ATOF 0.1 (see :mod:`wayline.relay.events`); :class:`AtofExporter` writes them
byte-for-byte as Relay does. Subscribers are observers called synchronously on the emitting
thread (see :mod:`wayline.relay.subscribers`).
"""

from __future__ import annotations

from typing import Any

from wayline.relay import atof, codecs, guardrails, intercepts, llm, scope, subscribers, tools
from wayline.relay.atof import (
    AtofExporter,
    AtofExporterConfig,
    AtofExporterMode,
    AtofFormatError,
)
from wayline.relay.datatypes import (
    Json,
    LLMAttributes,
    LLMRequest,
    ScopeAttributes,
    ScopeType,
    ToolAttributes,
    ToolExecutionResult,
)
from wayline.relay.events import ATOF_VERSION, Event, MarkEvent, ScopeEvent
from wayline.relay.handles import LLMHandle, ScopeHandle, ToolHandle
from wayline.relay.outcomes import (
    LLMExecutionContext,
    LLMRequestInterceptOutcome,
    PendingMarkSpec,
    ToolExecutionContext,
    ToolExecutionInterceptOutcome,
)

__all__ = [
    "ATOF_VERSION",
    "AtifExporter",
    "AtofExporter",
    "AtofExporterConfig",
    "AtofExporterMode",
    "AtofFormatError",
    "AtofStreamExporter",
    "Event",
    "Json",
    "LLMAttributes",
    "LLMExecutionContext",
    "LLMHandle",
    "LLMRequest",
    "LLMRequestInterceptOutcome",
    "MarkEvent",
    "PendingMarkSpec",
    "ScopeAttributes",
    "ScopeEvent",
    "ScopeHandle",
    "ScopeType",
    "ToolAttributes",
    "ToolExecutionContext",
    "ToolExecutionInterceptOutcome",
    "ToolExecutionResult",
    "ToolHandle",
    "atof",
    "codecs",
    "guardrails",
    "intercepts",
    "llm",
    "scope",
    "subscribers",
    "tools",
]


def __getattr__(name: str) -> Any:
    # The ATIF exporter lives in its own subpackage, which itself builds on this package:
    # importing it lazily keeps `import wayline.relay` cheap and free of import cycles.
    if name == "AtifExporter":
        from wayline.relay.atif import AtifExporter

        return AtifExporter
    if name == "AtofStreamExporter":  # what AtofExporter(sink_type="stream") builds
        from wayline.relay.atof_stream import AtofStreamExporter

        return AtofStreamExporter
    raise AttributeError(f"module 'wayline.relay' has no attribute {name!r}")
