"""The P3-efficiency reference for ``observability/otel``: a plain OpenTelemetry-SDK observer.

What a straightforward OTel plugin for a Hermes-style host does (the hermes-otel approach):
every hook starts or ends spans on the calling thread with the SDK's ``Tracer``, parents
found by the ids in the payload dicts, and the SDK's ``BatchSpanProcessor`` exports on its
own thread into the same JSON-lines file exporter ``observability/otel`` uses. It records the
same tree (turn root ``agent``, ``llm.*``, ``api.*``, ``tool.*``, ``subagent.*``, a child's
``agent`` under its delegation), a comparable set of attributes, and token and duration
metrics through a ``PeriodicExportingMetricReader`` on the same metrics file exporter.
Observers: a missing id or an odd value is skipped, never raised.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from wayline.plugins.observability.otel.export import (
    JsonLinesMetricExporter,
    JsonLinesSpanExporter,
)

TEXT_MAX = 4096
IDS = ("session_id", "turn_id", "api_request_id", "tool_call_id", "task_id", "platform")


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text[:TEXT_MAX]


def _ids(kw: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for key in IDS:
        value = kw.get(key)
        if isinstance(value, str) and value:
            attrs[f"hermes.{key}"] = value
    if "hermes.session_id" in attrs:
        attrs["session.id"] = attrs["gen_ai.conversation.id"] = attrs["hermes.session_id"]
    return attrs


def _model(kw: dict[str, Any]) -> dict[str, Any]:
    model, provider = str(kw.get("model") or "unknown"), str(kw.get("provider") or "unknown")
    return {
        "llm.model_name": model,
        "gen_ai.request.model": model,
        "llm.provider": provider,
        "gen_ai.provider.name": provider,
        "gen_ai.operation.name": "chat",
        "openinference.span.kind": "LLM",
    }


class PlainOtelObserver:
    """Spans started and ended on the hook's thread; export behind a batch processor."""

    def __init__(self, path: Path) -> None:
        resource = Resource.create({"service.name": "plain-otel-observer"})
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_span_processor(BatchSpanProcessor(JsonLinesSpanExporter(path)))
        self.tracer = self.provider.get_tracer("bench.plain_otel")
        metrics_path = path.with_suffix(".metrics.jsonl")
        reader = PeriodicExportingMetricReader(JsonLinesMetricExporter(metrics_path))
        self.meters = MeterProvider(
            resource=resource, metric_readers=[reader], shutdown_on_exit=False
        )
        meter = self.meters.get_meter("bench.plain_otel")
        self.tokens = meter.create_counter("gen_ai.client.token.usage", unit="{token}")
        self.api_duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s")
        self.tool_duration = meter.create_histogram("tool.duration", unit="ms")
        self.lock = threading.Lock()
        self.roots: dict[str, Span] = {}  # turn_id -> turn root
        self.llm: dict[str, Span] = {}  # turn_id -> llm span
        self.api: dict[str, Span] = {}  # api_request_id -> open api span
        self.turn_apis: dict[str, dict[str, Span]] = {}  # turn_id -> its api spans (parents)
        self.tools: dict[str, Span] = {}  # tool_call_id -> tool span
        self.subagents: dict[str, Span] = {}  # child session id -> delegation span
        self.session_turn: dict[str, str] = {}  # session id -> its open turn

    def hooks(self) -> dict[str, Any]:
        """Hook name -> observer callback."""
        from wayline.plugins.observability.otel.hooks import HOOKS  # the same hooks as (c)

        return {name: getattr(self, name) for name in HOOKS}

    def _start(self, name: str, parent: Span | None, attrs: dict[str, Any], **kw: Any) -> Span:
        context = trace.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span(name, context=context, attributes=attrs, **kw)

    def on_session_start(self, **kw: Any) -> None:
        """Nothing to open yet: a turn's root starts with its first ``pre_llm_call``."""

    def on_session_finalize(self, **kw: Any) -> None:
        """End the session's open turn, if any."""
        self.on_session_end(**kw)

    def pre_approval_request(self, **kw: Any) -> None:
        """Approvals are not recorded (the bench session has none)."""

    def post_approval_response(self, **kw: Any) -> None:
        """Approvals are not recorded (the bench session has none)."""

    def pre_llm_call(self, **kw: Any) -> None:
        """Open the turn's root (under its delegation for a child) and its ``llm`` span."""
        turn, sid = kw.get("turn_id"), kw.get("session_id")
        if not isinstance(turn, str) or not isinstance(sid, str):
            return
        attrs = {**_ids(kw), **_model(kw), "openinference.span.kind": "AGENT"}
        attrs.update({"gen_ai.agent.name": "plain", "gen_ai.operation.name": "invoke_agent"})
        attrs["input.value"] = _text(kw.get("user_message") or "")
        with self.lock:
            root = self._start("agent", self.subagents.get(sid), attrs)
            self.roots[turn] = root
            self.session_turn[sid] = turn
            model = str(kw.get("model") or "unknown")
            self.llm[turn] = self._start(f"llm.{model}", root, {**_ids(kw), **_model(kw)})

    def post_llm_call(self, **kw: Any) -> None:
        """End the ``llm`` span with the answer."""
        with self.lock:
            span = self.llm.pop(str(kw.get("turn_id")), None)
        if span is not None:
            span.set_attribute("output.value", _text(kw.get("assistant_response") or ""))
            span.end()

    def on_session_end(self, **kw: Any) -> None:
        """End the turn's root with the turn's outcome."""
        sid = kw.get("session_id")
        with self.lock:
            turn = str(kw.get("turn_id") or self.session_turn.get(str(sid)))
            root = self.roots.pop(turn, None)
            self.turn_apis.pop(turn, None)
        if root is not None:
            root.set_attributes(
                {
                    "hermes.session.completed": kw.get("completed") is True,
                    "hermes.session.interrupted": kw.get("interrupted") is True,
                    "hermes.turn.reason": str(kw.get("reason")),
                    "output.value": _text(kw.get("final_response") or ""),
                    "output.mime_type": "text/plain",
                }
            )
            root.end()

    def pre_api_request(self, **kw: Any) -> None:
        """Open ``api.{model}`` under the turn's ``llm`` span."""
        rid = kw.get("api_request_id")
        if not isinstance(rid, str):
            return
        attrs = {**_ids(kw), **_model(kw)}
        url = str(kw.get("base_url") or "")
        host, _, port = url.split("//")[-1].split("/")[0].partition(":")
        attrs.update({"server.address": host, "server.port": port, "llm.api_mode": "chat"})
        for key in ("api_call_count", "message_count", "tool_count", "approx_input_tokens"):
            if isinstance(kw.get(key), int):
                attrs[f"llm.request.{key}"] = kw[key]
        request = kw.get("request")
        body = request.get("body") if isinstance(request, dict) else None
        if isinstance(body, dict):
            params = {k: v for k, v in body.items() if k not in ("messages", "tools")}
            attrs["llm.invocation_parameters"] = _text(params)
        with self.lock:
            parent = self.llm.get(str(kw.get("turn_id")))
            name = f"api.{attrs['llm.model_name']}"
            span = self.api[rid] = self._start(name, parent, attrs, kind=SpanKind.CLIENT)
            self.turn_apis.setdefault(str(kw.get("turn_id")), {})[rid] = span

    def api_request_error(self, **kw: Any) -> None:
        """End the ``api`` span as an error."""
        with self.lock:
            span = self.api.pop(str(kw.get("api_request_id")), None)
        if span is not None:
            span.set_status(Status(StatusCode.ERROR, _text(kw.get("error"))))
            span.end()

    def post_api_request(self, **kw: Any) -> None:
        """End the ``api`` span with usage, finish reason and output; record metrics."""
        with self.lock:
            span = self.api.pop(str(kw.get("api_request_id")), None)
        if span is None:
            return
        usage = kw.get("usage") if isinstance(kw.get("usage"), dict) else {}
        attrs: dict[str, Any] = {}
        for key, oi in (
            ("input_tokens", "prompt"),
            ("output_tokens", "completion"),
            ("total_tokens", "total"),
            ("cache_read_tokens", "prompt_details.cache_read"),
            ("reasoning_tokens", "completion_details.reasoning"),
        ):
            if isinstance(usage.get(key), int):
                attrs[f"gen_ai.usage.{key}"] = usage[key]
                attrs[f"llm.token_count.{oi}"] = usage[key]
                self.tokens.add(usage[key], {"gen_ai.token.type": key})
        for key in ("response_model", "assistant_content_chars", "assistant_tool_call_count"):
            if kw.get(key) is not None:
                attrs[f"llm.response.{key}"] = kw[key]
        if isinstance(kw.get("api_duration"), int | float):
            attrs["llm.response.duration_ms"] = int(kw["api_duration"] * 1000)
        if kw.get("finish_reason"):
            attrs["gen_ai.response.finish_reasons"] = [str(kw["finish_reason"])]
        response = kw.get("response")
        message = response.get("assistant_message") if isinstance(response, dict) else None
        if isinstance(message, dict):
            attrs["output.value"] = _text(message.get("content") or message.get("tool_calls"))
        span.set_attributes(attrs)
        span.end()
        if isinstance(kw.get("api_duration"), int | float):
            self.api_duration.record(float(kw["api_duration"]), {"gen_ai.operation.name": "chat"})

    def pre_tool_call(self, **kw: Any) -> None:
        """Open ``tool.{name}`` under its ``api`` span."""
        call = kw.get("tool_call_id")
        if not isinstance(call, str):
            return
        name = str(kw.get("tool_name") or "tool")
        attrs = {**_ids(kw), "openinference.span.kind": "TOOL", "tool.name": name}
        args = _text(kw.get("args"))
        attrs.update({"gen_ai.tool.name": name, "gen_ai.tool.type": "function"})
        attrs.update({"gen_ai.tool.call.id": call, "tool.id": call})
        attrs.update({"input.value": args, "gen_ai.tool.call.arguments": args})
        attrs["input.mime_type"] = "application/json"
        with self.lock:
            turn = str(kw.get("turn_id"))
            apis = self.turn_apis.get(turn, {})
            parent = apis.get(str(kw.get("api_request_id"))) or self.llm.get(turn)
            self.tools[call] = self._start(f"tool.{name}", parent, attrs)

    def post_tool_call(self, **kw: Any) -> None:
        """End the tool span with its result and status."""
        with self.lock:
            span = self.tools.pop(str(kw.get("tool_call_id")), None)
        if span is None:
            return
        result = _text(kw.get("result"))
        span.set_attributes(
            {
                "output.value": result,
                "gen_ai.tool.call.result": result,
                "hermes.tool.status": str(kw.get("status")),
                "hermes.tool.duration_ms": str(kw.get("duration_ms")),
            }
        )
        if kw.get("status") not in (None, "ok"):
            span.set_status(Status(StatusCode.ERROR, str(kw.get("error_message"))))
        span.end()
        if isinstance(kw.get("duration_ms"), int | float):
            self.tool_duration.record(kw["duration_ms"], {"tool.name": str(kw.get("tool_name"))})

    def subagent_start(self, **kw: Any) -> None:
        """Open ``subagent.{role}`` under the delegating tool call's span."""
        child = kw.get("child_session_id")
        if not isinstance(child, str):
            return
        attrs = {**_ids(kw), "openinference.span.kind": "AGENT", "hermes.child_session": child}
        for key in ("child_role", "child_subagent_id", "parent_session_id", "child_goal"):
            if kw.get(key) is not None:
                attrs[f"hermes.{key}"] = _text(kw[key])
        with self.lock:
            parent = self.tools.get(str(kw.get("parent_tool_call_id"))) or self.roots.get(
                str(kw.get("parent_turn_id"))
            )
            role = str(kw.get("child_role") or "leaf")
            self.subagents[child] = self._start(f"subagent.{role}", parent, attrs)

    def subagent_stop(self, **kw: Any) -> None:
        """End the delegation span."""
        with self.lock:
            span = self.subagents.pop(str(kw.get("child_session_id")), None)
        if span is not None:
            span.set_attribute("hermes.child_status", str(kw.get("child_status")))
            span.end()

    def shutdown(self) -> None:
        """End what is open, export everything, stop the SDK's threads."""
        with self.lock:
            spans = [*self.tools.values(), *self.api.values(), *self.llm.values()]
            spans += [*self.subagents.values(), *self.roots.values()]
            for group in (self.tools, self.api, self.llm, self.subagents, self.roots):
                group.clear()
        for span in spans:
            span.end()
        self.provider.shutdown()
        self.meters.shutdown()
