"""Live ATIF export with nemo_relay's ``AtifExporter`` names."""

from __future__ import annotations

import copy
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from types import NoneType
from typing import Any

from wayline.contract.private import PrivatePaths
from wayline.relay.atif.builder import TURN_END_MARK, TrajectoryBuilder
from wayline.relay.atif.files import DEFAULT_FILENAME_TEMPLATE, SubagentMode, TrajectoryWriter
from wayline.relay.atif.model import AgentInfo, TrajectoryNode, render_trajectory
from wayline.relay.atif.payloads import JsonDict
from wayline.relay.events import MarkEvent, ScopeEvent
from wayline.relay.jsonfmt import JsonText, dumps

_log = logging.getLogger("wayline.relay.atif")

REFRESH_INTERVAL = 1.0
"""Seconds between two live snapshots of one session's file(s) (the plugin's schedule)."""

PENDING_LIMIT = 4096
"""Queued event texts past which the emitting thread maps them itself."""


Pending = str | JsonDict | ScopeEvent | tuple[ScopeEvent, Any]


def _queued(event: ScopeEvent) -> Pending:
    """What the mapping needs of scope ``event``, taken now (see ``AtifExporter.on_event``)."""
    category = event.category
    if category == "llm" or category == "tool":
        kind = event.data.__class__
        if kind is JsonText or kind is str or kind is NoneType:  # nothing to copy or parse
            return _read_only_data(event)
        return event.to_json()  # a snapshot of the payloads as the ATOF line has them
    if category != "agent" and category != "custom":
        # Only ids, name and category are read for these (all immutable strings), so the
        # event itself is queued: no copy, no dict, no parse.
        return event
    metadata = event.metadata  # read for agent and turn scopes: a copy, taken now
    return event, dict(metadata) if isinstance(metadata, Mapping) else metadata


def _read_only_data(event: ScopeEvent) -> JsonDict:
    """The event as the mapping reads it, holding its read-only ``JsonText`` data itself
    (no snapshot needed, no parse later); the small fields are snapshots of their text."""
    return {
        "kind": "scope",
        "uuid": event.uuid,
        "parent_uuid": event.parent_uuid,
        "scope_category": event.scope_category,
        "category": event.category,
        "name": event.name,
        "timestamp": event.timestamp,
        "data": event.data,
        "category_profile": _snapshot(event.category_profile),
        "metadata": _snapshot(event.metadata),
    }


_SCALARS = frozenset({str, int, float, bool, NoneType})


def _snapshot(value: Any) -> Any:
    if value is None:
        return None
    if value.__class__ is dict and all(v.__class__ in _SCALARS for v in value.values()):
        return dict(value)  # ids and names: a shallow copy is a snapshot (no dumps + parse)
    return json.loads(dumps(value))


