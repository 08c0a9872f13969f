"""Shared pieces of the differential scenarios: the registry and small helpers.

Scenario modules (``relay_diff_scenarios*.py``) register ``fn(nr, rec)`` callables here with
:func:`scenario`; ``nr`` is the implementation under test (``nemo_relay`` or
``wayline.relay``) and ``rec(key, value)`` records plain values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

SCENARIOS: dict[str, Callable[[Any, Any], None]] = {}
FLUSH: list[Callable[[], None]] = []
"""The implementation's ``subscribers.flush`` while a scenario runs (set by the runner)."""

A_REQUEST = {"model": "m1", "messages": [{"role": "user", "content": "hi"}]}
A_RESPONSE = {
    "id": "r1",
    "model": "m1",
    "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}


def scenario(fn: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """Register ``fn`` under its own name."""
    SCENARIOS[fn.__name__] = fn
    return fn


def _error(fn: Callable[[], Any]) -> str | None:
    try:
        fn()
    except Exception as exc:
        # The nearest builtin class: wayline raises documented subclasses (GuardrailRejected).
        return next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")
    return None


async def _provider(request: Any) -> Any:
    return A_RESPONSE


def _run(make: Callable[[], Any]) -> Any:
    """Await ``make()`` inside a fresh event loop (Relay's managed calls need a running loop)."""

    async def main() -> Any:
        result = await make()
        # Relay finishes publication (sanitizers, injectors) on this loop: let it drain before
        # asyncio.run() cancels what is still pending, so both sides see settled events.
        for flush in FLUSH:
            await asyncio.to_thread(flush)
        return result

    return asyncio.run(main())


def _tool(nr: Any) -> Callable[[Any], Any]:
    def tool(args: Any) -> Any:
        return nr.ToolExecutionResult({"echo": args})

    return tool
