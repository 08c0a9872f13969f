"""A thread's scope-stack binding as one value: capture it, restore it, set it like a ContextVar.

The current stack and the current top of that stack are two context variables
(:mod:`wayline.relay._scopes.stacks`, :mod:`wayline.relay.scope`); code written for Relay treats the
binding as one thing (``_native.capture_thread_scope_stack``, ``nemo_relay._scope_stack_var``),
so these helpers move both together.
"""

from __future__ import annotations

from contextvars import Token
from dataclasses import dataclass

from wayline.relay._scopes import stack_ops as _scope
from wayline.relay._scopes.handles import ScopeHandle
from wayline.relay._scopes.stacks import ScopeStack, _stack

__all__ = [
    "ScopeStackVar",
    "ThreadScopeStackBinding",
    "capture_thread_scope_stack",
    "restore_thread_scope_stack",
]


@dataclass(frozen=True)
class ThreadScopeStackBinding:
    """The stack and top bound in the current context when captured."""

    stack: ScopeStack | None
    top: ScopeHandle | None


def capture_thread_scope_stack() -> ThreadScopeStackBinding:
    """The current binding, to hand to :func:`restore_thread_scope_stack` later."""
    return ThreadScopeStackBinding(_stack.get(), _scope._top.get())


def restore_thread_scope_stack(binding: ThreadScopeStackBinding) -> None:
    """Bind the captured stack and top again in the current context."""
    if not isinstance(binding, ThreadScopeStackBinding):
        raise TypeError(f"expected a captured binding, not {type(binding).__name__}")
    _stack.set(binding.stack)
    _scope._top.set(binding.top)


@dataclass(frozen=True)
class _StackToken:
    stack: Token[ScopeStack | None]
    top: Token[ScopeHandle | None]


class ScopeStackVar:
    """``nemo_relay._scope_stack_var``: ``set``/``get``/``reset`` like a ``ContextVar``."""

    name = "nemo_relay_scope_stack"

    def get(self, default: ScopeStack | None = None) -> ScopeStack | None:
        """The stack bound in the current context, else ``default``."""
        stack = _stack.get()
        return default if stack is None else stack

    def set(self, stack: ScopeStack) -> _StackToken:
        """Bind ``stack`` (continuing from its top) in the current context."""
        if not isinstance(stack, ScopeStack):
            raise TypeError(f"expected a ScopeStack, not {type(stack).__name__}")
        return _StackToken(_stack.set(stack), _scope._top.set(stack.top))

    def reset(self, token: _StackToken) -> None:
        """Restore the binding that ``set`` replaced."""
        _scope._top.reset(token.top)
        _stack.reset(token.stack)
