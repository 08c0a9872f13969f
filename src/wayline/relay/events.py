"""ATOF 0.1 events as delivered to subscribers, and their exact Relay 0.10.4 JSON line.

Events are immutable objects with cheap attributes (the payload attributes are the caller's
objects, not copies). Their JSON text is built on first use
and cached, so several exporters share one serialization, and no text is built when no
subscriber asks for it. ``to_dict()`` parses that text back, so it is exactly the object the
ATOF line holds. The text is a snapshot of the payloads taken at the first ``to_json()``/
``to_dict()``/``atof_line()`` call: a subscriber that keeps events for later should call one of
them during delivery (an ATOF exporter registered earlier already has).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final, TypeAlias

from wayline.relay._codecs.annotated import AnnotatedLLMRequest, AnnotatedLLMResponse
from wayline.relay._scopes import subscribers as _subs
from wayline.relay._scopes.severity import SEVERITY_KEY, LogSeverity
from wayline.relay.jsonfmt import dumps, encode_str
from wayline.relay.timefmt import format_ns, parse_timestamp_ns

__all__ = [
    "ATOF_VERSION",
    "Event",
    "MarkEvent",
    "ScopeEvent",
    "emit_mark",
    "emit_scope",
    "event_from_dict",
    "merge_json",
]

ATOF_VERSION: Final = "0.1"

# The constant head of a scope line depends only on (category, attributes); caching it turns
# four encodes and a list render per event into one dict lookup.
_SCOPE_HEADS: dict[tuple[str, tuple[str, ...]], str] = {}
_HEAD_CACHE_LIMIT = 4096


def _scope_head(category: str, attributes: tuple[str, ...]) -> str:
    key = (category, attributes)
    head = _SCOPE_HEADS.get(key)
    if head is None:
        attrs = ",".join(encode_str(a) for a in attributes)
        head = (
            f'{{"atof_version":"{ATOF_VERSION}","attributes":[{attrs}],'
            f'"category":{encode_str(str(category))},"category_profile":'
        )
        if len(_SCOPE_HEADS) < _HEAD_CACHE_LIMIT:
            _SCOPE_HEADS[key] = head
    return head


_SCOPE_CATEGORY: Final = {"start": '"start"', "end": '"end"'}


def _uuid_text(value: str | None) -> str:
    return "null" if value is None else encode_str(value)


# The (name, parent_uuid, propagation_root_uuid) part of the last line rendered: a scope's
# end repeats its start's, and marks in a loop share one parent, so the three encodes are
# mostly skipped. One tuple, swapped whole: threads never see a torn entry. Identity checks
# suffice (and cost nothing): the same handle hands out the same string objects.
_last_ids: tuple[str | None, str | None, str | None, str] = (None, None, None, "")


def _ids_text(name: str, parent: str | None, root: str | None) -> str:
    global _last_ids
    last = _last_ids
    if last[0] is name and last[1] is parent and last[2] is root:
        return last[3]
    text = (
        f',"name":{encode_str(name)}'
        f',"parent_uuid":{_uuid_text(parent)}'
        f',"propagation_root_uuid":{_uuid_text(root)}'
    )
    _last_ids = (name, parent, root, text)
    return text


class _EventBase:
    __slots__ = (
        "_bytes",
        "_line",
        "_timestamp",
        "category_profile",
        "data",
        "data_schema",
        "metadata",
        "name",
        "parent_uuid",
        "propagation_root_uuid",
        "timestamp_ns",
        "uuid",
    )

    atof_version: ClassVar[str] = ATOF_VERSION
    kind: ClassVar[str]

    uuid: str
    parent_uuid: str | None
    propagation_root_uuid: str | None
    timestamp_ns: int
    name: str
    category_profile: dict[str, Any] | None
    data: Any
    data_schema: dict[str, Any] | None
    metadata: Any
    _line: str | None
    _bytes: bytes | None
    _timestamp: str | None

    @property
    def timestamp(self) -> str:
        """The RFC 3339 timestamp text, as written to ATOF."""
        ts = self._timestamp
        if ts is None:
            ts = self._timestamp = format_ns(self.timestamp_ns)
        return ts

    @property
    def annotated_request(self) -> AnnotatedLLMRequest | None:
        """``category_profile["annotated_request"]`` as an annotation object, or ``None``."""
        profile = self.category_profile
        value = None if profile is None else profile.get("annotated_request")
        return AnnotatedLLMRequest.from_dict(value) if isinstance(value, dict) else None

    @property
    def annotated_response(self) -> AnnotatedLLMResponse | None:
        """``category_profile["annotated_response"]`` as an annotation object, or ``None``."""
        profile = self.category_profile
        value = None if profile is None else profile.get("annotated_response")
        return AnnotatedLLMResponse.from_dict(value) if isinstance(value, dict) else None

    def _render(self) -> str:
        """The ATOF line text, newline included (rendered once, then cached in ``_line``)."""
        raise NotImplementedError

    def to_json(self) -> str:
        """The event's ATOF JSON text (no trailing newline), byte-identical to Relay's."""
        line = self._line
        if line is None:
            line = self._line = self._render()
        return line[:-1]

    def atof_line(self) -> bytes:
        """The UTF-8 ATOF line including ``\\n`` (cached; shared by every file exporter)."""
        data = self._bytes
        if data is None:
            line = self._line
            if line is None:
                line = self._line = self._render()
            # Lone surrogates cannot be UTF-8; as \\uXXXX they stay valid JSON string escapes.
            data = self._bytes = line.encode("utf-8", "backslashreplace")
        return data

    def to_dict(self) -> dict[str, Any]:
        """The ATOF JSON object of this event (exactly what its line holds)."""
        line = self._line
        if line is None:
            line = self._line = self._render()
        result: dict[str, Any] = json.loads(line)
        return result

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} uuid={self.uuid} parent={self.parent_uuid}>"


class ScopeEvent(_EventBase):
    """A scope, tool or LLM ``start``/``end`` event (``kind == "scope"``)."""

    __slots__ = ("_attributes", "category", "scope_category")
    kind: ClassVar[str] = "scope"

    def __init__(
        self,
        scope_category: str,
        uuid: str,
        parent_uuid: str | None,
        propagation_root_uuid: str | None,
        timestamp_ns: int,
        name: str,
        category: str,
        attributes: tuple[str, ...],
        category_profile: dict[str, Any] | None,
        data: Any,
        data_schema: dict[str, Any] | None,
        metadata: Any,
    ) -> None:
        self.scope_category = scope_category
        self.uuid = uuid
        self.parent_uuid = parent_uuid
        self.propagation_root_uuid = propagation_root_uuid
        self.timestamp_ns = timestamp_ns
        self.name = name
        self.category = category
        self._attributes = attributes
        self.category_profile = category_profile
        self.data = data
        self.data_schema = data_schema
        self.metadata = metadata
        self._line = None
        self._bytes = None
        self._timestamp = None

    @property
    def attributes(self) -> list[str]:
        """Sorted attribute flag strings (``[]`` when none)."""
        return list(self._attributes)

    def _render(self) -> str:
        # One f-string (a single BUILD_STRING) with the None checks inlined: most envelope
        # fields are null, and skipping a call per field is a measurable share of an event.
        profile, data, schema, metadata = (
            self.category_profile,
            self.data,
            self.data_schema,
            self.metadata,
        )
        ts = self._timestamp
        if ts is None:
            ts = self._timestamp = format_ns(self.timestamp_ns)
        category = self.scope_category
        return (
            f"{_scope_head(self.category, self._attributes)}"
            f"{'null' if profile is None else dumps(profile)}"
            f',"data":{"null" if data is None else dumps(data)}'
            f',"data_schema":{"null" if schema is None else dumps(schema)}'
            f',"kind":"scope","metadata":{"null" if metadata is None else dumps(metadata)}'
            f"{_ids_text(self.name, self.parent_uuid, self.propagation_root_uuid)}"
            f',"scope_category":{_SCOPE_CATEGORY.get(category) or encode_str(category)}'
            f',"timestamp":"{ts}","uuid":{encode_str(self.uuid)}}}\n'
        )


class MarkEvent(_EventBase):
    """A point-in-time mark (``kind == "mark"``)."""

    __slots__ = ("category",)
    kind: ClassVar[str] = "mark"

    def __init__(
        self,
        uuid: str,
        parent_uuid: str | None,
        propagation_root_uuid: str | None,
        timestamp_ns: int,
        name: str,
        category: str | None,
        category_profile: dict[str, Any] | None,
        data: Any,
        data_schema: dict[str, Any] | None,
        metadata: Any,
    ) -> None:
        self.uuid = uuid
        self.parent_uuid = parent_uuid
        self.propagation_root_uuid = propagation_root_uuid
        self.timestamp_ns = timestamp_ns
        self.name = name
        self.category = category
        self.category_profile = category_profile
        self.data = data
        self.data_schema = data_schema
        self.metadata = metadata
        self._line = None
        self._bytes = None
        self._timestamp = None

    @property
    def severity(self) -> LogSeverity | None:
        """The severity ``scope.event(..., severity=)`` recorded in the metadata, if any."""
        metadata = self.metadata
        value = metadata.get(SEVERITY_KEY) if isinstance(metadata, dict) else None
        try:
            return None if value is None else LogSeverity(value)
        except ValueError:
            return None

    def _render(self) -> str:
        category, profile, data, schema, metadata = (
            self.category,
            self.category_profile,
            self.data,
            self.data_schema,
            self.metadata,
        )
        ts = self._timestamp
        if ts is None:
            ts = self._timestamp = format_ns(self.timestamp_ns)
        return (
            f'{{"atof_version":"{ATOF_VERSION}"'
            f',"category":{"null" if category is None else encode_str(str(category))}'
            f',"category_profile":{"null" if profile is None else dumps(profile)}'
            f',"data":{"null" if data is None else dumps(data)}'
            f',"data_schema":{"null" if schema is None else dumps(schema)}'
            f',"kind":"mark","metadata":{"null" if metadata is None else dumps(metadata)}'
            f"{_ids_text(self.name, self.parent_uuid, self.propagation_root_uuid)}"
            f',"timestamp":"{ts}","uuid":{encode_str(self.uuid)}}}\n'
        )


Event: TypeAlias = ScopeEvent | MarkEvent
"""Any event delivered to subscribers."""


def emit_scope(
    scope_category: str,
    uuid: str,
    parent_uuid: str | None,
    propagation_root_uuid: str | None,
    timestamp_ns: int,
    name: str,
    category: str,
    attributes: tuple[str, ...],
    category_profile: dict[str, Any] | None,
    data: Any,
    metadata: Any,
    data_schema: dict[str, Any] | None = None,
) -> None:
    """Deliver a scope event to the current subscribers (builds nothing when there are none)."""
    callbacks = _subs._callbacks
    if callbacks:
        _subs.dispatch(
            ScopeEvent(
                scope_category,
                uuid,
                parent_uuid,
                propagation_root_uuid,
                timestamp_ns,
                name,
                category,
                attributes,
                category_profile,
                data,
                data_schema,
                metadata,
            ),
            callbacks,
        )


def emit_mark(
    uuid: str,
    parent_uuid: str | None,
    propagation_root_uuid: str | None,
    timestamp_ns: int,
    name: str,
    category: str | None,
    category_profile: dict[str, Any] | None,
    data: Any,
    metadata: Any,
    data_schema: dict[str, Any] | None = None,
) -> None:
    """Deliver a mark event to the current subscribers (builds nothing when there are none)."""
    callbacks = _subs._callbacks
    if callbacks:
        _subs.dispatch(
            MarkEvent(
                uuid,
                parent_uuid,
                propagation_root_uuid,
                timestamp_ns,
                name,
                category,
                category_profile,
                data,
                data_schema,
                metadata,
            ),
            callbacks,
        )


def merge_json(base: Any, extra: Any) -> Any:
    """Relay's shallow merge: two objects merge (``extra`` wins); otherwise the non-None one,
    and ``extra`` when both are set."""
    if extra is None:
        return base
    if base is None:
        return extra
    if isinstance(base, dict) and isinstance(extra, dict):
        return {**base, **extra}
    return extra


def event_from_dict(obj: dict[str, Any]) -> Event:
    """Rebuild an event from an ATOF object (e.g. one read back from a file).

    ``to_json()`` of the result is Relay's text for that object. Raises ``ValueError`` for an
    object that is not a scope or mark event with a parsable timestamp.
    """
    kind = obj.get("kind")
    timestamp_ns = parse_timestamp_ns(obj.get("timestamp"))
    if kind == "scope":
        return ScopeEvent(
            obj["scope_category"],
            obj["uuid"],
            obj.get("parent_uuid"),
            obj.get("propagation_root_uuid"),
            timestamp_ns,
            obj["name"],
            obj["category"],
            tuple(obj.get("attributes") or ()),
            obj.get("category_profile"),
            obj.get("data"),
            obj.get("data_schema"),
            obj.get("metadata"),
        )
    if kind == "mark":
        return MarkEvent(
            obj["uuid"],
            obj.get("parent_uuid"),
            obj.get("propagation_root_uuid"),
            timestamp_ns,
            obj["name"],
            obj.get("category"),
            obj.get("category_profile"),
            obj.get("data"),
            obj.get("data_schema"),
            obj.get("metadata"),
        )
    raise ValueError(f"not an ATOF event kind: {kind!r}")
