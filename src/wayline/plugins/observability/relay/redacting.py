"""Redaction for managed execution: the payloads relay records go through the sanitizer.

In managed (adaptive) mode the real provider request and tool call run inside relay's
execute spans, so relay records the raw request, response, arguments and result — the same
objects the call uses, which cannot be sanitized in place. The plugin's exporters (ATOF and
ATIF) therefore subscribe through :func:`redacting`, which hands them a copy of each event
whose ``data``, ``metadata`` and ``category_profile`` went through
:func:`wayline.redaction.sanitize.sanitize`. The observer-driven (unmanaged) path sanitizes
before emitting and needs none of this.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from wayline.redaction.sanitize import sanitize


def redacted(event: Any) -> Any:
    """A copy of a relay event with its payload fields sanitized (the original is untouched)."""
    clone = copy.copy(event)
    clone.data = sanitize(event.data) if event.data is not None else None
    clone.metadata = sanitize(event.metadata) if event.metadata is not None else None
    profile = event.category_profile
    clone.category_profile = sanitize(profile) if profile is not None else None
    clone._line = None  # the cached ATOF text of the original must not be reused
    clone._bytes = None
    return clone


def redacting(callback: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A relay subscriber (observer) that passes :func:`redacted` events to ``callback``."""

    def deliver(event: Any) -> Any:
        return callback(redacted(event))

    return deliver
