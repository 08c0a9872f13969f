"""Scope stack operations with the nemo_relay ``scope`` names.

Every stack starts with an invisible root scope that has its own UUID and never emits events,
so a top-level scope has a non-null ``parent_uuid`` (as in Relay). The top of the stack lives
in a ``ContextVar``: each thread starts with its own stack, and each asyncio task works on a
copy of its creator's context, so concurrent tasks never see each other's pushes while still
inheriting the scope they were created in.

``propagation_root_uuid`` follows Relay 0.10.4's samples: the outermost Agent scope of the
causal chain (or a root-level custom scope whose metadata has ``nemo_relay_scope_role:
"turn"``) for itself and everything beneath it; without one, the stack's implicit root.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from datetime import datetime
from types import TracebackType
from typing import Any, Final

from wayline.relay._intercepts import registrations as _reg
from wayline.relay._scopes import subscribers as _subs
from wayline.relay._scopes.datatypes import Json, ScopeAttributes, ScopeType, attribute_bits
from wayline.relay._scopes.handles import ScopeHandle
from wayline.relay._scopes.metrics import METRIC_SCHEMA, MetricMeasurement, metric_mark_data
from wayline.relay._scopes.stacks import ScopeStack, _stack
from wayline.relay._scopes.uuid7 import uuid7_at
from wayline.relay.clock import now_ns
from wayline.relay.events import MarkEvent, ScopeEvent, merge_json
from wayline.relay.timefmt import datetime_to_ns

__all__ = [
    "close_detached",
    "event",
    "get_handle",
    "metric",
    "open_detached",
    "pop",
    "push",
    "scope",
]

SEVERITY_METADATA_KEY: Final = "nemo_relay.log.severity"
SEVERITIES: Final = frozenset({"trace", "debug", "info", "warn", "error"})
ROOT_NAME: Final = "root"
PROPAGATED_ROOT_NAME: Final = "propagated-root"

_top: ContextVar[ScopeHandle | None] = ContextVar("wayline_relay_scope_top", default=None)


def make_root(uuid: str | None = None, root_uuid: str | None = None) -> ScopeHandle:
    """A new implicit root (its own uuid unless continuing a propagated parent)."""
    now = now_ns()
    own = uuid7_at(now)
    propagated = uuid is not None
    uuid = own if uuid is None else uuid
    rooted = root_uuid is not None
    # Relay's root is Agent-typed (its session-id lookup skips it explicitly); never emitted.
    return ScopeHandle(
        uuid,
        PROPAGATED_ROOT_NAME if propagated else ROOT_NAME,
        ScopeType.Agent,
        0,
        (),
        None,
        None,
        None,
        now,
        uuid if root_uuid is None else root_uuid,
        None,
        rooted,
        True,
        # A continued parent's registrations stay with the parent's own stack.
        f"{uuid}/{own}" if propagated else None,
    )


def _new_root() -> ScopeHandle:
    stack = _stack.get()
    if stack is None:
        stack = ScopeStack(make_root())
        _stack.set(stack)
    _top.set(stack.top)
    return stack.top


def _set_top(handle: ScopeHandle | None) -> None:
    _top.set(handle)
    stack = _stack.get()
    if stack is not None and handle is not None:
        stack.top = handle


def stack_uuids() -> list[str]:
    """Scope-local keys of the scopes on the current stack, innermost first (root included).

    A key is the scope's uuid, except for a stack continued from a propagation context,
    whose root has a key of its own (see ``ScopeHandle._local_key``).
    """
    uuids: list[str] = []
    node = _top.get()
    while node is not None:
        uuids.append(node._local_key)
        node = node._below
    return uuids


_reg.state.stack_uuids = stack_uuids


def get_handle() -> ScopeHandle:
    """The handle on top of the current scope stack (the invisible root if none is open)."""
    top = _top.get()
    return _new_root() if top is None else top


current = get_handle  # the name the span modules use for "parent by default"


def end_timestamp_ns(started_ns: int, timestamp: datetime | None) -> int:
    """An explicit end timestamp as given, else now but at least 1 µs after the start."""
    if timestamp is not None:
        return datetime_to_ns(timestamp)
    now = now_ns()
    floor = started_ns + 1_000
    return now if now > floor else floor


TURN_ROLE_KEY: Final = "nemo_relay_scope_role"


def _is_turn(metadata: object) -> bool:
    return isinstance(metadata, dict) and metadata.get(TURN_ROLE_KEY) == "turn"


def push(
    name: str,
    scope_type: ScopeType,
    *,
    handle: ScopeHandle | None = None,
    attributes: ScopeAttributes | int | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    input: Json | None = None,
    timestamp: datetime | None = None,
) -> ScopeHandle:
    """Open a child scope of ``handle`` (default: the top of the stack) and push it on the stack.

    ``input`` becomes the start event's ``data``; ``data`` stays on the handle only;
    ``metadata`` goes on the start event (and, merged, on the end event). ``timestamp`` must be
    a timezone-aware ``datetime``.
    """
    if not isinstance(name, str):
        raise TypeError(f"scope name must be a str, not {type(name).__name__}")
    top = _top.get()
    if top is None:
        top = _new_root()
    now = now_ns()
    started = now if timestamp is None else datetime_to_ns(timestamp)
    parent = top if handle is None else handle
    if scope_type.__class__ is not ScopeType:
        scope_type = ScopeType(scope_type)
    strings: tuple[str, ...]
    if attributes is None:
        bits, strings = 0, ()
    else:
        bits = attribute_bits(attributes, ScopeAttributes)
        strings = ScopeAttributes.strings_of(bits)
    uuid = uuid7_at(now)
    # propagation_root_uuid, as Relay 0.10.4 writes it: the outermost Agent scope (or
    # root-level "turn" custom scope) of the causal chain, else the stack's implicit root.
    rooted = parent._rooted
    if rooted:
        root_uuid = parent.propagation_root_uuid
    elif scope_type is ScopeType.Agent or (scope_type is ScopeType.Custom and _is_turn(metadata)):
        root_uuid, rooted = uuid, True
    else:
        root_uuid = parent.propagation_root_uuid
    pushed = ScopeHandle(
        uuid,
        name,
        scope_type,
        bits,
        strings,
        parent.uuid,
        data,
        metadata,
        started,
        root_uuid,
        top,
        rooted,
    )
    _set_top(pushed)
    callbacks = _subs._callbacks
    if callbacks:
        _subs.dispatch(
            ScopeEvent(
                "start",
                uuid,
                parent.uuid,
                root_uuid,
                started,
                name,
                scope_type,
                strings,
                None,
                input,
                None,
                metadata,
            ),
            callbacks,
        )
    return pushed


def _pop_error(top: ScopeHandle | None, handle: ScopeHandle) -> RuntimeError:
    node = top
    while node is not None:
        if node.uuid == handle.uuid:
            return RuntimeError("invalid argument: scope handle is not at the top of the stack")
        node = node._below
    return RuntimeError(f"not found: scope handle not found ({handle.name!r} {handle.uuid})")


def pop(
    handle: ScopeHandle,
    *,
    output: Json | None = None,
    metadata: Json | None = None,
    timestamp: datetime | None = None,
) -> None:
    """Close ``handle``, which must be the top of the current stack.

    ``output`` becomes the end event's ``data``; ``metadata`` is merged over the push metadata.
    Raises ``RuntimeError`` when the handle is not on top or not on this stack at all.
    """
    if timestamp is not None:  # a bad end timestamp fails before the scope is popped
        datetime_to_ns(timestamp)
    top = _top.get()
    if top is not handle and (top is None or top.uuid != handle.uuid):
        raise _pop_error(top, handle)
    if handle._is_root:
        raise RuntimeError("invalid argument: the implicit root scope cannot be popped")
    _set_top(handle._below)
    callbacks = _subs._callbacks
    if callbacks:
        _subs.dispatch(
            ScopeEvent(
                "end",
                handle.uuid,
                handle.parent_uuid,
                handle.propagation_root_uuid,
                end_timestamp_ns(handle.started_ns, timestamp),
                handle.name,
                handle.scope_type,
                handle._attr_strings,
                None,
                output,
                None,
                merge_json(handle.metadata, metadata),
            ),
            callbacks,
        )
    if _reg.state.local:
        _reg.drop_scope(handle.uuid)


def _severity_text(severity: object) -> str:
    value = getattr(severity, "value", severity)
    text = str(value).lower() if value is not None else ""
    if text == "warning":
        text = "warn"
    if text not in SEVERITIES:
        raise ValueError(f"severity must be one of {sorted(SEVERITIES)}, got {severity!r}")
    return text


def _data_schema(data_schema: object) -> dict[str, Any] | None:
    if data_schema is None:
        return None
    if isinstance(data_schema, Mapping):
        name, version = data_schema.get("name"), data_schema.get("version")
        if isinstance(name, str) and isinstance(version, str):
            return dict(data_schema)
    raise TypeError(
        f"data_schema must be a mapping with string 'name' and 'version', got {data_schema!r}"
    )


def event(
    name: str,
    *,
    handle: ScopeHandle | None = None,
    data: Json | None = None,
    data_schema: Mapping[str, Any] | None = None,
    metadata: Json | None = None,
    severity: object = None,
    timestamp: datetime | None = None,
    category: str | None = None,
    category_profile: Mapping[str, Any] | None = None,
) -> None:
    """Emit a mark under ``handle`` (default: the top of the stack).

    ``severity`` ("trace"|"debug"|"info"|"warn"|"error") is recorded in
    ``metadata["nemo_relay.log.severity"]``. ``category``/``category_profile`` are wayline
    extensions (Relay sets them only on runtime-owned marks); a ``custom`` mark needs a
    ``subtype`` in its profile.
    """
    if not isinstance(name, str):
        raise TypeError(f"mark name must be a str, not {type(name).__name__}")
    parent = handle
    if parent is None:
        parent = _top.get()
        if parent is None:
            parent = _new_root()
    if severity is not None:
        metadata = merge_json(metadata, {SEVERITY_METADATA_KEY: _severity_text(severity)})
    schema = _data_schema(data_schema)
    profile = None if category_profile is None else dict(category_profile)
    if category is not None:
        category = str(category)
        if category == "custom" and not (profile and isinstance(profile.get("subtype"), str)):
            raise ValueError("a 'custom' mark needs category_profile['subtype'] (a dotted name)")
    if timestamp is not None:  # validated even when no subscriber records the mark (as Relay)
        datetime_to_ns(timestamp)
    callbacks = _subs._callbacks
    if callbacks:
        now = now_ns()
        _subs.dispatch(
            MarkEvent(
                uuid7_at(now),
                parent.uuid,
                parent.propagation_root_uuid,
                now if timestamp is None else datetime_to_ns(timestamp),
                name,
                category,
                profile,
                data,
                schema,
                metadata,
            ),
            callbacks,
        )


def metric(
    name: str,
    measurements: Sequence[MetricMeasurement],
    *,
    handle: ScopeHandle | None = None,
    metadata: Json | None = None,
    timestamp: datetime | None = None,
) -> None:
    """Emit a validated group of metric recordings as one mark; ``ValueError`` rejects all."""
    data = metric_mark_data(measurements)
    event(
        name,
        handle=handle,
        data=data,
        data_schema=METRIC_SCHEMA,
        metadata=metadata,
        timestamp=timestamp,
    )


class scope:
    """``with scope.scope(name, ScopeType.X) as handle:`` — push on entry, pop on exit.

    The end event's metadata gets ``otel.status_code``: ``"OK"`` on normal exit, ``"ERROR"``
    plus ``otel.status_description`` when the block raises an ``Exception``, and ``"UNSET"``
    when it is left by a ``BaseException`` (e.g. task cancellation), as in nemo_relay.
    """

    __slots__ = (
        "_attributes",
        "_data",
        "_end_timestamp",
        "_handle",
        "_input",
        "_metadata",
        "_name",
        "_parent",
        "_pushed",
        "_scope_type",
        "_timestamp",
    )

    def __init__(
        self,
        name: str,
        scope_type: ScopeType,
        *,
        handle: ScopeHandle | None = None,
        attributes: ScopeAttributes | int | None = None,
        data: Json | None = None,
        metadata: Json | None = None,
        input: Json | None = None,
        timestamp: datetime | None = None,
        end_timestamp: datetime | None = None,
    ) -> None:
        self._name = name
        self._scope_type = scope_type
        self._parent = handle
        self._attributes = attributes
        self._data = data
        self._metadata = metadata
        self._input = input
        self._timestamp = timestamp
        self._end_timestamp = end_timestamp
        self._pushed: ScopeHandle | None = None

    def __enter__(self) -> ScopeHandle:
        pushed = self._pushed = push(
            self._name,
            self._scope_type,
            handle=self._parent,
            attributes=self._attributes,
            data=self._data,
            metadata=self._metadata,
            input=self._input,
            timestamp=self._timestamp,
        )
        return pushed

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pushed = self._pushed
        if pushed is None:
            return
        self._pushed = None
        status: dict[str, Any]
        if exc is None:
            status = {"otel.status_code": "OK"}
        elif isinstance(exc, Exception):
            status = {"otel.status_code": "ERROR", "otel.status_description": str(exc)}
        elif isinstance(exc, asyncio.CancelledError):  # a cancelled task: its message, if any
            status = {
                "otel.status_code": "ERROR",
                "otel.status_description": str(exc) or "cancelled",
            }
        else:
            status = {"otel.status_code": "UNSET"}
        pop(pushed, metadata=status, timestamp=self._end_timestamp)


_AGENT_SESSION_KEYS: Final = (
    "codex_subagent_session_id",
    "subagent_session_id",
    "subagent_id",
    "session_id",
)


def _agent_session_id(agent: ScopeHandle) -> str:
    metadata = agent.metadata
    if isinstance(metadata, dict):
        for key in _AGENT_SESSION_KEYS:
            value = metadata.get(key)
            if isinstance(value, str):
                return value
    return agent.name


def agent_session_ids() -> tuple[str, str | None] | None:
    """Session ids of the two innermost Agent scopes on the stack: ``(current, parent)``.

    Each is the agent's ``codex_subagent_session_id``/``subagent_session_id``/``subagent_id``/
    ``session_id`` metadata string (first found), else its name; ``None`` without an agent.
    """
    found: list[str] = []
    node = _top.get()
    while node is not None and not node._is_root:
        if node.scope_type is ScopeType.Agent:
            found.append(_agent_session_id(node))
            if len(found) == 2:
                break
        node = node._below
    if not found:
        return None
    return found[0], (found[1] if len(found) > 1 else None)


def outermost_scope_uuid() -> str | None:
    """UUID of the outermost explicit scope on the current stack, if any."""
    node = _top.get()
    outer: str | None = None
    while node is not None and not node._is_root:
        outer = node.uuid
        node = node._below
    return outer


def open_detached(
    name: str,
    scope_type: ScopeType,
    *,
    handle: ScopeHandle | None = None,
    data: Json | None = None,
    metadata: Json | None = None,
    input: Json | None = None,
) -> ScopeHandle:
    """Open a scope under ``handle`` without putting it on any stack (wayline extension).

    For hosts whose scope lifetimes cross threads (a session opened on one thread and closed
    on another): parentage comes from the explicit ``handle``, never from a thread's stack.
    Close it with :func:`close_detached`.
    """
    token_top = get_handle()
    pushed = push(
        name, scope_type, handle=handle or get_handle(), data=data, metadata=metadata, input=input
    )
    _set_top(token_top)
    return pushed


def close_detached(
    handle: ScopeHandle, *, output: Json | None = None, metadata: Json | None = None
) -> None:
    """Emit the end event of a scope opened with :func:`open_detached`, from any thread."""
    callbacks = _subs._callbacks
    if callbacks:
        _subs.dispatch(
            ScopeEvent(
                "end",
                handle.uuid,
                handle.parent_uuid,
                handle.propagation_root_uuid,
                end_timestamp_ns(handle.started_ns, None),
                handle.name,
                handle.scope_type,
                handle._attr_strings,
                None,
                output,
                None,
                merge_json(handle.metadata, metadata),
            ),
            callbacks,
        )
