"""The replay's model: an httpx transport that answers chat completions from a recording.

A replay gives the provider this transport (:attr:`~wayline.runtime.provider.ProviderConfig.
transport`), so the SDK client's requests never leave the process: each is answered with the
recorded response :meth:`~wayline.trajectory.plan.ReplayPlan.answer` picks for it, as JSON or
as server-sent events when the request streams. No server, no port, no environment variable:
any number of replays (and other agents) can run in one process at once.

The OpenAI SDK builds its clients on ``httpx``, or, in newer releases, on its fork ``httpx2``;
the two share this transport interface, and :func:`sdk_http` says which one answers must be
made of.

A recorded interrupted model call (:data:`~wayline.trajectory.plan.CANCEL`) is reproduced:
the transport sets the turn's cancel (what Ctrl-C or a cancelled ``arun`` does) and the
request ends as a cancelled one, so the runtime records the same interrupted attempt.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
from collections.abc import Callable, Mapping
from types import ModuleType, TracebackType
from typing import Any

from wayline.trajectory.load import JsonDict
from wayline.trajectory.plan import CANCEL, ReplayPlan

__all__ = ["RecordedModel", "sdk_http"]

CREATED = 1_700_000_000
"""The ``created`` time of every answer (fixed: the record of a replay does not depend on it)."""


def sdk_http() -> ModuleType:
    """The HTTP package the installed OpenAI SDK's async client is built on (``httpx`` or
    ``httpx2``): a transport given to it must answer with that package's ``Response``."""
    import openai

    for base in openai.DefaultAsyncHttpxClient.__mro__:
        root = base.__module__.partition(".")[0]
        if root in ("httpx", "httpx2"):
            return importlib.import_module(root)
    return importlib.import_module("httpx")


class RecordedModel:
    """An async transport (``handle_async_request``, ``aclose``: httpx's
    ``AsyncBaseTransport`` interface) serving a replay plan's recorded model responses.

    ``cancel`` is called, on the requesting thread, before a recorded interrupted call ends
    its request; it must not block. Stateless apart from a response counter, so one instance
    serves every lane (event loop) of every provider of a replay. It holds no connection:
    closing a client that uses it leaves it usable.
    """

    def __init__(
        self, plan: ReplayPlan, cancel: Callable[[], object], http: ModuleType | None = None
    ) -> None:
        self._plan = plan
        self._cancel = cancel
        self._http = http or sdk_http()
        self._ids = itertools.count(1)

    async def handle_async_request(self, request: Any) -> Any:
        """Answer one request: a chat completion from the recording, else an error status."""
        path = request.url.path
        if request.method != "POST" or not path.endswith("/chat/completions"):
            return self._error(404, f"replay answers POST …/chat/completions only, not {path}")
        try:
            body = json.loads(await request.aread())
        except ValueError as exc:
            return self._error(400, f"replay: the request body is not JSON: {exc}")
        messages = body.get("messages") if isinstance(body, Mapping) else None
        if not isinstance(messages, list):
            return self._error(400, "replay: the request has no messages")
        response = self._plan.answer(messages)
        if response.get(CANCEL) is True:
            self._cancel()
            raise asyncio.CancelledError("replay: the recording interrupted this model call")
        cid = f"chatcmpl-replay-{next(self._ids)}"
        model = str(response.get("model") or body.get("model") or self._plan.model)
        if body.get("stream"):
            options = body.get("stream_options")
            usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
            return self._http.Response(
                200,
                headers={"content-type": "text/event-stream"},
                content=_sse(_chunks(response, model, cid, usage)),
            )
        return self._http.Response(200, json=_completion(response, model, cid))

    async def aclose(self) -> None:
        """Nothing to release (a client closing does not end the replay's model)."""

    async def __aenter__(self) -> RecordedModel:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        await self.aclose()

    def _error(self, status: int, message: str) -> Any:
        body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        return self._http.Response(status, json=body)


def _arguments(value: Any) -> str:
    """Recorded arguments as the JSON string a model sends (a string as it was recorded)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _usage(response: Mapping[str, Any]) -> JsonDict | None:
    recorded = response.get("usage")
    if not isinstance(recorded, Mapping):
        return None
    prompt = int(recorded.get("prompt_tokens") or 0)
    completion = int(recorded.get("completion_tokens") or 0)
    usage: JsonDict = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if "cached_tokens" in recorded:
        usage["prompt_tokens_details"] = {"cached_tokens": int(recorded["cached_tokens"])}
    return usage


def _tool_calls(response: Mapping[str, Any]) -> list[JsonDict]:
    return [
        {
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": _arguments(call["arguments"])},
        }
        for call in response.get("tool_calls") or []
    ]


def _completion(response: Mapping[str, Any], model: str, cid: str) -> JsonDict:
    """A ``chat.completion`` object."""
    message: JsonDict = {"role": "assistant", "content": response.get("content")}
    if response.get("reasoning") is not None:
        message["reasoning_content"] = response["reasoning"]
    calls = _tool_calls(response)
    if calls:
        message["tool_calls"] = calls
    body: JsonDict = {
        "id": cid,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
    }
    usage = _usage(response)
    if usage is not None:
        body["usage"] = usage
    return body


def _chunks(response: Mapping[str, Any], model: str, cid: str, with_usage: bool) -> list[JsonDict]:
    """The ``chat.completion.chunk`` objects of the streamed answer (one piece per part)."""

    def chunk(delta: JsonDict, finish: str | None = None) -> JsonDict:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [choice],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    if response.get("reasoning"):
        chunks.append(chunk({"reasoning_content": response["reasoning"]}))
    if response.get("content"):
        chunks.append(chunk({"content": response["content"]}))
    calls = _tool_calls(response)
    for index, call in enumerate(calls):
        chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
    chunks.append(chunk({}, "tool_calls" if calls else "stop"))
    usage = _usage(response)
    if with_usage and usage is not None:
        tail = chunk({})
        tail["choices"] = []
        tail["usage"] = usage
        chunks.append(tail)
    return chunks


def _sse(chunks: list[JsonDict]) -> bytes:
    lines = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8")
