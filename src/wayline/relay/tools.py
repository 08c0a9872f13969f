"""``nemo_relay.tools`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._calls.tools`.
"""

from __future__ import annotations

from wayline.relay._calls.tools import (
    call,
    call_end,
    conditional_execution,
    execute,
    execute_sync,
    request_intercepts,
)

__all__ = [
    "call",
    "call_end",
    "conditional_execution",
    "execute",
    "execute_sync",
    "request_intercepts",
]
