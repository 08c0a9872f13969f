"""The ``ScopeStack`` object (nemo_relay's name) and the context variable that binds one.

A stack is identified by its implicit root scope. The current context's top scope lives in
``wayline.relay._scopes.stack_ops._top``; the bound :class:`ScopeStack` mirrors it (``top``)
so that a stack handed to another thread (``set_thread_scope_stack``) continues from where its
owner is.
Asyncio tasks copy their creator's context: they keep their own top (wayline isolates tasks),
and ``fork_asyncio_context`` binds a child task to a fresh stack, as Relay does.
"""

from __future__ import annotations

from contextvars import ContextVar

from wayline.relay._scopes.handles import ScopeHandle

__all__ = ["ScopeStack"]


class ScopeStack:
    """An isolated scope stack (``create_scope_stack``, ``get_scope_stack``, …)."""

    __slots__ = ("root", "top")

    def __init__(self, root: ScopeHandle, top: ScopeHandle | None = None) -> None:
        self.root = root
        self.top = root if top is None else top

    def __repr__(self) -> str:
        return "<ScopeStack>"  # as Relay: the root and top are not part of its identity


_stack: ContextVar[ScopeStack | None] = ContextVar("wayline_relay_scope_stack", default=None)
