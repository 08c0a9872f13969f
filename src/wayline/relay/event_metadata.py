"""``nemo_relay.event_metadata`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._scopes.event_metadata`.
"""

from __future__ import annotations

from wayline.relay._scopes.event_metadata import (
    deregister_injector,
    register_injector,
)

__all__ = [
    "deregister_injector",
    "register_injector",
]
