"""``nemo_relay.utils``: run a coroutine to completion from synchronous code."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` and return its result, keeping the caller's scope stack.

    Outside a running event loop it runs on a fresh loop on this thread; inside one (where
    blocking on the loop itself would deadlock) it runs on a helper thread in a copy of the
    caller's context, so ``get_scope_stack()`` there is the caller's stack. Blocks the caller.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    context = contextvars.copy_context()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = context.run(asyncio.run, coro)
        except BaseException as exc:  # re-raised on the calling thread
            box["error"] = exc

    helper = threading.Thread(target=run, name="wayline-relay-run-sync")
    helper.start()
    helper.join()
    if "error" in box:
        raise box["error"]
    result: T = box["value"]
    return result
