"""Python values to plain JSON values, as Relay converts what a callback hands back.

Relay turns a tool's ``ToolExecutionResult.result`` (and a stream finalizer's response) into
JSON before it records or returns it: mappings become dicts (string keys only), sequences,
sets and ranges become lists, dataclass instances become dicts of their fields, NaN and the
infinities become ``None``. Anything else (an enum member, a date, ``bytes``, a generator) and
any cycle is refused with Relay's ``Failed to convert to JSON: …`` wording.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence, Set
from typing import Any

__all__ = ["JsonConversionError", "to_json_value"]

_INT_MIN = -(2**63)
_UINT_MAX = 2**64 - 1


class JsonConversionError(ValueError):
    """A value Relay could not convert to JSON (``str()`` is Relay's message)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Failed to convert to JSON: {reason}")


def _type_text(value: object) -> str:
    return "'None' is" if value is None else f"{type(value).__name__!r} object is"


def to_json_value(value: Any) -> Any:
    """``value`` as plain JSON (new containers; strings and numbers shared).

    Raises :class:`JsonConversionError` for an unsupported type, a non-string key, an integer
    outside 64 bits, or a cycle. A container reached twice without a cycle is converted twice.
    """
    return _convert(value, set())


def _convert(value: Any, ancestors: set[int]) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if not _INT_MIN <= value <= _UINT_MAX:
            raise JsonConversionError("JSON number out of range")
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes | bytearray | memoryview):
        raise JsonConversionError("invalid type: byte array, expected any valid JSON value")
    key = id(value)
    if key in ancestors:
        raise JsonConversionError("circular reference detected")
    ancestors.add(key)
    try:
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for name, item in value.items():
                if not isinstance(name, str):
                    raise JsonConversionError(
                        f"unexpected type: {_type_text(name)} not an instance of 'str'"
                    )
                out[name] = _convert(item, ancestors)
            return out
        if isinstance(value, Sequence | Set):
            return [_convert(item, ancestors) for item in value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {
                field.name: _convert(getattr(value, field.name), ancestors)
                for field in dataclasses.fields(value)
            }
        raise JsonConversionError(f"unsupported type {type(value).__name__}")
    finally:
        ancestors.discard(key)
