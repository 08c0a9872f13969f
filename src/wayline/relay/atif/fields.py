"""Fields of ATIF steps and agents read from single ATOF events: ancestry, invocation times and
status, the middleware trace, what a tool call really ran with, a scope's declared agent.

Pure functions of JSON values, shared by both entry points through the builder.
"""

from __future__ import annotations

from typing import Any

from wayline.relay.atif.model import AGENT_METADATA_KEY, FRAMEWORK, Step
from wayline.relay.atif.payloads import JsonDict, as_dict, epoch_seconds_ms, parse_arguments

__all__ = [
    "ancestry_of",
    "declared_agent",
    "invocation_of",
    "middleware_trace",
    "note_execution",
    "relay_extra",
    "status_of",
]


def middleware_trace(metadata: JsonDict | None) -> list[Any] | None:
    """The ``middleware_trace`` a start event's metadata carries (None when absent or empty)."""
    trace = metadata.get("middleware_trace") if metadata is not None else None
    return trace if isinstance(trace, list) and trace else None


def declared_agent(metadata: JsonDict | None) -> JsonDict | None:
    """The ATIF agent block an agent scope declares (``atif_agent`` metadata), if any."""
    return as_dict(metadata.get(AGENT_METADATA_KEY)) if metadata is not None else None


def relay_extra(uuid: str, metadata: JsonDict | None) -> JsonDict:
    """A root trajectory's ``extra.nemo_relay``: its scope UUID and the session/user ids."""
    relay: JsonDict = {"session_instance_id": uuid}
    if metadata is not None:
        for key in ("session_id", "user_id"):
            value = metadata.get(key)
            if value is not None:
                relay[key] = value
    return {"nemo_relay": relay}


def ancestry_of(uuid: str, name: str, parent: str | None, parent_name: str | None) -> JsonDict:
    """Relay's ``ancestry`` entry of a span: its id and name, and its parent's."""
    out: JsonDict = {"function_id": uuid, "function_name": name}
    if parent is not None:
        out["parent_id"] = parent
    if parent_name is not None:
        out["parent_name"] = parent_name
    return out


def status_of(metadata: JsonDict | None) -> str:
    """An invocation's status from an end event's metadata (``completed`` unless it failed)."""
    if metadata is None:
        return "completed"
    if metadata.get("otel.status_code") == "ERROR":
        return "error"
    # A host's own outcome (wayline's and Hermes' tool hooks: error, blocked, timeout,
    # cancelled) is kept; "ok" is Relay's "completed".
    status = metadata.get("status")
    if isinstance(status, str) and status and status != "ok":
        return status
    return "completed"


def note_execution(step: Step, call_id: str, arguments: Any, metadata: Any) -> None:
    """Record on the model's tool call what actually ran, when that differs from what the
    model asked for: the executed arguments and the middleware trace that explains them.

    The call's ``arguments`` stay the model's, so the step still shows what the model said.
    """
    if arguments is None:
        return
    call = next((c for c in step.tool_calls if c.call_id == call_id), None)
    if call is None:
        return
    executed = parse_arguments(arguments)
    trace = middleware_trace(as_dict(metadata))
    if trace is None and executed == call.arguments:
        return
    call.extra = {"executed_arguments": executed, "middleware_trace": trace or []}


def invocation_of(
    invocation_id: str, start_ns: int | None, end_ns: int | None, status: str
) -> JsonDict:
    """Relay's ``invocation`` entry: start/end epoch seconds (ms precision), id, status."""
    out: JsonDict = {}
    start = epoch_seconds_ms(start_ns)
    if start is not None:
        out["start_timestamp"] = start
    end = epoch_seconds_ms(end_ns)
    if end is not None:
        out["end_timestamp"] = end
    out.update(invocation_id=invocation_id, status=status, framework=FRAMEWORK)
    return out
