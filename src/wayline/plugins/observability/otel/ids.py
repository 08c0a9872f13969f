"""Span and trace ids derived from what a span stands for, so every record of a session agrees.

The live plugin, ``wayline export otlp`` of the session's ATOF and of its ATIF all name a
span by the same key: its session and what it is in that session (the n-th turn's root and
llm span, that turn's m-th API attempt, a tool call by its id, a delegation by the child's
session, an approval by its call). The ids are a hash of that key, so a backend that stores
spans by id keeps each span once, whichever mix of the three reached it. A span started
without a key (none of the above) gets random ids, as the SDK's default generator gives.
"""

from __future__ import annotations

import hashlib
import threading

from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

__all__ = ["KeyedIds"]


class KeyedIds(IdGenerator):
    """The SDK's id generator, keyed per span start by :meth:`starting` (thread-safe)."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._random = RandomIdGenerator()

    def starting(self, key: str | None) -> None:
        """The key of the span this thread starts next (``None``: random ids)."""
        self._local.key = key

    def _keyed(self, kind: str, size: int) -> int | None:
        key = getattr(self._local, "key", None)
        if key is None:
            return None
        digest = hashlib.sha256(f"{kind}\x00{key}".encode()).digest()
        return int.from_bytes(digest[:size], "big") or 1  # zero is an invalid id

    def generate_span_id(self) -> int:
        """The span id of the keyed span being started, else a random one."""
        keyed = self._keyed("span", 8)
        return self._random.generate_span_id() if keyed is None else keyed

    def generate_trace_id(self) -> int:
        """The trace id of the keyed root being started, else a random one."""
        keyed = self._keyed("trace", 16)
        return self._random.generate_trace_id() if keyed is None else keyed
