"""Reading and validating ATOF 0.1 JSONL files (Relay's and other producers').

The reader tolerates a torn line (a writer killed mid-line: the last line, or one the next
writer appended after) with a warning, and fails on any other malformed line with the file,
line number and reason. Consumers must order
events by timestamp, not file order (ATOF says so): :func:`read_events` sorts by default.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator
from typing import Any, Final

from wayline.relay.timefmt import parse_timestamp_ns

__all__ = [
    "TORN_LAST_LINE",
    "AtofFormatError",
    "AtofTornLineWarning",
    "iter_atof_problems",
    "iter_events",
    "read_events",
    "validate_atof",
]

PathLike = str | os.PathLike[str]


class AtofFormatError(ValueError):
    """A line of an ATOF file that is not a valid event (not a torn last line)."""

    def __init__(self, path: PathLike, line_no: int, message: str) -> None:
        self.path = os.fspath(path)
        self.line_no = line_no
        self.message = message
        super().__init__(f"{self.path}:{line_no}: {message}")


class AtofTornLineWarning(UserWarning):
    """The last line of an ATOF file is incomplete and was skipped."""


TORN_LAST_LINE: Final = "incomplete last line"
"""How :func:`validate_atof` begins the problem of a last line cut off mid-way."""


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except RecursionError:  # the C decoder's nesting limit: a bad line, not a crash
        raise ValueError("JSON nested too deeply to read") from None


def _torn(raw: bytes, exc: ValueError) -> bool:
    """True when ``raw`` is a JSON object cut off mid-way (a torn write), not a corrupt line."""
    text = raw.rstrip()
    if not text.startswith(b"{"):
        return False
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(exc.doc.rstrip())
    if isinstance(exc, UnicodeDecodeError):  # cut inside a multi-byte character
        return exc.end >= len(text)
    return False


def _numbered(path: PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, "rb") as handle:
        pending: tuple[int, bytes] | None = None
        for line_no, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            if pending is not None:
                number, text = pending
                try:
                    value = _parse(text)
                except ValueError as exc:
                    # A writer killed mid-line whose file was appended to later (the next
                    # writer ends the cut-off line first) is skipped like a torn last line.
                    if not _torn(text, exc):
                        raise AtofFormatError(path, number, f"invalid JSON: {exc}") from None
                    warnings.warn(
                        AtofTornLineWarning(
                            f"{os.fspath(path)}:{number}: skipped incomplete line ({exc})"
                        ),
                        stacklevel=3,
                    )
                else:
                    yield number, _as_object(path, number, value)
            pending = (line_no, raw)
        if pending is None:
            return
        line_no, raw = pending
        try:
            value = _parse(raw)
        except ValueError as exc:
            warnings.warn(
                AtofTornLineWarning(
                    f"{os.fspath(path)}:{line_no}: skipped incomplete last line ({exc})"
                ),
                stacklevel=3,
            )
            return
        yield line_no, _as_object(path, line_no, value)


def _as_object(path: PathLike, line_no: int, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AtofFormatError(path, line_no, f"expected a JSON object, got {_type(value)}")
    return value


def iter_events(path: PathLike) -> Iterator[dict[str, Any]]:
    """Yield each event object in file order.

    Blank lines are skipped; an unparsable LAST line is skipped with an
    :class:`AtofTornLineWarning`, and so is an object cut off mid-way elsewhere (a writer
    killed mid-line, the file appended to later); any other bad line raises
    :class:`AtofFormatError`.
    """
    for _, event in _numbered(path):
        yield event


def read_events(path: PathLike, *, sort: bool = True) -> list[dict[str, Any]]:
    """All events of an ATOF file, by timestamp (normalized to µs; ties keep file order).

    With ``sort=True`` a missing or unparsable ``timestamp`` raises :class:`AtofFormatError`.
    """
    numbered = list(_numbered(path))
    if not sort:
        return [event for _, event in numbered]
    keyed: list[tuple[int, dict[str, Any]]] = []
    for line_no, event in numbered:
        try:
            micros = parse_timestamp_ns(event.get("timestamp")) // 1_000
        except ValueError as exc:
            raise AtofFormatError(path, line_no, f"timestamp: {exc}") from None
        keyed.append((micros, event))
    keyed.sort(key=lambda pair: pair[0])
    return [event for _, event in keyed]


# --- validation -------------------------------------------------------------------------

_UUID: Final = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_VERSION: Final = re.compile(r"(\d+)\.(\d+)")
_ENVELOPE_REQUIRED: Final = ("kind", "atof_version", "uuid", "parent_uuid", "timestamp", "name")
_PROFILE_STRING_KEYS: Final = ("model_name", "tool_call_id", "subtype")


def _type(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(value), type(value).__name__)


def _is_uuid(value: Any) -> bool:
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def _check_envelope(event: dict[str, Any], problem: Any) -> None:
    for key in _ENVELOPE_REQUIRED:
        if key not in event:
            problem(key, "missing required field")
    kind = event.get("kind")
    if "kind" in event and kind not in ("scope", "mark"):
        problem("kind", f"expected 'scope' or 'mark', got {kind!r}")
    version = event.get("atof_version")
    if "atof_version" in event:
        m = _VERSION.fullmatch(version) if isinstance(version, str) else None
        if m is None:
            problem("atof_version", f"expected 'MAJOR.MINOR' text, got {version!r}")
        elif m.group(1) != "0":
            problem("atof_version", f"unsupported major version {version!r} (known: 0.x)")
    if "uuid" in event and not _is_uuid(event["uuid"]):
        problem("uuid", f"expected a UUID string, got {event['uuid']!r}")
    for key in ("parent_uuid", "propagation_root_uuid"):
        if event.get(key) is not None and not _is_uuid(event[key]):
            problem(key, f"expected a UUID string or null, got {event[key]!r}")
    if "timestamp" in event:
        try:
            parse_timestamp_ns(event["timestamp"])
        except ValueError as exc:
            problem("timestamp", str(exc))
    if "name" in event and not isinstance(event["name"], str):
        problem("name", f"expected a string, got {_type(event['name'])}")
    schema = event.get("data_schema")
    if schema is not None and not (
        isinstance(schema, dict)
        and isinstance(schema.get("name"), str)
        and isinstance(schema.get("version"), str)
    ):
        problem("data_schema", "expected null or an object with string 'name' and 'version'")
    if event.get("metadata") is not None and not isinstance(event["metadata"], dict):
        problem("metadata", f"expected an object or null, got {_type(event['metadata'])}")
    profile = event.get("category_profile")
    if profile is not None:
        if not isinstance(profile, dict):
            problem("category_profile", f"expected an object or null, got {_type(profile)}")
        else:
            for key in _PROFILE_STRING_KEYS:
                if profile.get(key) is not None and not isinstance(profile[key], str):
                    got = _type(profile[key])
                    problem(f"category_profile.{key}", f"expected a string, got {got}")


def _check_scope(event: dict[str, Any], problem: Any) -> None:
    if event.get("scope_category") not in ("start", "end"):
        problem("scope_category", f"expected 'start' or 'end', got {event.get('scope_category')!r}")
    attributes = event.get("attributes")
    if "attributes" not in event:
        problem("attributes", "missing required field (use [] for none)")
    elif not isinstance(attributes, list) or not all(isinstance(a, str) for a in attributes):
        problem("attributes", "expected an array of strings")
    else:
        if any(a != a.lower() for a in attributes):
            problem("attributes", "flags must be lowercase")
        if attributes != sorted(set(attributes)):
            problem("attributes", "flags must be sorted and unique")
    category = event.get("category")
    if not isinstance(category, str) or not category:
        problem("category", f"expected a non-empty string, got {category!r}")


def _check_mark(event: dict[str, Any], problem: Any) -> None:
    for key in ("scope_category", "attributes"):
        if key in event:
            problem(key, "a mark must not carry this field")
    category = event.get("category")
    if category is not None and not isinstance(category, str):
        problem("category", f"expected a string or null, got {_type(category)}")
    if category == "custom":
        profile = event.get("category_profile")
        if not (isinstance(profile, dict) and isinstance(profile.get("subtype"), str)):
            problem("category_profile.subtype", "required when a mark's category is 'custom'")


class _ScopeTracker:
    """Cross-line rules: one start per uuid, an end only after its start, end strictly later."""

    _SHARED: Final = ("name", "category", "parent_uuid", "attributes")

    def __init__(self) -> None:
        self.starts: dict[str, tuple[int, dict[str, Any]]] = {}
        self.ended: set[str] = set()

    def check(self, line_no: int, event: dict[str, Any], problem: Any) -> None:
        uuid = event.get("uuid")
        category = event.get("scope_category")
        if not isinstance(uuid, str) or category not in ("start", "end"):
            return
        if category == "start":
            if uuid in self.starts:
                first = self.starts[uuid][0]
                problem("uuid", f"second start for this scope (first on line {first})")
            else:  # only what the end must repeat: memory per open scope, not per event
                kept = {k: event.get(k) for k in (*self._SHARED, "timestamp")}
                self.starts[uuid] = (line_no, kept)
            return
        if uuid in self.ended:
            problem("uuid", "second end for this scope")
            return
        self.ended.add(uuid)
        if uuid not in self.starts:
            problem("uuid", "end without a preceding start")
            return
        start_line, start = self.starts[uuid]
        for key in self._SHARED:
            if start.get(key) != event.get(key):
                problem(key, f"differs from the start on line {start_line}")
        try:
            begin = parse_timestamp_ns(start.get("timestamp")) // 1_000
            end = parse_timestamp_ns(event.get("timestamp")) // 1_000
        except ValueError:
            return
        if end <= begin:
            problem("timestamp", f"end must be later than the start on line {start_line} (µs)")


def validate_atof(path: PathLike) -> list[str]:
    """Every problem in an ATOF file, one string each: ``line N: <field>: <what is wrong>``.

    Checks each line against the ATOF 0.1 envelope and kind rules (Relay's profile: required
    nullable ``parent_uuid``, optional ``propagation_root_uuid``, custom scopes without a
    subtype accepted) and pairs scope starts with ends. An empty list means the file is valid.
    """
    return list(iter_atof_problems(path))


def iter_atof_problems(path: PathLike) -> Iterator[str]:
    """:func:`validate_atof`'s problems as the file is read, one line at a time.

    Memory stays bounded by the longest line and the open scopes (each start's fields that
    its end must repeat), whatever the file's size.
    """
    tracker = _ScopeTracker()
    found: list[str] = []
    with open(path, "rb") as handle:
        lines = ((n, raw) for n, raw in enumerate(handle, 1) if raw.strip())
        current = next(lines, None)
        while current is not None:
            following = next(lines, None)
            _check_line(*current, following is None, tracker, found)
            yield from found
            found.clear()
            current = following


def _check_line(
    line_no: int, raw: bytes, last: bool, tracker: _ScopeTracker, problems: list[str]
) -> None:
    def problem(field: str, message: str) -> None:
        problems.append(f"line {line_no}: {field}: {message}")

    try:
        event = _parse(raw)
    except ValueError as exc:
        if last and not raw.endswith(b"\n"):
            problem("line", f"{TORN_LAST_LINE} (torn write?): {exc}")
        else:
            problem("line", f"invalid JSON: {exc}")
        return
    if not isinstance(event, dict):
        problem("line", f"expected a JSON object, got {_type(event)}")
        return
    _check_envelope(event, problem)
    if event.get("kind") == "scope":
        _check_scope(event, problem)
        tracker.check(line_no, event, problem)
    elif event.get("kind") == "mark":
        _check_mark(event, problem)
