"""ATOF 0.1 JSONL file export with the nemo_relay exporter names, plus the reader API.

Each event is written as one Relay-identical line with a single ``write()`` on an unbuffered
``O_APPEND`` file before the emitting call returns (Relay flushes per line; neither fsyncs).
"""

from __future__ import annotations

import os
import time
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Final

from wayline.contract.private import PrivatePaths
from wayline.relay import subscribers
from wayline.relay.atof_reader import (
    AtofFormatError,
    AtofTornLineWarning,
    iter_events,
    read_events,
    validate_atof,
)

if TYPE_CHECKING:
    from wayline.relay.events import Event

__all__ = [
    "DEFAULT_FILENAME",
    "AtofExporter",
    "AtofExporterConfig",
    "AtofExporterMode",
    "AtofFormatError",
    "AtofTornLineWarning",
    "iter_events",
    "read_events",
    "validate_atof",
]

DEFAULT_FILENAME: Final = "nemo-relay-events-%Y-%m-%d-%H.%M.%S.jsonl"
"""Relay's default file name; ``%`` fields are filled from the UTC time the exporter opens."""


class AtofExporterMode(Enum):
    """How an ATOF file exporter opens its file."""

    Append = "append"
    Overwrite = "overwrite"


class AtofExporterConfig:
    """Settings of one ATOF sink (nemo_relay attribute names; set them after construction).

    ``sink_type == "stream"`` makes ``AtofExporter(config)`` a stream sink
    (:mod:`wayline.relay.atof_stream`: ``url``, ``transport``, ``headers``, ``header_env``,
    ``timeout_millis``, ``field_name_policy``).
    """

    def __init__(
        self,
        *,
        sink_type: str = "file",
        output_directory: str | os.PathLike[str] = ".",
        mode: AtofExporterMode = AtofExporterMode.Append,
        filename: str = DEFAULT_FILENAME,
        url: str = "",
        transport: str = "http_post",
        headers: dict[str, str] | None = None,
        header_env: dict[str, str] | None = None,
        timeout_millis: int = 3000,
        field_name_policy: str = "preserve",
    ) -> None:
        self.sink_type = sink_type
        self.output_directory: str = os.fspath(output_directory)
        self.mode = mode
        self.filename = filename
        self.url = url
        self.transport = transport
        self.headers: dict[str, str] = dict(headers or {})
        self.header_env: dict[str, str] = dict(header_env or {})
        self.timeout_millis = timeout_millis
        self.field_name_policy = field_name_policy

    def __repr__(self) -> str:
        return (
            f"AtofExporterConfig(sink_type={self.sink_type!r}, "
            f"output_directory={self.output_directory!r}, mode={self.mode}, "
            f"filename={self.filename!r})"
        )


def _mode_of(mode: object) -> AtofExporterMode:
    if isinstance(mode, AtofExporterMode):
        return mode
    if isinstance(mode, str):
        for member in AtofExporterMode:
            if mode.lower() == member.value:
                return member
    raise ValueError(f"AtofExporterConfig.mode must be 'append' or 'overwrite', got {mode!r}")


