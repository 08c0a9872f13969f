"""``nemo_relay._native``: the names code written for Relay imports from its native module.

Relay's public classes and functions live in a compiled module that its Python package
re-exports; wayline has no native layer, so this module re-exports the same objects as
``wayline.relay`` plus the thread-binding helpers and the registration listing.
"""

from __future__ import annotations

from wayline.relay import *  # noqa: F403  (the same objects as the top level)
from wayline.relay import __all__ as _top_level
from wayline.relay._intercepts.runtime_registrations import list_runtime_registrations
from wayline.relay._scopes.bindings import (
    ThreadScopeStackBinding as _ThreadScopeStackBinding,
)
from wayline.relay._scopes.bindings import (
    capture_thread_scope_stack,
    restore_thread_scope_stack,
)

__all__ = [
    *_top_level,
    "_ThreadScopeStackBinding",
    "capture_thread_scope_stack",
    "list_runtime_registrations",
    "restore_thread_scope_stack",
]
