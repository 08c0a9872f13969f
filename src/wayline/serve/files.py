"""Which files the server may read, and a session's trajectory read from its file.

The server reads only files under the paths it was given (the home's recordings when none):
a path the index names is resolved (symbolic links followed) and must lie inside one of them.
An index shared with other commands may name files outside, and a link inside a folder may
point anywhere; neither is served.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from wayline.redaction import redact_value
from wayline.store import Scope
from wayline.trajectory.compare import redacted
from wayline.viewer import Trajectory

__all__ = [
    "Roots",
    "diff_document",
    "event_trajectories",
    "holds_session",
    "redacted",
    "step_anchor",
    "viewer_trajectories",
]


class Roots:
    """The folders and files a server may read (resolved once, when it starts)."""

    def __init__(self, scope: Scope) -> None:
        self.folders = tuple(Path(os.path.realpath(f)) for f in scope.folders)
        self.files = frozenset(Path(os.path.realpath(f)) for f in scope.files)

    def holds(self, path: str | Path) -> bool:
        """Whether ``path``, resolved, is one of the files or inside one of the folders."""
        real = Path(os.path.realpath(path))
        return real in self.files or any(real.is_relative_to(f) for f in self.folders)


def _documents(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield document
    for sub in document.get("subagent_trajectories") or ():
        if isinstance(sub, Mapping):
            yield from _documents(sub)


def holds_session(document: Mapping[str, Any], session_id: str) -> bool:
    """Whether the trajectory, or one embedded in it at any depth, is session ``session_id``."""
    return any(d.get("session_id") == session_id for d in _documents(document))


def viewer_trajectories(path: Path, session_id: str) -> list[Trajectory]:
    """The viewer's trajectories of ``path`` that hold the session (a delegated child is shown
    inside its parent's page); all of the file's when none says so. Raises the viewer's
    :class:`~wayline.viewer.ViewerInputError`."""
    from wayline.viewer import load_trajectory

    loaded = load_trajectory(path)
    picked = [t for t in loaded if holds_session(t.document, session_id)]
    return picked or loaded


def event_trajectories(path: Path, events: list[dict[str, Any]], document: int) -> list[Trajectory]:
    """The viewer's trajectory of one ATOF root (the ``document``-th of its conversion), from
    that root's events alone, as ``wayline view`` draws it from the whole file: exact scope
    times and the marks from the events, everything redacted. ``IndexError`` when the events
    hold no such document (the file changed meanwhile)."""
    from wayline.store.atof import convert_root
    from wayline.viewer.load import Timing, ToolScopes, scan_events

    converted = convert_root(events)[document].document
    timing: Timing = {}
    marks: list[dict[str, Any]] = []
    tool_scopes: ToolScopes = {}
    scan_events(events, timing, marks, tool_scopes)
    return [
        Trajectory(
            redact_value(converted, max_string=sys.maxsize),
            str(path),
            "atof",
            [],
            timing,
            redact_value(marks, max_string=sys.maxsize),
            tool_scopes,
        )
    ]


def step_anchor(where: Sequence[int], step: int) -> str:
    """The viewer's anchor of step ``step`` (1-based) of the trajectory at ``where`` (indices
    of ``subagent_trajectories``) in the page: ``step-N``, or ``step-1-N`` for a first
    sub-agent's step N, as the viewer names them."""
    return "-".join(["step", *(str(index + 1) for index in where), str(step)])


def diff_document(path: Path, session_id: str) -> Mapping[str, Any]:
    """Session ``session_id``'s trajectory in ``path`` (an embedded child's own, when it is
    one), as ``wayline diff`` reads files. Raises
    :class:`~wayline.trajectory.load.TrajectoryError`, or ``LookupError`` when absent."""
    from wayline.trajectory.load import load_trajectories

    found: Sequence[Mapping[str, Any]] = load_trajectories(path)
    for document in found:
        for candidate in _documents(document):
            if candidate.get("session_id") == session_id:
                return candidate
    if len(found) == 1:
        return found[0]
    raise LookupError(f"{path}: holds no trajectory of session {session_id}")
