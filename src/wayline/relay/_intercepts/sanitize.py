"""Tool and LLM sanitize guardrails (the payload half of nemo_relay ``guardrails``).

Sanitizers change only what is recorded on lifecycle events, never what the tool, the
provider or the caller sees. They run on the emitting thread in ``(priority, name)`` order,
sync or async, each on the previous one's output:

* tool request/response: ``fn(tool_name, payload) -> payload`` (start args / end result);
* LLM request: ``fn(request, context) -> LLMRequest | None``; ``None`` omits the start payload;
* LLM response: ``fn(response, context) -> Json | None``; ``None`` omits the end payload and
  its annotation.

They fail closed: a sanitizer that raises omits the payload and stops the chain.
"""

from __future__ import annotations

import copy
import inspect
import logging
from typing import Any, Literal

from wayline.relay._intercepts.awaiting import resolve, settle
from wayline.relay._intercepts.chains import Registry
from wayline.relay._scopes.datatypes import LLMRequest

__all__ = [
    "LlmCodecIdentity",
    "LlmSanitizeRequestContext",
    "LlmSanitizeResponseContext",
]

_log = logging.getLogger("wayline.relay")

TOOL_REQUEST = Registry("tool sanitize-request guardrail", "tool_sanitize_request_guardrail")
TOOL_RESPONSE = Registry("tool sanitize-response guardrail", "tool_sanitize_response_guardrail")
LLM_REQUEST = Registry("LLM sanitize-request guardrail", "llm_sanitize_request_guardrail")
LLM_RESPONSE = Registry("LLM sanitize-response guardrail", "llm_sanitize_response_guardrail")

CodecKind = Literal["none", "builtin", "runtime", "opaque"]


class LlmCodecIdentity:
    """Which codec a managed call used: ``kind`` and, for builtin/runtime codecs, ``id``."""

    __slots__ = ("_id", "_kind")

    def __init__(self, kind: CodecKind = "none", id: str | None = None) -> None:
        self._kind = kind
        self._id = id

    @property
    def kind(self) -> CodecKind:
        """``"none"``, ``"builtin"``, ``"runtime"`` or ``"opaque"``."""
        return self._kind

    @property
    def id(self) -> str | None:
        """The codec's id (``None`` for ``none``/``opaque``)."""
        return self._id


class _Context:
    __slots__ = ("_codec", "_resolved")

    def __init__(self, codec: object = None) -> None:
        api = getattr(codec, "api", None)
        if codec is None:
            self._codec = LlmCodecIdentity()
        elif isinstance(api, str):
            self._codec = LlmCodecIdentity("builtin", api)
        else:
            self._codec = LlmCodecIdentity("opaque")
        self._resolved = codec

    @property
    def codec(self) -> LlmCodecIdentity:
        """The identity of the codec active on the call."""
        return self._codec

    def resolve_codec(self) -> Any:
        """The in-process codec object, or ``None``."""
        return self._resolved


class LlmSanitizeRequestContext(_Context):
    """What an LLM sanitize-request guardrail gets besides the request."""


class LlmSanitizeResponseContext(_Context):
    """What an LLM sanitize-response guardrail gets besides the response."""


def require_payload_context(kind: str, fn: object) -> None:
    """Refuse an LLM sanitizer that cannot be called as ``fn(payload, context)`` (as Relay)."""
    try:
        signature = inspect.signature(fn)  # type: ignore[arg-type]
        signature.bind(None, None)
    except (TypeError, ValueError):
        raise TypeError(
            f"{kind} must be a callable accepting (payload, context), got {fn!r}"
        ) from None


def is_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is plain JSON data (what a sanitizer must return)."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if depth > 200:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(is_json(v, depth + 1) for v in value)
    return False


def _failed(entry_name: str, exc: Exception) -> None:
    _log.warning("sanitize guardrail %r failed; omitting the payload: %s", entry_name, exc)


def tool_payload(registry: Registry, name: str, payload: Any) -> Any:
    """``payload`` through the tool request or response sanitizers."""
    for entry in registry.chain:
        try:
            # A copy: sanitizers shape the record only, never what the tool receives.
            payload = resolve(entry.fn(name, copy.deepcopy(payload)))
            if not is_json(payload):
                raise TypeError(f"must return JSON data, not {type(payload).__name__}")
        except Exception as exc:
            _failed(entry.name, exc)
            return None
    return payload


def llm_request(request: LLMRequest, codec: object = None) -> LLMRequest | None:
    """``request`` through the LLM sanitize-request chain (``None``: omit the payload)."""
    current: LLMRequest | None = request
    for entry in LLM_REQUEST.chain:
        try:
            out = resolve(entry.fn(current, LlmSanitizeRequestContext(codec)))
            if out is not None and not isinstance(out, LLMRequest):
                raise TypeError(f"must return an LLMRequest or None, not {type(out).__name__}")
        except Exception as exc:
            _failed(entry.name, exc)
            return None
        if out is None:
            return None
        current = out
    return current


def llm_response(response: Any, codec: object = None) -> tuple[Any, bool]:
    """``(response, kept)`` through the LLM sanitize-response chain."""
    for entry in LLM_RESPONSE.chain:
        try:
            response = _json(resolve(entry.fn(response, LlmSanitizeResponseContext(codec))))
        except Exception as exc:
            _failed(entry.name, exc)
            return None, False
        if response is None:
            return None, False
    return response, True


async def llm_response_async(response: Any, codec: object = None) -> tuple[Any, bool]:
    """:func:`llm_response` awaiting coroutine sanitizers in the caller's task and loop."""
    for entry in LLM_RESPONSE.chain:
        try:
            response = _json(await settle(entry.fn(response, LlmSanitizeResponseContext(codec))))
        except Exception as exc:
            _failed(entry.name, exc)
            return None, False
        if response is None:
            return None, False
    return response, True


def _json(value: Any) -> Any:
    if not is_json(value):
        raise TypeError(f"must return JSON data, not {type(value).__name__}")
    return value
