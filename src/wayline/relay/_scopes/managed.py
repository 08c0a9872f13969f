"""The managed span a callback runs in, as the parent that propagation captures.

While a managed tool or LLM call runs its callback (the tool, the provider, a stream's
source), Relay's ``capture_propagation_context()`` names that span as the parent, although
the span is not on the scope stack: ``scope.get_handle()`` still returns the enclosing scope,
and a scope pushed inside the callback is that scope's child (and is then what is captured).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

from wayline.relay._scopes import stack_ops as _scope

__all__ = ["ManagedSpan", "current_span", "running_in"]


class ManagedSpan(NamedTuple):
    """A running managed span: its uuid and root, and the scope on top when it began."""

    uuid: str
    root_uuid: str
    top_uuid: str


_span: ContextVar[ManagedSpan | None] = ContextVar("wayline_relay_managed_span", default=None)


@contextmanager
def running_in(uuid: str, root_uuid: str) -> Iterator[None]:
    """Run the block as the callback of the managed span ``uuid``."""
    token = _span.set(ManagedSpan(uuid, root_uuid, _scope.get_handle().uuid))
    try:
        yield
    finally:
        _span.reset(token)


def current_span() -> ManagedSpan | None:
    """The managed span to capture as parent, unless a scope was pushed inside its callback."""
    span = _span.get()
    if span is None or _scope.get_handle().uuid != span.top_uuid:
        return None
    return span
