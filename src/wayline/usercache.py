"""The per-user cache: data wayline derives from installed packages and files, never a record.

``$XDG_CACHE_HOME/wayline`` (``~/.cache/wayline`` without it) holds what is slow to work out
and the same run after run: which price-table entry prices a model
(:mod:`wayline.pricing_cache`) and parsed YAML files (:func:`wayline.host.config.load_yaml`).
Every file is JSON, names what it was derived from, and is written whole (a temporary file
renamed over it) 0600 in a 0700 directory; a reader treats a missing, damaged or foreign file
as empty. Deleting the directory is always safe. This module imports nothing of wayline's but
the private-file helpers, so any layer may use it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "read_json", "write_json"]


def cache_dir() -> Path | None:
    """``$XDG_CACHE_HOME/wayline``, else ``~/.cache/wayline`` (None without a home)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base and os.path.isabs(base):
        return Path(base) / "wayline"
    try:
        return Path.home() / ".cache" / "wayline"
    except RuntimeError:
        return None


def read_json(path: Path) -> Any:
    """The JSON document at ``path``, or None when it is missing, unreadable or not JSON."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def write_json(path: Path, doc: Any) -> None:
    """Write ``doc`` to ``path`` whole: 0600, its directory created 0700; ``OSError`` when it
    cannot be written (the caller goes on uncached)."""
    from wayline.contract.private import PrivatePaths

    private = PrivatePaths()
    private.directory(path.parent)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with private.open(temp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, separators=(",", ":"))
        private.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
