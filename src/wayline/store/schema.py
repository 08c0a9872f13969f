"""The index file: SQLite from the standard library, created private, remade when it is stale.

The index is a cache over the recordings: a schema of another version, or a file SQLite cannot
read, is deleted and built again from the files, since deleting it loses nothing. Step text is
searched through an FTS5 table with the ``trigram`` tokenizer (SQLite 3.34 and later), which
finds any substring of three characters or more in any script, Chinese, Japanese and Arabic
included. An SQLite without it gets a plain table that search scans (:data:`TRIGRAM` says which).
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from wayline.contract.private import PrivatePaths

__all__ = ["SCHEMA_VERSION", "TRIGRAM", "IndexUnavailable", "connect", "remove_index"]

SCHEMA_VERSION = "2"

TRIGRAM = sqlite3.sqlite_version_info >= (3, 34, 0)
"""Whether this SQLite has FTS5's trigram tokenizer (3.34+); without it search scans text."""

BUSY_TIMEOUT_S = 60.0
"""How long a command waits for another one that is writing the same index."""

_TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    offset INTEGER NOT NULL DEFAULT 0,
    head BLOB,
    note TEXT
);
CREATE TABLE sessions(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    root TEXT NOT NULL DEFAULT '',
    position TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL,
    parent_id TEXT,
    pref INTEGER NOT NULL,
    agent TEXT,
    model TEXT,
    models TEXT NOT NULL,
    started_ns INTEGER,
    duration_ms REAL,
    day TEXT,
    status TEXT NOT NULL,
    steps INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cached_tokens INTEGER,
    cost_usd REAL,
    children TEXT NOT NULL,
    text_lo INTEGER,
    text_hi INTEGER
);
CREATE INDEX sessions_by_id ON sessions(session_id, pref, id);
CREATE INDEX sessions_by_file ON sessions(file_id, root);
CREATE INDEX sessions_by_start ON sessions(started_ns);
CREATE TABLE session_models(
    session INTEGER NOT NULL, model TEXT NOT NULL, PRIMARY KEY(session, model)
) WITHOUT ROWID;
CREATE INDEX session_models_by_model ON session_models(model, session);
CREATE TABLE session_tools(
    session INTEGER NOT NULL,
    name TEXT NOT NULL,
    calls INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    PRIMARY KEY(session, name)
) WITHOUT ROWID;
CREATE INDEX session_tools_by_name ON session_tools(name, session);
CREATE TABLE atof_roots(
    file_id INTEGER NOT NULL,
    root TEXT NOT NULL,
    lines BLOB NOT NULL,
    covered TEXT,
    PRIMARY KEY(file_id, root)
) WITHOUT ROWID;
CREATE TABLE atof_open(
    file_id INTEGER NOT NULL, uuid TEXT NOT NULL, root TEXT NOT NULL,
    PRIMARY KEY(file_id, uuid)
) WITHOUT ROWID;
"""

_ALL_TABLES = (
    "meta",
    "files",
    "sessions",
    "session_models",
    "session_tools",
    "atof_roots",
    "atof_open",
    "step_text",
)

_TEXT_FTS = (
    "CREATE VIRTUAL TABLE step_text USING fts5("
    "text, session UNINDEXED, step UNINDEXED, field UNINDEXED, tokenize='trigram')"
)
_TEXT_PLAIN = (
    "CREATE TABLE step_text("
    "rowid INTEGER PRIMARY KEY, text TEXT, session INTEGER, step INTEGER, field TEXT)"
)


class IndexUnavailable(OSError):
    """The index cannot be opened or written; ``str()`` names its path and why."""


def remove_index(path: Path) -> None:
    """Delete the index file and SQLite's companions of it (``-wal``, ``-shm``, ``-journal``)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        _wal(conn)
    except BaseException:
        conn.close()
        raise
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-65536")
    return conn


def _wal(conn: sqlite3.Connection) -> None:
    """Write-ahead logging, so readers (a web app) go on while a command writes.

    Two processes that open a new index at once both hold a shared lock and both need an
    exclusive one to switch it to WAL; SQLite then answers one of them "database is locked"
    at once instead of calling its busy handler (waiting could deadlock), and the way out it
    documents is to try again. So the switch is retried, until the busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _version(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.OperationalError:
        return None  # no meta table: an empty (new) file, or not ours
    return str(row[0]) if row else None


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _version(conn) == SCHEMA_VERSION:  # another command made it meanwhile
            conn.execute("COMMIT")
            return
        for name in _ALL_TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {name}")
        for statement in _TABLES.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(_TEXT_FTS if TRIGRAM else _TEXT_PLAIN)
        conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        conn.execute("INSERT INTO meta VALUES ('search', ?)", ("trigram" if TRIGRAM else "scan",))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def connect(path: Path, *, private: PrivatePaths | None = None) -> sqlite3.Connection:
    """Open (creating when missing) the index at ``path``: 0600 in a directory made 0700.

    A file that is not an index of this schema version is deleted and made again. Raises
    :class:`IndexUnavailable` when the file cannot be created or opened.
    """
    paths = private if private is not None else PrivatePaths(warn=False)
    try:
        paths.directory(path.parent, warn=False)
        # Created 0600 before SQLite opens it; SQLite gives its -wal and -shm files the
        # database file's mode.
        os.close(paths.open_fd(path, os.O_RDWR))
    except OSError as exc:
        raise IndexUnavailable(f"{path}: cannot create the index: {exc.strerror or exc}") from None
    try:
        return _ready(path)
    except sqlite3.OperationalError as exc:
        raise IndexUnavailable(f"{path}: cannot open the index: {exc}") from None
    except sqlite3.DatabaseError:
        pass
    # Not a database, or a damaged one: it is a cache, so it is made again.
    remove_index(path)
    try:
        os.close(paths.open_fd(path, os.O_RDWR))
        return _ready(path)
    except (OSError, sqlite3.Error) as exc:
        raise IndexUnavailable(f"{path}: cannot open the index: {exc}") from None


def _ready(path: Path) -> sqlite3.Connection:
    conn = _open(path)
    try:
        if _version(conn) != SCHEMA_VERSION:
            _create(conn)
    except BaseException:
        conn.close()
        raise
    return conn
