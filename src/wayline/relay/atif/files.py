"""Writing ATIF documents to files: atomically, one per trajectory, sub-agents optional."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from wayline.contract.private import PrivatePaths
from wayline.relay.atif.jsontext import dumps_document, trajectory_text
from wayline.relay.atif.model import TrajectoryNode

SubagentMode = Literal["embedded", "all"]
SUBAGENT_MODES: tuple[SubagentMode, ...] = ("embedded", "all")
DEFAULT_FILENAME_TEMPLATE = "trajectory-{session_id}.json"


def write_json_atomic(path: Path, document: Any) -> None:
    """Write ``document`` as sorted, compact JSON that appears at ``path`` all at once.

    The JSON is written into a temporary file in the same directory, flushed to disk and renamed
    over ``path``; on any failure the temporary file is removed and ``path`` is untouched.
    """
    write_text_atomic(path, dumps_document(document))


def write_text_atomic(
    path: Path, text: str, *, durable: bool = True, private: PrivatePaths | None = None
) -> None:
    """Write ``text`` plus a newline so that it appears at ``path`` all at once (as above).

    ``durable=False`` skips the flush to disk: for snapshots that a later durable write
    supersedes (a live session's file). Readers still never see a partial file. A new file
    is 0600 in directories created 0700; a file replaced keeps its mode (``private`` warns,
    once, when that mode is wider)."""
    private = private if private is not None else PrivatePaths()
    private.directory(path.parent, warn=False)  # the file is warned about, as in AtofExporter
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.write("\n")
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        private.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def check_template(template: str) -> None:
    """``ValueError`` unless ``template`` formats with ``{session_id}`` / ``{trajectory_id}``."""
    try:
        name = template.format(session_id="s", trajectory_id="t")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"filename template {template!r} is invalid ({exc!r}); "
            "use the fields {session_id} and {trajectory_id}"
        ) from None
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise ValueError(f"filename template {template!r} must name a file, not a path")


def _safe(value: str) -> str:
    return value.replace("/", "_").replace("\\", "_").replace("\0", "_")


class TrajectoryWriter:
    """Writes finished trajectories into ``directory`` as ``filename_template`` files.

    ``subagents="embedded"`` writes one file per root with sub-agents embedded; ``"all"`` also
    writes every embedded sub-agent as a standalone file and points its reference at it
    (``trajectory_path``). A root without steps is not a valid ATIF document, so only its
    sub-agents are written (standalone). Names already written by this writer get a ``-2``, ``-3``
    … suffix instead of being overwritten. Files are created 0600 in directories created 0700
    (:mod:`wayline.contract.private`); pass ``private`` to share one warner across writers.
    """

    def __init__(
        self,
        directory: Path,
        *,
        filename_template: str = DEFAULT_FILENAME_TEMPLATE,
        subagents: SubagentMode = "embedded",
        durable: bool = True,
        private: PrivatePaths | None = None,
    ) -> None:
        check_template(filename_template)
        if subagents not in SUBAGENT_MODES:
            raise ValueError(f"subagent export mode must be one of {SUBAGENT_MODES}")
        self.directory = directory
        self.template = filename_template
        self.subagents = subagents
        self.durable = durable  # fsync each file (see write_text_atomic)
        # Files 0600 in 0700 directories; a writer kept across writes warns once per path.
        self.private = private if private is not None else PrivatePaths()
        self.written: list[Path] = []
        self.dropped = 0
        self._names: set[str] = set()

    def _name_for(self, node: TrajectoryNode) -> str:
        if node.parent is None or node.declared_session:
            session = node.session_id or node.trajectory_id
        else:
            # A sub-agent sharing its parent's session needs its own name.
            session = node.trajectory_id
        name = self.template.format(
            session_id=_safe(session), trajectory_id=_safe(node.trajectory_id)
        )
        stem, dot, suffix = name.rpartition(".")
        if not dot:
            stem, suffix = name, ""
        candidate, counter = name, 1
        while candidate in self._names:
            counter += 1
            candidate = f"{stem}-{counter}{dot}{suffix}"
        self._names.add(candidate)
        return candidate

    def write(self, node: TrajectoryNode) -> list[Path]:
        """Write ``node`` (and, in mode ``all``, its sub-agents); returns the paths written."""
        if not node.steps:
            self.dropped += 1
            paths: list[Path] = []
            for child in node.children:
                paths.extend(self.write(child))
            return paths
        own = self._name_for(node)
        standalone: dict[TrajectoryNode, str] = {}
        if self.subagents == "all":
            for child in node.descendants():
                standalone[child] = self._name_for(child)
        paths = [self.directory / own]
        write_text_atomic(
            paths[0],
            trajectory_text(node, standalone.get),
            durable=self.durable,
            private=self.private,
        )
        for child, name in standalone.items():
            target = self.directory / name
            write_text_atomic(
                target,
                trajectory_text(child, standalone.get),
                durable=self.durable,
                private=self.private,
            )
            paths.append(target)
        self.written.extend(paths)
        return paths
