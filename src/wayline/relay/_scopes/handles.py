"""Handles of open scopes, tool calls and LLM calls (nemo_relay ``ScopeHandle``/``ToolHandle``/
``LLMHandle``).

A scope handle is also a node of the scope stack: ``_below`` links to the scope that was on
top when it was pushed, so a stack is an immutable linked list whose top lives in a
``ContextVar`` (each thread and each asyncio task sees its own top).
"""

from __future__ import annotations

from typing import Any

from wayline.relay._scopes.datatypes import (
    Json,
    LLMAttributes,
    ScopeAttributes,
    ScopeType,
    ToolAttributes,
)

__all__ = ["LLMHandle", "ScopeHandle", "ToolHandle"]


class ScopeHandle:
    """An open scope: pass it to ``scope.pop``, or as ``handle=`` to parent other work."""

    __slots__ = (
        "_attr_strings",
        "_attr_value",
        "_below",
        "_is_root",
        "_local_key",
        "_rooted",
        "data",
        "metadata",
        "name",
        "parent_uuid",
        "propagation_root_uuid",
        "scope_type",
        "started_ns",
        "uuid",
    )

    def __init__(
        self,
        uuid: str,
        name: str,
        scope_type: ScopeType,
        attr_value: int,
        attr_strings: tuple[str, ...],
        parent_uuid: str | None,
        data: Json | None,
        metadata: Json | None,
        started_ns: int,
        propagation_root_uuid: str,
        below: ScopeHandle | None,
        rooted: bool,
        is_root: bool = False,
        local_key: str | None = None,
    ) -> None:
        self.uuid = uuid
        self.name = name
        self.scope_type = scope_type
        self._attr_value = attr_value
        self._attr_strings = attr_strings
        self.parent_uuid = parent_uuid
        self.data = data
        self.metadata = metadata
        self.started_ns = started_ns
        self.propagation_root_uuid = propagation_root_uuid
        self._below = below
        # True once an explicit scope (an Agent, or a "turn" custom scope) is the causal root.
        self._rooted = rooted
        self._is_root = is_root
        # What scope-local registrations are keyed by: the uuid, except for the root of a
        # stack continued from a propagation context, which shares its uuid with the remote
        # parent but not that parent's registrations (as in Relay).
        self._local_key = uuid if local_key is None else local_key

    @property
    def attributes(self) -> ScopeAttributes:
        """The scope's attribute flags."""
        return ScopeAttributes(self._attr_value)

    @property
    def is_root(self) -> bool:
        """Whether this is the invisible per-stack root (it never emits events)."""
        return self._is_root

    def __repr__(self) -> str:
        return f"<ScopeHandle {self.name!r} {self.scope_type.value} uuid={self.uuid}>"


class _SpanHandle:
    """Fields shared by an open tool call and an open LLM call (not on any scope stack)."""

    __slots__ = (
        "_attr_strings",
        "_attr_value",
        "data",
        "metadata",
        "name",
        "parent_uuid",
        "propagation_root_uuid",
        "started_ns",
        "uuid",
    )

    def __init__(
        self,
        uuid: str,
        name: str,
        attr_value: int,
        attr_strings: tuple[str, ...],
        parent_uuid: str,
        data: Json | None,
        metadata: Json | None,
        started_ns: int,
        propagation_root_uuid: str,
    ) -> None:
        self.uuid = uuid
        self.name = name
        self._attr_value = attr_value
        self._attr_strings = attr_strings
        self.parent_uuid = parent_uuid
        self.data = data
        self.metadata = metadata
        self.started_ns = started_ns
        self.propagation_root_uuid = propagation_root_uuid


class ToolHandle(_SpanHandle):
    """An open tool call started by ``tools.call``; finish it with ``tools.call_end``."""

    __slots__ = ("tool_call_id",)

    def __init__(
        self,
        uuid: str,
        name: str,
        attr_value: int,
        attr_strings: tuple[str, ...],
        parent_uuid: str,
        data: Json | None,
        metadata: Json | None,
        tool_call_id: str | None,
        started_ns: int,
        propagation_root_uuid: str,
    ) -> None:
        super().__init__(
            uuid,
            name,
            attr_value,
            attr_strings,
            parent_uuid,
            data,
            metadata,
            started_ns,
            propagation_root_uuid,
        )
        self.tool_call_id = tool_call_id

    @property
    def attributes(self) -> ToolAttributes:
        """The tool call's attribute flags."""
        return ToolAttributes(self._attr_value)

    def profile(self) -> dict[str, Any]:
        """The category profile shared by the start and end events."""
        return {} if self.tool_call_id is None else {"tool_call_id": self.tool_call_id}

    def __repr__(self) -> str:
        return f"<ToolHandle {self.name!r} uuid={self.uuid}>"


class LLMHandle(_SpanHandle):
    """An open LLM call started by ``llm.call``; finish it with ``llm.call_end``."""

    __slots__ = ("model_name",)

    def __init__(
        self,
        uuid: str,
        name: str,
        attr_value: int,
        attr_strings: tuple[str, ...],
        parent_uuid: str,
        data: Json | None,
        metadata: Json | None,
        model_name: str | None,
        started_ns: int,
        propagation_root_uuid: str,
    ) -> None:
        super().__init__(
            uuid,
            name,
            attr_value,
            attr_strings,
            parent_uuid,
            data,
            metadata,
            started_ns,
            propagation_root_uuid,
        )
        self.model_name = model_name

    @property
    def attributes(self) -> LLMAttributes:
        """The LLM call's attribute flags."""
        return LLMAttributes(self._attr_value)

    def profile(self) -> dict[str, Any]:
        """The profile keys shared by the start and end events (``model_name`` when known)."""
        return {} if self.model_name is None else {"model_name": self.model_name}

    def __repr__(self) -> str:
        return f"<LLMHandle {self.name!r} uuid={self.uuid}>"
