"""JSON text exactly as Relay 0.10.4 writes it (serde_json over sorted maps).

Sorted keys at every level, ``,``/``:`` separators, raw UTF-8 (only ``"``, ``\\`` and control
characters escaped), and Relay's float text: Python ``repr`` except that ``1e-5 <= |x| < 1e-4``
is written as a decimal (``0.000015``) and smaller magnitudes without exponent padding
(``1e-6``). Non-finite floats, which JSON cannot carry, become ``null``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["JsonText", "dumps", "encode_str", "fix_relay_floats", "read_only"]

encode_str: Callable[[str], str] = json.encoder.encode_basestring
"""JSON string literal of a ``str`` with ``ensure_ascii=False`` escaping (the C fast path)."""


def _default(value: Any) -> Any:
    """Last resort for values JSON has no type for: observers must not fail the caller."""
    try:
        if isinstance(value, (set, frozenset)):
            return sorted(value, key=repr)
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).decode("utf-8", "replace")
        to_dict = getattr(value, "to_dict", None)
        if callable(to_dict):
            return to_dict()
        return str(value)
    except Exception:
        # A value that cannot even be printed still leaves a line: losing the event would
        # leave its scope open (or an end without its start) in every file.
        return f"<{type(value).__name__} unprintable>"


# The standard encoder's public entry point (it builds its C encoder per call, which keeps
# the circular-reference table per call and so per thread).
_encode = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default
).encode


_NUMBER_FIX = re.compile(
    r'"(?:[^"\\]|\\.)*"'  # a string literal: left as it is
    r"|(-?)(\d)(?:\.(\d+))?e-(\d+)"  # a float with a negative exponent
    r"|-?Infinity|NaN"
)


def _fix_token(m: re.Match[str]) -> str:
    text = m.group(0)
    if text[0] == '"':
        return text
    if m.group(2) is None:
        return "null"
    sign, lead, frac, exp = m.group(1), m.group(2), m.group(3) or "", int(m.group(4))
    if exp == 5:
        return f"{sign}0.0000{lead}{frac}"
    return f"{sign}{lead}{'.' + frac if frac else ''}e-{exp}"


# A Python float with a negative exponent reads <digits>e-<two or more digits>, and as a
# value of compact JSON it stands between ":", "," or "[" and ",", "]" or "}" (or is the
# whole text). "e-" is common in text (UUIDs, hyphenated words), and the tokenizing rewrite
# walks every string literal, so only this shape triggers it (a string that merely looks
# like it just costs the exact rewrite, which leaves strings alone).
_SMALL_FLOAT = re.compile(r"(?:^|[:,\[])\s*-?\d+(?:\.\d+)?e-\d\d+\s*(?:$|[,\]}])")


def _exponent_shape(text: str) -> bool:
    """Whether some ``e-`` in ``text`` has a digit before it and two after: what every
    :data:`_SMALL_FLOAT` match has. Ids put ``e-`` in most metadata texts (a UUID's hex
    groups), and the regex scan costs microseconds per line where this costs a few finds."""
    find = text.find
    i = find("e-", 1)
    while i > 0:
        if text[i - 1].isdigit() and text[i + 2 : i + 4].isdigit():
            return True
        i = find("e-", i + 2)
    return False


def _needs_fix(text: str) -> bool:
    # Substring tests run at memchr speed; the regex confirms a hit before the rewrite runs.
    return (
        ("e-" in text and _exponent_shape(text) and _SMALL_FLOAT.search(text) is not None)
        or "NaN" in text
        or "Infinity" in text
    )


def fix_relay_floats(text: str) -> str:
    """Rewrite Python float tokens in JSON ``text`` to Relay's spelling (strings untouched)."""
    if _needs_fix(text):
        return _NUMBER_FIX.sub(_fix_token, text)
    return text


class JsonText(dict[str, Any]):
    """A JSON object that carries its own Relay-exact text: :func:`dumps` returns ``text``.

    Treat it as read-only (the text is not updated on changes). Everywhere else it is an
    ordinary ``dict``.
    """

    __slots__ = ("text",)

    def __init__(self, value: Mapping[str, Any], text: str) -> None:
        super().__init__(value)
        self.text = text


def read_only(value: Any) -> Any:
    """``value`` as a :class:`JsonText` when it is a dict with string keys (else as is): for
    event data its owner will not change, encoded once, and kept by the ATIF exporter as it
    is instead of parsed back from the event's line."""
    if value.__class__ is dict and all(key.__class__ is str for key in value):
        return JsonText(value, dumps(value))
    return value


def dumps(value: Any) -> str:
    """Relay-identical compact JSON text of ``value`` (``None`` is ``null``)."""
    if value is None:
        return "null"
    if value.__class__ is str:
        return encode_str(value)
    if value.__class__ is JsonText:
        return value.text
    try:
        text = _encode(value)
    except (RecursionError, ValueError, TypeError):
        # A reference cycle (or a key JSON cannot carry) in data handed to relay: encode a
        # converted copy, where cycles are cut with a marker, instead of losing the event.
        from wayline.redaction.sanitize import to_jsonable

        text = _encode(to_jsonable(value))
    if _needs_fix(text):
        return _NUMBER_FIX.sub(_fix_token, text)
    return text
