"""OTLP JSON traces into ATIF: the Collector's file exporter (one ``ExportTraceServiceRequest``
per line) and OTLP/HTTP JSON bodies, with GenAI (``gen_ai.*``) or OpenInference attributes.

Spans are grouped into sessions by ``session.id`` / ``gen_ai.conversation.id`` (else by trace)
and read in start order, the way docs/otel.md maps wayline's own spans:

- a model call (OpenInference ``LLM``, or ``gen_ai.operation.name`` ``chat`` …) with no model
  call below it is an agent step: its output, model, token usage;
- a top-level agent span's ``input.value`` is the user message of its turn (a trajectory with
  no agent span takes its user message from the first model call's input messages);
- a tool span (``TOOL`` / ``execute_tool``) is a tool call with its arguments and result, on
  the model call above it, else on the latest agent step;
- an agent span below a span that is not an agent span (wayline's ``subagent.{role}``) starts
  an embedded subagent, referenced from the delegating call (``gen_ai.tool.call.id``).

Trace and span ids may be hex (OTLP JSON) or base64 (protobuf's JSON mapping).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wayline.importers.common import (
    Imported,
    ImportFailure,
    Trajectory,
    arguments_of,
    metrics_of,
    text_of,
)
from wayline.relay.atif.model import Step
from wayline.relay.atif.payloads import JsonDict

__all__ = ["AGENT", "Span", "read_otlp", "spans_of"]

AGENT = "otlp"
_LLM_OPERATIONS = ("chat", "text_completion", "generate_content", "completion")
_AGENT_OPERATIONS = ("invoke_agent", "create_agent")
_SESSION_KEYS = ("session.id", "gen_ai.conversation.id", "hermes.session.id")


@dataclass
class Span:
    """One span, its attributes decoded to plain values."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: JsonDict
    error: bool
    line: int | None
    children: list[Span] = field(default_factory=list)

    def attr(self, *keys: str) -> Any:
        """The first of ``keys`` the span has."""
        return next((self.attributes[k] for k in keys if k in self.attributes), None)

    @property
    def kind(self) -> str:
        """``llm``, ``agent``, ``tool`` or ``other`` (from OpenInference, then GenAI)."""
        oi = str(self.attributes.get("openinference.span.kind", "")).upper()
        op = self.attributes.get("gen_ai.operation.name")
        if oi == "LLM" or op in _LLM_OPERATIONS:
            return "llm"
        if oi == "TOOL" or op == "execute_tool":
            return "tool"
        if oi == "AGENT" or op in _AGENT_OPERATIONS:
            return "agent"
        return "other"


def _value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "arrayValue" in value:
        return [_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return {
            kv.get("key"): _value(kv.get("value"))
            for kv in (value["kvlistValue"] or {}).get("values") or []
        }
    return None


def _id(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw:
        return None
    if len(raw) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in raw):
        return raw.lower()
    try:
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):
        return raw


def _int(raw: Any) -> int:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


def spans_of(request: Any, path: Path, line: int | None) -> list[Span]:
    """The spans of one ``ExportTraceServiceRequest`` object."""
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
        raise ImportFailure(path, line, "resourceSpans", "missing or not a list")
    out: list[Span] = []
    for r, resource in enumerate(request["resourceSpans"]):
        scopes = resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []
        for s, scope in enumerate(scopes):
            for n, raw in enumerate(scope.get("spans") or []):
                at = f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                span_id = _id(raw.get("spanId")) if isinstance(raw, dict) else None
                if span_id is None:
                    raise ImportFailure(path, line, f"{at}.spanId", "missing")
                trace_id = _id(raw.get("traceId"))
                if trace_id is None:
                    raise ImportFailure(path, line, f"{at}.traceId", "missing")
                attributes: JsonDict = {
                    str(kv.get("key")): _value(kv.get("value"))
                    for kv in raw.get("attributes") or []
                    if isinstance(kv, dict)
                }
                status = raw.get("status") or {}
                code = status.get("code")
                out.append(
                    Span(
                        trace_id,
                        span_id,
                        _id(raw.get("parentSpanId")),
                        str(raw.get("name") or ""),
                        _int(raw.get("startTimeUnixNano")),
                        _int(raw.get("endTimeUnixNano")),
                        attributes,
                        code in (2, "STATUS_CODE_ERROR"),
                        line,
                    )
                )
    return out


