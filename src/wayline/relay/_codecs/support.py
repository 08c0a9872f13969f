"""What the provider codecs share: body access, usage accounting and field-wise encoding.

Every built-in codec encodes the way Relay 0.10.4's do: ``encode(annotated, original)`` starts
from the original body and rewrites only the annotation fields that differ from
``decode(original)``, so ``encode(decode(request), request)`` reproduces the request exactly
and provider keys the annotation does not model survive an edit.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from wayline.relay._codecs.annotated import AnnotatedLLMRequest
from wayline.relay._scopes.datatypes import Json, LLMRequest

__all__ = [
    "FieldCodec",
    "body_of",
    "compact_json",
    "encode_fields",
    "floats",
    "parse_arguments",
    "plain_response",
    "present",
    "to_annotation",
]

FieldCodec = tuple[str, tuple[str, ...], Callable[[Any, dict[str, Any], dict[str, Any]], None]]
"""``(annotation field, raw keys it owns, writer(value, body, original body))``."""


def body_of(request: Any, codec: str) -> dict[str, Any]:
    """A deep copy of the request body (an ``LLMRequest``'s content or a mapping)."""
    content = request.content if isinstance(request, LLMRequest) else request
    if not isinstance(content, Mapping):
        raise TypeError(f"{codec}.decode needs an LLMRequest, not {type(request).__name__}")
    return copy.deepcopy(dict(content))


def to_annotation(annotated: Any, codec: str) -> AnnotatedLLMRequest:
    """``annotated`` itself, or an annotation rebuilt from its dict form."""
    if isinstance(annotated, Mapping):
        return AnnotatedLLMRequest.from_dict(annotated)
    if not isinstance(annotated, AnnotatedLLMRequest):
        raise TypeError(
            f"{codec}.encode needs an AnnotatedLLMRequest or a mapping, "
            f"not {type(annotated).__name__}"
        )
    return annotated


def encode_fields(
    annotated: AnnotatedLLMRequest,
    original: LLMRequest,
    base: AnnotatedLLMRequest,
    fields: tuple[FieldCodec, ...],
) -> LLMRequest:
    """``original`` with each changed annotation field's raw keys rewritten (see module doc)."""
    source = dict(original.content) if isinstance(original, LLMRequest) else {}
    body = copy.deepcopy(source)
    for name, keys, write in fields:
        value = getattr(annotated, name)
        if value == getattr(base, name):
            continue
        for key in keys:
            body.pop(key, None)
        if name == "extra":
            for key in base.extra:
                body.pop(key, None)
        if value is not None:
            write(copy.deepcopy(value), body, source)
    headers = original.headers if isinstance(original, LLMRequest) else {}
    return LLMRequest(headers, body)


def present(**values: Any) -> dict[str, Any]:
    """The keyword arguments whose value is not ``None``."""
    return {k: v for k, v in values.items() if v is not None}


def floats(params: dict[str, Any], *names: str) -> dict[str, Any]:
    """``params`` with the named numeric values as floats (Relay's typed sampling params)."""
    for name in names:
        value = params.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            params[name] = float(value)
    return params


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments: a JSON string parsed (``{}`` when blank), else unchanged."""
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError:
            return raw
    return raw


def compact_json(value: Any) -> str:
    """``value`` as compact JSON text (how Relay writes tool-call arguments)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def plain_response(response: Json, codec: str) -> Mapping[str, Any]:
    """A response as a JSON object (pydantic models dumped), or a clear error."""
    dump = getattr(response, "model_dump", None)
    data = dump(mode="json") if callable(dump) else response
    if not isinstance(data, Mapping):
        raise RuntimeError(
            f"internal error: {codec} response decode: expected a JSON object, "
            f"not {type(data).__name__}"
        )
    return data


def int_or_none(value: Any) -> int | None:
    """``value`` when it is an integer (not a bool)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def string_or_none(value: Any) -> str | None:
    """``value`` when it is a string."""
    return value if isinstance(value, str) else None


def function_tool(name: Any, description: Any, parameters: Any, **more: Any) -> dict[str, Any]:
    """An OpenAI-style function tool declaration (Relay's normalized tool shape)."""
    function = present(name=name, description=description, parameters=parameters)
    function.update(more)
    return {"type": "function", "function": function}


def native_tool(kind: Any, provider: str, value: Any) -> dict[str, Any]:
    """A provider-native tool kept verbatim under ``value``."""
    return {"type": "provider_native", "kind": kind, "provider": provider, "value": value}
