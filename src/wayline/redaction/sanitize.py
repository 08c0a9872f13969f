"""The payload sanitizer: JSON-compatible, bounded, redacted copies of anything a hook emits.

`sanitize` is the single policy behind every hook field marked sanitized and every
exporter: convert to JSON-compatible data (`to_jsonable`), bound depth / string /
sequence sizes with explicit markers, redact credential keys and secret-looking text
(`wayline.redaction.redact`), then enforce the total size limit
(`WAYLINE_PAYLOAD_MAX_CHARS`) with staged fallbacks. It never mutates its input, keeps
no shared mutable state per call, and is idempotent on its own output.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from operator import is_
from typing import Any

from wayline.redaction.known import KnownValues
from wayline.redaction.memo import SanitizeMemo
from wayline.redaction.redact import (
    REDACT_PATTERNS_ENV,
    REDACTED,
    SecretPattern,
    add_secret_pattern,
    add_sensitive_key,
    is_sensitive_key,
    redact_text,
    reload_env_patterns,
    remove_secret_pattern,
    secret_patterns,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SEQUENCE",
    "DEFAULT_MAX_STRING",
    "DEFAULT_PAYLOAD_MAX_CHARS",
    "MIN_PAYLOAD_MAX_CHARS",
    "PAYLOAD_MAX_CHARS_ENV",
    "REDACTED",
    "REDACT_PATTERNS_ENV",
    "TRUNCATED_ITEMS_KEY",
    "SanitizeMemo",
    "SecretPattern",
    "add_secret_pattern",
    "add_sensitive_key",
    "is_sensitive_key",
    "payload_max_chars",
    "redact_bounded",
    "redact_text",
    "redact_value",
    "reload_env_patterns",
    "remove_secret_pattern",
    "sanitize",
    "sanitize_headers",
    "secret_patterns",
    "to_jsonable",
]


# Second stage when the first encoding is over the limit (Hermes' values).
# Text past the string bound is still redacted this far, so a secret straddling the cut
# is recognised whole instead of leaking its first characters.

_log = logging.getLogger(__name__)
from wayline.redaction._walk import (  # noqa: E402
    _FALLBACK_MAX_SEQUENCE,
    _FALLBACK_MAX_STRING,
    _LAST_MAX_STRING,
    _MAX_TYPE_NAME,
    _WRAPPER_KEYS,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_SEQUENCE,
    DEFAULT_MAX_STRING,
    DEFAULT_PAYLOAD_MAX_CHARS,
    MIN_PAYLOAD_MAX_CHARS,
    PAYLOAD_MAX_CHARS_ENV,
    TRUNCATED_ITEMS_KEY,
    _OverBudget,
    _safe_str,
    _Walker,
)

# Stages of (string bound, sequence bound): text is shortened first; only a value whose
# structure alone is over the limit has its sequences cut (then the wrapper follows).
_STAGES = (
    (DEFAULT_MAX_STRING, DEFAULT_MAX_SEQUENCE),
    (_FALLBACK_MAX_STRING, DEFAULT_MAX_SEQUENCE),
    (_LAST_MAX_STRING, DEFAULT_MAX_SEQUENCE),
    (_LAST_MAX_STRING, _FALLBACK_MAX_SEQUENCE),
)

_warn_lock = threading.Lock()
_warned_values: set[str] = set()


def payload_max_chars() -> int:
    """The total size limit: `WAYLINE_PAYLOAD_MAX_CHARS` (default 50 000, floor 1 000)."""
    raw = os.environ.get(PAYLOAD_MAX_CHARS_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_PAYLOAD_MAX_CHARS
    try:
        value = int(raw.strip())
    except ValueError:
        with _warn_lock:
            first = raw not in _warned_values
            _warned_values.add(raw)
        if first:
            _log.warning(
                "%s=%r is not an integer; using the default %d",
                PAYLOAD_MAX_CHARS_ENV,
                raw,
                DEFAULT_PAYLOAD_MAX_CHARS,
            )
        return DEFAULT_PAYLOAD_MAX_CHARS
    return max(value, MIN_PAYLOAD_MAX_CHARS)


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def to_jsonable(
    value: Any,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_string: int = DEFAULT_MAX_STRING,
    max_sequence: int = DEFAULT_MAX_SEQUENCE,
) -> Any:
    """A bounded JSON-compatible copy of `value`, NOT redacted (use `sanitize` for export)."""
    walker = _Walker(
        max_depth=max_depth, max_string=max_string, max_sequence=max_sequence, redact=False
    )
    return walker.walk(value, 0)


def _escaped_len(s: str) -> int:
    return len(_dumps(s)) - 2


def _fit_prefix(s: str, room: int) -> str:
    """The longest prefix of `s` whose JSON-escaped form is at most `room` chars."""
    hi = min(len(s), max(room, 0))
    if _escaped_len(s[:hi]) <= room:
        return s[:hi]
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _escaped_len(s[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    return s[:lo]


def _wrap(type_name: str, preview: str, limit: int) -> dict[str, Any]:
    type_name = type_name[:_MAX_TYPE_NAME]
    wrapper: dict[str, Any] = {"_truncated": True, "original_type": type_name, "preview": ""}
    room = limit - len(_dumps(wrapper))
    for _ in range(4):
        # Re-redact after cutting so the preview is a fixed point of redact_text.
        preview = redact_text(_fit_prefix(preview, room))
        if _escaped_len(preview) <= room:
            break
    else:
        preview = ""
    wrapper["preview"] = preview
    return wrapper


def _is_wrapper(value: Any) -> bool:
    return (
        type(value) is dict
        and value.keys() == _WRAPPER_KEYS
        and value["_truncated"] is True
        and type(value["original_type"]) is str
        and type(value["preview"]) is str
    )


def sanitize(value: Any, *, max_chars: int | None = None, memo: SanitizeMemo | None = None) -> Any:
    """The full policy: convert, bound, redact keys and text, and fit `max_chars` when encoded.

    `max_chars` defaults to `payload_max_chars()` and is clamped to the 1 000 floor. Over
    the limit, the value is re-walked with 1 000-char strings and 50-item sequences; if it
    still does not fit, a `{"_truncated": True, "original_type", "preview"}` wrapper whose
    own encoding fits is returned. The input is never mutated. A `memo` (see `SanitizeMemo`)
    reuses earlier results for the unchanged parts of a payload sanitized again and again.
    """
    limit = payload_max_chars() if max_chars is None else max(max_chars, MIN_PAYLOAD_MAX_CHARS)
    if _is_wrapper(value):
        return _wrap(value["original_type"], value["preview"], limit)
    for max_string, max_sequence in _STAGES:
        walker = _Walker(
            max_depth=DEFAULT_MAX_DEPTH,
            max_string=max_string,
            max_sequence=max_sequence,
            redact=True,
            budget=limit,
            memo=memo,
        )
        try:
            out = walker.walk(value, 0)
        except _OverBudget:
            continue
        if walker.spent * _MAX_EXPANSION <= limit:
            return out  # certainly fits: no need to encode it to find out
        size = (
            len(_dumps(out))
            if memo is None
            else _encoded_length(out, memo.lengths, memo.list_lengths)
        )
        if size <= limit:
            return out
    walker = _Walker(
        max_depth=DEFAULT_MAX_DEPTH,
        max_string=_LAST_MAX_STRING,
        max_sequence=_FALLBACK_MAX_SEQUENCE,
        redact=True,
        budget=limit,
        stop=True,
    )
    return _wrap(type(value).__name__, _dumps(walker.walk(value, 0)), limit)


def redact_bounded(text: str, limit: int) -> str:
    """``text`` redacted and, past ``limit`` characters, cut with a ``...[truncated N chars]``
    marker. Only a window a little past ``limit`` (to the end of a word) is redacted, so the
    cost follows ``limit``, not the text; and it is redacted before it is cut, so no part of a
    secret survives at the cut. For messages of any size (an exception's text, an error body).
    """
    walker = _Walker(max_depth=0, max_string=limit, max_sequence=DEFAULT_MAX_SEQUENCE, redact=True)
    return walker.string(text)


def redact_value(
    value: Any, *, max_string: int = DEFAULT_MAX_STRING, learn: KnownValues | None = None
) -> Any:
    """A redacted JSON-compatible copy of ``value`` whose structure is kept whole: the same
    keys, items and ids (no total size limit, no sequence cut), credential keys hidden, each
    string redacted and then, past ``max_string`` characters, cut (redacted before it is
    cut, so no part of a secret survives the cut). With ``learn``, every value a rule
    replaced becomes a known value of it. The session store's policy: a resumed session
    needs every message and every id.
    """
    walker = _Walker(
        max_depth=DEFAULT_MAX_DEPTH,
        max_string=max_string,
        max_sequence=DEFAULT_MAX_SEQUENCE,
        redact=True,
        learn=learn,
    )
    return walker.walk(value, 0)


# The walker's `spent` undercounts the encoding by at most this factor: a float charged 1
# encodes to at most 24 chars plus a ", " separator; a str charged len+2 to at most 12 chars
# per code point (a surrogate pair escape) plus quotes. Payloads this far below the limit
# skip the final size check.
_MAX_EXPANSION = 32

_ascii_literal = json.encoder.encode_basestring_ascii  # what json.dumps writes for a str


def _encoded_length(
    value: Any,
    lengths: dict[int, tuple[Any, int]],
    prefixes: dict[int, tuple[list[Any], int, int]] | None = None,
) -> int:
    """``len(json.dumps(value))`` of a sanitized value (only JSON types, str keys, finite
    floats), reusing the lengths of memoized parts: a repeated payload is mostly those. A
    list that extends one measured before (the history) reuses that list's items' sum."""
    kind = type(value)
    if kind is list and prefixes is not None and len(value) >= 32:
        measured = prefixes.get(id(value[0]))
        start, size = 0, 0
        if measured is not None and measured[0][0] is value[0]:
            items, total, last = measured
            n = len(items)
            if n <= len(value) and all(map(is_, items, value)):
                start, size = n, total
            elif all(map(is_, items[:-1], value)):
                # A cut list ends in a new "items omitted" marker each time: reuse the rest.
                start, size = n - 1, total - last
        last = 0
        for item in value[start:] if start else value:
            last = _encoded_length(item, lengths)
            size += last
        if len(prefixes) >= 16:
            prefixes.clear()
        prefixes[id(value[0])] = (list(value), size, last)
        return 2 * len(value) + size
    if kind is dict or kind is list:
        known = lengths.get(id(value))
        if known is not None and known[0] is value and known[1] >= 0:
            return known[1]
        if not value:
            size = 2
        elif kind is dict:
            # "{" "}" and ", " between items; each item is key, ": ", value.
            size = 2 * len(value)
            for key, item in value.items():
                size += len(_ascii_literal(key)) + 2 + _encoded_length(item, lengths, prefixes)
        else:
            size = 2 * len(value)
            for item in value:
                size += _encoded_length(item, lengths)
        if known is not None and known[0] is value:
            lengths[id(value)] = (value, size)
        return size
    if kind is str:
        return len(_ascii_literal(value))
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if kind is int:
        return len(int.__repr__(value))
    if kind is float:
        return len(float.__repr__(value))
    return len(_dumps(value))


def _header_text(v: Any) -> str:
    if isinstance(v, bytes | bytearray):
        return bytes(v).decode("latin-1")
    return v if type(v) is str else _safe_str(v)


def sanitize_headers(headers: Any) -> dict[str, str]:
    """HTTP headers (mapping, httpx.Headers, or (name, value) pairs) as a redacted str dict.

    Credential headers (Authorization, Cookie, X-Api-Key, …) become `REDACTED`; other
    values are text-redacted and bounded. Repeated names are joined with ", ".
    """
    if headers is None:
        return {}
    multi = getattr(headers, "multi_items", None)
    if callable(multi):
        pairs: Iterable[Any] = multi()
    elif isinstance(headers, Mapping):
        pairs = headers.items()
    else:
        pairs = headers
    walker = _Walker(
        max_depth=0,
        max_string=DEFAULT_MAX_STRING,
        max_sequence=DEFAULT_MAX_SEQUENCE,
        redact=True,
    )
    out: dict[str, str] = {}
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            continue  # malformed entry: telemetry must not raise on it
        name = walker.string(_header_text(pair[0]))
        raw_name = _header_text(pair[0])
        sensitive = is_sensitive_key(raw_name)
        value = REDACTED if sensitive else walker.string(_header_text(pair[1]))
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out
