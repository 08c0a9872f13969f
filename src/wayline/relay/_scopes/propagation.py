"""Scope-stack isolation and causal propagation with the nemo_relay top-level names.

``get_scope_stack``/``create_scope_stack``/``use_scope_stack``/``set_thread_scope_stack``/
``propagate_scope_to_thread`` move a :class:`~wayline.relay._scopes.stacks.ScopeStack` between
contexts and threads; ``capture_propagation_context`` and
``create_scope_stack_from_propagation`` carry the current parent (and propagation root) over
any boundary as a :class:`PropagationContext`; ``fork_asyncio_context`` gives a child task its
own stack parented to the current scope.

Difference from Relay 0.10.4, by design: a stack handed to a worker thread is a view of the
owner's top when the worker installs it; wayline's asyncio tasks never share pushes even
without ``fork_asyncio_context``.
"""

from __future__ import annotations

import contextvars
import json
import uuid as _uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from wayline.relay._scopes import stack_ops as _scope
from wayline.relay._scopes.managed import current_span
from wayline.relay._scopes.stacks import ScopeStack, _stack

__all__ = [
    "PropagationContext",
    "ScopeStack",
    "capture_propagation_context",
    "capture_propagation_context_with_root",
    "capture_rootless_propagation_context",
    "capture_traceparent",
    "create_scope_stack",
    "create_scope_stack_from_propagation",
    "fork_asyncio_context",
    "get_scope_stack",
    "propagate_scope_to_thread",
    "scope_stack_active",
    "set_thread_scope_stack",
    "use_scope_stack",
]

_VERSION = 1


def _check_uuid(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"invalid argument: propagation context {field} must be a UUID string")
    try:
        _uuid.UUID(value)
    except ValueError:
        raise ValueError(
            f"invalid argument: propagation context {field} is not a UUID: {value!r}"
        ) from None
    return value