class AtofExporter:
    """Writes every event it observes to one ATOF JSONL file.

    Register it as a subscriber (an OBSERVER: a failed write is logged once and skipped) with
    :meth:`register`. The file is opened (created, or truncated in ``Overwrite`` mode) when the
    exporter is built. Safe to use from several threads without a lock: each line is one
    ``write()`` on an ``O_APPEND`` descriptor, which local filesystems apply atomically, so
    lines from different threads (or processes appending to the same file) never interleave.
    """

    def __new__(cls, config: AtofExporterConfig, *, buffered: bool = False) -> AtofExporter:
        if cls is AtofExporter and config.sink_type == "stream":
            if not config.url:
                raise ValueError("ATOF stream sink requires url")  # Relay's words
            from wayline.relay.atof_stream import AtofStreamExporter

            return object.__new__(AtofStreamExporter)  # its __init__ runs next
        return object.__new__(cls)

    def __init__(self, config: AtofExporterConfig, *, buffered: bool = False) -> None:
        if config.sink_type != "file":
            raise ValueError(
                f"AtofExporter sink_type must be 'file' or 'stream', got {config.sink_type!r}"
            )
        mode = _mode_of(config.mode)
        filename = time.strftime(config.filename, time.gmtime())
        directory = Path(config.output_directory or ".")
        # A new file is 0600, a new directory 0700. Only the file is warned about when it is
        # wider: the directory is wherever the configuration points (often a shared one).
        private = PrivatePaths()
        private.directory(directory, warn=False)
        path = directory / filename
        flags = os.O_WRONLY | os.O_APPEND
        if mode is AtofExporterMode.Overwrite:
            flags |= os.O_TRUNC
        # Unbuffered (buffering=0): write() is the syscall, so a line is with the OS when the
        # call returns, without a separate flush() per event.
        self._file = os.fdopen(private.open_fd(path, flags), "ab", buffering=0)
        self._write = self._file.write
        if mode is AtofExporterMode.Append:
            self._end_torn_line(path)
        self._path = str(path)
        self._names: set[str] = set()
        # buffered: lines wait for force_flush(), which writes them in one write() (whole
        # lines, still atomic against other appenders); for a caller that flushes per batch.
        self._pending: list[bytes] | None = [] if buffered else None

    def _end_torn_line(self, path: Path) -> None:
        """End a line a killed writer left unfinished, so our first event starts its own line.

        The cut-off line stays (the reader skips it with a warning); appending straight after
        it would merge it with our first event into one corrupt line. Another process that is
        appending at this moment only gains an empty line: its writes are whole.
        """
        try:
            with open(path, "rb") as handle:
                if handle.seek(0, os.SEEK_END) == 0:
                    return
                handle.seek(-1, os.SEEK_END)
                last = handle.read(1)
        except OSError:
            return
        if last != b"\n":
            self._write(b"\n")

    @property
    def path(self) -> str:
        """The JSONL output path."""
        return self._path

    @property
    def closed(self) -> bool:
        """True once :meth:`shutdown` ran."""
        return self._file.closed

    def register(self, name: str) -> None:
        """Subscribe this exporter under ``name`` (``RuntimeError`` if the name is taken)."""
        if self.closed:
            raise RuntimeError(f"ATOF exporter for {self.path} is shut down")
        subscribers.register(name, self.export)
        self._names.add(name)

    def deregister(self, name: str) -> bool:
        """Unsubscribe ``name``; ``True`` if this exporter was registered under it."""
        if name not in self._names:
            return False
        self._names.discard(name)
        return subscribers.deregister(name)

    def export(self, event: Event) -> None:
        """Append ``event``'s ATOF line to the file (the subscriber callback)."""
        line = event.atof_line()
        if self._pending is not None:
            self._pending.append(line)
            return
        written = self._write(line)
        if written is not None and written < len(line):
            self._write_rest(line, written)

    def _write_rest(self, line: bytes, written: int) -> None:
        view = memoryview(line)
        while written < len(line):
            n = self._write(view[written:])
            if not n:
                raise OSError(f"short write to {self._path}")
            written += n

    def force_flush(self) -> None:
        """Write buffered lines (a ``buffered`` exporter); otherwise every event reached the
        OS when it was emitted."""
        pending = self._pending
        if pending:
            n = len(pending)  # lines appended meanwhile by another thread stay queued
            data = b"".join(pending[:n])
            del pending[:n]
            written = self._write(data)
            if written is not None and written < len(data):
                self._write_rest(data, written)

    def shutdown(self) -> None:
        """Unsubscribe every name this exporter registered and close the file (idempotent)."""
        for name in list(self._names):
            self.deregister(name)
        if not self._file.closed:
            self.force_flush()
        self._file.close()

    def __enter__(self) -> AtofExporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        # Relay's repr is the bare ``<AtofExporter>``; the path and names follow it.
        return f"<AtofExporter> {type(self).__name__} {self.path!r} names={sorted(self._names)}"
