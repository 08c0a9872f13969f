"""OpenTelemetry-style status metadata that Relay puts on managed end events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wayline.relay.events import merge_json

__all__ = [
    "RelayError",
    "RelayInternalError",
    "RelayInvalidArgument",
    "annotation_json",
    "error_metadata",
    "ok_metadata",
]


def ok_metadata(metadata: Any) -> Any:
    """``metadata`` merged with ``{"otel.status_code": "OK"}`` (any old description removed)."""
    merged = merge_json(metadata, {"otel.status_code": "OK"})
    if isinstance(merged, dict) and "otel.status_description" in merged:
        merged = {k: v for k, v in merged.items() if k != "otel.status_description"}
    return merged


class RelayError(RuntimeError):
    """An error Relay itself raises, with its ``error.type`` and status description.

    ``str()`` adds wayline's detail (which intercept); the end event's status description is
    Relay's own message, without it.
    """

    error_type = "internal_error"

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(f"{message}{detail}")
        self.relay_message = message


class RelayInvalidArgument(RelayError):
    """A callback broke a Relay contract (wrong return type …): Relay's ``invalid_argument``."""

    error_type = "invalid_argument"


class RelayInternalError(RelayError):
    """Relay failed on a callback's value (it could not be converted to JSON …)."""

    error_type = "internal_error"


def error_metadata(metadata: Any, exc: BaseException) -> Any:
    """Relay's end metadata for a callback that raised ``exc``.

    Relay wraps a Python exception from a callback as an internal error, so the description
    reads ``internal error: <Type>: <message>`` and ``exception.type`` is the ``RuntimeError``
    Relay itself would raise; keys already in ``metadata`` win for ``error.type`` and
    ``exception.type``.
    """
    if isinstance(exc, RelayError):
        status = {
            "otel.status_code": "ERROR",
            "otel.status_description": exc.relay_message,
            "error.type": exc.error_type,
        }
        merged_status = merge_json(metadata, status)
        return merged_status if isinstance(merged_status, dict) else status
    description = f"internal error: {type(exc).__name__}: {exc}"
    merged = merge_json(
        metadata, {"otel.status_code": "ERROR", "otel.status_description": description}
    )
    if not isinstance(merged, dict):
        merged = {"otel.status_code": "ERROR", "otel.status_description": description}
    merged.setdefault("error.type", "internal_error")
    merged.setdefault("exception.type", "RuntimeError")
    return merged


def annotation_json(value: object, what: str) -> dict[str, Any] | None:
    """A codec annotation as a JSON object: a mapping, or an object with ``to_dict()``."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        result = to_dict()
        if isinstance(result, Mapping):
            return dict(result)
    raise TypeError(f"{what} must be a mapping or have to_dict(), not {type(value).__name__}")
