"""What a file handed to a trajectory command is, told from its first bytes.

Every command that reads ATIF or ATOF files (``view``, ``replay``, ``diff``, ``export``,
``atif``/``atof``) asks :func:`identify` first, so that a file that cannot be one is refused
in one line before it is read whole: a FIFO or a device (reading would block or never end),
an empty file, bytes that are not UTF-8, text that is not JSON, and JSON of another kind
(OpenTelemetry spans, a session transcript) are told apart by at most the first
:data:`HEAD_BYTES` of the file (more only while the file is blank), whatever its size.
"""

from __future__ import annotations

import codecs
import gc
import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

__all__ = [
    "HEAD_BYTES",
    "FileKind",
    "Identified",
    "InputFileError",
    "collector_paused",
    "identify",
    "open_regular",
]

HEAD_BYTES: Final = 65536
"""How much of a file is read to tell what it is."""

FileKind = Literal["atif", "json", "object", "atof", "spans", "metrics", "transcript", "other"]

_BLANK: Final = b" \t\r\n"
_ATOF_OPENING: Final = re.compile(rb'^\{\s*"(atof_version|kind|scope_category)"\s*:')
_ATIF_MARK: Final = re.compile(rb'"steps"\s*:\s*\[|"schema_version"\s*:\s*"ATIF')
_JSON_NAMES: Final[dict[type, str]] = {
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
}
_LABELS: Final[dict[str, str]] = {
    "atif": "an ATIF trajectory",
    "json": "a JSON document with no ATIF schema_version or steps at its start",
    "object": "a JSON object with no steps (neither ATIF nor ATOF)",
    "atof": "ATOF events",
    "spans": "OpenTelemetry spans (JSON lines)",
    "metrics": "OpenTelemetry metrics (JSON lines)",
    "transcript": "a session transcript (one chat message per line)",
}


class InputFileError(ValueError):
    """A file that cannot be read as a trajectory input; ``str()`` is ``path: message``."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        self.path = os.fspath(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


@dataclass(frozen=True)
class Identified:
    """A file's kind, and what it is in words (``label``) for a one-line error."""

    kind: FileKind
    label: str


