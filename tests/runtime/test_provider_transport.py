"""``ProviderConfig.transport``: a provider's requests go through the transport given, not
the network, and a transport that cancels its request cancels the call like a closed one."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from wayline.runtime.cancel import TurnInterrupted
from wayline.runtime.provider import Provider, ProviderConfig, normalize
from wayline.trajectory.transport import sdk_http

pytestmark = pytest.mark.timeout(30)

# Reserved: nothing answers here, so a request that reached the network would fail.
UNREACHABLE = "http://nowhere.invalid/v1"


def _completion(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def test_requests_go_through_the_transport() -> None:
    """Every request of a provider given a transport reaches it (path and body as sent), and
    its answer is the provider's response."""
    http = sdk_http()
    seen: list[tuple[str, Any]] = []

    def handler(request: Any) -> Any:
        seen.append((request.url.path, json.loads(request.content)))
        return http.Response(200, json=_completion(f"answer {len(seen)}"))

    transport = http.MockTransport(handler)
    provider = Provider(ProviderConfig(base_url=UNREACHABLE, model="m", transport=transport))
    try:
        answers = [
            normalize(provider.call(provider.build_request([{"role": "user", "content": t}], [])))
            for t in ("one", "two")
        ]
    finally:
        provider.close()
    assert [a.content for a in answers] == ["answer 1", "answer 2"]
    assert [path for path, _ in seen] == ["/v1/chat/completions"] * 2
    assert [body["messages"][0]["content"] for _, body in seen] == ["one", "two"]


def test_a_transport_that_cancels_its_request_interrupts_the_call() -> None:
    """A transport ending its request with ``CancelledError`` (as a cancelled request ends)
    makes the call raise ``TurnInterrupted``, and the provider still serves the next call."""
    http = sdk_http()
    calls: list[str] = []

    class Cancelling:
        async def handle_async_request(self, request: Any) -> Any:
            text = json.loads(await request.aread())["messages"][0]["content"]
            calls.append(text)
            if text == "stop":
                raise asyncio.CancelledError("cancelled by the transport")
            return http.Response(200, json=_completion("fine"))

        async def aclose(self) -> None:
            return None

    provider = Provider(ProviderConfig(base_url=UNREACHABLE, model="m", transport=Cancelling()))
    try:
        with pytest.raises(TurnInterrupted):
            provider.call(provider.build_request([{"role": "user", "content": "stop"}], []))
        after = provider.call(provider.build_request([{"role": "user", "content": "go"}], []))
    finally:
        provider.close()
    assert calls == ["stop", "go"]
    assert normalize(after).content == "fine"
