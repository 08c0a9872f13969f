"""The store: an index file over a scope of recordings, kept up to date, with its questions.

Where the index lives: ``$WAYLINE_HOME/index.sqlite`` for the home's recordings (its
``relay/atof`` and ``relay/atif`` folders), or ``index.sqlite`` in the folder that holds every
path given (a folder given alone holds its own). It is a cache: deleting it loses nothing, and
:meth:`SessionStore.rebuild` makes it again from the files.

A web app opens one :class:`SessionStore` per request (or per thread: an SQLite connection
belongs to the thread that opened it), calls :meth:`~SessionStore.update` and asks; the
answers are plain rows.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from wayline.contract.private import PrivatePaths
from wayline.redaction import redact_text
from wayline.store import query
from wayline.store.atof import convert_root, parse_event, read_lines, unpack
from wayline.store.extract import is_wayline_recording, step_lines
from wayline.store.reading import read_document
from wayline.store.schema import TRIGRAM, connect, remove_index
from wayline.store.sync import Indexer, Scope, SyncReport, positions
from wayline.trajectory.load import TrajectoryError

__all__ = [
    "INDEX_NAME",
    "SessionSource",
    "SessionStore",
    "StoreError",
    "index_path",
    "scope_of",
]

INDEX_NAME = "index.sqlite"
Row = dict[str, Any]


class StoreError(ValueError):
    """A question the store cannot answer (no such session, a file gone meanwhile)."""


@dataclass(frozen=True)
class SessionSource:
    """Where a session's trajectory is: its file, the ATOF root whose events hold it (empty
    for an ATIF file), which document of that root's conversion (0 for an ATIF file), and
    the path of ``subagent_trajectories`` indices to it inside that document (empty for a
    top-level session)."""

    path: Path
    root: str
    document: int
    where: tuple[int, ...]


def home_scope(home: Path) -> Scope:
    """The recordings of a wayline home: its ``relay/atof`` and ``relay/atif`` folders, and
    the sessions ``wayline import`` wrote (``imported``)."""
    relay = home / "relay"
    return Scope(folders=(relay / "atof", relay / "atif", home / "imported"))


def scope_of(paths: Sequence[Path], home: Path) -> Scope:
    """What a command reads: the home's recordings when no path is given, else the paths
    (folders walked recursively, files as they are)."""
    if not paths:
        return home_scope(home.absolute())
    folders = tuple(p.absolute() for p in paths if p.is_dir())
    files = tuple(p.absolute() for p in paths if not p.is_dir())
    return Scope(folders=folders, files=files)


def index_path(paths: Sequence[Path], home: Path) -> Path:
    """Where the index of a command lives (see the module doc)."""
    if not paths:
        return home.absolute() / INDEX_NAME
    folders = [p.absolute() if p.is_dir() else p.absolute().parent for p in paths]
    common = Path(os.path.commonpath([str(f) for f in folders]))
    return common / INDEX_NAME


class SessionStore:
    """An index over the recordings of ``scope``, at ``index``.

    ``redact`` is applied to the text of files wayline did not write (its own recordings were
    redacted when they were written). Not thread-safe: one store per thread.
    """

    def __init__(
        self,
        index: Path,
        scope: Scope,
        *,
        redact: Callable[[str], str] = redact_text,
        private: PrivatePaths | None = None,
    ) -> None:
        self.index = index
        self.scope = scope
        self._redact = redact
        self._private = private
        self._conn = connect(index, private=private)
        self._indexer = Indexer(self._conn, redact)
        self._scoped = False
        #: What the last :meth:`update` or :meth:`rebuild` did.
        self.last_update: SyncReport | None = None

    @classmethod
    def open(cls, paths: Sequence[Path], home: Path, *, index: Path | None = None) -> SessionStore:
        """The store of a command's paths (the home's recordings when none), not updated yet."""
        return cls(index or index_path(paths, home), scope_of(paths, home))

    # -- life ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the index."""
        self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def search_mode(self) -> str:
        """``trigram`` (FTS5's trigram index) or ``scan`` (an SQLite older than 3.34)."""
        return "trigram" if TRIGRAM else "scan"

    def update(self) -> SyncReport:
        """Bring the index up to date with the files of the scope (what changed only)."""
        report = self._indexer.sync(self.scope)
        self._scoped = self._indexer.scope_ids is not None
        self.last_update = report
        return report

    def rebuild(self) -> SyncReport:
        """Delete the index and build it again from the files of the scope."""
        self._conn.close()
        remove_index(self.index)
        self._conn = connect(self.index, private=self._private)
        self._indexer = Indexer(self._conn, self._redact)
        return self.update()

    # -- questions -----------------------------------------------------------------------------

    def sessions(
        self, where: query.SessionFilter | None = None, *, limit: int | None = 50
    ) -> list[Row]:
        """Sessions matching ``where``, newest first (:func:`wayline.store.query.list_sessions`)."""
        return query.list_sessions(self._conn, where, limit=limit, scoped=self._scoped)

    def search(self, text: str, *, limit: int | None = 20) -> list[Row]:
        """Steps holding ``text`` (:func:`wayline.store.query.search`)."""
        return query.search(self._conn, text, limit=limit, scoped=self._scoped, trigram=TRIGRAM)

    def stats(self, by: str = "model", where: query.SessionFilter | None = None) -> list[Row]:
        """Totals per ``by`` (:func:`wayline.store.query.stats`)."""
        return query.stats(self._conn, by, where, scoped=self._scoped)

    def session(self, session_id: str) -> Row | None:
        """``{"session": row, "steps": [...]}`` for one session, by its id or a prefix only it
        has (the steps, one dict each, are read from its file); None when there is none.
        :class:`StoreError` when the prefix is ambiguous or its file cannot be read now."""
        found = self.trajectory(session_id)
        if found is None:
            return None
        row, traj, mine = found
        origin = query.parse_time(row["started_at"]) if row["started_at"] else None
        steps = step_lines(traj, origin)
        if not mine:
            for step in steps:
                step["text"] = self._redact(step["text"])
        return {"session": row, "steps": steps}

    def trajectory(self, session_id: str) -> tuple[Row, Mapping[str, Any], bool] | None:
        """One session's row, its ATIF trajectory as its file holds it (not redacted), and
        whether wayline wrote that file (already redacted then); by id or a prefix only it
        has, as :meth:`session`. None when there is none; :class:`StoreError` as there."""
        found = self.source(session_id)
        if found is None:
            return None
        row, source = found
        document = self._document(source)
        traj: Mapping[str, Any] = document
        for index in source.where:
            traj = traj["subagent_trajectories"][index]
        return row, traj, is_wayline_recording(document)

    def source(self, session_id: str) -> tuple[Row, SessionSource] | None:
        """One session's row and where its trajectory is (no file is read); by id or a prefix
        only it has, as :meth:`session`. None when there is none; :class:`StoreError` when the
        prefix is ambiguous."""
        try:
            row = query.session_row(self._conn, session_id, scoped=self._scoped)
        except query.FilterError as exc:
            raise StoreError(str(exc)) from None
        if row is None:
            return None
        path, root, position = row.pop("_file"), row.pop("_root"), row.pop("_position")
        number, where = positions(position)
        return row, SessionSource(Path(path), root, number, where)

    def root_events(self, source: SessionSource) -> list[dict[str, Any]]:
        """The ATOF events of ``source``'s root, in file order: only the lines the index
        routed to that root, read from their places (an ATOF file shared by many sessions is
        not read whole). :class:`StoreError` when the root is no longer indexed or its file
        cannot be read now; empty for a session an ATIF file holds."""
        if not source.root:
            return []
        found = self._conn.execute(
            "SELECT r.lines FROM atof_roots r JOIN files f ON f.id = r.file_id "
            "WHERE f.path = ? AND r.root = ?",
            (str(source.path), source.root),
        ).fetchone()
        if found is None:
            raise StoreError(f"{source.path}: the session's events are no longer indexed")
        try:
            with open(source.path, "rb") as handle:
                return [e for e in map(parse_event, read_lines(handle, unpack(found[0]))) if e]
        except OSError as exc:
            raise StoreError(f"{source.path}: cannot read the session now: {exc}") from None

    def _document(self, source: SessionSource) -> Any:
        try:
            if not source.root:
                return read_document(source.path)
            return convert_root(self.root_events(source))[source.document].document
        except (TrajectoryError, OSError, IndexError, KeyError) as exc:
            raise StoreError(f"{source.path}: cannot read the session now: {exc}") from None

    def count(self) -> int:
        """How many sessions the scope holds (each once, however many files hold it)."""
        return query.count_sessions(self._conn, scoped=self._scoped)

    @property
    def connection(self) -> sqlite3.Connection:
        """The open index (read it; writing belongs to :meth:`update`)."""
        return self._conn
