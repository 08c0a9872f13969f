"""The normalized LLM request/response views (``AnnotatedLLMRequest``/``AnnotatedLLMResponse``).

Codecs (:mod:`wayline.relay.codecs`) decode provider bodies into these and encode them back.
Annotations serialize (``to_dict``) with absent fields omitted and unknown provider keys
(``extra``) flattened into the object, as Relay 0.10.4 writes them on ATOF events.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from wayline.relay._scopes.datatypes import Json

__all__ = ["AnnotatedLLMRequest", "AnnotatedLLMResponse", "text_of"]

_REQUEST_FIELDS: Final = (
    "messages",
    "instructions",
    "model",
    "params",
    "tools",
    "tool_choice",
    "api_specific",
)
_RESPONSE_FIELDS: Final = (
    "id",
    "model",
    "message",
    "tool_calls",
    "finish_reason",
    "usage",
    "optimization_summary",
    "api_specific",
)


def _flatten(obj: object, names: tuple[str, ...], extra: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(obj, name)
        if value is not None and not (name == "params" and not value):
            out[name] = value
    for key, value in extra.items():
        out.setdefault(key, value)
    return out


@dataclass(slots=True)
class AnnotatedLLMRequest:
    """A provider request in normalized form (mutable: intercepts edit it and return it).

    ``messages`` and ``tools`` keep the provider's own item shapes; ``params`` holds sampling
    and transport parameters; ``extra`` holds unknown top-level keys (kept verbatim).
    """

    messages: list[Json] | None = None
    instructions: Json | None = None
    model: str | None = None
    params: dict[str, Json] | None = None
    tools: list[Json] | None = None
    tool_choice: Json | None = None
    api_specific: dict[str, Json] | None = None
    extra: dict[str, Json] = field(default_factory=dict)
    transport: dict[str, Json] = field(default_factory=dict, repr=False, compare=False)
    """Transport settings a codec decoded (``stream``, ``metadata``, …): written on ATOF like
    Relay's typed request fields, not exposed by Relay as properties, ignored by ``==``."""

    def __post_init__(self) -> None:
        if self.extra is None:  # as Relay: ``extra=None`` is no extra keys
            self.extra = {}

    def to_dict(self) -> dict[str, Any]:
        """The annotation as written on ATOF (absent fields omitted, ``extra`` flattened)."""
        return copy.deepcopy(_flatten(self, _REQUEST_FIELDS, {**self.transport, **self.extra}))

    def system_prompt(self) -> str | None:
        """``instructions``, else the text of the first system message."""
        if self.instructions is not None:
            return first_text(self.instructions)
        for message in self.messages or []:
            if isinstance(message, dict) and message.get("role") == "system":
                return first_text(message.get("content"))
        return None

    def last_user_message(self) -> str | None:
        """The text of the last user message that has text."""
        for message in reversed(self.messages or []):
            if isinstance(message, dict) and message.get("role") == "user":
                text = first_text(message.get("content"))
                if text is not None:
                    return text
        return None

    def has_tool_calls(self) -> bool:
        """Whether any message carries tool calls (OpenAI, Responses or Anthropic shape)."""
        return any(_calls_tools(message) for message in self.messages or [])

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> AnnotatedLLMRequest:
        """Rebuild an annotation from its dict form (unknown keys go to ``extra``)."""
        known = {k: copy.deepcopy(v) for k, v in value.items() if k in _REQUEST_FIELDS}
        extra = {k: copy.deepcopy(v) for k, v in value.items() if k not in _REQUEST_FIELDS}
        params = known.pop("params", None)
        return cls(**known, params=None if params is None else dict(params), extra=extra)


@dataclass(slots=True)
class AnnotatedLLMResponse:
    """A provider response in normalized form (what the ATIF builder reads first)."""

    id: str | None = None
    model: str | None = None
    message: Json | None = None
    tool_calls: list[dict[str, Json]] | None = None
    finish_reason: str | None = None
    usage: dict[str, Json] | None = None
    optimization_summary: Json | None = None
    api_specific: dict[str, Json] | None = None
    extra: dict[str, Json] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The annotation as written on ATOF (absent fields omitted, ``extra`` flattened)."""
        return copy.deepcopy(_flatten(self, _RESPONSE_FIELDS, self.extra))

    def __post_init__(self) -> None:
        if self.extra is None:  # as Relay: ``extra=None`` is no extra keys
            self.extra = {}
        # Relay's native shape for a finish reason it does not know: {"unknown": "<raw>"}.
        reason: Any = self.finish_reason
        if isinstance(reason, Mapping) and isinstance(reason.get("unknown"), str):
            self.finish_reason = reason["unknown"]

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> AnnotatedLLMResponse:
        """An annotation from its ``to_dict`` form (unknown keys go to ``extra``)."""
        known = {k: copy.deepcopy(v) for k, v in value.items() if k in _RESPONSE_FIELDS}
        extra = {k: copy.deepcopy(v) for k, v in value.items() if k not in _RESPONSE_FIELDS}
        return cls(**known, extra=extra)

    def response_text(self) -> str | None:
        """The message's text (a string, or its first text part)."""
        message = self.message
        if isinstance(message, dict):
            message = message.get("content")
        return first_text(message)

    def has_tool_calls(self) -> bool:
        """Whether the response asks for tool calls."""
        return bool(self.tool_calls)


def _calls_tools(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    if message.get("tool_calls") or message.get("role") == "tool_call":
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "tool_use" for part in content
    )


def first_text(content: Any) -> str | None:
    """A string content itself, else the first text part of a content list (Relay's helpers)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                return str(part["text"])
    return None


def text_of(content: Any) -> Any:
    """The joined text parts of message content (other values unchanged)."""
    if isinstance(content, list):
        texts = [
            str(part["text"])
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        return "".join(texts) if texts else content
    return content
