"""Which importer reads a file (``--format auto``), and which files a folder holds."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

from wayline.importers.common import FORMATS, Imported, ImportFailure

__all__ = ["detect_format", "files_in", "reader_for"]

_HEAD_LINES = 20
_CLAUDE_TYPES = ("user", "assistant", "summary", "system", "file-history-snapshot")
_CODEX_TYPES = ("session_meta", "response_item", "event_msg", "turn_context")

Reader = Callable[[Path], list[Imported]]


def reader_for(fmt: str) -> Reader:
    """The importer of ``fmt`` (imported when first needed)."""
    if fmt == "claude-code":
        from wayline.importers.claude_code import read_claude_code

        return read_claude_code
    if fmt == "codex":
        from wayline.importers.codex import read_codex

        return read_codex
    if fmt == "inspect":
        from wayline.importers.inspect_log import read_inspect

        return read_inspect
    if fmt == "otlp-json":
        from wayline.importers.otlp import read_otlp

        return read_otlp
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def detect_format(path: Path) -> str:
    """The format of ``path`` from its content (an Inspect ``.eval`` from its zip members)."""
    if path.suffix == ".eval" or zipfile.is_zipfile(path):
        return "inspect"
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError as exc:
        raise ImportFailure(path, None, "file", f"cannot read: {exc.strerror or exc}") from None
    if path.suffix == ".json" or (head.lstrip()[:1] == b"{" and b"\n{" not in head):
        try:
            document = json.loads(path.read_bytes())
        except (ValueError, UnicodeDecodeError):
            document = None
        if isinstance(document, dict):
            if "resourceSpans" in document:
                return "otlp-json"
            if "eval" in document and ("samples" in document or "version" in document):
                return "inspect"
    for number, raw in enumerate(head.splitlines()[:_HEAD_LINES], start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue  # a line cut at the end of the head
        if not isinstance(line, dict):
            raise ImportFailure(path, number, "line", "not a JSON object")
        if "resourceSpans" in line:
            return "otlp-json"
        kind = line.get("type")
        if kind in _CODEX_TYPES or ("payload" in line and "timestamp" in line):
            return "codex"
        if "sessionId" in line or kind in _CLAUDE_TYPES:
            return "claude-code"
    raise ImportFailure(
        path,
        None,
        "format",
        "not a Claude Code session, Codex rollout, Inspect log or OTLP JSON file "
        "(name the format with --format)",
    )


def files_in(folder: Path) -> list[Path]:
    """The candidate files under ``folder``: ``.jsonl``, ``.json`` and ``.eval``, sorted;
    Claude Code subagent transcripts are read with their session, not on their own."""
    found = [
        p
        for p in folder.rglob("*")
        if p.suffix in (".jsonl", ".json", ".eval")
        and p.is_file()
        and not p.name.startswith(".")
        and "subagents" not in p.relative_to(folder).parts[:-1]
    ]
    return sorted(found)
