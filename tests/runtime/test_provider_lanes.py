"""Provider calls run on their calling threads (lanes), side by side, each cancellable alone.

The model hangs for a minute; each test has a much shorter pytest timeout, so a call that
waited for the hang instead of being cancelled fails the test. Overlap is shown by the
server holding every request at once, never by a clock.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from wayline.runtime.cancel import CancelEvent, TurnInterrupted
from wayline.runtime.provider import Provider, ProviderConfig
from wayline.testing import ScriptedServer

pytestmark = pytest.mark.timeout(30)

HANG = 60.0
SCRIPT: dict[str, Any] = {
    "default": {"content": "too late", "delay": HANG},
    "rules": [{"match": {"last_user_contains": "quick"}, "respond": {"content": "fast"}}],
}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """Answers "quick" at once and anything else after a minute."""
    with ScriptedServer(SCRIPT) as srv:
        yield srv


def _request(provider: Provider, text: str) -> dict[str, Any]:
    return provider.build_request([{"role": "user", "content": text}], [])


class Caller(threading.Thread):
    """One thread making one call; keeps what it got."""

    def __init__(self, provider: Provider, text: str) -> None:
        super().__init__(daemon=True)
        self.provider, self.text = provider, text
        self.cancel = CancelEvent()
        self.outcome: object = None

    def run(self) -> None:
        try:
            self.outcome = self.provider.call(_request(self.provider, self.text), self.cancel)
        except BaseException as exc:
            self.outcome = exc


def _index_of(server: ScriptedServer, text: str) -> int:
    return next(r.index for r in server.requests if r.body["messages"][0]["content"] == text)


def test_calls_from_many_threads_are_in_flight_at_once_and_cancel_one_by_one(
    server: ScriptedServer,
) -> None:
    """Eight threads' calls on one provider all reach the server while none is answered;
    cancelling one closes only its connection, and closing the provider cancels the rest."""
    provider = Provider(ProviderConfig(base_url=server.base_url, model="m", max_retries=0))
    callers = [Caller(provider, f"call {i}") for i in range(8)]
    for caller in callers:
        caller.start()
    server.wait_for_requests(8, timeout=20)
    callers[3].cancel.set()
    callers[3].join(20)
    assert isinstance(callers[3].outcome, TurnInterrupted)
    server.wait_for_disconnect(_index_of(server, "call 3"), timeout=20)
    assert all(c.is_alive() for i, c in enumerate(callers) if i != 3)
    provider.close()
    for caller in callers:
        caller.join(20)
    assert all(isinstance(c.outcome, TurnInterrupted) for c in callers)
    for i in range(8):
        server.wait_for_disconnect(_index_of(server, f"call {i}"), timeout=20)


def test_a_thread_reuses_its_lane_and_concurrency_grows_the_pool(server: ScriptedServer) -> None:
    """Sequential calls keep one lane (and its connection); the pool grows to the calls that
    ran at once, and a closed provider starts afresh on its next call."""
    provider = Provider(ProviderConfig(base_url=server.base_url, model="m"))
    for _ in range(3):
        provider.call(_request(provider, "quick"))
    assert provider._lanes.idle_count == 1
    callers = [Caller(provider, f"slow {i}") for i in range(4)]
    for caller in callers:
        caller.start()
    server.wait_for_requests(3 + 4, timeout=20)
    for caller in callers:
        caller.cancel.set()
        caller.join(20)
    assert all(isinstance(c.outcome, TurnInterrupted) for c in callers)
    assert provider._lanes.idle_count == 4
    provider.close()
    assert provider._lanes.idle_count == 0
    assert provider.call(_request(provider, "quick")).choices[0].message.content == "fast"


def test_a_call_cancelled_before_it_starts_sends_nothing(server: ScriptedServer) -> None:
    """A cancel already set when the call begins raises ``TurnInterrupted`` and no request
    leaves the process."""
    provider = Provider(ProviderConfig(base_url=server.base_url, model="m"))
    provider.client()
    cancel = CancelEvent()
    cancel.set()
    with pytest.raises(TurnInterrupted):
        provider.call(_request(provider, "quick"), cancel)
    assert server.requests == []
    provider.close()


def test_a_blocking_call_from_async_code_still_works_and_cancels(server: ScriptedServer) -> None:
    """A call made on a thread that runs an event loop (a blocking call inside a coroutine)
    is answered, and a cancel still closes its connection."""
    provider = Provider(ProviderConfig(base_url=server.base_url, model="m", max_retries=0))

    async def quick() -> Any:
        return provider.call(_request(provider, "quick"))

    assert asyncio.run(quick()).choices[0].message.content == "fast"
    cancel = CancelEvent()

    def cancel_when_held() -> None:
        server.wait_for_requests(2, timeout=20)
        cancel.set()

    async def held() -> Any:
        return provider.call(_request(provider, "hold"), cancel)

    threading.Thread(target=cancel_when_held, daemon=True).start()
    with pytest.raises(TurnInterrupted):
        asyncio.run(held())
    server.wait_for_disconnect(1, timeout=20)
    provider.close()
