"""The P3-efficiency reference for ``observability/otel``: a plain OpenTelemetry-SDK observer.

What a straightforward OTel plugin for a Hermes-style host does (the hermes-otel approach):
every hook starts or ends spans on the calling thread with the SDK's ``Tracer``, parents
found by the ids in the payload dicts, and the SDK's ``BatchSpanProcessor`` exports on its
own thread into the same JSON-lines file exporter ``observability/otel`` uses. It records the
same tree (turn root ``agent``, ``llm.*``, ``api.*``, ``tool.*``, ``subagent.*``, a child's
``agent`` under its delegation) with the same attribute keys on each kind of span (the turn
root's per-turn totals included), and the same metric instruments with the same attribute
keys, through a ``PeriodicExportingMetricReader`` on the same metrics file exporter: equal
work, which ``bench/efficiency.py`` checks on every run (:func:`record_shape`). Observers: a
missing id or an odd value is skipped, never raised.
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


def _ids(kw: dict[str, Any], session: str = "session_id") -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    sid = kw.get(session)
    if isinstance(sid, str) and sid:
        attrs["hermes.session.id"] = attrs["session.id"] = attrs["gen_ai.conversation.id"] = sid
    turn = kw.get("turn_id")
    if isinstance(turn, str) and turn:
        attrs["hermes.turn_id"] = turn
    return attrs


def _model(kw: dict[str, Any]) -> dict[str, Any]:
    model = str(kw.get("model") or "unknown")
    return {
        "llm.model_name": model,
        "gen_ai.request.model": model,
        "gen_ai.operation.name": "chat",
        "openinference.span.kind": "LLM",
    }


def _target(args: Any) -> str | None:
    if isinstance(args, dict):
        for key in ("path", "file_path", "url", "query", "command"):
            if isinstance(args.get(key), str):
                return str(args[key])[:200]
    return None


class _Turn:
    """What a turn's root span reports at its end: totals over the turn's calls."""

    def __init__(self, span: Span, model: str, provider: str) -> None:
        self.span, self.model, self.provider = span, model, provider
        self.api_calls = 0
        self.tokens = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        self.tokens.update({"cache_read_tokens": 0, "reasoning_tokens": 0})
        self.tools: list[str] = []
        self.targets: list[str] = []
        self.commands: list[str] = []
        self.outcomes: dict[str, int] = {}


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
        self.tokens = {
            key: meter.create_counter(f"hermes.tokens.{key}", unit="{token}")
            for key in ("prompt", "completion", "total")
        }
        self.token_usage = meter.create_histogram("gen_ai.client.token.usage", unit="{token}")
        self.api_duration = meter.create_histogram("hermes.api.duration", unit="ms")
        self.operation = meter.create_histogram("gen_ai.client.operation.duration", unit="s")
        self.tool_calls = meter.create_counter("hermes.tool.calls", unit="{call}")
        self.tool_duration = meter.create_histogram("hermes.tool.duration", unit="ms")
        self.sessions = meter.create_counter("hermes.sessions", unit="{turn}")
        self.subagent_count = meter.create_counter("hermes.subagent.count", unit="{subagent}")
        self.subagent_duration = meter.create_histogram("hermes.subagent.duration", unit="ms")
        self.lock = threading.Lock()
        self.roots: dict[str, _Turn] = {}  # turn_id -> turn root and its totals
        self.llm: dict[str, Span] = {}  # turn_id -> llm span
        self.api: dict[str, Span] = {}  # api_request_id -> open api span
        self.turn_apis: dict[str, dict[str, Span]] = {}  # turn_id -> its api spans (parents)
        self.tools: dict[str, tuple[Span, str, str]] = {}  # tool_call_id -> span, turn, name
        self.subagents: dict[str, tuple[Span, str]] = {}  # child session -> span, role
        self.children: dict[str, dict[str, Any]] = {}  # child session -> its subagent_start
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
        model, provider = str(kw.get("model") or "unknown"), str(kw.get("provider") or "")
        user = _text(kw.get("user_message") or "")
        attrs = {**_ids(kw), **_model(kw), "openinference.span.kind": "AGENT"}
        attrs.update({"gen_ai.agent.name": "plain", "gen_ai.operation.name": "invoke_agent"})
        attrs.update({"input.value": user, "hermes.platform": str(kw.get("platform") or "")})
        with self.lock:
            child = self.children.get(sid)
            delegation = self.subagents.get(sid)
            if child is not None:
                attrs["hermes.session.kind"] = "subagent"
                attrs["hermes.session.is_subagent"] = True
                attrs["hermes.subagent.parent_session_id"] = str(child.get("parent_session_id"))
                attrs["hermes.subagent.role"] = str(child.get("child_role") or "leaf")
            else:
                attrs["hermes.session.kind"] = "agent"
            attrs["hermes.session.synthesized"] = False
            root = self._start("agent", delegation[0] if delegation else None, attrs)
            self.roots[turn] = _Turn(root, model, provider)
            self.session_turn[sid] = turn
            llm_attrs = {**_ids(kw), **_model(kw), "input.value": user}
            llm_attrs["input.mime_type"] = "text/plain"
            self.llm[turn] = self._start(f"llm.{model}", root, llm_attrs)

    def post_llm_call(self, **kw: Any) -> None:
        """End the ``llm`` span with the answer."""
        with self.lock:
            span = self.llm.pop(str(kw.get("turn_id")), None)
        if span is not None:
            span.set_attribute("output.value", _text(kw.get("assistant_response") or ""))
            span.set_attribute("output.mime_type", "text/plain")
            span.end()

    def on_session_end(self, **kw: Any) -> None:
        """End the turn's root with the turn's outcome and totals; count the turn."""
        sid = kw.get("session_id")
        with self.lock:
            turn = str(kw.get("turn_id") or self.session_turn.get(str(sid)))
            root = self.roots.pop(turn, None)
            self.turn_apis.pop(turn, None)
            kind = "subagent" if str(sid) in self.children else "agent"
        if root is None:
            return
        completed = kw.get("completed") is True
        status = "completed" if completed else "interrupted" if kw.get("interrupted") else "failed"
        attrs: dict[str, Any] = {
            "hermes.session.completed": completed,
            "hermes.session.interrupted": kw.get("interrupted") is True,
            "hermes.turn.reason": str(kw.get("reason")),
            "hermes.turn.final_status": status,
            "hermes.turn.api_call_count": root.api_calls,
            "hermes.turn.tool_count": len(root.tools),
            "hermes.turn.skill_count": 0,
            "hermes.turn.tools": ",".join(root.tools),
            "hermes.turn.tool_targets": ",".join(root.targets),
            "hermes.turn.tool_commands": "\n".join(root.commands),
            "hermes.turn.tool_outcomes": ",".join(f"{k}={v}" for k, v in root.outcomes.items()),
            "output.value": _text(kw.get("final_response") or ""),
            "output.mime_type": "text/plain",
        }
        for key, value in root.tokens.items():
            attrs[f"hermes.turn.{key}"] = value
        root.span.set_attributes(attrs)
        root.span.end()
        self.sessions.add(1, {"kind": kind, "final_status": status})

    def pre_api_request(self, **kw: Any) -> None:
        """Open ``api.{model}`` under the turn's ``llm`` span."""
        rid = kw.get("api_request_id")
        if not isinstance(rid, str):
            return
        attrs = {**_ids(kw), **_model(kw), "hermes.api_request_id": rid}
        provider = str(kw.get("provider") or "unknown")
        attrs.update({"llm.provider": provider, "gen_ai.provider.name": provider})
        url = str(kw.get("base_url") or "")
        host, _, port = url.split("//")[-1].split("/")[0].partition(":")
        attrs.update({"server.address": host, "llm.api_mode": str(kw.get("api_mode") or "")})
        if port.isdigit():
            attrs["server.port"] = int(port)
        if isinstance(kw.get("api_call_count"), int):
            attrs["hermes.api_call_count"] = kw["api_call_count"]
        for key in ("message_count", "tool_count", "approx_input_tokens"):
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
        turn_id = str(kw.get("turn_id"))
        with self.lock:
            span = self.api.pop(str(kw.get("api_request_id")), None)
            turn = self.roots.get(turn_id)
        if span is None:
            return
        raw_usage = kw.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        model = str(kw.get("model") or "unknown")
        provider = str(kw.get("provider") or "unknown")
        response_model = str(kw.get("response_model") or model)
        attrs: dict[str, Any] = {"gen_ai.response.model": response_model}
        for key, semconv, oi in (
            ("input_tokens", "input_tokens", "prompt"),
            ("output_tokens", "output_tokens", "completion"),
            ("total_tokens", "total_tokens", "total"),
            ("cache_read_tokens", "cache_read.input_tokens", "prompt_details.cache_read"),
            ("reasoning_tokens", "reasoning.output_tokens", "completion_details.reasoning"),
        ):
            value = usage.get(key)
            if isinstance(value, int):
                attrs[f"gen_ai.usage.{semconv}"] = value
                attrs[f"llm.token_count.{oi}"] = value
                if turn is not None:
                    turn.tokens[key] += value
        labels = {"model": model, "provider": provider}
        semconv_labels = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
            "gen_ai.response.model": response_model,
        }
        for key, oi in (("input_tokens", "prompt"), ("output_tokens", "completion")):
            if isinstance(usage.get(key), int):
                self.tokens[oi].add(usage[key], labels)
                kind = "input" if key == "input_tokens" else "output"
                self.token_usage.record(usage[key], {**semconv_labels, "gen_ai.token.type": kind})
        if isinstance(usage.get("total_tokens"), int):
            self.tokens["total"].add(usage["total_tokens"], labels)
        if turn is not None:
            turn.api_calls += 1
        content_chars = kw.get("assistant_content_chars")
        if isinstance(content_chars, int):
            attrs["llm.response.output_chars"] = content_chars
        if isinstance(kw.get("assistant_tool_call_count"), int):
            attrs["llm.response.tool_calls"] = kw["assistant_tool_call_count"]
        duration = kw.get("api_duration")
        if isinstance(duration, int | float):
            attrs["llm.response.duration_ms"] = attrs["http.duration_ms"] = int(duration * 1000)
        if kw.get("finish_reason"):
            attrs["gen_ai.response.finish_reasons"] = [str(kw["finish_reason"])]
            attrs["llm.response.finish_reason"] = str(kw["finish_reason"])
        response = kw.get("response")
        message = response.get("assistant_message") if isinstance(response, dict) else None
        if isinstance(message, dict):
            attrs["output.value"] = _text(message)
            attrs["output.mime_type"] = "application/json"
        span.set_attributes(attrs)
        span.end()
        if isinstance(duration, int | float):
            self.api_duration.record(float(duration) * 1000, labels)
            self.operation.record(float(duration), semconv_labels)

    def pre_tool_call(self, **kw: Any) -> None:
        """Open ``tool.{name}`` under its ``api`` span."""
        call = kw.get("tool_call_id")
        if not isinstance(call, str):
            return
        name = str(kw.get("tool_name") or "tool")
        attrs = {**_ids(kw), "openinference.span.kind": "TOOL", "tool.name": name}
        raw = kw.get("args")
        args = _text(raw)
        attrs.update({"gen_ai.tool.name": name, "gen_ai.tool.type": "function"})
        attrs.update({"gen_ai.tool.call.id": call, "tool.id": call})
        attrs.update({"input.value": args, "gen_ai.tool.call.arguments": args})
        attrs.update(
            {"input.mime_type": "application/json", "gen_ai.operation.name": "execute_tool"}
        )
        target = _target(raw)
        if target is not None:
            attrs["hermes.tool.target"] = target
        command = None
        if name == "terminal" and isinstance(raw, dict):
            command = attrs["hermes.tool.command"] = _text(raw.get("command") or "")
        turn = str(kw.get("turn_id"))
        with self.lock:
            apis = self.turn_apis.get(turn, {})
            parent = apis.get(str(kw.get("api_request_id"))) or self.llm.get(turn)
            self.tools[call] = (self._start(f"tool.{name}", parent, attrs), turn, name)
            root = self.roots.get(turn)
            if root is not None:
                root.tools.append(name)
                if target is not None:
                    root.targets.append(target)
                if command is not None:
                    root.commands.append(command)

    def post_tool_call(self, **kw: Any) -> None:
        """End the tool span with its result and outcome; count the call."""
        with self.lock:
            found = self.tools.pop(str(kw.get("tool_call_id")), None)
        if found is None:
            return
        span, turn, name = found
        result = _text(kw.get("result"))
        outcome = "completed" if kw.get("status") in (None, "ok") else str(kw.get("status"))
        span.set_attributes(
            {
                "output.value": result,
                "gen_ai.tool.call.result": result,
                "hermes.tool.outcome": outcome,
                "hermes.tool.duration_ms": int(kw.get("duration_ms") or 0),
            }
        )
        if outcome != "completed":
            span.set_status(Status(StatusCode.ERROR, str(kw.get("error_message"))))
        span.end()
        labels = {"tool_name": name, "outcome": outcome}
        self.tool_calls.add(1, labels)
        if isinstance(kw.get("duration_ms"), int | float):
            self.tool_duration.record(kw["duration_ms"], labels)
        with self.lock:
            root = self.roots.get(turn)
            if root is not None:
                root.outcomes[outcome] = root.outcomes.get(outcome, 0) + 1

    def subagent_start(self, **kw: Any) -> None:
        """Open ``subagent.{role}`` under the delegating tool call's span."""
        child = kw.get("child_session_id")
        if not isinstance(child, str):
            return
        role = str(kw.get("child_role") or "leaf")
        goal = _text(kw.get("child_goal") or "")
        attrs = {**_ids(kw, "parent_session_id"), "openinference.span.kind": "AGENT"}
        attrs.update({"gen_ai.agent.name": role, "gen_ai.operation.name": "invoke_agent"})
        attrs.update({"hermes.subagent.child_session_id": child, "hermes.subagent.role": role})
        attrs.update({"hermes.subagent.goal": goal, "input.value": goal})
        for key in ("parent_session_id", "parent_turn_id"):
            attrs[f"hermes.subagent.{key}"] = str(kw.get(key))
        attrs["hermes.subagent.child_id"] = str(kw.get("child_subagent_id"))
        attrs["gen_ai.tool.call.id"] = str(kw.get("parent_tool_call_id"))
        with self.lock:
            tool = self.tools.get(str(kw.get("parent_tool_call_id")))
            root = self.roots.get(str(kw.get("parent_turn_id")))
            parent = tool[0] if tool else root.span if root else None
            self.subagents[child] = (self._start(f"subagent.{role}", parent, attrs), role)
            self.children[child] = dict(kw)

    def subagent_stop(self, **kw: Any) -> None:
        """End the delegation span with its outcome; count it."""
        with self.lock:
            found = self.subagents.pop(str(kw.get("child_session_id")), None)
        if found is None:
            return
        span, role = found
        status = str(kw.get("child_status"))
        summary = _text(kw.get("child_summary") or "")
        span.set_attributes(
            {
                "hermes.subagent.status": status,
                "hermes.subagent.summary": summary,
                "output.value": summary,
                "hermes.subagent.duration_ms": int(kw.get("duration_ms") or 0),
            }
        )
        span.end()
        self.subagent_count.add(1, {"role": role, "status": status})
        if isinstance(kw.get("duration_ms"), int | float):
            self.subagent_duration.record(kw["duration_ms"], {"role": role})

    def shutdown(self) -> None:
        """End what is open, export everything, stop the SDK's threads."""
        with self.lock:
            spans = [tool[0] for tool in self.tools.values()]
            spans += [*self.api.values(), *self.llm.values()]
            spans += [sub[0] for sub in self.subagents.values()]
            spans += [turn.span for turn in self.roots.values()]
            for group in (self.tools, self.api, self.llm, self.subagents, self.roots):
                group.clear()
        for span in spans:
            span.end()
        self.provider.shutdown()
        self.meters.shutdown()


def record_shape(spans: Path) -> dict[str, list[str]]:
    """What a span file and its metrics file record, for comparing two observers: per kind
    of span (``agent``, ``api``, ``llm``, ``tool``, ``subagent``) the attribute keys any
    of them carries, and per metric the attribute keys of its points."""
    shape: dict[str, set[str]] = {}
    for line in spans.read_text(encoding="utf-8").splitlines():
        span = json.loads(line)
        shape.setdefault(f"span {span['name'].split('.')[0]}", set()).update(span["attributes"])
    metrics = spans.with_suffix(".metrics.jsonl")
    for line in metrics.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line).get("resource_metrics", []):
            for scope in resource["scope_metrics"]:
                for metric in scope["metrics"]:
                    keys = shape.setdefault(f"metric {metric['name']}", set())
                    for point in metric["data"]["data_points"]:
                        keys.update(point["attributes"])
    return {name: sorted(keys) for name, keys in sorted(shape.items())}