def _read(path: Path) -> list[Span]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFailure(path, None, "file", f"cannot read: {exc}") from None
    try:
        return spans_of(json.loads(text), path, None)  # one OTLP/HTTP JSON body
    except ValueError:
        pass
    spans: list[Span] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            request = json.loads(raw)
        except ValueError as exc:
            raise ImportFailure(path, number, "line", f"not JSON ({exc})") from None
        spans.extend(spans_of(request, path, number))
    return spans


def _stamp(ns: int) -> str | None:
    if ns <= 0:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat()


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _user_input(span: Span) -> str | None:
    """The last user message a model call was sent, in either convention."""
    messages = span.attr("gen_ai.input.messages")
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            messages = None
    if isinstance(messages, list):
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            parts = users[-1].get("parts") or users[-1].get("content")
            return text_of(parts)
    found: str | None = None
    index = 0
    while f"llm.input_messages.{index}.message.role" in span.attributes:
        if span.attributes[f"llm.input_messages.{index}.message.role"] == "user":
            found = _text(span.attributes.get(f"llm.input_messages.{index}.message.content"))
        index += 1
    if found is None and span.attr("input.mime_type") in (None, "text/plain"):
        value = span.attr("input.value", "gen_ai.prompt")
        found = value if isinstance(value, str) else None
    return found


def _output(span: Span) -> str:
    value = span.attr("output.value", "gen_ai.completion", "llm.output_messages.0.message.content")
    if value is None:
        messages = span.attr("gen_ai.output.messages")
        if isinstance(messages, str):
            try:
                messages = json.loads(messages)
            except ValueError:
                return str(messages)
        if isinstance(messages, list) and messages and isinstance(messages[0], dict):
            return text_of(messages[0].get("parts") or messages[0].get("content"))
    if isinstance(value, str) and value.startswith("{"):
        try:
            message = json.loads(value)
        except ValueError:
            return value
        if isinstance(message, dict) and message.get("role") == "assistant":
            return text_of(message.get("content"))  # a chat message: its text only
    return _text(value)


def _usage(span: Span) -> JsonDict | None:
    usage: JsonDict = {}
    for target, keys in (
        ("prompt_tokens", ("gen_ai.usage.input_tokens", "llm.token_count.prompt")),
        ("completion_tokens", ("gen_ai.usage.output_tokens", "llm.token_count.completion")),
        (
            "cache_read_tokens",
            ("gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt_details.cache_read"),
        ),
        (
            "cache_write_tokens",
            (
                "gen_ai.usage.cache_write.input_tokens",
                "gen_ai.usage.cache_creation.input_tokens",
                "llm.token_count.prompt_details.cache_write",
            ),
        ),
    ):
        value = span.attr(*keys)
        if isinstance(value, int):
            usage[target] = value
    return metrics_of(usage) if usage else None


