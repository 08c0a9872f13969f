"""Opening the session index while another process writes to the same new file."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from wayline.store.schema import SCHEMA_VERSION, connect


def test_switching_a_new_index_to_wal_waits_for_a_writer(tmp_path: Path) -> None:
    """SQLite refuses the WAL switch at once (no busy wait) while another connection holds a
    write lock; opening the index tries again until the writer is done, then succeeds."""
    path = tmp_path / "index.sqlite"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE other(a)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO other VALUES (1)")
    outcome: list[object] = []

    def open_index() -> None:
        try:
            conn = connect(path)
        except Exception as exc:  # handed to the test thread
            outcome.append(exc)
        else:
            outcome.append(conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone())
            conn.close()

    opener = threading.Thread(target=open_index)
    opener.start()
    opener.join(timeout=0.5)
    assert opener.is_alive(), f"the open did not wait for the writer: {outcome}"
    writer.execute("COMMIT")
    writer.close()
    opener.join(timeout=60)
    assert outcome == [(SCHEMA_VERSION,)]
