"""Cooperative CPU sharing for the hook worker process: it yields its CPU between pieces of work.

The worker runs observers in bursts (a batch of hooks, then the batch's ATIF mapping and
span lines). Only the worker process sets :data:`worker_yielder` (``hookchild.main``);
anywhere else :func:`cooperate` does nothing, so code that also runs in the agent's process
(the observers on the ``wayline-hooks`` thread, a fallback after the worker died) may call it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

__all__ = ["YIELD_S", "Yielder", "cooperate", "worker_yielder"]

YIELD_S = 0.0003
"""How long the worker runs before it offers its CPU to a waiting task.

The worker's batches are bursts of 10-30 ms. On the 2-vCPU VM of ``bench/`` (Linux 6.18,
EEVDF) an agent, tool or model-server thread that wakes up on the worker's CPU then waited
for the burst's slice even at nice 19; a ``sched_yield`` every 0.3 ms (a syscall when it
has nothing to do) lets it run at once. P3, paired rounds of the plugin arm with and
without: x0.972-0.991 (medians of 10; every 1 ms: x1.006)."""

_sched_yield = getattr(os, "sched_yield", None)


class Yielder:
    """Calls ``yield_cpu`` at most once per ``interval`` of ``clock`` (see :data:`YIELD_S`)."""

    __slots__ = ("_clock", "_interval", "_last", "_yield")

    def __init__(
        self,
        interval: float = YIELD_S,
        clock: Callable[[], float] = time.perf_counter,
        yield_cpu: Callable[[], Any] | None = _sched_yield,
    ) -> None:
        self._interval = interval
        self._clock = clock
        self._yield = yield_cpu
        self._last = clock()

    def tick(self) -> None:
        """Between two pieces of work: yield if ``interval`` passed since the last yield."""
        if self._yield is None:
            return
        now = self._clock()
        if now - self._last >= self._interval:
            self._yield()
            self._last = now


worker_yielder: Yielder | None = None
"""Set in the hook worker process (``hookchild.main``): what :func:`cooperate` ticks."""


def cooperate() -> None:
    """Between two pieces of an observer's work: in the hook worker process, offer the CPU
    if the process ran :data:`YIELD_S` since it last did; anywhere else, nothing."""
    yielder = worker_yielder
    if yielder is not None:
        yielder.tick()