class PropagationContext:
    """Transport-neutral causal context: the parent scope (and root) to continue under."""

    __slots__ = ("_parent", "_root", "_traceparent", "_tracestate", "_version")

    def __init__(
        self,
        parent_uuid: str,
        root_uuid: str | None = None,
        version: int = _VERSION,
        traceparent: str | None = None,
        tracestate: str | None = None,
    ) -> None:
        if version != _VERSION:
            raise ValueError(
                f"invalid argument: unsupported propagation context version {version}; "
                f"expected {_VERSION}"
            )
        self._parent = _check_uuid(parent_uuid, "parent_uuid")
        self._root = None if root_uuid is None else _check_uuid(root_uuid, "root_uuid")
        self._version = version
        self._traceparent = traceparent
        self._tracestate = tracestate

    @property
    def version(self) -> int:
        """Wire format version (1)."""
        return self._version

    @property
    def parent_uuid(self) -> str:
        """The scope new work is parented to."""
        return self._parent

    @property
    def root_uuid(self) -> str | None:
        """The propagation root (``None`` for a rootless context)."""
        return self._root

    @property
    def traceparent(self) -> str | None:
        """The W3C ``traceparent`` captured with the context, if any."""
        return self._traceparent

    @property
    def tracestate(self) -> str | None:
        """The W3C ``tracestate`` captured with the context, if any."""
        return self._tracestate

    def to_json(self) -> str:
        """The Relay JSON wire form (absent fields omitted)."""
        out: dict[str, Any] = {"version": self._version}
        if self._root is not None:
            out["root_uuid"] = self._root
        out["parent_uuid"] = self._parent
        if self._traceparent is not None:
            out["traceparent"] = self._traceparent
        if self._tracestate is not None:
            out["tracestate"] = self._tracestate
        return json.dumps(out, separators=(",", ":"))

    def to_traceparent(self) -> str:
        """``00-<root uuid hex>-<last 16 hex of the parent uuid>-01``; rootless raises."""
        if self._root is None:
            raise ValueError(
                "invalid argument: rootless propagation context cannot be converted to traceparent"
            )
        return f"00-{self._root.replace('-', '')}-{self._parent.replace('-', '')[-16:]}-01"

    @staticmethod
    def from_json(value: str) -> PropagationContext:
        """Parse and validate the wire form; ``ValueError`` naming the bad field."""
        try:
            data = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"invalid argument: invalid propagation context JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("invalid argument: invalid propagation context JSON: not an object")
        for required in ("version", "parent_uuid"):
            if required not in data:
                raise ValueError(
                    f"invalid argument: invalid propagation context JSON: missing field "
                    f"`{required}`"
                )
        version = data["version"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise ValueError("invalid argument: propagation context version must be an integer")
        return PropagationContext(
            data["parent_uuid"],
            data.get("root_uuid"),
            version,
            data.get("traceparent"),
            data.get("tracestate"),
        )

    def __repr__(self) -> str:
        return f"PropagationContext(parent_uuid={self._parent!r}, root_uuid={self._root!r})"


def get_scope_stack() -> ScopeStack:
    """The current context's stack, created (with a new implicit root) when there is none."""
    _scope.get_handle()
    stack = _stack.get()
    assert stack is not None  # get_handle binds one
    return stack


def scope_stack_active() -> bool:
    """Whether the current context already has a stack (never creates one)."""
    return _stack.get() is not None


def propagate_scope_to_thread() -> ScopeStack:
    """The current stack, to pass to ``set_thread_scope_stack`` in a worker thread.

    Raises ``RuntimeError`` when the current context has no stack yet.
    """
    stack = _stack.get()
    top = _scope._top.get()
    if stack is None:
        raise RuntimeError(
            "no active scope stack in current context; call nemo_relay.get_scope_stack() "
            "or nemo_relay.scope.push() first"
        )
    if top is not None:
        stack.top = top
    return stack


def create_scope_stack() -> ScopeStack:
    """A fresh stack with its own implicit root, installed nowhere."""
    return ScopeStack(_scope.make_root())


def set_thread_scope_stack(stack: ScopeStack) -> None:
    """Make ``stack`` current for this thread (continuing from its current top)."""
    if not isinstance(stack, ScopeStack):
        raise TypeError(f"expected a ScopeStack, not {type(stack).__name__}")
    _stack.set(stack)
    _scope._top.set(stack.top)


@contextmanager
def use_scope_stack(stack: ScopeStack) -> Iterator[ScopeStack]:
    """``with use_scope_stack(stack):`` makes ``stack`` current for the block, then restores."""
    if not isinstance(stack, ScopeStack):
        raise TypeError(f"expected a ScopeStack, not {type(stack).__name__}")
    stack_token = _stack.set(stack)
    top_token = _scope._top.set(stack.top)
    try:
        yield stack
    finally:
        _scope._top.reset(top_token)
        _stack.reset(stack_token)


def _parent() -> tuple[str, str]:
    """The uuid and root to continue under: a running managed span's, else the top scope's."""
    span = current_span()
    if span is not None:
        return span.uuid, span.root_uuid
    top = _scope.get_handle()
    return top.uuid, top.propagation_root_uuid


def _capture(root_uuid: str | None) -> PropagationContext:
    parent = _parent()[0]
    context = PropagationContext(parent, root_uuid)
    if root_uuid is None:
        return context
    return PropagationContext(parent, root_uuid, traceparent=context.to_traceparent())


def capture_propagation_context() -> PropagationContext:
    """The current parent and propagation root (with their W3C traceparent).

    Inside a managed tool or LLM callback the parent is that call's span (as in Relay).
    """
    return _capture(_parent()[1])


def capture_rootless_propagation_context() -> PropagationContext:
    """The current parent without a root (the receiver keeps its own session root)."""
    return _capture(None)


def capture_propagation_context_with_root(root_uuid: str | None) -> PropagationContext:
    """The current parent with an explicit application root (``None``: rootless)."""
    return _capture(root_uuid)


def capture_traceparent() -> str:
    """The current context as a W3C ``traceparent`` (trace id: the propagation root)."""
    return capture_propagation_context().to_traceparent()


def create_scope_stack_from_propagation(context: PropagationContext) -> ScopeStack:
    """A new stack whose scopes are children of ``context.parent_uuid`` (same root).

    As in Relay, the parent's scope-local registrations stay with the parent's own stack.
    """
    if not isinstance(context, PropagationContext):
        raise TypeError(f"expected a PropagationContext, not {type(context).__name__}")
    return ScopeStack(_scope.make_root(context.parent_uuid, context.root_uuid))


def fork_asyncio_context() -> contextvars.Context:
    """A copy of the current context bound to a new stack parented to the current scope.

    Pass it to ``asyncio.create_task(..., context=...)`` so a child task never shares a
    stack with its siblings; scope-local registrations are not transferred.
    """
    stack = create_scope_stack_from_propagation(capture_propagation_context())
    child = contextvars.copy_context()
    child.run(_stack.set, stack)
    child.run(_scope._top.set, stack.top)
    return child
