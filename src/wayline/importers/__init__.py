"""Other agents' records into ATIF: Claude Code and Codex sessions, Inspect logs, OTLP JSON.

:func:`import_file` reads one file (one or more sessions) and writes one redacted, validated
ATIF file per session, named after the source's session id so that importing it again
replaces it (docs/import.md).
"""

from __future__ import annotations

from pathlib import Path

from wayline.importers.common import (
    FORMATS,
    Batch,
    Imported,
    ImportFailure,
    output_name,
    render_document,
    write_imported,
)
from wayline.importers.detect import detect_format, files_in, reader_for

__all__ = [
    "FORMATS",
    "Batch",
    "ImportFailure",
    "Imported",
    "detect_format",
    "files_in",
    "import_file",
    "output_name",
    "read_file",
    "render_document",
    "write_imported",
]


def read_file(path: Path, fmt: str = "auto", batch: Batch | None = None) -> list[Imported]:
    """The sessions in ``path`` (``fmt`` ``auto`` tells the format from the content);
    ``batch`` is every file imported with it (a Codex rollout embeds the agents it spawned
    whose rollouts are there, and a spawned agent's rollout whose parent is there gives none).
    """
    chosen = detect_format(path) if fmt == "auto" else fmt
    if chosen == "codex":
        from wayline.importers.codex import read_codex

        return read_codex(path, batch)
    return reader_for(chosen)(path)


def import_file(
    path: Path, directory: Path, fmt: str = "auto", batch: Batch | None = None
) -> list[Path]:
    """Import every session of ``path`` into ``directory``; the ATIF files written.

    Every session is read and checked before the first is written, so a broken file writes
    nothing; each file is written atomically (a reader never sees half of one). A session now
    embedded in another (a Codex subagent) loses the file an earlier import gave it alone.
    """
    sessions = read_file(path, fmt, batch)
    written = [write_imported(session, directory) for session in sessions]
    for session in sessions:
        for embedded in session.embedded:
            (directory / output_name(session.fmt, embedded)).unlink(missing_ok=True)
    return written
