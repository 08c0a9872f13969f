"""``nemo_relay.subscribers`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._scopes.subscribers`.
"""

from __future__ import annotations

from wayline.relay._scopes.subscribers import (
    deregister,
    flush,
    flush_async,
    register,
    registered,
)

__all__ = [
    "deregister",
    "flush",
    "flush_async",
    "register",
    "registered",
]