class _Group:
    """The spans of one session turned into one trajectory with its subagents."""

    def __init__(self, root: Trajectory, spans: list[Span]) -> None:
        self.root = root
        self.by_id = {s.span_id: s for s in spans}
        for span in spans:
            parent = self.by_id.get(span.parent_id or "")
            if parent is not None:
                parent.children.append(span)
        self.owner: dict[str, Trajectory] = {}
        self.step_of: dict[str, Step] = {}
        self.call_of: dict[str, str] = {}  # tool span id -> tool call id
        self.pending: list[tuple[Trajectory, Span, Span, Trajectory]] = []

    def finish(self) -> None:
        """Reference each subagent from the call that delegated to it."""
        for above, span, parent, child in self.pending:
            call_id = span.attr("gen_ai.tool.call.id") or self._call_above(parent)
            if isinstance(call_id, str):
                above.link(call_id, child)

    def _has_llm_below(self, span: Span) -> bool:
        # A subagent's model calls are its own: the search stops at agent and tool spans.
        return any(
            c.kind == "llm" or (c.kind == "other" and self._has_llm_below(c)) for c in span.children
        )

    def trajectory(self, span: Span) -> Trajectory:
        known = self.owner.get(span.span_id)
        if known is not None:
            return known
        parent = self.by_id.get(span.parent_id or "")
        if parent is None:
            found = self.root
        else:
            above = self.trajectory(parent)
            if span.kind == "agent" and parent.kind != "agent":
                name = str(span.attr("gen_ai.agent.name", "hermes.subagent.role") or span.name)
                found = above.child(f"agent-{span.span_id}", name)
                found.node.scope_uuid = span.span_id
                # linked at the end: the delegating call's span may start at the same instant
                self.pending.append((above, span, parent, found))
            else:
                found = above
        self.owner[span.span_id] = found
        return found

    def _call_above(self, span: Span | None) -> str | None:
        while span is not None:
            if span.span_id in self.call_of:
                return self.call_of[span.span_id]
            span = self.by_id.get(span.parent_id or "")
        return None

    def _step_above(self, span: Span) -> Step | None:
        parent = self.by_id.get(span.parent_id or "")
        while parent is not None:
            if parent.span_id in self.step_of:
                return self.step_of[parent.span_id]
            parent = self.by_id.get(parent.parent_id or "")
        return None

    def add(self, span: Span) -> None:
        t = self.trajectory(span)
        ids: JsonDict = {"span_id": span.span_id, "trace_id": span.trace_id}
        kind = span.kind
        starts = self.by_id.get(span.parent_id or "") is None or (
            t is not self.root and not t.node.steps
        )
        if kind == "agent" and starts:
            text = span.attr("input.value")
            if isinstance(text, str) and text:
                t.step("user", text, _stamp(span.start_ns), ids)
        elif kind == "llm" and not self._has_llm_below(span):
            if not t.node.steps:
                text = _user_input(span)
                if text:
                    t.step("user", text, _stamp(span.start_ns), {"span_id": span.span_id})
            model = span.attr("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
            extra = {**ids, "error": True} if span.error else ids
            step = t.step("agent", _output(span), _stamp(span.start_ns), extra, model=model)
            step.metrics = _usage(span)
            self.step_of[span.span_id] = step
        elif kind == "tool":
            above = self._step_above(span)
            if above is None or above not in t.node.steps:
                agents = t.agent_steps()
                above = agents[-1] if agents else t.step("agent", "", _stamp(span.start_ns), ids)
            step = above
            raw_id = span.attr("gen_ai.tool.call.id", "tool_call.id", "tool.id")
            name = span.attr("gen_ai.tool.name", "tool.name") or span.name
            arguments = span.attr("gen_ai.tool.call.arguments", "input.value", "tool.parameters")
            call = t.call(
                step,
                raw_id if isinstance(raw_id, str) and raw_id else span.span_id,
                str(name),
                arguments_of(arguments),
            )
            call.extra = {**(call.extra or {}), "span_id": span.span_id}
            self.call_of[span.span_id] = call.call_id
            result = span.attr("gen_ai.tool.call.result", "output.value")
            extra = {"status": "error"} if span.error else {}
            t.result(call.call_id, None if result is None else _text(result), extra)


def _depth(span: Span, by_id: dict[str, Span]) -> int:
    n = 0
    while span.parent_id in by_id and n < 10_000:
        span = by_id[span.parent_id]
        n += 1
    return n


def read_otlp(path: Path) -> list[Imported]:
    """One trajectory per session (or trace) of the OTLP JSON file ``path``."""
    spans = _read(path)
    if not spans:
        raise ImportFailure(path, None, "resourceSpans", "no spans")
    groups: dict[str, list[Span]] = {}
    by_id = {s.span_id: s for s in spans}
    for span in spans:
        top = span
        while top.parent_id in by_id:  # a subagent's spans belong to the session above it
            top = by_id[top.parent_id]
        key = top.attr(*_SESSION_KEYS)
        if key is None:
            key = span.attr(*_SESSION_KEYS)
        groups.setdefault(str(key) if key is not None else span.trace_id, []).append(span)
    out: list[Imported] = []
    for session_id, members in groups.items():
        members.sort(key=lambda s: (s.start_ns, s.end_ns))
        agent_span = next((s for s in members if s.kind == "agent"), None)
        name = agent_span.attr("gen_ai.agent.name") if agent_span is not None else None
        root = Trajectory.root(session_id, str(name or AGENT), None, None)
        group = _Group(root, members)
        depth: dict[str, int] = {}
        for span in members:
            depth[span.span_id] = _depth(span, by_id)
        members.sort(key=lambda s: (s.start_ns, depth[s.span_id], s.kind != "tool"))
        for span in members:
            group.add(span)
        group.finish()
        if not root.node.steps:
            continue  # spans of no model call, tool or agent: nothing to show as steps
        traces = sorted({s.trace_id for s in members})
        source: JsonDict = {"trace_ids": traces, "spans": len(members)}
        out.append(Imported(root, "otlp-json", session_id, path, source))
    if not out:
        raise ImportFailure(path, None, "resourceSpans", "no model call, tool or agent spans")
    return out
