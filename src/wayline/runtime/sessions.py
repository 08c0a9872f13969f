"""Transcripts under ``$WAYLINE_HOME/sessions/<id>.jsonl``: one line per message.

Appending one line per message (flushed) means a killed process loses at most
the line being written, and a torn last line is skipped when resuming. Messages are
passed through the redaction policy before they are stored, with their structure and
ids whole (a resumed session sends them back), each string redacted before it is cut
at ``MAX_STORED_CHARS``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from wayline.contract.private import PrivatePaths
from wayline.host.config import ConfigError
from wayline.redaction import KnownValues, redact_value

#: A stored string longer than this is redacted, then cut (the turn waits for the store: the
#: bound keeps a huge tool result from costing it more than a fraction of a second).
MAX_STORED_CHARS = 262_144


def redact(value: Any, known: KnownValues | None = None) -> Any:
    """Secrets out, structure and ids kept (a resumed session needs them); with ``known``,
    what a rule redacts becomes a known value of the session."""
    return redact_value(value, max_string=MAX_STORED_CHARS, learn=known)


class SessionStore:
    """Reads and appends session transcripts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._files: dict[str, Any] = {}
        self._private = PrivatePaths()  # transcripts 0600 in a 0700 directory

    def path(self, session_id: str) -> Path:
        """The transcript file of ``session_id``."""
        if not session_id or "/" in session_id or session_id.startswith("."):
            raise ValueError(f"invalid session id {session_id!r}")
        return self.root / f"{session_id}.jsonl"

    def append(
        self, session_id: str, message: dict[str, Any], known: KnownValues | None = None
    ) -> None:
        """Store one message (redacted; what rules redact becomes a value of ``known``)
        durably enough to survive a crash."""
        line = json.dumps(
            redact(message, known), ensure_ascii=False, separators=(",", ":"), default=str
        )
        with self._lock:
            fh = self._files.get(session_id)
            if fh is None:
                self._private.directory(self.root)
                fh = self._files[session_id] = self._private.open(
                    self.path(session_id), "a", encoding="utf-8"
                )
            fh.write(line + "\n")
            fh.flush()  # to the OS before returning: a killed process keeps every whole line

    def create(self, session_id: str) -> None:
        """Create the (empty) transcript now: a session whose id was shown can be resumed
        even when the process dies before its first message is stored."""
        with self._lock:
            if session_id not in self._files:
                self._private.directory(self.root)
                fh = self._private.open(self.path(session_id), "a", encoding="utf-8")
                self._files[session_id] = fh

    def close(self, session_id: str) -> None:
        """Close the transcript file of ``session_id`` (reopened on the next append)."""
        with self._lock:
            fh = self._files.pop(session_id, None)
        if fh is not None:
            fh.close()

    def exists(self, session_id: str) -> bool:
        """True when a transcript exists."""
        return self.path(session_id).exists()

    def load(self, session_id: str) -> list[dict[str, Any]]:
        """Messages of a stored session; a torn last line (crash) is skipped."""
        path = self.path(session_id)
        if not path.exists():
            known = sorted(p.stem for p in self.root.glob("*.jsonl"))[-10:]
            raise ConfigError(
                path, None, f"no such session; recent: {', '.join(known) or '(none)'}"
            )
        messages: list[dict[str, Any]] = []
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                if n == len(lines):
                    break
                raise ConfigError(path, n, "corrupt transcript line") from None
            if isinstance(item, dict) and "role" in item:
                messages.append(item)
        return messages

    def list(self) -> list[str]:
        """Stored session ids, oldest first."""
        return sorted(p.stem for p in self.root.glob("*.jsonl"))
