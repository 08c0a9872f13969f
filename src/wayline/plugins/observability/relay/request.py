"""The provider request an llm start event carries, from a ``pre_api_request`` payload.

The host's sanitized ``request`` keeps a long conversation's first messages and cuts the
rest (or becomes a ``{"_truncated": True, ...}`` preview); the event needs the latest ones
(the ATIF user step's message is the last). :func:`request_body` rebuilds the body with
the raw trailing messages then.

OBSERVER helpers: nothing here raises for odd payloads.
"""

from __future__ import annotations

from typing import Any

from wayline.redaction.sanitize import (
    TRUNCATED_ITEMS_KEY,
    sanitize,
)

__all__ = ["request_body"]

# Trailing raw messages kept when the host's sanitized request lost its tail.
_TAIL_MESSAGES = 20


def _cut(items: Any) -> bool:
    """True when a message list is missing, empty or ends in the sanitizer's cut marker."""
    if not isinstance(items, list) or not items:
        return True
    last = items[-1]
    return not isinstance(last, dict) or TRUNCATED_ITEMS_KEY in last


def request_body(kw: dict[str, Any]) -> Any:
    """The provider request body of a ``pre_api_request`` payload, with its latest messages.

    The sanitized ``request`` (``{"method", "body"}`` in Hermes) drops the tail of a long
    conversation, or is replaced by a ``{"_truncated": True, ...}`` preview, once it passes
    the payload limit; the ATIF user step needs the last message. Then the raw
    ``request_messages`` are used: as many trailing messages as fit, behind a marker
    counting the ones left out. They are sanitized afresh each call: a host may rewrite its
    history in place (Hermes compresses context), so no earlier result is reused.
    """
    request = kw.get("request")
    body = request.get("body", request) if isinstance(request, dict) else request
    if (
        isinstance(body, dict)
        and not body.get("_truncated")
        and (
            not _cut(body.get("messages"))
            or not _cut(body.get("input"))
            or (isinstance(body.get("input"), str) and body["input"])
        )
    ):
        return body
    raw = kw.get("request_messages")
    if not isinstance(raw, list) or not raw:
        return body
    kept = sanitize(list(raw[-_TAIL_MESSAGES:]))
    if _cut(kept):
        kept = [sanitize(raw[-1])]
    omitted = len(raw) - len(kept)
    rebuilt = {
        k: v for k, v in (body if isinstance(body, dict) else {}).items() if k != "_truncated"
    }
    rebuilt.pop("preview", None)
    rebuilt.pop("original_type", None)
    rebuilt.setdefault("model", kw.get("model"))
    rebuilt["messages"] = ([{TRUNCATED_ITEMS_KEY: omitted}] if omitted else []) + kept
    return rebuilt
