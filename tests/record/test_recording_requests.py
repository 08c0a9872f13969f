"""The record is what was sent, when it was sent: every model request the relay plugin
exported (ATOF's llm start events, ATIF's observations) equals the request the scripted
server received, call by call — while the hook thread is held back until the agent has
rewritten its conversation in place, and while middleware and observers change the objects
they were handed after the hook fired.

The hook thread is held by a queued observer that waits on an event: nothing here depends
on timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import wayline
from wayline.plugins.observability.hookqueue import HookQueue
from wayline.plugins.observability.relay import RelayPlugin
from wayline.relay.atof import read_events
from wayline.testing import ScriptedServer


def lookup(key: str) -> str:
    """Look a key up (the test's tool: its result names the key)."""
    return f"value of {key} " + "x" * 40


LOOKUP = wayline.Tool(lookup, parallel_safe=True)

SCRIPT: dict[str, Any] = {
    "model": "m",
    "rules": [
        {
            "match": {"last_role": "user"},
            "respond": {
                "tool_calls": [
                    {"name": "lookup", "id": "k1", "arguments": {"key": "alpha"}},
                    {"name": "lookup", "id": "k2", "arguments": {"key": "beta"}},
                ]
            },
        },
        {"match": {"last_role": "tool"}, "respond": {"content": "looked up"}},
    ],
}

COMPRESSED = "[compressed]"


class Compressor:
    """A plugin that rewrites the agent's history in place at every turn's start (what
    Hermes' context compression does): each earlier tool result and user message loses its
    text. A synchronous observer of ``pre_llm_call``, which carries the live messages."""

    def register(self, ctx: Any) -> None:
        """Plugin entry point."""
        ctx.register_hook("pre_llm_call", self.compress)

    def compress(self, conversation_history: list[dict[str, Any]], **_: Any) -> None:
        """Rewrite the history's messages in place."""
        for message in conversation_history:
            if message.get("role") in ("tool", "user"):
                message["content"] = COMPRESSED


class Scribbler:
    """A plugin whose observers change what they are handed after the queued ones got it:
    they append to the API hooks' request messages and overwrite the response in place."""

    def register(self, ctx: Any) -> None:
        """Plugin entry point."""
        ctx.register_hook("pre_api_request", self.request)
        ctx.register_hook("post_api_request", self.response)

    def request(self, request: dict[str, Any], request_messages: list[Any], **_: Any) -> None:
        """Append to the sanitized request and to the message list the hook carried."""
        request["body"]["messages"].append({"role": "user", "content": "scribbled"})
        request_messages.append({"role": "user", "content": "scribbled"})

    def response(self, response: dict[str, Any], **_: Any) -> None:
        """Overwrite the sanitized response's text."""
        response["assistant_message"]["content"] = "scribbled"


class Gate:
    """A queued observer of ``on_session_start`` that holds the shared hook thread until
    :attr:`open` is set, so every later hook waits in the queue."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.held = threading.Event()
        self.queue = HookQueue(label="gate")

    def register(self, ctx: Any) -> None:
        """Plugin entry point."""
        ctx.register_hook("on_session_start", self.queue.wrap("on_session_start", self.hold))

    def hold(self, **_: Any) -> None:
        """Runs on the hook thread: wait for the test."""
        self.held.set()
        self.open.wait(30.0)


class RewritingMiddleware:
    """llm_request middleware that returns its (copied) request and, on the next call,
    scribbles on the request it returned last time: the request that was already sent."""

    def __init__(self) -> None:
        self.last: dict[str, Any] | None = None

    def __call__(self, request: dict[str, Any], **_: Any) -> dict[str, Any]:
        """Rewrite in place: the model gets ``temperature``; the last request is spoiled."""
        if self.last is not None:
            self.last["messages"].append({"role": "user", "content": "spoiled"})
            for message in self.last["messages"]:
                message["content"] = "spoiled"
        request["temperature"] = 0.5
        self.last = request
        return {"request": request, "source": "test", "reason": "rewrites in place"}


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _run(tmp_path: Path, plugins: list[Any], middleware: Any = None) -> tuple[Any, Path]:
    """Two turns with the hook thread held until both are done; (server requests, out)."""
    out = tmp_path / "out"
    home = tmp_path / "home"
    home.mkdir()
    gate = Gate()
    env = {
        "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
        "WAYLINE_RELAY_ATOF_FILENAME": "events.jsonl",
        "WAYLINE_RELAY_ATOF_MODE": "overwrite",
        "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        "WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "trajectory-{session_id}.json",
    }
    try:
        with (
            _env(env),
            ScriptedServer(SCRIPT) as server,
            wayline.Agent(
                model="m",
                base_url=server.base_url,
                tools=[LOOKUP],
                home=home,
                plugins=["observability/relay", gate, *plugins],
                yolo=True,
            ) as agent,
        ):
            relay = agent.plugin("observability/relay")
            assert isinstance(relay, RelayPlugin)
            if middleware is not None:
                agent.use("llm_request", middleware)
            agent.run("first question")
            assert gate.held.wait(30.0), "the hook thread never reached the gate"
            agent.run("second question")
            assert relay.stats()["hooks_pending"] > 0  # the thread is still behind
            gate.open.set()
            requests = server.requests
        # The agent's close finalized the session and closed its relay instance.
        assert relay.drain()
    finally:
        gate.open.set()
    return requests, out


def _sent_messages(requests: list[Any]) -> list[list[dict[str, Any]]]:
    return [request.body["messages"] for request in requests]


def _recorded_requests(out: Path) -> list[dict[str, Any]]:
    """The request bodies of the ATOF's llm start events, in order."""
    events = read_events(out / "atof" / "events.jsonl", sort=False)
    starts = [
        e for e in events if e.get("category") == "llm" and e.get("scope_category") == "start"
    ]
    return [e["data"]["content"] for e in starts]


def _observations(out: Path) -> dict[str, str]:
    """tool_call_id -> the result text the ATIF recorded for it."""
    (path,) = (out / "atif").glob("trajectory-*.json")
    atif = json.loads(path.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for step in atif["steps"]:
        for result in (step.get("observation") or {}).get("results") or []:
            found[str(result.get("source_call_id"))] = str(result.get("content"))
    return found


def _first_tool_texts(requests: list[Any]) -> dict[str, str]:
    """tool_call_id -> the tool message text of the first request that carried it."""
    texts: dict[str, str] = {}
    for request in requests:
        for message in request.body["messages"]:
            if message.get("role") == "tool":
                texts.setdefault(str(message["tool_call_id"]), str(message["content"]))
    return texts


def _check(requests: list[Any], out: Path) -> None:
    recorded = _recorded_requests(out)
    assert len(recorded) == len(requests) == 4
    for index, (got, sent) in enumerate(zip(recorded, requests, strict=True)):
        assert got["messages"] == sent.body["messages"], f"model call {index + 1}"
        for key in ("model", "temperature", "tools"):
            assert got.get(key) == sent.body.get(key), f"model call {index + 1}: {key}"
    tool_texts = _first_tool_texts(requests)
    observations = _observations(out)
    assert set(observations) == set(tool_texts)
    for call_id, text in tool_texts.items():
        assert observations[call_id] == text


def test_history_rewritten_in_place_while_the_hook_thread_is_behind(tmp_path: Path) -> None:
    """The agent's history is compressed in place at the second turn's start while the hook
    thread has not yet run one hook of the session: the exports still show each request as
    the server received it (the first turn's originals, the second turn's compressed)."""
    requests, out = _run(tmp_path, [Compressor()])
    messages = _sent_messages(requests)
    assert COMPRESSED not in json.dumps(messages[1])
    assert COMPRESSED in json.dumps(messages[2])
    _check(requests, out)


def test_observers_changing_their_payloads_do_not_change_the_record(tmp_path: Path) -> None:
    """Synchronous observers that append to and overwrite the API hooks' payloads after the
    queued plugin received them leave the exported requests equal to the sent ones."""
    requests, out = _run(tmp_path, [Scribbler()])
    assert "scribbled" not in json.dumps(_sent_messages(requests))
    _check(requests, out)
    events = read_events(out / "atof" / "events.jsonl", sort=False)
    ends = [e for e in events if e.get("category") == "llm" and e.get("scope_category") == "end"]
    assert ends and all("scribbled" not in json.dumps(e["data"]) for e in ends)


def test_middleware_changing_a_sent_request_does_not_change_its_record(tmp_path: Path) -> None:
    """A request middleware that keeps the request it returned and spoils it during the next
    call leaves the export of the call already sent as the server received it."""
    requests, out = _run(tmp_path, [], RewritingMiddleware())
    assert "spoiled" not in json.dumps(_sent_messages(requests))
    assert all(request.body["temperature"] == 0.5 for request in requests)
    _check(requests, out)
