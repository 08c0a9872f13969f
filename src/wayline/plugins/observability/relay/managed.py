"""Adaptive managed execution: the real LLM/tool calls run inside relay's execute spans.

Registered by ``observability/relay`` when its plugins.toml has an ``adaptive`` component.
Both callbacks are execution middleware (control callbacks): each calls
``next_call`` exactly once, inside ``relay.llm.execute_sync`` / ``relay.tools.execute_sync``,
so relay guardrails and intercepts apply and the span brackets the real call; the observer
then skips its manual llm/tool spans, so nothing is recorded twice. A downstream failure
ends the span with error metadata and re-raises the *original* exception.

LLM calls (Chat Completions) run with :class:`~wayline.relay.codecs.OpenAIChatCodec` as
request and response codec: intercepts edit ``annotated_request``, may add headers, and
the provider gets ``encode(final annotation)`` as its body and the final headers as
``extra_headers`` (intercept headers, ``x-dynamo-session-id``, ``traceparent``). Body keys the
SDK call did not have (an intercept's additions, ``nvext``) travel in ``extra_body``.

Modes of ``[components.config.tool_parallelism] mode``:

* ``observe_only`` (default): wrap and record only.
* ``inject_hints``: also add ``nvext.agent_hints`` (``{"tool_parallelism":
  "parallel_safe_batches", "session_id", "turn_id"}``) to the request body, so a Relay-aware
  server (Dynamo) can adapt; other OpenAI-compatible servers ignore the field.
* ``schedule``: wayline's dispatcher already runs parallel-safe tools concurrently; this mode
  records ``scheduled_by: "wayline"`` on tool spans and otherwise behaves as ``observe_only``.

A relay guardrail, intercept or codec that refuses an LLM call before the provider runs
raises :class:`~wayline.contract.errors.ControlRejected` (cause: the original exception), which
wayline's host propagates instead of failing open: the call fails, nothing is sent. (Hermes
0.19.0 fails open on it.) A tool guardrail rejection is answered here instead, with an error
result the model sees (``{"error": "guardrail rejected: …"}``), and the tool never runs.

Hermes 0.19.0 differences absorbed here: its streaming path returns a ``SimpleNamespace``
tree instead of an SDK object (recorded as JSON data; the host gets its object back), and a
registry tool of a parallel batch is wrapped in ``tool_execution`` twice on the same thread
(the inner, re-entrant call passes straight through: one call, one span).
"""

from __future__ import annotations

import json
import logging
import threading
from types import SimpleNamespace
from typing import Any

from wayline import relay
from wayline.contract.errors import ControlRejected
from wayline.plugins.observability.relay.observer import RelayObserver
from wayline.plugins.observability.relay.payload import metadata
from wayline.relay.codecs import OpenAIChatCodec

log = logging.getLogger("wayline.plugins.relay")

_SDK_ONLY = ("extra_headers", "extra_body", "extra_query", "timeout")
_CODEC_API_MODES = (None, "chat_completions")


def tool_status(result: Any) -> dict[str, str]:
    """The tool end ``status`` (ok/error/timeout/blocked) read from a tool's JSON result."""
    if not isinstance(result, str) or not result.startswith("{"):
        return {"status": "ok"}
    try:
        data = json.loads(result)
    except (ValueError, RecursionError):
        return {"status": "ok"}
    if not isinstance(data, dict):
        return {"status": "ok"}
    if data.get("status") in ("timeout", "blocked"):
        return {"status": str(data["status"])}
    return {"status": "error" if data.get("error") else "ok"}


def _plain(value: Any) -> Any:
    """A ``SimpleNamespace`` tree (Hermes' streamed response) as JSON data."""
    if isinstance(value, SimpleNamespace):
        return {str(k): _plain(v) for k, v in vars(value).items()}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _jsonable(response: Any) -> Any:
    if isinstance(response, SimpleNamespace):
        return _plain(response)
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:
            return str(response)
    return response


