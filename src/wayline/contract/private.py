"""Private by default: what wayline records is created 0600, in directories created 0700.

Recordings (ATOF, ATIF, OpenTelemetry files), transcripts, indexes and config hold what the
user's process knew and said, so no other user of the machine may read them. Modes are given
explicitly (``os.open`` with a mode, then ``fchmod``/``chmod``), so they do not depend on the
umask. A file or directory that already exists keeps its mode: wayline does not take away
access someone granted on purpose, but :class:`PrivatePaths` logs one warning per path that is
wider than private, naming the path and the ``chmod`` that makes it private.

Every writer of a record goes through here: the plugins, the relay exporters and the runtime
all import this module (it imports nothing of wayline's).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path
from typing import IO, Any, Literal

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "PrivatePaths",
    "open_private",
    "private_directory",
]

FILE_MODE = 0o600
DIR_MODE = 0o700

OpenMode = Literal["a", "ab", "w", "wb"]
_FLAGS: dict[str, int] = {
    "a": os.O_WRONLY | os.O_APPEND,
    "ab": os.O_WRONLY | os.O_APPEND,
    "w": os.O_WRONLY | os.O_TRUNC,
    "wb": os.O_WRONLY | os.O_TRUNC,
}
# Creating with O_EXCL, then opening without O_CREAT, can race with a remover; after this
# many rounds (or on a dangling symlink, which O_EXCL refuses and a plain open cannot
# follow) the file is opened with O_CREAT as any writer would.
_ROUNDS = 3

log = logging.getLogger("wayline.private")


class PrivatePaths:
    """Creates private files and directories, and warns once per path about wider ones.

    One instance per writer (a session store, an exporter): "once" is per instance, so a
    long-lived writer says it once and a one-shot command says it once. ``warn=False`` for a
    path the user named (``-o page.html``): what exists there is theirs, and said nothing
    about. Thread-safe.
    """

    def __init__(self, *, warn: bool = True) -> None:
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self._warn = warn

    def directory(self, path: str | os.PathLike[str], *, warn: bool = True) -> Path:
        """``path`` as a directory: each missing part is created 0700; one that exists keeps
        its mode (warned about when it is wider than 0700, unless ``warn`` is false: an
        exporter's configured directory, where only the files are the record's).

        Raises ``FileExistsError`` when ``path`` is a file, as ``Path.mkdir`` does."""
        target = Path(path)
        missing: list[Path] = []
        probe = target
        while True:
            try:
                st = os.stat(probe)
            except FileNotFoundError:
                missing.append(probe)
                if probe.parent == probe:
                    break
                probe = probe.parent
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise FileExistsError(f"[Errno 17] File exists: {str(probe)!r}")
            if probe == target and warn:
                self._check(target, st.st_mode, DIR_MODE)
            break
        for part in reversed(missing):
            try:
                os.mkdir(part, DIR_MODE)
            except FileExistsError:
                continue  # another writer made it meanwhile: theirs, as it is
            os.chmod(part, DIR_MODE)  # the umask may have taken bits away; 0700 exactly
        return target

    def open(
        self,
        path: str | os.PathLike[str],
        mode: OpenMode = "a",
        *,
        encoding: str | None = None,
        buffering: int = -1,
    ) -> IO[Any]:
        """``path`` opened for writing (``a``/``w``, text or binary), created 0600 when new.

        An existing file keeps its mode; ``w`` truncates it. The directory must exist."""
        fd = self.open_fd(path, _FLAGS[mode])
        try:
            return os.fdopen(fd, mode, buffering=buffering, encoding=encoding)
        except BaseException:
            os.close(fd)
            raise

    def open_fd(self, path: str | os.PathLike[str], flags: int) -> int:
        """A descriptor of ``path`` opened with ``flags``; the file is created 0600 when new."""
        for _ in range(_ROUNDS):
            try:
                fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
            except FileExistsError:
                try:
                    fd = os.open(path, flags)
                except FileNotFoundError:
                    continue  # removed between the two calls: create it after all
                self._check_fd(fd, path)
                return fd
            try:
                os.fchmod(fd, FILE_MODE)  # the umask may have taken bits away
            except BaseException:
                os.close(fd)
                raise
            return fd
        return os.open(path, flags | os.O_CREAT, FILE_MODE)

    def replace(self, temp: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
        """Rename the finished ``temp`` over ``path``: 0600, or the mode ``path`` already has
        (warned about when it is wider), so a rewrite never changes who may read the file."""
        try:
            current = os.stat(path).st_mode
        except FileNotFoundError:
            mode = FILE_MODE
        else:
            mode = stat.S_IMODE(current)
            self._check(Path(path), current, FILE_MODE)
        os.chmod(temp, mode)
        os.replace(temp, path)

    def _check_fd(self, fd: int, path: str | os.PathLike[str]) -> None:
        try:
            st = os.fstat(fd)
        except OSError:
            return
        self._check(Path(path), st.st_mode, FILE_MODE)

    def _check(self, path: Path, st_mode: int, private: int) -> None:
        """Warn, once per path, when ``st_mode`` lets anyone but the owner in."""
        mode = stat.S_IMODE(st_mode)
        if not self._warn or not mode & ~private & 0o777:
            return
        key = str(path)
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        kind = "directory" if stat.S_ISDIR(st_mode) else "file"
        log.warning(
            "%s %s is open to other users (mode %04o); wayline leaves an existing mode as it "
            "is: chmod %o %s makes it private",
            kind,
            key,
            mode,
            private,
            key,
        )


def private_directory(path: str | os.PathLike[str], *, warn: bool = True) -> Path:
    """:meth:`PrivatePaths.directory` for a one-off caller (it warns on each call)."""
    return PrivatePaths(warn=warn).directory(path)


def open_private(
    path: str | os.PathLike[str],
    mode: OpenMode = "w",
    *,
    encoding: str | None = None,
    buffering: int = -1,
) -> IO[Any]:
    """A file the user named (an exported page, samples, a replayed trajectory) opened for
    writing: created 0600, its missing directories 0700; what exists keeps its mode, and
    is not warned about (the user chose the place)."""
    paths = PrivatePaths(warn=False)
    paths.directory(Path(path).parent)
    return paths.open(path, mode, encoding=encoding, buffering=buffering)
