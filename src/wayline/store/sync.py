"""Bringing the index up to date with the files: only what changed since the last command.

Every command first compares the files in its scope with what the index recorded of them
(size, modification time and inode): a new or changed ATIF file is read again whole, an ATOF
file that only grew is read from where the last command stopped (:mod:`wayline.store.atof`),
and a file that is gone takes its sessions with it. Work is committed in batches, so an
interrupted run keeps what it indexed and the next one goes on from there. Files that are not
trajectories are remembered as such (and said once, when first seen), so they are not read
again until they change.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wayline.store.atof import (
    RootRouter,
    convert_root,
    new_lines,
    pack,
    parse_event,
    root_session,
    unpack,
)
from wayline.store.atof import read_lines as read_spans
from wayline.store.extract import SessionRecord, is_wayline_recording, records_of
from wayline.store.reading import Read, ReadAhead

__all__ = ["PREF_ATIF", "PREF_ATOF", "PREF_LIVE", "Indexer", "Scope", "SyncReport"]

# Which copy of a session is shown when several files hold it (smallest first): a session
# still running is shown from its events, which are newer than any ATIF snapshot of it;
# a finished one from its ATIF file, the exporter's complete document.
PREF_LIVE = 0
PREF_ATIF = 10
PREF_ATOF = 20

SUFFIXES = (".json", ".jsonl")
HEAD_BYTES = 4096
"""Bytes at the start of an ATOF file remembered to tell an append from a rewrite."""
BATCH_SECONDS = 2.0
"""Work between two commits while indexing (an interrupted run keeps what was committed)."""

Redact = Callable[[str], str]


@dataclass(frozen=True)
class Scope:
    """What a command reads: folders (walked recursively for ``.json``/``.jsonl`` files) and
    single files (read whatever their name).

    ``confined``: a file found in a folder through a symbolic link that leads outside every
    folder and file of the scope (both resolved) is not in it: neither read nor counted by any
    question (``wayline serve`` reads only files under the paths it was given). Without it a
    link is followed wherever it leads, as a command given the folder would."""

    folders: tuple[Path, ...] = ()
    files: tuple[Path, ...] = ()
    confined: bool = False

    def holds(self, path: str) -> bool:
        """Whether ``path`` (absolute) is one of the files or under one of the folders."""
        if any(path == str(f) for f in self.files):
            return True
        return any(path.startswith(str(folder).rstrip(os.sep) + os.sep) for folder in self.folders)

    def reaches(self, path: str | Path) -> bool:
        """Whether ``path``, resolved (links followed), is one of the files or inside one of
        the folders, resolved too (the rule ``confined`` applies)."""
        real = Path(os.path.realpath(path))
        if any(real == Path(os.path.realpath(f)) for f in self.files):
            return True
        return any(real.is_relative_to(os.path.realpath(f)) for f in self.folders)


@dataclass
class SyncReport:
    """What one update did: files in scope, files (re)read, files gone, and warnings."""

    files: int = 0
    indexed: int = 0
    removed: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class _Known:
    id: int
    kind: str
    size: int
    mtime_ns: int
    ino: int
    offset: int
    head: bytes | None


def _walk(folder: Path, found: dict[str, os.stat_result], links: list[str]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                _walk(Path(entry.path), found, links)
            elif entry.name.endswith(SUFFIXES) and entry.is_file():
                st = entry.stat()
                found[entry.path] = st
                if entry.is_symlink():
                    links.append(entry.path)
        except OSError:
            continue


def scan(scope: Scope, links: list[str] | None = None) -> dict[str, os.stat_result]:
    """Every file of ``scope`` on disk now, with its ``stat``; the files found in its folders
    through a symbolic link are added to ``links`` (the walk never enters a linked folder)."""
    found: dict[str, os.stat_result] = {}
    linked: list[str] = [] if links is None else links
    for folder in scope.folders:
        _walk(folder, found, linked)
    for path in scope.files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found[str(path)] = st
    return found


def _differs(known: Sequence[Any] | None, st: os.stat_result) -> bool:
    """Whether a file changed since it was indexed (``known`` ends in size, mtime, inode)."""
    if known is None:
        return True
    return tuple(known[-3:]) != (st.st_size, st.st_mtime_ns, st.st_ino)


def _day(ns: int | None) -> str | None:
    if ns is None:
        return None
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%d")


class Indexer:
    """Updates one index (an open connection) from the files of a scope."""

    def __init__(self, conn: sqlite3.Connection, redact: Redact) -> None:
        self._conn = conn
        self._redact = redact
        self._next_text = 0
        self._dropped_atif = False
        #: File ids of the last sync's scope; None when the scope is every file indexed.
        self.scope_ids: list[int] | None = None

    # -- the update ----------------------------------------------------------------------------

    def sync(self, scope: Scope, *, rebuild: bool = False) -> SyncReport:
        """Bring the index up to date with the files of ``scope``."""
        started = time.perf_counter()
        report = SyncReport()
        links: list[str] = []
        disk = scan(scope, links)
        # A confined scope's links out are left as they are in the index (another command's
        # scope may hold them), but neither read nor in this scope.
        outside = {path for path in links if not scope.reaches(path)} if scope.confined else ()
        on_disk = disk
        if outside:
            disk = {path: st for path, st in disk.items() if path not in outside}
        report.files = len(disk)
        # (path, id, size, mtime_ns, ino) of every file indexed: compared with the disk here;
        # a file's full row is read again inside the write transaction, where it counts.
        rows = self._conn.execute("SELECT path, id, size, mtime_ns, ino FROM files").fetchall()
        seen = {row[0]: row for row in rows}
        gone = [row[1] for row in rows if row[0] not in on_disk and scope.holds(row[0])]
        changed = [path for path, st in disk.items() if rebuild or _differs(seen.get(path), st)]
        # ATIF files first, so the ATOF roots they hold are known to be held (see
        # _index_root); oldest first: later files get later text rows, which search lists
        # first.
        changed.sort(key=lambda p: (p.endswith(".jsonl"), disk[p].st_mtime_ns, p))
        self._dropped_atif = False
        if gone or changed:
            self._apply(gone, changed, disk, report, rebuild=rebuild)
            rows = self._conn.execute("SELECT path, id FROM files").fetchall()
        report.removed = len(gone)
        in_scope = [row[1] for row in rows if row[0] in disk]
        self.scope_ids = None if len(in_scope) == len(rows) else in_scope
        self._set_scope()
        if self._dropped_atif or self.scope_ids is not None:
            self._uncover()
        report.seconds = time.perf_counter() - started
        return report

    def _set_scope(self) -> None:
        """The temporary ``scope`` table the questions read: the file ids of the scope."""
        conn = self._conn
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS scope(id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.scope")
        if self.scope_ids is not None:
            conn.executemany(
                "INSERT INTO temp.scope(id) VALUES (?)", [(i,) for i in self.scope_ids]
            )

    def _known(self, path: str) -> _Known | None:
        row = self._conn.execute(
            "SELECT id, kind, size, mtime_ns, ino, offset, head FROM files WHERE path=?", (path,)
        ).fetchone()
        return None if row is None else _Known(*row)

    def _apply(
        self,
        gone: list[int],
        changed: list[str],
        disk: dict[str, os.stat_result],
        report: SyncReport,
        *,
        rebuild: bool,
    ) -> None:
        conn = self._conn
        reads = ReadAhead(changed, self._redact)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for file_id in gone:
                self._drop_file(file_id)
            self._next_text = self._max_text() + 1
            batch_started = time.perf_counter()
            for path, read in reads:
                st = disk[path]
                # Another command may have indexed it meanwhile: what it wrote counts now.
                current = self._known(path)
                if (
                    not rebuild
                    and current is not None
                    and not _differs((current.size, current.mtime_ns, current.ino), st)
                ):
                    continue
                self._index_file(Path(path), st, current, read, report)
                report.indexed += 1
                if time.perf_counter() - batch_started > BATCH_SECONDS:
                    conn.execute("COMMIT")
                    conn.execute("BEGIN IMMEDIATE")
                    batch_started = time.perf_counter()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            reads.close()

    def _max_text(self) -> int:
        row = self._conn.execute("SELECT max(rowid) FROM step_text").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # -- one file ------------------------------------------------------------------------------

    def _file_row(self, path: Path, st: os.stat_result, known: _Known | None, kind: str) -> int:
        if known is None:
            cursor = self._conn.execute(
                "INSERT INTO files(path, kind, size, mtime_ns, ino) VALUES (?, ?, ?, ?, ?)",
                (str(path), kind, st.st_size, st.st_mtime_ns, st.st_ino),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid
        self._conn.execute(
            "UPDATE files SET kind=?, size=?, mtime_ns=?, ino=?, note=NULL WHERE id=?",
            (kind, st.st_size, st.st_mtime_ns, st.st_ino, known.id),
        )
        return known.id

    def _index_file(
        self, path: Path, st: os.stat_result, known: _Known | None, read: Read, report: SyncReport
    ) -> None:
        if read.kind == "skip":
            assert read.note is not None
            self._skip(path, st, known, read.note, report)
        elif read.kind == "atof":
            file_id = self._file_row(path, st, known, "atof")
            problem = self._index_atof(file_id, path, st, known)
            if problem:
                report.warnings.append(f"{path}: {problem}")
        else:
            file_id = self._file_row(path, st, known, "atif")
            self._drop_sessions("file_id=?", (file_id,))
            for record in read.records:
                self._insert(file_id, "", _position(0, record), record, PREF_ATIF)

    def _skip(
        self,
        path: Path,
        st: os.stat_result,
        known: _Known | None,
        note: str,
        report: SyncReport,
    ) -> None:
        file_id = self._file_row(path, st, known, "other")
        self._drop_file_rows(file_id)
        self._conn.execute("UPDATE files SET note=? WHERE id=?", (note, file_id))
        report.warnings.append(f"skipped {path}: {note}")

    # -- ATOF ----------------------------------------------------------------------------------

    def _index_atof(
        self, file_id: int, path: Path, st: os.stat_result, known: _Known | None
    ) -> str | None:
        conn = self._conn
        with open(path, "rb") as handle, open(path, "rb") as spans_handle:
            head = handle.read(HEAD_BYTES)
            appended = (
                known is not None
                and known.kind == "atof"
                and known.ino == st.st_ino
                and known.offset > 0
                and st.st_size >= known.offset
                and known.head is not None
                and head[: len(known.head)] == known.head
            )
            offset = known.offset if appended and known is not None else 0
            if not appended:
                self._drop_file_rows(file_id)
                router = RootRouter()
            else:
                rows = conn.execute("SELECT uuid, root FROM atof_open WHERE file_id=?", (file_id,))
                router = RootRouter(dict(rows.fetchall()))
            pending: dict[str, list[dict[str, Any]]] = {}
            spans: dict[str, array[int]] = {}
            bad = 0
            for position, length, raw in new_lines(handle, offset):
                offset = position + length
                event = parse_event(raw)
                if event is None:
                    bad += 1 if raw.strip() else 0
                    continue
                root = router.route(event)
                if root is None:
                    continue
                if root not in pending:
                    spans[root] = self._spans(file_id, root) if appended else array("q")
                    pending[root] = [
                        e for e in map(parse_event, read_spans(spans_handle, spans[root])) if e
                    ]
                spans[root].extend((position, length))
                pending[root].append(event)
                if root in router.ended:
                    router.ended.discard(root)
                    events = pending.pop(root)
                    self._index_root(file_id, root, events, spans.pop(root), ended=True)
            for root, events in pending.items():
                self._index_root(file_id, root, events, spans[root], ended=False)
            conn.execute("DELETE FROM atof_open WHERE file_id=?", (file_id,))
            conn.executemany(
                "INSERT INTO atof_open(file_id, uuid, root) VALUES (?, ?, ?)",
                [(file_id, uuid, root) for uuid, root in router.open.items()],
            )
            conn.execute("UPDATE files SET offset=?, head=? WHERE id=?", (offset, head, file_id))
        return f"{bad} lines that are not ATOF events were skipped" if bad else None

    def _spans(self, file_id: int, root: str) -> array[int]:
        row = self._conn.execute(
            "SELECT lines FROM atof_roots WHERE file_id=? AND root=?", (file_id, root)
        ).fetchone()
        return unpack(row[0] if row else None)

    def _index_root(
        self,
        file_id: int,
        root: str,
        events: list[dict[str, Any]],
        spans: array[int],
        *,
        ended: bool,
    ) -> None:
        """Index a root's sessions from its events, unless the root has ended and an ATIF
        file already holds its session: then only where its lines are is kept (the ATIF
        file's copy is the one shown, and converting the events again would cost as much as
        reading that file). :meth:`_uncover` converts it if that ATIF copy goes away."""
        self._drop_sessions("file_id=? AND root=?", (file_id, root))
        held = root_session(events[0]) if ended and events else None
        if held is not None and not self._held(held):
            held = None
        self._conn.execute(
            "INSERT OR REPLACE INTO atof_roots(file_id, root, lines, covered) VALUES (?, ?, ?, ?)",
            (file_id, root, pack(spans), held),
        )
        if held is not None:
            return
        for index, converted in enumerate(convert_root(events)):
            document = converted.document
            redact = None if is_wayline_recording(document) else self._redact
            records = records_of(document, root, redact)
            for record, running, reason in zip(
                records, converted.running, converted.reasons, strict=True
            ):
                pref = PREF_ATOF
                if running:
                    record.status, pref = "running", PREF_LIVE
                elif reason is not None:
                    record.status = reason
                self._insert(file_id, root, _position(index, record), record, pref)

    def _held(self, session_id: str) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM sessions WHERE session_id=? AND pref=? LIMIT 1", (session_id, PREF_ATIF)
        ).fetchone()
        return row is not None

    def _uncover(self) -> None:
        """Convert the ATOF roots whose session no ATIF file of the scope holds any more (its
        file was deleted or rewritten, or the scope leaves it out)."""
        scoped = self.scope_ids is not None
        inside = " AND {}.file_id IN (SELECT id FROM temp.scope)"
        sql = (
            "SELECT r.file_id, r.root, r.lines, f.path FROM atof_roots r "
            "JOIN files f ON f.id = r.file_id WHERE r.covered IS NOT NULL"
            + (inside.format("r") if scoped else "")
            + " AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = r.covered"
            f" AND s.pref = {PREF_ATIF}" + (inside.format("s") if scoped else "") + ")"
        )
        found = self._conn.execute(sql).fetchall()
        if not found:
            return
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._next_text = self._max_text() + 1
            for file_id, root, blob, path in found:
                spans = unpack(blob)
                try:
                    with open(path, "rb") as handle:
                        events = [e for e in map(parse_event, read_spans(handle, spans)) if e]
                except OSError:
                    continue  # gone meanwhile: the next update drops it
                self._index_root(file_id, root, events, spans, ended=False)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # -- rows ----------------------------------------------------------------------------------

    def _insert(
        self, file_id: int, root: str, position: str, record: SessionRecord, pref: int
    ) -> None:
        conn = self._conn
        texts = record.texts
        lo = self._next_text if texts else None
        hi = self._next_text + len(texts) - 1 if texts else None
        cursor = conn.execute(
            "INSERT INTO sessions(file_id, root, position, session_id, parent_id, pref, agent,"
            " model, models, started_ns, duration_ms, day, status, steps, tool_calls, errors,"
            " input_tokens, output_tokens, cached_tokens, cost_usd, children, text_lo, text_hi)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                file_id,
                root,
                position,
                record.session_id,
                record.parent_id,
                pref,
                record.agent,
                record.model,
                json.dumps(record.models, ensure_ascii=False),
                record.started_ns,
                record.duration_ms,
                _day(record.started_ns),
                record.status,
                record.steps,
                record.tool_calls,
                record.errors,
                record.input_tokens,
                record.output_tokens,
                record.cached_tokens,
                record.cost_usd,
                json.dumps(record.children, ensure_ascii=False),
                lo,
                hi,
            ),
        )
        session = cursor.lastrowid
        conn.executemany(
            "INSERT OR IGNORE INTO session_models(session, model) VALUES (?, ?)",
            [(session, model) for model in record.models],
        )
        conn.executemany(
            "INSERT INTO session_tools(session, name, calls, errors) VALUES (?, ?, ?, ?)",
            [(session, name, c[0], c[1]) for name, c in record.tools.items()],
        )
        if texts:
            start = self._next_text
            conn.executemany(
                "INSERT INTO step_text(rowid, text, session, step, field) VALUES (?, ?, ?, ?, ?)",
                [(start + i, t.text, session, t.step, t.field) for i, t in enumerate(texts)],
            )
            self._next_text += len(texts)

    def _drop_sessions(self, where: str, args: tuple[Any, ...]) -> None:
        conn = self._conn
        rows = conn.execute(f"SELECT id, text_lo, text_hi, pref FROM sessions WHERE {where}", args)
        found = rows.fetchall()
        if not found:
            return
        ids = [(row[0],) for row in found]
        ranges = [(row[1], row[2]) for row in found if row[1] is not None]
        if any(row[3] == PREF_ATIF for row in found):
            self._dropped_atif = True  # ATOF roots it held may need converting
        conn.executemany("DELETE FROM step_text WHERE rowid BETWEEN ? AND ?", ranges)
        conn.executemany("DELETE FROM session_models WHERE session=?", ids)
        conn.executemany("DELETE FROM session_tools WHERE session=?", ids)
        conn.executemany("DELETE FROM sessions WHERE id=?", ids)

    def _drop_file_rows(self, file_id: int) -> None:
        self._drop_sessions("file_id=?", (file_id,))
        self._conn.execute("DELETE FROM atof_roots WHERE file_id=?", (file_id,))
        self._conn.execute("DELETE FROM atof_open WHERE file_id=?", (file_id,))
        self._conn.execute("UPDATE files SET offset=0, head=NULL WHERE id=?", (file_id,))

    def _drop_file(self, file_id: int) -> None:
        self._drop_file_rows(file_id)
        self._conn.execute("DELETE FROM files WHERE id=?", (file_id,))


def _position(document: int, record: SessionRecord) -> str:
    """Where a trajectory sits: the document of its root's conversion, then its subagent path."""
    return f"{document}/" + ".".join(str(i) for i in record.where)


def positions(text: str) -> tuple[int, tuple[int, ...]]:
    """:func:`_position`'s text back as ``(document, path)``."""
    document, _, path = text.partition("/")
    return int(document), tuple(int(i) for i in path.split(".") if i)


def files_of(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """Paths of the file ids."""
    wanted = list(ids)
    rows = conn.execute(
        f"SELECT id, path FROM files WHERE id IN ({','.join('?' * len(wanted))})", wanted
    )
    return dict(rows.fetchall())