class ManagedExecution:
    """The two execution middlewares of the adaptive component."""

    def __init__(self, observer: RelayObserver, mode: str) -> None:
        self.observer = observer
        self.mode = mode
        self.codec = OpenAIChatCodec()
        self._active = threading.local()  # the tool calls this thread is inside

    def _body(
        self, request: dict[str, Any], kw: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """(HTTP body view, headers, SDK-only kwargs) of the provider kwargs."""
        body = {k: v for k, v in request.items() if k not in _SDK_ONLY}
        passthrough: dict[str, Any] = {
            k: request[k] for k in ("extra_query", "timeout") if k in request
        }
        extra_body = request.get("extra_body")
        if isinstance(extra_body, dict):
            body.update(extra_body)
        headers = dict(request.get("extra_headers") or {})
        if self.mode == "inject_hints":
            nvext = dict(body.get("nvext") or {})
            nvext["agent_hints"] = {
                "tool_parallelism": "parallel_safe_batches",
                "session_id": kw.get("session_id"),
                "turn_id": kw.get("turn_id"),
            }
            body["nvext"] = nvext
        return body, headers, passthrough

    def llm_execution(self, **kw: Any) -> Any:
        """Run the provider call inside an llm execute span named after the provider."""
        request = kw["request"]
        if not isinstance(request, dict):
            return kw["next_call"](request)
        sess = self.observer.session(kw["session_id"], kw)
        body, headers, passthrough = self._body(request, kw)
        sdk_keys = set(request) - set(_SDK_ONLY)
        raw: dict[str, Any] = {}

        def provider(req: relay.LLMRequest) -> Any:
            raw["called"] = True
            content = dict(req.content)
            call = {k: content.pop(k) for k in list(content) if k in sdk_keys}
            if content:
                call["extra_body"] = content
            if req.headers:
                call["extra_headers"] = {str(k): str(v) for k, v in req.headers.items()}
            call.update(passthrough)
            raw["response"] = kw["next_call"](call)
            raw["json"] = _jsonable(raw["response"])
            return raw["json"]

        codec = self.codec if kw.get("api_mode") in _CODEC_API_MODES else None
        try:
            result = relay.llm.execute_sync(
                str(kw.get("provider") or "llm"),
                relay.LLMRequest(headers, body),
                provider,
                handle=sess.handle,
                data={
                    "turn_id": kw.get("turn_id"),
                    "api_request_id": kw.get("api_request_id"),
                    "api_call_count": kw.get("api_call_count"),
                    "mode": self.mode,
                },
                metadata={**metadata(kw), "mode": self.mode},
                model_name=kw.get("model"),
                codec=codec,
                response_codec=codec,
            )
        except Exception as exc:
            if "called" in raw:
                raise  # the provider's own failure: the original exception, untouched
            # An intercept, codec or guardrail refused the call before the provider ran:
            # fail closed (the host must not run it unrecorded).
            raise ControlRejected(f"relay refused the LLM call: {exc}") from exc
        # The SDK object when the provider's answer came back untouched; an execution
        # intercept's replacement (a JSON dict) otherwise.
        return raw["response"] if "json" in raw and result is raw["json"] else result

    def tool_execution(self, **kw: Any) -> Any:
        """Run the tool inside a tool execute span keyed by its call id (once per call and
        thread: a re-entrant wrap of the same call passes straight through)."""
        active: set[tuple[str, str]] | None = getattr(self._active, "calls", None)
        if active is None:
            active = self._active.calls = set()
        call = kw.get("tool_call_id")
        key = (str(kw.get("session_id")), str(call))
        if call is not None and key in active:
            return kw["next_call"](kw.get("args"))
        active.add(key)
        try:
            return self._tool_execution(kw)
        finally:
            active.discard(key)

    def _tool_execution(self, kw: dict[str, Any]) -> Any:
        sess = self.observer.session(kw["session_id"], kw)
        meta = {**metadata(kw), "mode": self.mode}
        if self.mode == "schedule":
            meta["scheduled_by"] = "wayline"
        name = str(kw.get("tool_name"))
        called: list[bool] = []

        def run(args: Any) -> Any:
            called.append(True)
            return kw["next_call"](args)

        try:
            outcome = relay.tools.execute_sync(
                name,
                kw["args"],
                run,
                handle=sess.handle,
                data={
                    "turn_id": kw.get("turn_id"),
                    "api_request_id": kw.get("api_request_id"),
                    "tool_call_id": kw.get("tool_call_id"),
                    "mode": self.mode,
                },
                metadata=meta,
                tool_call_id=kw.get("tool_call_id"),
                end_metadata=tool_status,
            )
        except relay.guardrails.GuardrailRejected as exc:
            if called:
                raise  # a rejection from inside the tool (a nested call) is the tool's error
            # Rejected before the tool ran: answer with an error result instead of letting
            # the host fail open and run the tool unguarded.
            log.info("tool %r rejected by relay guardrail %r", name, exc.guardrail)
            return json.dumps({"error": str(exc)})
        except Exception as exc:
            if called:
                raise  # the tool's own failure: the original exception, untouched
            # An intercept failed before the tool ran (a bad outcome, a bug): fail closed.
            # Failing open here would run the tool without the intercepts and unrecorded.
            raise ControlRejected(f"relay refused the tool call: {exc}") from exc
        if isinstance(outcome, relay.ToolExecutionResult):
            return outcome.result
        return outcome
