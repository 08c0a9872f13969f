"""Reading trajectory files for the viewer: ATIF JSON (v1.5–v1.8, any producer) and ATOF JSONL.

ATIF files are checked with the ATIF validator (:mod:`wayline.relay.atif.validate`). Problems that
leave nothing to draw (not JSON, no ``steps``, a step that is no object or has no valid
``source``/``message``) make the file invalid; every other problem is kept as a warning that the
page shows. ATOF files go through the relay's ATOF → ATIF mapping
(:class:`~wayline.relay.atif.builder.TrajectoryBuilder`), and the exact start/end of every scope
is kept from the events, so the page keeps ATOF's nanosecond timing rather than the millisecond
times an ATIF document records. What is loaded is redacted, whoever wrote the file.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wayline.redaction import redact_text, redact_value
from wayline.relay.atif.builder import TrajectoryBuilder
from wayline.relay.atif.model import AgentInfo, TrajectoryNode, render_trajectory
from wayline.relay.atif.payloads import timestamp_ns
from wayline.relay.atif.validate import AtifProblem, validate_trajectory
from wayline.relay.identify import InputFileError, collector_paused, identify

SourceKind = Literal["atif", "atof"]
# scope uuid -> (start ns, end ns), either end possibly unknown
Timing = dict[str, tuple[int | None, int | None]]
# (parent scope uuid, tool_call_id) -> the tool scope's uuid
ToolScopes = dict[tuple[str, str], str]

# Problems at these JSON paths leave nothing to draw: the file is rejected.
_FATAL = re.compile(r"^\$(\.schema_version|\.steps(\[\d+\](\.(source|message))?)?)?$")
_SUPPORTED = tuple(f"ATIF-v1.{minor}" for minor in range(5, 9))
APPROVAL_MARKS = ("hermes.approval.request", "hermes.approval.response")
# Marks the page draws: approvals, and each turn's end (how it ended: viewer/turns.py).
KEPT_MARKS = (*APPROVAL_MARKS, "hermes.session.end")


class ViewerInputError(ValueError):
    """A file the viewer cannot show; the message names the file and the field."""


@dataclass
class Trajectory:
    """One trajectory to show: its ATIF document, where it came from, and what is odd about it.

    ``timing`` holds exact scope times (from ATOF events, or from an ATIF document's
    ``extra.observed_events``) and ``marks`` the approval marks; both may be empty.
    ``tool_scopes`` finds a tool call's scope from its start event, for calls whose step
    has no ``tool_ancestry`` (the converter writes it only when the tool's end was seen).
    """

    document: dict[str, Any]
    source: str
    kind: SourceKind = "atif"
    warnings: list[str] = field(default_factory=list)
    timing: Timing = field(default_factory=dict)
    marks: list[dict[str, Any]] = field(default_factory=list)
    tool_scopes: ToolScopes = field(default_factory=dict)

    @property
    def title(self) -> str:
        """A short name: the session id, else the trajectory id, else the file name."""
        for key in ("session_id", "trajectory_id"):
            value = self.document.get(key)
            if isinstance(value, str) and value:
                return value
        return Path(self.source).name


def scan_events(
    events: Iterable[Mapping[str, Any]],
    timing: Timing,
    marks: list[Any],
    tool_scopes: ToolScopes | None = None,
) -> None:
    """Record each scope's exact start/end in ``timing``, the approval and turn-end marks in
    ``marks`` and each tool start's scope in ``tool_scopes``."""
    for event in events:
        if not isinstance(event, Mapping):
            continue
        uuid = event.get("uuid")
        if not isinstance(uuid, str):
            continue
        if event.get("kind") == "mark":
            if event.get("name") in KEPT_MARKS:
                marks.append(dict(event))
            continue
        phase = event.get("scope_category")
        at = timestamp_ns(event.get("timestamp"))
        start, end = timing.get(uuid, (None, None))
        if phase == "start":
            timing[uuid] = (at, end)
            profile = event.get("category_profile")
            call_id = profile.get("tool_call_id") if isinstance(profile, Mapping) else None
            parent = event.get("parent_uuid")
            if tool_scopes is not None and isinstance(call_id, str) and isinstance(parent, str):
                tool_scopes.setdefault((parent, call_id), uuid)
        elif phase == "end":
            timing[uuid] = (start, at)


def _problem_text(path: Path, problem: AtifProblem) -> str:
    return f"{path}: {problem.path}: {problem.message}"


def check_document(document: Any, path: Path) -> list[str]:
    """Validate an ATIF document: raise :class:`ViewerInputError` if it cannot be drawn.

    Returns the remaining problems as warning lines (``FILE: $.json.path: message``).
    """
    if not isinstance(document, dict):
        raise ViewerInputError(f"{path}: $: expected an ATIF trajectory object")
    problems = validate_trajectory(document, base_dir=path.parent)
    fatal = [p for p in problems if _FATAL.match(p.path)]
    if fatal:
        first = fatal[0]
        more = f" (and {len(fatal) - 1} more)" if len(fatal) > 1 else ""
        raise ViewerInputError(
            f"{path}: {first.path}: {first.message}{more}: not a drawable ATIF trajectory"
        )
    lines = [_problem_text(path, p) for p in problems]
    version = document.get("schema_version")
    if version not in _SUPPORTED:
        lines.append(f"{path}: $.schema_version: {version} is older than ATIF-v1.5; shown as is")
    return lines


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ViewerInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ViewerInputError(f"{path}: $: not UTF-8 text (byte {exc.start})") from None
    finally:
        del raw  # the bytes go before the text is parsed


def _load_atif(path: Path, text: str) -> Trajectory:
    try:
        with collector_paused():
            document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ViewerInputError(
            f"{path}: $: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    notes = check_document(document, path)
    trajectory = Trajectory(document, str(path), "atif", notes)
    extra = document.get("extra")
    observed = extra.get("observed_events") if isinstance(extra, dict) else None
    if isinstance(observed, list):
        scan_events(observed, trajectory.timing, trajectory.marks, trajectory.tool_scopes)
    return trajectory


def _load_atof(path: Path) -> list[Trajectory]:
    from wayline.relay.atof import AtofFormatError, AtofTornLineWarning, iter_events

    nodes: list[TrajectoryNode] = []
    timing: Timing = {}
    marks: list[dict[str, Any]] = []
    tool_scopes: ToolScopes = {}
    builder = TrajectoryBuilder(AgentInfo(), on_complete=nodes.append)

    def tee(events: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
        for event in events:
            scan_events((event,), timing, marks, tool_scopes)
            yield event

    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AtofTornLineWarning)
        try:
            for event in tee(iter_events(path)):
                builder.feed(event)
        except AtofFormatError as exc:
            raise ViewerInputError(f"{exc.path}: line {exc.line_no}: {exc.message}") from None
        except OSError as exc:
            raise ViewerInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
        builder.finish()
    notes.extend(f"{path}: {w.message}" for w in caught)
    if builder.skipped:
        notes.append(f"{path}: {builder.skipped} lines were not ATOF scope/mark events (skipped)")
    loaded: list[Trajectory] = []
    for node in _with_steps(nodes):
        document = render_trajectory(node)
        own = list(notes)
        own.extend(_problem_text(path, p) for p in validate_trajectory(document))
        loaded.append(Trajectory(document, str(path), "atof", own, timing, marks, tool_scopes))
    torn = [w for w in caught if issubclass(w.category, AtofTornLineWarning)]
    if not loaded and torn:  # cut off before a trajectory was complete: truncated input
        line = str(torn[0].message).removeprefix(f"{path}:").split(":", 1)[0]
        raise ViewerInputError(
            f"{path}: truncated: line {line} is incomplete, and no ATOF event before it has steps"
        )
    if not loaded:
        raise ViewerInputError(f"{path}: no trajectory with steps found in the ATOF events")
    return loaded


def _with_steps(nodes: list[TrajectoryNode]) -> list[TrajectoryNode]:
    # A root without steps (e.g. a session that only delegated) is no ATIF document;
    # its sub-agents are shown as trajectories of their own, as the converter writes them.
    found: list[TrajectoryNode] = []
    for node in nodes:
        if node.steps:
            found.append(node)
        else:
            found.extend(_with_steps(node.children))
    return found


def load_trajectory(path: str | Path) -> list[Trajectory]:
    """Load one ATIF (``.json``) or ATOF (``.jsonl``) file; ATOF may hold several trajectories.

    Raises :class:`ViewerInputError` (message names the file and field) for unreadable or
    invalid input.
    """
    file_path = Path(path)
    if file_path.is_dir():
        raise ViewerInputError(f"{file_path}: is a directory (use load_trajectories)")
    # Told from the first bytes, so a file that is no trajectory (a FIFO, junk of any size,
    # OpenTelemetry spans) is refused before it is read.
    try:
        found = identify(file_path)
    except InputFileError as exc:
        raise ViewerInputError(str(exc)) from None
    if found.kind == "atof":
        return _redacted(_load_atof(file_path))
    if found.kind not in ("atif", "json"):
        raise ViewerInputError(
            f"{file_path}: {found.label}, not a trajectory (ATIF .json or ATOF .jsonl expected)"
        )
    return _redacted([_load_atif(file_path, _read_text(file_path))])


def _redacted(loaded: list[Trajectory]) -> list[Trajectory]:
    """The trajectories as a page or a tree may show them: the document, the marks and the
    notes redacted (``wayline.redaction``: credential keys hidden, every string redacted, ids
    and structure kept, nothing cut), whoever wrote the file. wayline's own recordings are
    redacted when written; another producer's may hold anything."""
    marks: dict[int, list[dict[str, Any]]] = {}  # the trajectories of one ATOF file share them
    for trajectory in loaded:
        trajectory.document = redact_value(trajectory.document, max_string=sys.maxsize)
        if id(trajectory.marks) not in marks:
            marks[id(trajectory.marks)] = redact_value(trajectory.marks, max_string=sys.maxsize)
        trajectory.marks = marks[id(trajectory.marks)]
        trajectory.warnings = [redact_text(line) for line in trajectory.warnings]
    return loaded


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files to load: each file as given, each directory's ``*.json``/``*.jsonl`` files sorted."""
    found: list[Path] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            inside = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")
            )
            if not inside:
                raise ViewerInputError(f"{path}: no .json or .jsonl trajectory files inside")
            found.extend(inside)
        elif not path.exists():
            raise ViewerInputError(f"{path}: no such file or directory")
        else:
            found.append(path)
    return found


def load_trajectories(paths: Iterable[str | Path]) -> list[Trajectory]:
    """Load every trajectory in ``paths`` (files and directories), in order."""
    loaded: list[Trajectory] = []
    for path in expand_paths(paths):
        loaded.extend(load_trajectory(path))
    return loaded
