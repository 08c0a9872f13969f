"""Shared serialization for the ``observability``/``adaptive`` config dataclasses.

``to_json_object`` turns a config value into the canonical JSON object: objects with
``to_dict`` use it, other dataclasses become their non-``None`` fields, and ``None`` values
are dropped from mappings, as nemo_relay writes its plugin config documents.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from wayline.relay.typing_names import JsonObject, UnsupportedBehavior

__all__ = ["ConfigPolicy", "to_json", "to_json_object"]


def to_json(value: Any) -> Any:
    """The canonical JSON form of a config value (see the module docstring)."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_json(getattr(value, f.name))
            for f in fields(value)
            if getattr(value, f.name) is not None
        }
    if isinstance(value, list):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items() if v is not None}
    return value


def to_json_object(value: Any) -> JsonObject:
    """:func:`to_json` of a value that must serialize to an object."""
    out = to_json(value)
    if not isinstance(out, dict):
        raise TypeError(f"config must serialize to a JSON object, not {type(out).__name__}")
    return out


@dataclass(slots=True)
class ConfigPolicy:
    """What to do with unknown components, unknown fields and unsupported values."""

    unknown_component: UnsupportedBehavior = "warn"
    unknown_field: UnsupportedBehavior = "warn"
    unsupported_value: UnsupportedBehavior = "error"

    def to_dict(self) -> JsonObject:
        """The policy as a JSON object."""
        return {
            "unknown_component": self.unknown_component,
            "unknown_field": self.unknown_field,
            "unsupported_value": self.unsupported_value,
        }
