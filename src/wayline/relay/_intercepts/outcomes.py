"""Intercept outcome types with the nemo_relay names, and the emission of their pending marks.

Request intercepts run before Relay creates the LLM handle, so they cannot emit a mark under
it themselves: they return :class:`PendingMarkSpec` entries instead, and the lifecycle owner
emits them at the right boundary (LLM: start + 1 µs; tool execution: after the tool end).
Relay owns the marks' uuid, parent and timestamp.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from time import time_ns
from typing import Any

from wayline.relay._scopes.datatypes import Json, LLMRequest, ToolExecutionResult
from wayline.relay._scopes.stack_ops import SEVERITY_METADATA_KEY, _data_schema, _severity_text
from wayline.relay._scopes.uuid7 import uuid7_at
from wayline.relay.events import emit_mark, merge_json

__all__ = [
    "LLMExecutionContext",
    "LLMRequestInterceptOutcome",
    "PendingMarkSpec",
    "ToolExecutionContext",
    "ToolExecutionInterceptOutcome",
]

_log = logging.getLogger("wayline.relay")


class PendingMarkSpec:
    """A mark an intercept asks the lifecycle owner to emit (name, payload and severity only).

    ``severity`` ("trace"|"debug"|"info"|"warn"|"error") is folded into
    ``metadata["nemo_relay.log.severity"]`` at emission; a mark with an invalid severity, a
    bad ``data_schema`` or a ``custom`` category without ``subtype`` is dropped with a warning.
    """

    __slots__ = (
        "category",
        "category_profile",
        "data",
        "data_schema",
        "metadata",
        "name",
        "severity",
    )

    def __init__(
        self,
        name: str,
        category: str | None = None,
        category_profile: Mapping[str, Json] | None = None,
        data: Json | None = None,
        metadata: Json | None = None,
        data_schema: Mapping[str, Json] | None = None,
        severity: object = None,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"PendingMarkSpec name must be a str, not {type(name).__name__}")
        self.name = name
        self.category = category
        self.category_profile = category_profile
        self.data = data
        self.metadata = metadata
        self.data_schema = data_schema
        self.severity = severity

    def __repr__(self) -> str:
        return f"PendingMarkSpec({self.name!r}, category={self.category!r}, data={self.data!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PendingMarkSpec):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]


def _marks(value: object, owner: str) -> list[PendingMarkSpec]:
    if value is None:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        marks = list(value)
        bad = [m for m in marks if not isinstance(m, PendingMarkSpec)]
        if not bad:
            return marks
        raise TypeError(
            f"{owner} pending_marks must hold PendingMarkSpec, not {type(bad[0]).__name__}"
        )
    raise TypeError(f"{owner} pending_marks must be a list, not {type(value).__name__}")


class LLMRequestInterceptOutcome:
    """What an LLM request intercept returns: the request, its annotation and pending marks.

    Without a request codec ``request.content`` is the provider body. With one,
    ``annotated_request`` is required and authoritative, ``request.content`` is read-only and
    only ``request.headers`` may change.
    """

    __slots__ = ("annotated_request", "optimization_contributions", "pending_marks", "request")

    def __init__(
        self,
        request: LLMRequest,
        annotated_request: Any = None,
        pending_marks: Sequence[PendingMarkSpec] | None = None,
        optimization_contributions: Sequence[Json] | None = None,
    ) -> None:
        if not isinstance(request, LLMRequest):
            raise TypeError(
                "LLMRequestInterceptOutcome request must be an LLMRequest, "
                f"not {type(request).__name__}"
            )
        self.request = request
        self.annotated_request = annotated_request
        self.pending_marks = _marks(pending_marks, "LLMRequestInterceptOutcome")
        self.optimization_contributions = list(optimization_contributions or [])

    def __repr__(self) -> str:
        return (
            f"LLMRequestInterceptOutcome(request={self.request!r}, "
            f"annotated_request={self.annotated_request!r}, pending_marks={self.pending_marks!r})"
        )


class ToolExecutionInterceptOutcome:
    """What a tool execution intercept returns: the result, its annotation and pending marks."""

    __slots__ = ("annotation", "pending_marks", "result")

    def __init__(
        self,
        result: Json,
        pending_marks: Sequence[PendingMarkSpec] | None = None,
        *,
        annotation: Json | None = None,
    ) -> None:
        self.result = result
        self.pending_marks = _marks(pending_marks, "ToolExecutionInterceptOutcome")
        self.annotation = annotation

    def to_result(self) -> ToolExecutionResult[Any]:
        """The outcome as the ``ToolExecutionResult`` the next-outer intercept sees."""
        return ToolExecutionResult(self.result, self.annotation)

    def __repr__(self) -> str:
        return (
            f"ToolExecutionInterceptOutcome(result={self.result!r}, "
            f"annotation={self.annotation!r}, pending_marks={self.pending_marks!r})"
        )


class LLMExecutionContext:
    """Per-call context handed to LLM execution intercepts (read-only by convention)."""

    __slots__ = ("annotated_request", "model_name", "name", "response_codec")

    def __init__(
        self, name: str, model_name: str | None, annotated_request: Any, response_codec: object
    ) -> None:
        self.name = name
        self.model_name = model_name
        self.annotated_request = annotated_request
        self.response_codec = response_codec

    def __repr__(self) -> str:
        return f"LLMExecutionContext(name={self.name!r}, model_name={self.model_name!r})"


class ToolExecutionContext:
    """Per-call context handed to tool execution intercepts: tool name, args, tool_call_id."""

    __slots__ = ("args", "tool_call_id", "tool_name")

    def __init__(self, tool_name: str, args: Json, tool_call_id: str | None) -> None:
        self.tool_name = tool_name
        self.args = args
        self.tool_call_id = tool_call_id

    def __repr__(self) -> str:
        return f"ToolExecutionContext({self.tool_name!r}, tool_call_id={self.tool_call_id!r})"


def _mark_fields(spec: PendingMarkSpec) -> tuple[Any, Any, Any] | None:
    """(metadata, data_schema, profile) of a valid spec, or None after logging why it is dropped."""
    try:
        metadata = spec.metadata
        if spec.severity is not None:
            metadata = merge_json(metadata, {SEVERITY_METADATA_KEY: _severity_text(spec.severity)})
        schema = _data_schema(spec.data_schema)
        profile = None if spec.category_profile is None else dict(spec.category_profile)
        if spec.category == "custom" and not (profile and isinstance(profile.get("subtype"), str)):
            raise ValueError("a 'custom' mark needs category_profile['subtype']")
    except (TypeError, ValueError) as exc:
        _log.warning("pending mark %r dropped: %s", spec.name, exc)
        return None
    return metadata, schema, profile


def emit_pending_marks(
    marks: Sequence[PendingMarkSpec],
    parent_uuid: str,
    propagation_root_uuid: str,
    timestamp_ns: int,
) -> None:
    """Emit ``marks`` in order, all at ``timestamp_ns``, parented to ``parent_uuid``."""
    for spec in marks:
        fields = _mark_fields(spec)
        if fields is None:
            continue
        metadata, schema, profile = fields
        emit_mark(
            uuid7_at(time_ns()),
            parent_uuid,
            propagation_root_uuid,
            timestamp_ns,
            spec.name,
            None if spec.category is None else str(spec.category),
            profile,
            spec.data,
            metadata,
            schema,
        )