def open_regular(path: str | os.PathLike[str]) -> Any:
    """Open ``path`` for reading bytes, refusing anything but a regular file.

    A FIFO, a socket or a device is refused before it is opened (opening a FIFO blocks until
    a writer comes); a directory and a missing file are refused too. Raises
    :class:`InputFileError`.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputFileError(path, f"cannot read: {exc.strerror or exc}") from None
    what = _not_regular(mode)
    if what is not None:
        raise InputFileError(path, f"{what}, not a file: trajectory commands read regular files")
    try:
        handle = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    except OSError as exc:
        raise InputFileError(path, f"cannot read: {exc.strerror or exc}") from None
    # The path may have been swapped between stat and open.
    what = _not_regular(os.fstat(handle.fileno()).st_mode)
    if what is not None:
        handle.close()
        raise InputFileError(path, f"{what}, not a file: trajectory commands read regular files")
    return handle


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def identify(path: str | os.PathLike[str]) -> Identified:
    """What ``path`` holds, from its first bytes; :class:`InputFileError` when it is no input.

    Refused: what :func:`open_regular` refuses, an empty (or blank) file, bytes that are not
    UTF-8, and text that does not start as JSON. Otherwise the kind is ``atof`` (the first
    line is an ATOF event, or a ``.jsonl`` file's first line cannot be told), ``atif`` (a JSON
    document whose head shows ``steps`` or an ATIF ``schema_version``), ``json`` (another JSON
    document that spans lines, read whole to say more), ``object`` (one line that is a JSON
    object of no known kind and the whole file),
    ``spans``/``metrics`` (OpenTelemetry JSON lines), ``transcript`` (chat messages, one a
    line) or ``other`` (JSON of no kind a command reads). Only ``atif`` and ``atof`` files
    (and ``json``) files are read whole or streamed afterwards.
    """
    with open_regular(path) as handle:
        offset = 0  # of the head in the file
        head = handle.read(HEAD_BYTES)
        start = len(head) - len(head.lstrip(_BLANK))
        while start == len(head):  # blank so far: look further, a chunk at a time
            offset += len(head)
            head = handle.read(HEAD_BYTES)
            if not head:
                raise InputFileError(path, "the file is empty")
            start = len(head) - len(head.lstrip(_BLANK))
        complete = not handle.read(1)
    body = head[start:]
    if body.startswith(codecs.BOM_UTF8):
        raise InputFileError(path, "starts with a UTF-8 byte-order mark, which JSON does not allow")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=complete)
    except UnicodeDecodeError as exc:
        raise InputFileError(path, f"not UTF-8 text (byte {offset + start + exc.start})") from None
    suffix = Path(path).suffix
    if body[:1] not in (b"{", b"["):
        line = body.split(b"\n", 1)[0]
        try:  # a number or a string is JSON, but no trajectory
            scalar = json.loads(line) if len(line) < len(body) or complete else None
        except ValueError:
            scalar = None
        if scalar is not None:
            return Identified("other", f"a JSON {_JSON_NAMES.get(type(scalar), 'value')}")
        shown = line[:40].decode("utf-8", "replace").strip()
        raise InputFileError(path, f"not JSON: the first line starts with {shown!r}")
    first, newline, rest = body.partition(b"\n")
    if not newline and not complete:  # a first line longer than the head
        if _ATOF_OPENING.match(first) or suffix == ".jsonl":
            return _identified("atof")
        return _identified(_document(body))
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        # A document that spans lines ("{" alone, or its first key and value), or a torn line.
        return _identified("atof" if suffix == ".jsonl" else _document(body))
    only_line = not rest.strip(_BLANK) and complete
    kind = _kind_of(value, only_line=only_line, suffix=suffix)
    if kind != "other":
        return _identified(kind)
    if isinstance(value, dict):
        return Identified(kind, "JSON lines of another kind (objects that are no ATOF events)")
    shape = "list" if isinstance(value, list) else type(value).__name__
    return Identified(kind, f"a JSON {shape}" + ("" if only_line else " on the first line"))


def _document(head: bytes) -> FileKind:
    """A JSON document read from its start: ``atif`` when its head shows ATIF's fields."""
    return "atif" if head[:1] == b"{" and _ATIF_MARK.search(head) else "json"


def _kind_of(value: Any, *, only_line: bool, suffix: str) -> FileKind:
    """The kind of a file whose first line parses as ``value``."""
    if isinstance(value, dict):
        if "steps" in value or str(value.get("schema_version", "")).startswith("ATIF"):
            return "atif"
        context = value.get("context")
        if isinstance(context, dict) and ("trace_id" in context or "span_id" in context):
            return "spans"
        if any(k in value for k in ("trace_id", "span_id", "traceId", "spanId")):
            return "spans"
        if any(k in value for k in ("resourceSpans", "resource_spans", "scopeSpans")):
            return "spans"
        if any(k in value for k in ("resourceMetrics", "resource_metrics")):
            return "metrics"
        if "kind" in value or "atof_version" in value or "scope_category" in value:
            return "atof"
        if "role" in value and ("content" in value or "tool_calls" in value):
            return "transcript"
        # One object that is the whole file is a document without steps (a validator may
        # say what is missing); one of several lines is JSON lines of no kind we read.
        return "object" if only_line and suffix != ".jsonl" else "other"
    return "other"


def _identified(kind: FileKind) -> Identified:
    return Identified(kind, _LABELS[kind])


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a large acyclic structure is built or walked.

    Parsing a trajectory creates millions of containers and no cycles; the collections they
    trigger rescan the growing heap each time, which made reading a 50,000-step file several
    times slower per step than a 1,000-step one. The collector is enabled again afterwards
    (unless it was off before).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
