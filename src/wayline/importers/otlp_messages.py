"""The messages a model-call span carries, in either convention, as one shape.

GenAI semantic conventions put them in ``gen_ai.input.messages`` / ``gen_ai.output.messages``
(JSON: ``{"role", "parts": [{"type": "text", "content"}, {"type": "tool_call", "id", "name",
"arguments"}, {"type": "tool_call_response", "id", "response"}]}``); OpenInference flattens
them into ``llm.input_messages.{i}.message.{role, content, contents.{k}.message_content.text,
tool_calls.{j}.tool_call.{id, function.name, function.arguments}, tool_call_id}`` (and the same
under ``llm.output_messages``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wayline.relay.atif.payloads import JsonDict

__all__ = ["Message", "input_messages", "output_messages"]


@dataclass
class Message:
    """One chat message: its role, text, the tool calls it makes and the call it answers."""

    role: str
    text: str = ""
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)  # id, name, args
    answers: str | None = None  # a tool message: the id of the call it is the result of


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _genai(value: Any) -> list[Message] | None:
    messages = _decoded(value)
    if not isinstance(messages, list):
        return None
    out: list[Message] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        message = Message(str(raw.get("role") or ""))
        texts: list[str] = []
        parts = raw.get("parts")
        if not isinstance(parts, list):
            parts = [{"type": "text", "content": raw.get("content")}]
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "tool_call":
                call_id = part.get("id")
                name = str(part.get("name") or "")
                message.calls.append(
                    (call_id if isinstance(call_id, str) else None, name, part.get("arguments"))
                )
            elif kind == "tool_call_response":
                if isinstance(part.get("id"), str):
                    message.answers = part["id"]
                texts.append(_text(part.get("response")))
            elif isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(kind, str):
                texts.append(f"[{kind}]")
        message.text = "\n".join(texts)
        out.append(message)
    return out


def _flattened(attributes: JsonDict, prefix: str) -> list[Message] | None:
    out: list[Message] = []
    index = 0
    while f"{prefix}.{index}.message.role" in attributes:
        at = f"{prefix}.{index}.message"
        message = Message(str(attributes[f"{at}.role"]))
        content = attributes.get(f"{at}.content")
        if content is None:
            parts, k = [], 0
            while f"{at}.contents.{k}.message_content.type" in attributes:
                text = attributes.get(f"{at}.contents.{k}.message_content.text")
                if isinstance(text, str):
                    parts.append(text)
                k += 1
            content = "\n".join(parts) if parts else None
        message.text = _text(content)
        j = 0
        while f"{at}.tool_calls.{j}.tool_call.function.name" in attributes:
            call = f"{at}.tool_calls.{j}.tool_call"
            call_id = attributes.get(f"{call}.id")
            message.calls.append(
                (
                    call_id if isinstance(call_id, str) else None,
                    str(attributes[f"{call}.function.name"]),
                    attributes.get(f"{call}.function.arguments"),
                )
            )
            j += 1
        answers = attributes.get(f"{at}.tool_call_id")
        message.answers = answers if isinstance(answers, str) else None
        out.append(message)
        index += 1
    return out if index else None


def input_messages(attributes: JsonDict) -> list[Message] | None:
    """The messages a model call was sent, or None when the span records none."""
    found = _genai(attributes.get("gen_ai.input.messages"))
    return found if found is not None else _flattened(attributes, "llm.input_messages")


def output_messages(attributes: JsonDict) -> list[Message] | None:
    """The messages a model call returned, or None when the span records none."""
    found = _genai(attributes.get("gen_ai.output.messages"))
    return found if found is not None else _flattened(attributes, "llm.output_messages")
