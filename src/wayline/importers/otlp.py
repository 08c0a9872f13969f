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

from wayline.contract.semconv import SESSION_KEYS, TOKEN_KEYS
from wayline.importers.common import (
    Imported,
    ImportFailure,
    Trajectory,
    arguments_of,
    metrics_of,
    text_of,
)
from wayline.importers.otlp_messages import Message, input_messages, output_messages
from wayline.relay.atif.model import Step, ToolCall
from wayline.relay.atif.payloads import JsonDict

__all__ = ["AGENT", "Span", "read_otlp", "spans_of"]

AGENT = "otlp"
_LLM_OPERATIONS = ("chat", "text_completion", "generate_content", "completion")
_AGENT_OPERATIONS = ("invoke_agent", "create_agent")


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


# The token counts an ATIF step keeps, under its names; other writers' spelling of a key.
_STEP_TOKENS = {
    "input_tokens": "prompt_tokens",
    "output_tokens": "completion_tokens",
    "cache_read_tokens": "cache_read_tokens",
    "cache_write_tokens": "cache_write_tokens",
}
_ALSO = {"cache_write_tokens": ("gen_ai.usage.cache_creation.input_tokens",)}


def _usage(span: Span) -> JsonDict | None:
    usage: JsonDict = {}
    for key, oi, genai in TOKEN_KEYS:
        value = span.attr(genai, *_ALSO.get(key, ()), oi) if key in _STEP_TOKENS else None
        if isinstance(value, int):
            usage[_STEP_TOKENS[key]] = value
    return metrics_of(usage) if usage else None


