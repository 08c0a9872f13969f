"""ATOF files read incrementally: only the lines appended since the last command.

An ATOF file holds many sessions, one after another, and grows while they run. The index keeps,
per file, how many bytes it has read, which scopes were still open there and, per root (a
top-level agent scope, as the ATOF → ATIF converter names roots), where that root's lines are.
A command reads the complete lines appended since, routes each to its root by its parent
scope, and converts only the roots that got new lines, with the converter's own
:class:`~wayline.relay.atif.builder.TrajectoryBuilder` (what ``wayline atif convert`` would
write for that root). A root is converted once its scope ends; a root still open is converted
with what it has so far, and its session is ``running`` while a turn is open.

The events also say how each turn ended: wayline's runtime (and Hermes) record a
``hermes.session.end`` mark with the reason (``completed``, ``max_turns``, ``interrupted``,
``api_error``) when a turn ends; that reason is the session's status when there is one.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from wayline.relay.atif.builder import TrajectoryBuilder
from wayline.relay.atif.model import AgentInfo, TrajectoryNode, render_trajectory
from wayline.relay.identify import collector_paused
from wayline.store.extract import reason_status

__all__ = [
    "Converted",
    "RootRouter",
    "convert_root",
    "new_lines",
    "pack",
    "read_lines",
    "root_session",
    "unpack",
]

TURN_START = "hermes.turn.start"
TURN_END = "hermes.session.end"
_TREE_CATEGORIES = frozenset({"llm", "tool"})


def new_lines(handle: IO[bytes], offset: int) -> Iterator[tuple[int, int, bytes]]:
    """``(offset, length, line)`` of each complete line from ``offset`` on; a last line with
    no newline yet (being written) is left for the next read."""
    handle.seek(offset)
    position = offset
    for raw in handle:
        if not raw.endswith(b"\n"):
            return
        yield position, len(raw), raw
        position += len(raw)


def read_lines(handle: IO[bytes], spans: array[int]) -> Iterator[bytes]:
    """The lines at the ``(offset, length)`` pairs of ``spans``."""
    for index in range(0, len(spans), 2):
        handle.seek(spans[index])
        yield handle.read(spans[index + 1])


def pack(spans: array[int]) -> bytes:
    """``spans`` as stored."""
    return spans.tobytes()


def unpack(blob: bytes | None) -> array[int]:
    """Stored spans back as an ``array('q')`` of offset, length pairs."""
    spans = array("q")
    if blob:
        spans.frombytes(blob)
    return spans


def parse_event(raw: bytes) -> dict[str, Any] | None:
    """One line as an event object, or None when it is not one (blank, broken, not an object)."""
    if not raw.strip():
        return None
    try:
        with collector_paused():  # a model call's line holds the conversation: no cycles
            value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@dataclass
class RootRouter:
    """Which root each event belongs to, from the scopes open so far (``uuid`` → root)."""

    open: dict[str, str] = field(default_factory=dict)
    #: Roots whose scope ended while routing.
    ended: set[str] = field(default_factory=set)

    def route(self, event: Mapping[str, Any]) -> str | None:
        """The root key of ``event`` (None: an end of a scope never seen to start)."""
        parent = event.get("parent_uuid")
        parent = parent if isinstance(parent, str) else None
        uuid = event.get("uuid")
        if event.get("kind") == "scope" and event.get("category") not in _TREE_CATEGORIES:
            phase = event.get("scope_category")
            if not isinstance(uuid, str):
                return None
            if phase == "start":
                root = self.open.get(parent) if parent is not None else None
                if root is None:
                    root = uuid if _starts_root(event) else f"unscoped:{parent or ''}"
                self.open[uuid] = root
                return root
            if phase == "end":
                root = self.open.pop(uuid, None)
                if root == uuid:
                    self.ended.add(root)
                return root
            return None
        root = self.open.get(parent) if parent is not None else None
        return root if root is not None else f"unscoped:{parent or ''}"


def root_session(event: Mapping[str, Any]) -> str | None:
    """The session id the converter gives the root that ``event`` (its scope's start) opens:
    the ``session_id`` (else ``trajectory_id``) its metadata names, else the scope's uuid."""
    if event.get("kind") != "scope" or event.get("scope_category") != "start":
        return None
    metadata = event.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    named = metadata.get("trajectory_id")
    if isinstance(named, str):
        session = metadata.get("session_id")
        return session if isinstance(session, str) and session else named
    uuid = event.get("uuid")
    return uuid if isinstance(uuid, str) else None


def _starts_root(event: Mapping[str, Any]) -> bool:
    category = event.get("category")
    metadata = event.get("metadata")
    role = metadata.get("nemo_relay_scope_role") if isinstance(metadata, Mapping) else None
    return category == "agent" or (category == "custom" and role == "turn")


@dataclass
class Converted:
    """One document of a root's conversion, with what its events say of each trajectory in it:
    ``running[i]``/``reasons[i]`` for the i-th trajectory in the order
    :func:`wayline.store.extract.records_of` walks it."""

    document: dict[str, Any]
    running: list[bool]
    reasons: list[str | None]


def _nodes(node: TrajectoryNode) -> Iterator[TrajectoryNode]:
    yield node
    for child in node.children:
        if child.steps:
            yield from _nodes(child)


def _with_steps(nodes: list[TrajectoryNode]) -> list[TrajectoryNode]:
    # A root without steps is no ATIF document; its subagents are, as the converter writes them.
    found: list[TrajectoryNode] = []
    for node in nodes:
        found.extend([node] if node.steps else _with_steps(node.children))
    return found


def _turn_states(events: list[dict[str, Any]]) -> dict[str, tuple[bool, str | None]]:
    """Per agent scope: (a turn is open, the reason its last turn ended)."""
    states: dict[str, tuple[bool, str | None]] = {}
    for event in events:
        if event.get("kind") != "mark":
            continue
        name = event.get("name")
        parent = event.get("parent_uuid")
        if not isinstance(parent, str) or name not in (TURN_START, TURN_END):
            continue
        if name == TURN_START:
            states[parent] = (True, None)
        else:
            states[parent] = (False, reason_status(event.get("data")))
    return states


def convert_root(events: list[dict[str, Any]]) -> list[Converted]:
    """The ATIF documents of one root's events, as ``wayline atif convert`` renders them."""
    nodes: list[TrajectoryNode] = []
    builder = TrajectoryBuilder(AgentInfo(), on_complete=nodes.append)
    for event in events:
        builder.feed(event)
    builder.finish()
    turns = _turn_states(events)
    out: list[Converted] = []
    for node in _with_steps(nodes):
        # Through JSON, as the files hold it (the builder may keep values JSON renders as text).
        document = json.loads(json.dumps(render_trajectory(node), default=str))
        running: list[bool] = []
        reasons: list[str | None] = []
        for member in _nodes(node):
            is_open, reason = turns.get(member.scope_uuid or "", (None, None))
            live = not member.ended and not member.root.ended
            # No marks at all (Relay's own scopes): an open scope is a running session.
            running.append(live and (is_open is None or is_open))
            reasons.append(reason)
        out.append(Converted(document, running, reasons))
    return out
