"""What redaction replaced, and JSON text that stays JSON after it.

Redaction replaces spans of a text with ``<redacted>`` and changes nothing else, so the
output is the input's pieces between markers, in order: :func:`replaced_spans` recovers the
replaced spans by finding each piece after the last (the learned values of
:mod:`wayline.redaction.known` are those spans).

A rule that reads text does not know JSON: a value replaced "to the end of the line" inside a
JSON arguments string can take the closing quote and the brace with it, and the arguments stop
parsing (a trajectory then keeps them as raw text, and a replay diverges). :func:`keep_json`
puts every replaced span back inside the JSON strings it touched, so a JSON object or array
stays one, with the same keys and nesting.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.redact_rules import REDACTED

__all__ = ["keep_json", "replaced_spans"]

_STRING = lazy_compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NUMBER = lazy_compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_OPENS = lazy_compile(r"\s*[\[{]")
_KEY_END = lazy_compile(r"\s*:")
_ESCAPE = lazy_compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.DOTALL)
_DEPTH = 100


def replaced_spans(before: str, after: str) -> list[tuple[int, int]] | None:
    """The ``(start, end)`` spans of ``before`` that ``after`` shows as ``REDACTED``, or None
    when ``after`` is not ``before`` with spans replaced. A ``REDACTED`` that ``before``
    already held comes back as a span holding exactly that marker."""
    pieces = after.split(REDACTED)
    if len(pieces) == 1:
        return [] if after == before else None
    first, last = pieces[0], pieces[-1]
    if not before.startswith(first) or len(before) - len(last) < len(first):
        return None
    if not before.endswith(last):
        return None
    tail = len(before) - len(last)
    spans: list[tuple[int, int]] = []
    pos = len(first)
    for piece in pieces[1:-1]:
        at = before.find(piece, pos, tail)
        if at < 0:
            return None
        spans.append((pos, at))
        pos = at + len(piece)
    if pos > tail:
        return None
    spans.append((pos, tail))
    return spans


def keep_json(before: str, after: str) -> str:
    """``after`` as valid JSON of ``before``'s shape when ``before`` is a JSON object or array
    (replacements moved inside the strings they touched); otherwise ``after`` unchanged."""
    if after is before or _OPENS.match(before) is None or after == before:
        return after
    try:
        original = json.loads(before)
        repaired = json.loads(after)
    except (ValueError, RecursionError):
        repaired = None
        try:
            original = json.loads(before)
        except (ValueError, RecursionError):
            return after  # not JSON to begin with: plain text
    if repaired is not None and _shape(repaired) == _shape(original):
        return after
    spans = replaced_spans(before, after)
    if spans is not None:
        fixed = _inside_strings(before, spans)
        try:
            if _shape(json.loads(fixed)) == _shape(original):
                return fixed
        except (ValueError, RecursionError):
            pass
    # Unreachable by construction; a JSON value of the same shape with every string hidden
    # is still better than broken JSON.
    return json.dumps(_hidden(original, 0), ensure_ascii=False)


def _shape(value: Any, depth: int = 0) -> Any:
    """Containers, keys' count and types: what a redaction must not change."""
    if depth > _DEPTH:
        return "deep"
    if isinstance(value, dict):
        return ("{", tuple(_shape(v, depth + 1) for v in value.values()))
    if isinstance(value, list):
        return ("[", tuple(_shape(v, depth + 1) for v in value))
    return "s" if isinstance(value, str | int | float) and not isinstance(value, bool) else value


def _hidden(value: Any, depth: int) -> Any:
    if isinstance(value, dict) and depth < _DEPTH:
        return {k: _hidden(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list) and depth < _DEPTH:
        return [_hidden(v, depth + 1) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    return REDACTED


def _inside_strings(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced only where it lies inside a JSON string value (whole
    escapes; a number it touches becomes the string ``"<redacted>"``); quotes, braces, commas
    and keys stay (a key changes only where a span lies wholly inside it)."""
    tokens = [m.span() for m in _STRING.finditer(text)]
    starts = [a for a, _ in tokens]
    clips: dict[int, list[tuple[int, int]]] = {}  # token index -> parts of its inside
    cuts: list[tuple[int, int, str]] = []
    for a, b in spans:
        if b <= a:
            continue
        k = max(bisect.bisect_right(starts, a) - 1, 0)
        while k < len(tokens) and tokens[k][0] < b:
            ts, te = tokens[k]
            lo, hi = max(a, ts + 1), min(b, te - 1)
            # A key is a name: only a span wholly inside it changes it.
            inside = ts < a and b < te
            if lo < hi and (inside or _KEY_END.match(text, te) is None):
                clips.setdefault(k, []).append((lo, hi))
            k += 1
        cuts += _numbers(text, a, b, tokens, starts)
    for k, parts in clips.items():
        ts, te = tokens[k]
        cuts += [(lo, hi, REDACTED) for lo, hi in _whole_escapes(text, ts + 1, te - 1, parts)]
    cuts.sort()
    merged: list[tuple[int, int, str]] = []
    for lo, hi, marker in cuts:
        if merged and lo <= merged[-1][1] and marker == merged[-1][2] == REDACTED:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]), REDACTED)
        elif not merged or lo >= merged[-1][1]:
            merged.append((lo, hi, marker))
    out: list[str] = []
    pos = 0
    for lo, hi, marker in merged:
        out.append(text[pos:lo])
        out.append(marker)
        pos = hi
    out.append(text[pos:])
    return "".join(out)


def _whole_escapes(
    text: str, inner_start: int, inner_end: int, parts: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """``parts`` of one string's inside, widened so that no escape sequence is cut in half
    (the escapes are read once, from the string's start: a backslash may be escaped)."""
    escapes = [m.span() for m in _ESCAPE.finditer(text, inner_start, inner_end)]
    ends = [e for _, e in escapes]
    out = []
    for lo, hi in parts:
        k = bisect.bisect_right(ends, lo)  # the first escape ending after lo
        if k < len(escapes) and escapes[k][0] < lo:
            lo = escapes[k][0]
        k = bisect.bisect_right(ends, hi)
        if k < len(escapes) and escapes[k][0] < hi:
            hi = escapes[k][1]
        out.append((lo, hi))
    return out


def _numbers(
    text: str, a: int, b: int, tokens: list[tuple[int, int]], starts: list[int]
) -> list[tuple[int, int, str]]:
    """Numbers (outside strings) that the span ``[a, b)`` touches, as quoted markers."""
    found = []
    for m in _NUMBER.finditer(text, max(0, a - 32), b):
        if m.end() <= a or m.start() >= b:
            continue
        k = bisect.bisect_right(starts, m.start()) - 1
        if k >= 0 and tokens[k][0] <= m.start() < tokens[k][1]:
            continue  # digits inside a string
        before = text[m.start() - 1 : m.start()]
        if before.isalnum() or before in ".-+":
            continue
        found.append((m.start(), m.end(), f'"{REDACTED}"'))
    return found
