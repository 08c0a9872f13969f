"""Run a callback's awaitable result to completion from synchronous code.

Relay accepts coroutine functions for injectors, sanitizers, guardrails and intercepts. Where
wayline calls them from synchronous code (event publication, ``execute_sync``, a worker
thread), the awaitable runs on a private event loop: on this thread when none is running here,
else on a short-lived helper thread (the awaitable must not depend on the caller's loop).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable
from typing import Any

__all__ = ["resolve"]


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def resolve(value: Any) -> Any:
    """``value`` itself, or the result of awaiting it when it is awaitable."""
    if not inspect.isawaitable(value):
        return value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(value))
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(_await(value))
        except BaseException as exc:  # re-raised on the calling thread
            box["error"] = exc

    helper = threading.Thread(target=run, name="wayline-relay-await")
    helper.start()
    helper.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def settle(value: Any) -> Any:
    """Async form: ``await`` ``value`` when it is awaitable, else return it."""
    if inspect.isawaitable(value):
        return await value
    return value