_NEVER = 1 << 80  # sorts after every end time: results no tool span gave keep their place


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
        # When each tool span ended, by call id, and the steps it answered: a step's results
        # are put in the order its tools finished, as a live recording has them (parallel
        # tools often start at the same instant, so the spans' order says nothing).
        self.ended: dict[str, int] = {}
        self.answered: dict[int, Step] = {}

    def finish(self) -> None:
        """Order each step's results by when their tools ended; reference each subagent from
        the call that delegated to it."""
        ended = self.ended
        for step in self.answered.values():
            step.results.sort(key=lambda r: ended.get(r.source_call_id or "", _NEVER))
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
            if span.kind == "agent" and self._invoked_by_call(parent):
                name = str(span.attr("gen_ai.agent.name", "hermes.subagent.role") or span.name)
                found = above.child(f"agent-{span.span_id}", name)
                found.node.scope_uuid = span.span_id
                # linked at the end: the delegating call's span may start at the same instant
                self.pending.append((above, span, parent, found))
            else:
                found = above
        self.owner[span.span_id] = found
        return found

    def _invoked_by_call(self, parent: Span | None) -> bool:
        """Whether the nearest model call, tool or agent span above is a model call or a tool
        (wayline's ``subagent.{role}`` under the api span, an agent run as a tool); an agent
        span under an agent span, or only under chains (a workflow), is the same agent."""
        while parent is not None and parent.kind == "other":
            parent = self.by_id.get(parent.parent_id or "")
        return parent is not None and parent.kind in ("llm", "tool")

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
            sent = input_messages(span.attributes)
            if sent is not None:
                self._sent(t, span, sent)
            elif not t.node.steps:
                text = _user_input(span)
                if text:
                    t.step("user", text, _stamp(span.start_ns), {"span_id": span.span_id})
            model = span.attr("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
            extra = {**ids, "error": True} if span.error else ids
            returned = output_messages(span.attributes)
            answer = [m for m in returned or [] if m.role in ("assistant", "model", "")]
            text = "\n\n".join(m.text for m in answer if m.text) if returned else _output(span)
            step = t.step("agent", text, _stamp(span.start_ns), extra, model=model)
            step.metrics = _usage(span)
            self.step_of[span.span_id] = step
            for n, (call_id, name, arguments) in enumerate(c for m in answer for c in m.calls):
                made = t.call(step, call_id or f"{span.span_id}-{n}", name, arguments_of(arguments))
                made.extra = {**(made.extra or {}), "from": "output_messages"}
        elif kind == "tool":
            above = self._step_above(span)
            if above is None or above not in t.node.steps:
                agents = t.agent_steps()
                above = agents[-1] if agents else t.step("agent", "", _stamp(span.start_ns), ids)
            step = above
            raw_id = span.attr("gen_ai.tool.call.id", "tool_call.id", "tool.id")
            name = str(span.attr("gen_ai.tool.name", "tool.name") or span.name)
            arguments = span.attr("gen_ai.tool.call.arguments", "input.value", "tool.parameters")
            call = self._made(t, step, raw_id if isinstance(raw_id, str) else None, name)
            if call is None:
                call = t.call(
                    step,
                    raw_id if isinstance(raw_id, str) and raw_id else span.span_id,
                    name,
                    arguments_of(arguments),
                )
            call.extra = {**(call.extra or {}), "span_id": span.span_id}
            self.call_of[span.span_id] = call.call_id
            result = span.attr("gen_ai.tool.call.result", "output.value")
            extra = {"status": "error"} if span.error else {}
            if t.result(call.call_id, None if result is None else _text(result), extra):
                answered = t.calls[call.call_id][0]
                self.ended[call.call_id] = span.end_ns
                self.answered[id(answered)] = answered

    def _made(self, t: Trajectory, step: Step, call_id: str | None, name: str) -> ToolCall | None:
        """The call a model call's output already made that this tool span ran: by id, else
        (a tool span without one) the first call of that name on the step still unanswered."""
        if call_id:
            found = t.calls.get(call_id)
            if found is not None and t.result_of(found[1].call_id) is None:
                return found[1]
            return None
        return next(
            (
                c
                for c in step.tool_calls
                if c.name == name
                and (c.extra or {}).get("from") == "output_messages"
                and "span_id" not in (c.extra or {})
                and t.result_of(c.call_id) is None
            ),
            None,
        )

    def _sent(self, t: Trajectory, span: Span, sent: list[Message]) -> None:
        """What a model call was sent: the whole history when it is the trajectory's first
        (later ones were recorded as they happened), and tool results no tool span gave."""
        stamp = _stamp(span.start_ns)
        first = not t.node.steps
        ids: JsonDict = {"span_id": span.span_id, "from": "input_messages"}
        step: Step | None = None
        for n, message in enumerate(sent):
            if message.role == "tool" or message.answers is not None:
                call = t.calls.get(message.answers or "")
                if call is not None and t.result_of(call[1].call_id) is None:
                    t.result(call[1].call_id, message.text, {"from": "input_messages"})
                elif first:
                    t.orphan_result(message.answers, message.text, {"from": "input_messages"})
            elif not first:
                continue
            elif message.role in ("system", "developer"):
                t.step("system", message.text, stamp, {**ids, "role": message.role})
            elif message.role == "user":
                t.step("user", message.text, stamp, ids)
            else:
                step = t.step("agent", message.text, stamp, ids)
                for k, (call_id, name, arguments) in enumerate(message.calls):
                    made = call_id or f"{span.span_id}-in{n}-{k}"
                    t.call(step, made, name, arguments_of(arguments))


def _depth(span: Span, by_id: dict[str, Span]) -> int:
    n = 0
    while span.parent_id in by_id and n < 10_000:
        span = by_id[span.parent_id]
        n += 1
    return n


def _said(messages: list[Message]) -> list[tuple[str, str, tuple[str | None, ...], str | None]]:
    return [(m.role, m.text, tuple(c[0] for c in m.calls), m.answers) for m in messages]


def _continued(groups: dict[str, list[Span]], keyed: set[str]) -> dict[str, list[Span]]:
    """Traces with no session id whose first model call was sent the whole conversation of an
    earlier trace's last model call (what it was sent and what it returned) go on that trace:
    a client instrumented alone records each call of one conversation as a trace of its own."""
    out: dict[str, list[Span]] = {}
    ends: list[tuple[str, list[tuple[str, str, tuple[str | None, ...], str | None]]]] = []
    for key, members in sorted(groups.items(), key=lambda kv: min(s.start_ns for s in kv[1])):
        calls = sorted((s for s in members if s.kind == "llm"), key=lambda s: s.start_ns)
        sent = input_messages(calls[0].attributes) if calls and key not in keyed else None
        head = _said(sent) if sent else []
        into = next(
            (k for k, said in ends if said and len(head) > len(said) and head[: len(said)] == said),
            None,
        )
        if into is not None:
            out[into].extend(members)
            ends = [(k, said) for k, said in ends if k != into]
            key = into
        else:
            out[key] = list(members)
        if calls and key not in keyed:
            last = calls[-1].attributes
            said = _said((input_messages(last) or []) + (output_messages(last) or []))
            ends.append((key, said))
    return out


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
        key = top.attr(*SESSION_KEYS)
        if key is None:
            key = span.attr(*SESSION_KEYS)
        groups.setdefault(str(key) if key is not None else span.trace_id, []).append(span)
    keyed = {str(s.attr(*SESSION_KEYS)) for s in spans if s.attr(*SESSION_KEYS) is not None}
    groups = _continued(groups, keyed)
    out: list[Imported] = []
    for session_id, members in groups.items():
        members.sort(key=lambda s: (s.start_ns, s.end_ns))
        names = (s.attr("gen_ai.agent.name", "agent.name") for s in members if s.kind == "agent")
        name = next((n for n in names if isinstance(n, str) and n), None)
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
