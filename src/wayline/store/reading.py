"""Reading a recording without the index: what a file is, and an ATIF file's sessions.

The indexer reads the files it must (re)index on a thread of its own (:class:`ReadAhead`), a
few ahead of the thread that writes the index: parsing holds the GIL while SQLite's inserts,
which release it, run, so the two overlap on a second core.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wayline.relay.identify import InputFileError, collector_paused, identify
from wayline.store.extract import SessionRecord, is_wayline_recording, records_of
from wayline.trajectory.load import TrajectoryError, check_structure

__all__ = ["READ_AHEAD", "Read", "ReadAhead", "read_document", "read_file"]

READ_AHEAD = 8
"""Files read and parsed ahead of the writer (their sessions wait in memory)."""

Redact = Callable[[str], str]


def read_document(path: Path) -> Any:
    """An ATIF file's JSON; :class:`TrajectoryError` when it cannot be read or parsed.

    The trajectory loader's own reader also measures how deeply the document nests, for the
    commands that walk it recursively; the index reads it with loops (and a nesting too deep
    for the decoder is an error here too), so it parses the bytes as they are.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TrajectoryError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    try:
        with collector_paused():  # millions of containers and no cycles: see collector_paused
            return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise TrajectoryError(f"not UTF-8 text (byte {exc.start})", source=str(path)) from None
    except json.JSONDecodeError as exc:
        raise TrajectoryError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", source=str(path)
        ) from None
    except RecursionError:
        raise TrajectoryError("JSON nested too deeply to read", source=str(path)) from None
    except ValueError as exc:  # an integer too long to convert
        raise TrajectoryError(f"unreadable JSON value: {exc}", source=str(path)) from None


@dataclass(frozen=True, slots=True)
class Read:
    """What a file holds, read without the index: ``atif`` (its sessions), ``atof`` (read
    incrementally by the indexer, which keeps where it stopped) or ``skip`` (and why)."""

    kind: str
    records: list[SessionRecord] = field(default_factory=list)
    note: str | None = None


def read_file(path: Path, redact: Redact) -> Read:
    """Tell what ``path`` is and, for an ATIF file, read its sessions (text of files wayline
    did not write goes through ``redact``)."""
    try:
        found = identify(path)
    except InputFileError as exc:
        return Read("skip", note=exc.message)
    if found.kind == "atof":
        return Read("atof")
    if found.kind not in ("atif", "json"):
        return Read("skip", note=f"{found.label}, not a trajectory")
    try:
        document = read_document(path)
        check_structure(document, str(path))
        mine = is_wayline_recording(document)
        return Read("atif", records_of(document, path.stem, None if mine else redact))
    except TrajectoryError as exc:
        return Read("skip", note=str(exc).removeprefix(f"{path}: "))
    except RecursionError:
        return Read("skip", note="JSON nested too deeply to read")


class ReadAhead:
    """Reads the files on a thread of its own, in order, up to :data:`READ_AHEAD` ahead of
    the writer: parsing holds the GIL while SQLite's inserts (which release it) run, so the
    two overlap on a second core. Iterate for ``(path, Read)``; an exception the reading
    raised is raised here, in the writer's thread. :meth:`close` stops the thread."""

    def __init__(self, paths: list[str], redact: Redact) -> None:
        self._paths = paths
        self._redact = redact
        self._queue: queue.Queue[tuple[str, Read | BaseException] | None] = queue.Queue(READ_AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wayline-store-read", daemon=True)
        self._thread.start()

    def _put(self, item: tuple[str, Read | BaseException] | None) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        for path in self._paths:
            if self._stop.is_set():
                return
            try:
                read: Read | BaseException = read_file(Path(path), self._redact)
            except BaseException as exc:  # handed to the writer, which raises it
                read = exc
            if not self._put((path, read)) or isinstance(read, BaseException):
                return
        self._put(None)

    def __iter__(self) -> Iterator[tuple[str, Read]]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            path, read = item
            if isinstance(read, BaseException):
                raise read
            yield path, read

    def close(self) -> None:
        """Stop reading (the thread ends after the file it is reading)."""
        self._stop.set()
        self._thread.join(timeout=5)
