"""The sanitizer's walker: conversion, bounds and redaction of one nested value.

Internal to :mod:`wayline.redaction.sanitize` (split out to keep modules small); the public
API lives there.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import logging
import math
import sys
import types
from collections import deque
from collections.abc import Iterable, Mapping, Sequence, Set
from operator import is_
from typing import Any

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.known import KnownValues
from wayline.redaction.memo import SanitizeMemo
from wayline.redaction.redact import (
    REDACTED,
    is_identifier_key,
    is_sensitive_key,
    is_weak_key,
    redact_text,
    redact_text_learning,
)
from wayline.redaction.redact import _current as current_rules
from wayline.redaction.value_shapes import credential_like, short_key_like

PAYLOAD_MAX_CHARS_ENV = "WAYLINE_PAYLOAD_MAX_CHARS"
DEFAULT_PAYLOAD_MAX_CHARS = 50_000
MIN_PAYLOAD_MAX_CHARS = 1_000
# Only against hostile nesting (and Python's recursion limit): real schemas and tool
# arguments are far shallower, and everything above this depth is kept whole.
DEFAULT_MAX_DEPTH = 100
DEFAULT_MAX_STRING = 8_000
# Structure is not cut to fit: sequences are bounded only in the last stage before the
# wrapper, when the structure alone is over the size limit.
UNBOUNDED = sys.maxsize
DEFAULT_MAX_SEQUENCE = UNBOUNDED
TRUNCATED_ITEMS_KEY = "_truncated_items"

# Later stages when the first encoding is over the limit: shorter strings, same structure.
_FALLBACK_MAX_STRING = 1_000
_LAST_MAX_STRING = 200
_FALLBACK_MAX_SEQUENCE = 50
# Text past the string bound is still redacted this far (then back to a whitespace), so a
# secret straddling the cut is recognised whole instead of leaking its first characters.
_REDACT_WINDOW = 16_384
_WORD_REACH = 65_536  # how far the window end moves on to find the end of a word
_MAX_TYPE_NAME = 200
_WRAPPER_KEYS = frozenset({"_truncated", "original_type", "preview"})
_TRUNC_TAIL = lazy_compile(r"\.\.\.\[truncated [0-9]+ chars\]\Z")

_log = logging.getLogger(__name__)


class _OverBudget(Exception):
    """The encoding is already known to exceed the size limit; abandon this stage."""


# Keys repeat in every payload ("role", "content", "tool_calls", ...) and are short, so
# their (output, sensitive, charge) is kept, per rule snapshot (a rule change starts over)
# and per (max_string, redact) setting.
_KEY_CACHED_LEN = 64
_KEY_CACHE_SIZE = 4096
_key_caches: tuple[object, dict[tuple[int, bool], dict[str, tuple[str, int, int]]]] = (None, {})

# What a key says about its value: nothing, a credential, or an identifier (kept as-is).
PLAIN, SECRET, IDENT, WEAK = 0, 1, 2, 3
# Keys that make a mapping a JSON schema: under a credential name it describes the field.
_SCHEMA_KEYS = frozenset(
    {"type", "properties", "items", "$ref", "anyOf", "oneOf", "allOf", "enum", "format"}
)


def _key_cache(max_string: int, redact: bool) -> dict[str, tuple[str, int, int]]:
    global _key_caches
    snapshot = current_rules()
    owner, caches = _key_caches
    if owner is not snapshot:
        caches = {}
        _key_caches = (snapshot, caches)
    cache = caches.get((max_string, redact))
    if cache is None:
        cache = caches[max_string, redact] = {}
    return cache


class _Walker:
    """One conversion pass; per call, so concurrent sanitize calls share nothing."""

    __slots__ = (
        "active",
        "budget",
        "hide",
        "keys",
        "learn",
        "max_depth",
        "max_sequence",
        "max_string",
        "memo",
        "memo_depth",
        "redact",
        "spent",
        "stop",
        "unstable",
    )

    def __init__(
        self,
        *,
        max_depth: int,
        max_string: int,
        max_sequence: int,
        redact: bool,
        budget: int | None = None,
        stop: bool = False,
        memo: SanitizeMemo | None = None,
        learn: KnownValues | None = None,
    ) -> None:
        self.max_depth = max_depth
        self.max_string = max(max_string, 0)
        self.max_sequence = max(max_sequence, 0)
        self.redact = redact
        # `spent` is a lower bound on the encoded length so far (JSON output follows walk
        # order): past `budget` the stage cannot fit, or (stop mode) nothing more can
        # reach the preview prefix.
        self.budget = budget
        self.stop = stop
        self.spent = 0
        self.active: set[int] = set()  # containers on the current path, for cycles
        # A partial (stop-mode) walk cuts subtrees short, so its outputs are never memoized.
        self.memo = None if stop else memo
        if self.memo is not None and self.memo.rules is not current_rules():
            self.memo.forget(current_rules())  # a value became known: redact history again
        self.learn = learn  # what rules replace becomes a known value of this session
        self.memo_depth = -1 if self.memo is None else self.memo.depth
        # Cycle and "changed while read" markers depend on more than the subtree itself.
        self.unstable = 0
        self.keys = _key_cache(self.max_string, redact)
        # Above zero while walking the value of a credential key: every scalar is hidden.
        self.hide = 0

    def charge(self, n: int) -> None:
        self.spent += n
        if self.budget is not None and not self.stop and self.spent > self.budget:
            raise _OverBudget

    def done(self) -> bool:
        return self.stop and self.budget is not None and self.spent > self.budget

    # -- scalars -------------------------------------------------------------------

    def string(self, s: str) -> str:
        if self.hide:
            self.charge(len(REDACTED) + 2)
            return REDACTED
        if not s.isascii():
            s = _clean_surrogates(s)
        limit = self.max_string
        if len(s) <= limit:
            out = self.text(s) if self.redact else s
        else:
            tail = _TRUNC_TAIL.search(s)
            if tail is not None and tail.start() <= limit:  # our own marker: keep as-is
                out = self.text(s) if self.redact else s
            else:
                out = s
        if len(out) > limit:
            tail = _TRUNC_TAIL.search(out)
            if tail is None or tail.start() > limit:
                out = self.truncate(out)
        self.charge(len(out) + 2)
        return out

    def text(self, s: str) -> str:
        return redact_text(s) if self.learn is None else redact_text_learning(s, self.learn)

    def identifier(self, s: str) -> str:
        """An id field's value: bounded like any text, never redacted (ids are structure)."""
        if not s.isascii():
            s = _clean_surrogates(s)
        limit = self.max_string
        out = s if len(s) <= limit else f"{s[:limit]}...[truncated {len(s) - limit} chars]"
        self.charge(len(out) + 2)
        return out

    def truncate(self, s: str) -> str:
        limit = self.max_string
        if not self.redact:
            return f"{s[:limit]}...[truncated {len(s) - limit} chars]"
        window = s[: _window_end(s, limit + _REDACT_WINDOW)]
        dropped = len(s) - len(window)
        red = self.text(window)
        if len(red) <= limit and not dropped:
            return red
        keep = red[: _cut(red, limit)]
        return f"{keep}...[truncated {len(red) - len(keep) + dropped} chars]"

    def integer(self, v: int) -> int | str:
        if v.bit_length() > 64:
            try:
                digits = len(str(v))
            except ValueError:  # beyond sys.get_int_max_str_digits: json.dumps would fail
                return self.string(f"<int {v.bit_length()} bits>")
            self.charge(digits)
        else:
            self.charge(1)
        return v

    def floating(self, v: float) -> float | str:
        if math.isfinite(v):
            self.charge(1)
            return v
        return self.string(repr(v))  # "nan", "inf", "-inf": json.dumps(allow_nan=False) works

    # -- containers ----------------------------------------------------------------

    def walk(self, v: Any, depth: int) -> Any:
        if self.done():
            return None
        t = type(v)
        if t is str:
            return self.string(v)
        if v is None or t is bool:
            self.charge(4)
            return v
        if self.hide and (t is int or t is float):
            return self.string("")
        if t is int:
            return self.integer(v)
        if t is float:
            return self.floating(v)
        if t is dict or t is list or t is tuple:
            if depth == self.memo_depth and not self.hide:
                return self.memoized(v, depth)
            return self.mapping(v, depth) if t is dict else self.sequence(v, depth)
        return self.other(v, depth)

    def memoized(self, v: Any, depth: int) -> Any:
        memo = self.memo
        assert memo is not None
        key = (id(v), self.max_string, self.max_sequence)
        hit = memo.entries.get(key)
        if hit is not None and hit[0] is v:
            self.charge(hit[2])
            return hit[1]
        spent, unstable = self.spent, self.unstable
        out = self.mapping(v, depth) if type(v) is dict else self.sequence(v, depth)
        if self.unstable == unstable:
            if len(memo.entries) >= memo.limit:
                memo.entries.clear()
                memo.lengths.clear()
            memo.entries[key] = (v, out, self.spent - spent)
            if type(out) is dict or type(out) is list:
                memo.lengths[id(out)] = (out, -1)
        return out

    def marker(self, v: Any, what: str) -> str:
        return self.string(f"<{type(v).__name__} {what}>")

    def mapping(self, m: Mapping[Any, Any], depth: int) -> Any:
        if depth > self.max_depth:
            return self.marker(m, "depth limit")
        ident = id(m)
        if ident in self.active:
            self.unstable += 1
            return self.marker(m, "cycle")
        self.active.add(ident)
        try:
            return self._mapping(m, depth)
        except RuntimeError:  # another thread resized it mid-read: telemetry must not raise
            self.unstable += 1
            return self.marker(m, "changed while read")
        finally:
            self.active.discard(ident)

    def _mapping(self, m: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        self.charge(2)
        total = len(m)
        limit = self.max_sequence
        if total == limit + 1 and type(m) is dict and _ends_with_items_marker(m):
            limit = total  # already truncated by us: keep (idempotence)
        out: dict[str, Any] = {}
        for index, (key, value) in enumerate(m.items()):
            if index >= limit or self.done():
                break
            out_key, kind = self.key(key)
            if kind == PLAIN or value is None or type(value) is bool:
                out[out_key] = self.walk(value, depth + 1)
            elif kind == WEAK:
                weak = type(value) is str and (credential_like(value) or short_key_like(value))
                out[out_key] = self.string(REDACTED) if weak else self.walk(value, depth + 1)
            elif kind == IDENT:
                out[out_key] = (
                    self.identifier(value) if type(value) is str else self.walk(value, depth + 1)
                )
            elif isinstance(value, Mapping | list | tuple) and not self.hide:
                # A name, not a value: the structure stays; a schema is kept as it is and
                # anything else has its scalars hidden ({"password": {"value": "…"}}).
                schema = isinstance(value, Mapping) and not _SCHEMA_KEYS.isdisjoint(value)
                self.hide += not schema
                try:
                    out[out_key] = self.walk(value, depth + 1)
                finally:
                    self.hide -= not schema
            else:
                out[out_key] = REDACTED
                self.charge(len(REDACTED) + 2)
        if total > limit:
            out[TRUNCATED_ITEMS_KEY] = total - limit
            self.charge(len(TRUNCATED_ITEMS_KEY) + 5)
        return out

    def key(self, key: Any) -> tuple[str, int]:
        if type(key) is str:
            hit = self.keys.get(key)
            if hit is not None:
                self.charge(hit[2])
                return hit[0], hit[1]
            raw = key
        elif isinstance(key, bytes | bytearray):
            raw = bytes(key).decode("utf-8", "replace")
        else:
            raw = _safe_str(key)
        hide, self.hide = self.hide, 0  # a key is a name, also inside a hidden value
        try:
            out = self.string(raw)
        finally:
            self.hide = hide
        self.charge(2)
        kind = PLAIN
        if self.redact:
            if is_identifier_key(raw):
                kind = IDENT
            elif is_sensitive_key(raw) or is_sensitive_key(out):
                kind = SECRET
            elif is_weak_key(raw):
                kind = WEAK
        if raw is key and len(raw) <= _KEY_CACHED_LEN and len(self.keys) < _KEY_CACHE_SIZE:
            self.keys[raw] = (out, kind, len(out) + 4)
        return out, kind

    def sequence(self, seq: Iterable[Any], depth: int) -> Any:
        if depth > self.max_depth:
            return self.marker(seq, "depth limit")
        ident = id(seq)
        if ident in self.active:
            self.unstable += 1
            return self.marker(seq, "cycle")
        self.active.add(ident)
        try:
            return self._sequence(seq, depth)
        except RuntimeError:
            self.unstable += 1
            return self.marker(seq, "changed while read")
        finally:
            self.active.discard(ident)

    def _sequence(self, seq: Iterable[Any], depth: int) -> list[Any]:
        self.charge(2)
        total = len(seq)  # type: ignore[arg-type]  # only sized collections get here
        limit = self.max_sequence
        if total == limit + 1 and isinstance(seq, list | tuple) and _is_items_marker(seq[-1]):
            limit = total  # already truncated by us: keep (idempotence)
        if depth == self.memo_depth - 1 and type(seq) is list and seq:
            out = self._grown_list(seq, depth, min(total, limit))
        else:
            out = []
            for index, item in enumerate(seq):
                if index >= limit or self.done():
                    break
                out.append(self.walk(item, depth + 1))
        if total > limit:
            out.append({TRUNCATED_ITEMS_KEY: total - limit})
            self.charge(len(TRUNCATED_ITEMS_KEY) + 7)
        if self.redact:
            _redact_pairs(out, seq)
        return out

    def _grown_list(self, seq: list[Any], depth: int, count: int) -> list[Any]:
        """The outputs of ``seq[:count]``, reusing those of the last list it extends.

        Each model call re-sends the history plus a few messages: rather than look up every
        memoized message again (a Python call each), the unchanged prefix is found by one
        list comparison (identity first, in C) and its outputs and budget share are reused.
        """
        memo = self.memo
        assert memo is not None
        key = (id(seq[0]), self.max_string, self.max_sequence)
        entry = memo.prefixes.get(key)
        start_spent, unstable = self.spent, self.unstable
        out: list[Any] = []
        start = 0
        if entry is not None and entry[0][0] is seq[0]:
            items, outputs, share = entry
            n = len(items)
            # Identity, as for the memo's entries: no __eq__ of the caller's objects runs.
            if n <= count and all(map(is_, seq[:n], items)):
                self.charge(share)
                out = list(outputs)
                start = n
        walked = self.spent  # after the last item walked whole
        try:
            for index in range(start, count):
                out.append(self.walk(seq[index], depth + 1))
                walked = self.spent
        except _OverBudget:
            # A long conversation overflows the first stage on every call: remember the items
            # walked whole, so the next call reaches the overflow in one step, not one memo
            # lookup per message.
            if len(out) > start and self.unstable == unstable:
                self._remember_prefix(key, seq[: len(out)], out, walked - start_spent)
            raise
        if count and self.unstable == unstable:
            self._remember_prefix(key, seq[:count], out, self.spent - start_spent)
        return out

    def _remember_prefix(
        self, key: tuple[int, int, int], items: list[Any], out: list[Any], share: int
    ) -> None:
        memo = self.memo
        assert memo is not None
        if len(memo.prefixes) >= 16:
            memo.prefixes.clear()
        memo.prefixes[key] = (items, list(out), share)

    def other(self, v: Any, depth: int) -> Any:
        if isinstance(v, str):  # str subclasses, StrEnum
            return self.string(str.__str__(v))
        if isinstance(v, int):  # IntEnum, IntFlag (bool was handled by the caller)
            return self.integer(int(v))
        if isinstance(v, float):
            return self.floating(float(v))
        if isinstance(v, bytes | bytearray):
            return self.string(f"<{len(v)} bytes>")
        if isinstance(v, memoryview):
            return self.string(f"<{v.nbytes} bytes>")
        if isinstance(v, Mapping):
            return self.mapping(v, depth)
        if isinstance(v, list | tuple | set | frozenset | deque | Set) or (
            isinstance(v, Sequence) and not isinstance(v, str | bytes | bytearray)
        ):
            return self.sequence(v, depth)
        if isinstance(v, enum.Enum):
            return self.walk(v.value, depth)
        if isinstance(v, _dt.datetime | _dt.date | _dt.time):
            return self.string(v.isoformat())
        if depth > self.max_depth:
            return self.marker(v, "depth limit")
        ident = id(v)
        if ident in self.active:
            self.unstable += 1
            return self.marker(v, "cycle")
        try:
            converted = _as_plain(v)
        except Exception:  # a raising property or __getattr__: fall back to str()
            converted = None
        if converted is None:
            return self.string(_safe_str(v))
        self.active.add(ident)
        try:
            # The converted dict stands in for the object at the same depth.
            return self.mapping(converted, depth)
        finally:
            self.active.discard(ident)


_SPACE = lazy_compile(r"\s")


def _window_end(s: str, end: int) -> int:
    """Where a redaction window over ``s[:end]`` may end: after a whole word, so no secret is
    cut at the window's edge. A word longer than ``_WORD_REACH`` is left out whole."""
    if end >= len(s) or s[end - 1 : end].isspace() or s[end : end + 1].isspace():
        return min(end, len(s))
    after = _SPACE.search(s, end, end + _WORD_REACH)
    if after is not None:
        return after.start()
    before = max(s.rfind(" ", 0, end), s.rfind("\n", 0, end), s.rfind("\t", 0, end))
    return before + 1 if before >= 0 else 0


def _cut(red: str, limit: int) -> int:
    """``limit``, or the start of a ``REDACTED`` marker the cut would split."""
    start = red.rfind("<", max(0, limit - len(REDACTED)), limit)
    if start >= 0 and red.startswith(REDACTED, start) and start + len(REDACTED) > limit:
        return start
    return limit


def _is_items_marker(item: Any) -> bool:
    return type(item) is dict and len(item) == 1 and type(item.get(TRUNCATED_ITEMS_KEY)) is int


def _ends_with_items_marker(m: dict[Any, Any]) -> bool:
    return next(reversed(m)) == TRUNCATED_ITEMS_KEY and type(m[TRUNCATED_ITEMS_KEY]) is int


def _redact_pairs(out: list[Any], original: Iterable[Any]) -> None:
    """("Authorization", "…") header pairs and ["--token", "…"] argv entries hide their value."""
    if len(out) == 2 and type(out[0]) is str and out[1] is not None and type(out[1]) is not bool:
        first = next(iter(original), None) if isinstance(original, list | tuple) else None
        names = (out[0], first) if isinstance(first, str) else (out[0],)
        if any(is_sensitive_key(n) for n in names):
            out[1] = REDACTED
            return
    for index in range(len(out) - 1):
        item = out[index]
        if (
            type(item) is str
            and item.startswith("-")
            and "=" not in item
            and len(item) < 100
            and type(out[index + 1]) is str
            and is_sensitive_key(item.lstrip("-"))
        ):
            out[index + 1] = REDACTED


def _clean_surrogates(s: str) -> str:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates would break every UTF-8 exporter downstream.
        return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return s


def _safe_str(v: Any) -> str:
    try:
        return str(v)
    except Exception:
        return f"<{type(v).__name__} unprintable>"


_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _as_plain(v: Any) -> Mapping[Any, Any] | None:
    """A dict standing in for an object (model_dump, dataclass, namespace, __dict__), or None."""
    if isinstance(v, _OPAQUE):
        return None
    if isinstance(v, BaseException):
        return {"type": type(v).__name__, "message": _safe_str(v)}
    dump = getattr(type(v), "model_dump", None)
    if callable(dump):
        try:
            dumped = v.model_dump(mode="json")
        except Exception:
            dumped = None
        if isinstance(dumped, Mapping):
            return dumped
    if dataclasses.is_dataclass(v):
        # Shallow on purpose: dataclasses.asdict deep-copies and recurses without cycle checks.
        return {f.name: getattr(v, f.name, None) for f in dataclasses.fields(v)}
    if isinstance(v, types.SimpleNamespace):
        return vars(v)
    attrs = getattr(v, "__dict__", None)
    if type(attrs) is dict:
        public = {k: val for k, val in attrs.items() if not str(k).startswith("_")}
        if public:
            return public
    return None
