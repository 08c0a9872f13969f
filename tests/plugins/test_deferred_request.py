"""Observers that take a Deferred ``request`` sanitize only what they use of it.

The hook worker hands ``accepts_deferred`` callbacks the payload's Deferred values as they
are. Relay's llm start event replaces a conversation longer than the sanitizer keeps with
its raw tail, and OpenTelemetry's api span reads only the request's parameters (without
history capture): neither walks the conversation then, and both produce what they produced
from the eagerly sanitized request.
"""

from __future__ import annotations

from typing import Any

from wayline.contract.deferred import Deferred
from wayline.contract.sanitize import DEFAULT_MAX_SEQUENCE, sanitize
from wayline.plugins.observability.hookqueue import HookQueue
from wayline.plugins.observability.otel.attributes import (
    Cleaner,
    api_start_attrs,
    sanitized_request,
)
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.plugins.observability.relay import request as relay_request

SECRET = "sk-" + "Zq9x" * 10


def _payload(count: int) -> dict[str, Any]:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} {SECRET}"}
        for i in range(count)
    ]
    raw = {
        "method": "POST",
        "body": {
            "model": "m",
            "messages": messages,
            "tools": [{"type": "function", "function": {"name": "read_file"}}],
            "max_tokens": 64,
            "temperature": 0.5,
            "api_key": "k-123",
        },
    }
    return {"session_id": "s", "request_messages": list(messages), "request": Deferred(raw, 3)}


def _eager(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "request": sanitize(payload["request"].raw)}


def test_relay_leaves_a_long_conversation_unsanitized_and_builds_the_same_request() -> None:
    """Past DEFAULT_MAX_SEQUENCE messages the relay request (body keys in order, raw tail,
    secrets redacted) equals the one built from the eager request, without resolving it."""
    payload = _payload(DEFAULT_MAX_SEQUENCE + 30)
    lazy = {**payload, "request": relay_request.sanitized_request(payload)}
    assert payload["request"].resolved is False
    expected = relay_request.request_body(_eager(payload))
    built = relay_request.request_body(lazy)
    assert built == expected and list(built) == list(expected)
    assert built["messages"][0] == {"_truncated_items": DEFAULT_MAX_SEQUENCE + 10}
    assert SECRET not in repr(built) and built["api_key"] != "k-123"


def test_relay_resolves_a_conversation_the_sanitizer_keeps() -> None:
    """A short conversation's Deferred request is resolved whole (its messages are used)."""
    payload = _payload(12)
    lazy = {**payload, "request": relay_request.sanitized_request(payload)}
    assert payload["request"].resolved is True
    assert relay_request.request_body(lazy) == relay_request.request_body(_eager(payload))


def test_otel_reads_only_the_parameters_of_a_deferred_request() -> None:
    """Without history capture the api span's start attributes come from the sanitized
    parameters alone (the Deferred stays unresolved) and equal the eager ones."""
    cleaner = Cleaner(OtelSettings())
    payload = _payload(DEFAULT_MAX_SEQUENCE + 30)
    lazy = {**payload, "request": sanitized_request(cleaner, payload["request"])}
    assert payload["request"].resolved is False
    attrs = api_start_attrs(cleaner, lazy)
    assert attrs == api_start_attrs(cleaner, _eager(payload))
    assert attrs["gen_ai.request.temperature"] == 0.5
    assert "k-123" not in attrs["llm.invocation_parameters"]


def test_otel_resolves_the_request_when_it_captures_history() -> None:
    """With history capture the whole request is resolved (the messages become input.value)."""
    cleaner = Cleaner(OtelSettings(capture_conversation_history=True))
    payload = _payload(20)
    lazy = {**payload, "request": sanitized_request(cleaner, payload["request"])}
    assert payload["request"].resolved is True
    assert api_start_attrs(cleaner, lazy) == api_start_attrs(cleaner, _eager(payload))


def test_worker_hands_deferred_values_only_to_callbacks_that_accept_them() -> None:
    """HookQueue.run resolves a payload's Deferred for a plain callback and passes it as
    is to one marked ``accepts_deferred``."""
    seen: dict[str, Any] = {}

    def plain(**kw: Any) -> None:
        seen["plain"] = kw["request"]

    def lazy(**kw: Any) -> None:
        seen["lazy"] = kw["request"]

    lazy.accepts_deferred = True  # type: ignore[attr-defined]
    queue = HookQueue(label="test/deferred-callbacks")
    raw = {"method": "POST", "body": {"messages": [{"content": SECRET}]}}
    queue.put("pre_api_request", lazy, {"request": Deferred(raw, 3)})
    queue.put("pre_api_request", plain, {"request": Deferred(raw, 3)})
    assert queue.close(5.0)
    assert type(seen["lazy"]) is Deferred and seen["lazy"].resolved is False
    assert seen["plain"] == sanitize(raw)
