"""Lanes: where a provider's model requests run, each on the thread that makes it.

A lane is an asyncio loop with an SDK async client bound to it. A call takes an idle lane,
runs its request to the end on the calling thread (``run_until_complete``) and gives the lane
back, so calls from many threads (agents, delegated children) run side by side and none
waits for a loop shared with the others. The loop is still what makes a request cancellable:
another thread cancels its task, which closes the HTTP response and its connection, so the
server sees the client go away; a blocking request on a sync client could only be abandoned.

A provider's lanes form a pool (last in, first out), so a provider used by one thread at a
time keeps using one lane and its keep-alive connection; it grows to the most calls that ran
at once and shrinks only when the provider is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import ssl
import threading
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from wayline.runtime.cancel import CancelEvent, on_cancel

__all__ = ["ClientFactory", "Lane", "LanePool", "verify_context"]

log = logging.getLogger("wayline.runtime")

Attempt = Callable[[Any], Coroutine[Any, Any, Any]]


class ClientFactory:
    """Builds the SDK's async client for each new lane.

    Every client verifies TLS as httpx's default client does (``SSL_CERT_FILE``, else
    ``SSL_CERT_DIR``, else certifi's bundle), with one context per trust store in the
    process (:func:`verify_context`). With ``transport`` (``ProviderConfig.transport``,
    shared by every lane's client, so it must not hold resources of one event loop)
    requests go through it instead of the network, and no TLS context is used.
    """

    def __init__(self, base_url: str, api_key: str, timeout: float, transport: Any = None) -> None:
        self._base_url = base_url
        self._api_key = api_key
        self._timeout = timeout
        self._transport = transport

    def __call__(self) -> Any:
        """A new ``openai.AsyncOpenAI`` (SDK retries off: the agent loop owns them)."""
        import openai

        if self._transport is not None:
            http_client = openai.DefaultAsyncHttpxClient(transport=self._transport)
        else:
            http_client = openai.DefaultAsyncHttpxClient(verify=verify_context())
        return openai.AsyncOpenAI(
            base_url=self._base_url,
            api_key=self._api_key,
            max_retries=0,
            timeout=self._timeout,
            http_client=http_client,
        )


def verify_context() -> ssl.SSLContext:
    """The TLS context that verifies servers against the trust store the environment names
    now (``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle, else the system's).

    Building one parses the whole CA bundle, which costs more CPU than the rest of an
    agent's construction, so every provider of the process shares the one built for the
    same store. Nothing changes a context once built (OpenSSL contexts are safe to share
    between threads), and a different ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` gets its own.
    """
    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = None if cafile else os.environ.get("SSL_CERT_DIR") or None
    return _context_for(cafile, capath)


@functools.lru_cache(maxsize=8)
def _context_for(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    try:
        import certifi
    except ImportError:  # httpx brings certifi; without it, the system's store
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


def _loop_runs_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class Lane:
    """An event loop and a client bound to it; runs one attempt at a time."""

    def __init__(self, client: Any, epoch: int) -> None:
        self.client = client
        self.epoch = epoch
        self.loop = asyncio.new_event_loop()
        # False once something other than the attempt's own outcome (Ctrl-C) broke into the
        # loop: such a lane is closed, not reused.
        self.reusable = True
        self._task: asyncio.Task[Any] | None = None

    def run(self, attempt: Attempt, cancel: threading.Event | None) -> Any:
        """Run ``attempt(client)`` to its end on this thread and return its result.

        Setting ``cancel`` (from any thread) cancels the attempt's task: this raises
        ``asyncio.CancelledError`` once its connection is closed. A thread that already runs
        an event loop (a blocking call made from async code) cannot run another, so there the
        attempt runs on a helper thread while this one waits.
        """
        if not _loop_runs_here():
            return self._run(attempt, cancel)
        # The helper's own event, set by the caller's cancel or by an interrupted wait; it
        # stops the attempt even when the helper has not started it yet.
        stop = CancelEvent()
        unlink = on_cancel(cancel, stop.set)
        outcome: list[tuple[bool, Any]] = []

        def target() -> None:
            try:
                outcome.append((True, self._run(attempt, stop)))
            except BaseException as exc:  # handed to the waiting thread
                outcome.append((False, exc))

        helper = threading.Thread(target=target, name="wayline-provider-call", daemon=True)
        helper.start()
        try:
            helper.join()
        except BaseException:  # interrupted while waiting (Ctrl-C): the request goes too
            stop.set()
            helper.join()
            raise
        finally:
            unlink()
        ok, value = outcome[0]
        if ok:
            return value
        raise value

    def _run(self, attempt: Attempt, cancel: threading.Event | None) -> Any:
        task = self.loop.create_task(attempt(self.client))
        self._task = task
        # Bound to this task, not to the lane: a cancel that arrives after the lane moved on
        # to another caller's request must not cancel that one.
        stop_waiting = on_cancel(cancel, partial(self._cancel_soon, task))
        try:
            return self.loop.run_until_complete(task)
        except BaseException as exc:
            # Not reusable until settled: a second Ctrl-C may break into the settling too.
            self.reusable = False
            self._settle(task)
            self.reusable = isinstance(exc, (Exception, asyncio.CancelledError))
            raise
        finally:
            stop_waiting()
            self._task = None

    def _settle(self, task: asyncio.Task[Any]) -> None:
        """End ``task`` if it still runs (the loop was interrupted), then let the loop run the
        callbacks its end queued: a closed transport closes its socket on the next pass, and
        the server should see the client go now, not when the lane is next used."""
        if not task.done():
            task.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            self.loop.run_until_complete(_settled(task))

    def _cancel_soon(self, task: asyncio.Task[Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing runs any more
            self.loop.call_soon_threadsafe(task.cancel)

    def interrupt(self) -> None:
        """Cancel the attempt running now, if any; from any thread."""
        task = self._task
        if task is not None:
            self._cancel_soon(task)

    def close(self) -> None:
        """Close the client's connections, then the loop; for an idle lane only."""
        if self.loop.is_closed():
            return
        if not _loop_runs_here():
            self._close()
            return
        helper = threading.Thread(target=self._close, name="wayline-provider-close", daemon=True)
        helper.start()
        helper.join(timeout=5)

    def _close(self) -> None:
        try:
            self.loop.run_until_complete(self.client.close())
        except Exception:  # a connection that will not close cleanly is dropped anyway
            log.debug("closing a provider client failed", exc_info=True)
        finally:
            self.loop.close()


async def _settled(task: asyncio.Task[Any]) -> None:
    await asyncio.wait([task])
    await asyncio.sleep(0)


class LanePool:
    """A provider's lanes: idle ones reused last in, first out; thread-safe."""

    def __init__(self, new_client: Callable[[], Any]) -> None:
        self._new_client = new_client
        self._lock = threading.Lock()
        self._idle: list[Lane] = []
        self._busy: set[Lane] = set()
        self._epoch = 0

    @property
    def idle_count(self) -> int:
        """How many lanes wait for a call (each with its client built)."""
        with self._lock:
            return len(self._idle)

    def take(self) -> Lane:
        """An idle lane, or a new one (its client is built outside the lock)."""
        with self._lock:
            lane = self._idle.pop() if self._idle else None
            epoch = self._epoch
        if lane is None:
            lane = Lane(self._new_client(), epoch)
        with self._lock:
            self._busy.add(lane)
        return lane

    def give(self, lane: Lane) -> None:
        """Return ``lane`` after a call; one that is broken or outlived a :meth:`close` is
        closed instead."""
        with self._lock:
            self._busy.discard(lane)
            keep = lane.reusable and lane.epoch == self._epoch
            if keep:
                self._idle.append(lane)
        if not keep:
            lane.close()

    def close(self) -> None:
        """Cancel the calls in flight and close the idle lanes; idempotent. Lanes taken
        later are new ones."""
        with self._lock:
            idle, self._idle = self._idle, []
            busy = list(self._busy)
            self._epoch += 1
        for lane in busy:
            lane.interrupt()
        for lane in idle:
            lane.close()
