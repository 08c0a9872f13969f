"""``nemo_relay.scope`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._scopes.stack_ops`.
"""

from __future__ import annotations

from wayline.relay._scopes.stack_ops import (
    close_detached,
    event,
    get_handle,
    metric,
    open_detached,
    pop,
    push,
    scope,
)

__all__ = [
    "close_detached",
    "event",
    "get_handle",
    "metric",
    "open_detached",
    "pop",
    "push",
    "scope",
]
