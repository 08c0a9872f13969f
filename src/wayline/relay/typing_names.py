"""JSON and callback type aliases, ``LogSeverity`` and the TypedDicts of nemo_relay's top level.

These names carry no behaviour; they exist so annotations written against ``nemo_relay``
resolve unchanged. Callbacks may return their value or an awaitable of it everywhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, TypeAlias, TypedDict

from wayline.relay._intercepts.outcomes import (
    LLMExecutionContext,
    LLMRequestInterceptOutcome,
    ToolExecutionContext,
    ToolExecutionInterceptOutcome,
)
from wayline.relay._scopes.datatypes import LLMRequest, ToolExecutionResult
from wayline.relay._scopes.severity import LogSeverity
from wayline.relay.events import Event

JsonPrimitive: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = JsonPrimitive | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject: TypeAlias = dict[str, JsonValue]
UnsupportedBehavior: TypeAlias = Literal["ignore", "warn", "error"]


class DataSchema(TypedDict):
    """Schema identifier attached to an event's data payload."""

    name: str
    version: str


class EventSanitizeFields(TypedDict):
    """The fields a mark/scope sanitizer receives and returns."""

    data: Any
    category_profile: JsonObject | None
    metadata: Any


EventMetadataScalar: TypeAlias = str | int | float | bool
EventMetadataValue: TypeAlias = (
    EventMetadataScalar | list[str] | list[int] | list[float] | list[bool]
)
EventMetadata: TypeAlias = dict[str, EventMetadataValue]
EventMetadataInjectorCallback: TypeAlias = Callable[
    [Event], EventMetadata | Awaitable[EventMetadata]
]
EventSanitizeGuardrail: TypeAlias = Callable[
    [Event, EventSanitizeFields], EventSanitizeFields | Awaitable[EventSanitizeFields]
]
ToolSanitizeGuardrail: TypeAlias = Callable[[str, Any], Any]
ToolConditionalExecutionGuardrail: TypeAlias = Callable[
    [str, Any], Awaitable[str | None] | str | None
]
LlmSanitizeRequestGuardrail: TypeAlias = Callable[[LLMRequest, Any], Any]
LlmSanitizeResponseGuardrail: TypeAlias = Callable[[Any, Any], Any]
LlmConditionalExecutionGuardrail: TypeAlias = Callable[
    [LLMRequest], Awaitable[str | None] | str | None
]
ToolRequestIntercept: TypeAlias = Callable[[str, Any], Any]
ToolExecutionIntercept: TypeAlias = Callable[
    [ToolExecutionContext, Callable[[Any], Any]],
    ToolExecutionInterceptOutcome | Awaitable[ToolExecutionInterceptOutcome],
]
LlmRequestIntercept: TypeAlias = Callable[
    [str, LLMRequest, Any],
    LLMRequestInterceptOutcome | Awaitable[LLMRequestInterceptOutcome],
]
LlmExecutionIntercept: TypeAlias = Callable[
    [str, LLMRequest, LLMExecutionContext, Callable[[LLMRequest], Any]], Any
]
LlmStreamExecutionIntercept: TypeAlias = Callable[
    [str, LLMRequest, LLMExecutionContext, Callable[[LLMRequest], Any]],
    AsyncIterator[Any] | Awaitable[AsyncIterator[Any]] | Any,
]
ToolResult: TypeAlias = ToolExecutionResult[Any]

__all__ = [
    "DataSchema",
    "EventMetadata",
    "EventMetadataInjectorCallback",
    "EventMetadataScalar",
    "EventMetadataValue",
    "EventSanitizeFields",
    "EventSanitizeGuardrail",
    "JsonObject",
    "JsonPrimitive",
    "JsonValue",
    "LlmConditionalExecutionGuardrail",
    "LlmExecutionIntercept",
    "LlmRequestIntercept",
    "LlmSanitizeRequestGuardrail",
    "LlmSanitizeResponseGuardrail",
    "LlmStreamExecutionIntercept",
    "LogSeverity",
    "ToolConditionalExecutionGuardrail",
    "ToolExecutionIntercept",
    "ToolRequestIntercept",
    "ToolSanitizeGuardrail",
    "UnsupportedBehavior",
]
