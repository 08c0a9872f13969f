"""An index over recorded sessions: list, search and total them without reading every file.

The index (SQLite with FTS5, from the standard library) is a cache over the ATOF and ATIF
files: it is updated from them on each use, by size and modification time, and deleting it
loses nothing. It reads wayline's own recordings and ATIF written by others (Hermes with
Relay, Harbor). This layer reads recordings only: it never imports the runtime or the plugins.

    with SessionStore.open([], home) as store:
        store.update()
        rows = store.sessions(SessionFilter.parse({"status": "failed"}))
"""

from wayline.store.extract import STATUSES
from wayline.store.query import GROUPS, FilterError, SessionFilter, parse_time
from wayline.store.schema import TRIGRAM, IndexUnavailable
from wayline.store.store import (
    INDEX_NAME,
    SessionSource,
    SessionStore,
    StoreError,
    index_path,
    scope_of,
)
from wayline.store.sync import Scope, SyncReport

__all__ = [
    "GROUPS",
    "INDEX_NAME",
    "STATUSES",
    "TRIGRAM",
    "FilterError",
    "IndexUnavailable",
    "Scope",
    "SessionFilter",
    "SessionSource",
    "SessionStore",
    "StoreError",
    "SyncReport",
    "index_path",
    "parse_time",
    "scope_of",
]
