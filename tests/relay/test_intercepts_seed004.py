"""Seed 004's breaking changes, proven against a real HTTP provider (the scripted server).

The provider callback is the openai SDK talking to the scripted server, so the server's
request log shows exactly what left the process.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from wayline import relay
from wayline.relay._intercepts import chains as icpt
from wayline.relay.codecs import OpenAIChatCodec

BODY = {
    "model": "scripted-model",
    "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}],
}


@pytest.fixture(autouse=True)
def clean_registries() -> Iterator[None]:
    """Every intercept a test registers is gone afterwards."""
    yield
    for entry in icpt.LLM_REQUEST.chain:
        icpt.deregister_llm_request(entry.name)


def _provider(base_url: str) -> Any:
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=10)

    def call(request: relay.LLMRequest) -> Any:
        headers = {k: str(v) for k, v in request.headers.items()}
        response = client.chat.completions.create(**request.content, extra_headers=headers)
        return response.model_dump(mode="json")

    return call


def _header(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
    request.headers["x-demo"] = "1"
    return relay.LLMRequestInterceptOutcome(request, annotated)


def _system(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
    annotated.messages[0]["content"] = "rewritten system prompt"
    return relay.LLMRequestInterceptOutcome(request, annotated)


def test_codec_violations_are_rejected_before_any_request_is_sent(
    scripted_server: Any, captured: list[relay.Event]
) -> None:
    """Header and annotation edits reach the server; a raw-content edit or a tuple return
    under the codec fails before the provider runs: the server log gains nothing."""
    srv = scripted_server({"default": {"content": "hello"}})
    provider = _provider(srv.base_url)
    codec = OpenAIChatCodec()
    icpt.register_llm_request("header", 1, False, _header)
    icpt.register_llm_request("system", 2, False, _system)
    with relay.scope.scope("agent", relay.ScopeType.Agent):
        response = relay.llm.execute_sync(
            "openai", relay.LLMRequest({}, BODY), provider, codec=codec, response_codec=codec
        )
    assert response["choices"][0]["message"]["content"] == "hello"
    assert len(srv.requests) == 1
    sent = srv.requests[0]
    assert sent.headers["x-demo"] == "1"
    assert sent.headers["x-dynamo-session-id"] == "agent"
    assert sent.headers["traceparent"].startswith("00-")
    assert sent.body["messages"][0] == {"role": "system", "content": "rewritten system prompt"}
    assert captured[1].data["content"] == sent.body

    def raw_edit(name: str, request: relay.LLMRequest, annotated: Any) -> Any:
        request.content["messages"][0]["content"] = "edited raw"
        return relay.LLMRequestInterceptOutcome(request, annotated)

    icpt.register_llm_request("raw-edit", 3, False, raw_edit)
    before = len(captured)
    with pytest.raises(RuntimeError, match=r"changed request\.content while a request codec"):
        relay.llm.execute_sync("openai", relay.LLMRequest({}, BODY), provider, codec=codec)
    icpt.deregister_llm_request("raw-edit")
    icpt.register_llm_request("tuple", 3, False, lambda n, r, a: (r, a))
    with pytest.raises(RuntimeError, match="must return LLMRequestInterceptOutcome"):
        relay.llm.execute_sync("openai", relay.LLMRequest({}, BODY), provider, codec=codec)
    assert len(srv.requests) == 1
    assert len(captured) == before