class AtifExporter:
    """Builds one ATIF v1.7 trajectory from the relay events it receives while registered.

    ``trajectory_id`` = ``session_id``; ``extra`` goes into the ``agent`` block;
    ``infer_tools`` collects ``tool_definitions`` from the requests when none are given.
    Nested Agent scopes become embedded ``subagent_trajectories``. If an Agent scope's metadata
    carries this ``session_id`` (or ``trajectory_id``), the trajectory follows that scope only.

    The subscriber callback (:meth:`on_event`) is an OBSERVER: it may run on any emitting thread
    and only takes the event's ATOF text (a snapshot); the text is mapped when the trajectory is
    next needed (:meth:`export`, :meth:`write`, a :meth:`snapshot`), so the emitting
    thread does not pay for parsing and mapping. An ``Exception`` while mapping an event is
    logged once and the event is skipped; ``BaseException`` propagates.
    """

    def __init__(
        self,
        session_id: str,
        agent_name: str,
        agent_version: str,
        *,
        model_name: str | None = None,
        tool_definitions: list[JsonDict] | None = None,
        extra: JsonDict | None = None,
        infer_tools: bool = False,
    ) -> None:
        self.session_id = session_id
        self._info = AgentInfo(agent_name, agent_version, model_name, tool_definitions, extra)
        # Collect tool_definitions from the requests (as the converter does) when none given.
        self._infer = infer_tools
        self._lock = threading.Lock()  # the builder
        self._builder = self._new_builder()
        # Not mapped yet, in delivery order. deque.append/popleft are atomic, so emitters
        # queue without a lock while a drain (under ``_lock``) takes from the other end.
        self._pending: deque[Pending] = deque()
        self._names: set[str] = set()
        self._failed = False
        self._private = PrivatePaths()  # one warning per wide path, not one per snapshot

    def __repr__(self) -> str:
        # Relay's repr is the bare ``<AtifExporter>``; the session and names follow it.
        return f"<AtifExporter> session_id={self.session_id!r} names={sorted(self._names)}"

    def _new_builder(self) -> TrajectoryBuilder:
        return TrajectoryBuilder(self._info, session_id=self.session_id, infer_agent=self._infer)

    def on_event(self, event: Any) -> None:
        """Subscriber callback: accepts relay event objects (``to_json()``) or ATOF dicts.

        A dict is copied and mapped at once (its caller may change it afterwards); an event
        is queued for later mapping: LLM and tool events as their ATOF text, other scopes as
        the few fields the mapping reads, and marks not at all (they produce no steps) but a
        run's end, whose outcome the turn's user step keeps.
        """
        try:
            cls = event.__class__
            if cls is ScopeEvent:
                pending = self._pending
                pending.append(_queued(event))
                if len(pending) >= PENDING_LIMIT:  # nobody exported for a while: bound memory
                    self.drain()
                return
            if cls is MarkEvent:
                # The builder keeps no marks but a run's end, whose outcome it notes.
                if event.name == TURN_END_MARK:
                    self._pending.append(event.to_json())
                return
            # A copy: the trajectory keeps payloads by reference, and the caller's dict may
            # change after this returns; the record must stay what was received.
            record = copy.deepcopy(dict(event)) if isinstance(event, Mapping) else event.to_dict()
            with self._lock:
                self._drain_locked()
                self._builder.feed(record)
        except Exception:
            self._failure()

    def _failure(self) -> None:
        if not self._failed:
            self._failed = True
            _log.exception(
                "ATIF exporter %r could not map an event; skipping it "
                "(further failures are not logged)",
                self.session_id,
            )

    def drain(self, pause: Callable[[], None] | None = None) -> None:
        """Map the events received so far now (a later write or export then has less to do).
        ``pause`` is called before each event is mapped."""
        with self._lock:
            self._drain_locked(pause)

    @property
    def pending_events(self) -> int:
        """Events received but not mapped yet (see :meth:`on_event`)."""
        return len(self._pending)

    def _drain_locked(self, pause: Callable[[], None] | None = None) -> None:
        """Map the queued event texts (the caller holds ``_lock``)."""
        pending = self._pending
        builder = self._builder
        feed, feed_scope, loads, take = (
            builder.feed,
            builder.feed_scope,
            json.loads,
            pending.popleft,
        )
        while pending:
            if pause is not None:
                pause()
            item = take()
            try:
                if isinstance(item, str):
                    feed(loads(item))
                elif isinstance(item, dict):
                    feed(item)
                else:
                    e, md = item if isinstance(item, tuple) else (item, None)
                    feed_scope(e.scope_category, e.uuid, e.parent_uuid, e.category, e.name, md)
            except Exception:
                self._failure()

    def register(self, name: str) -> None:
        """Subscribe to relay events under ``name``."""
        from wayline.relay import subscribers

        subscribers.register(name, self.on_event)
        self._names.add(name)

    def deregister(self, name: str) -> bool:
        """Stop receiving relay events under ``name``; ``True`` if it was registered so."""
        from wayline.relay import subscribers

        if name not in self._names:
            return False
        self._names.discard(name)
        return subscribers.deregister(name)

    def _root(self) -> TrajectoryNode:
        root = self._builder.manual_root
        assert root is not None  # manual mode always has its root
        return root

    def export(self) -> JsonDict:
        """The ATIF v1.7 document of everything received so far (may have no steps yet)."""
        with self._lock:
            self._drain_locked()
            return render_trajectory(self._root())

    def export_json(self) -> str:
        """:meth:`export` as compact JSON in ATIF struct field order."""
        return json.dumps(self.export(), ensure_ascii=False, separators=(",", ":"))

    def write(
        self,
        directory: str | os.PathLike[str],
        *,
        filename_template: str = DEFAULT_FILENAME_TEMPLATE,
        subagents: SubagentMode = "embedded",
    ) -> list[Path]:
        """Write the trajectory as atomic ATIF file(s) (see ``TrajectoryWriter``); returns paths."""
        return self._write(Path(directory), filename_template, subagents)

    def _write(
        self, directory: Path, template: str, subagents: SubagentMode, *, durable: bool = True
    ) -> list[Path]:
        writer = TrajectoryWriter(
            directory,
            filename_template=template,
            subagents=subagents,
            durable=durable,
            private=self._private,
        )
        with self._lock:
            self._drain_locked()
            return writer.write(self._root())

    def snapshot(
        self,
        directory: str | os.PathLike[str],
        *,
        filename_template: str = DEFAULT_FILENAME_TEMPLATE,
        subagents: SubagentMode = "embedded",
    ) -> list[Path]:
        """:meth:`write` for a running session: atomic, but not flushed to disk (the session's
        final :meth:`write` is). The file is rewritten whole, so its caller decides how often."""
        return self._write(Path(directory), filename_template, subagents, durable=False)

    def clear(self) -> None:
        """Forget every event received so far."""
        with self._lock:
            self._pending.clear()
            self._builder = self._new_builder()
