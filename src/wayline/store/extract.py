"""From one ATIF document to what the index keeps: a summary per trajectory, text per step.

Every trajectory of a document is a session of its own: the root and each embedded subagent
(``subagent_trajectories``, at any depth), linked by ``parent_id``. Each trajectory's totals
count only its own steps, as its ``final_metrics`` do, so sums over sessions equal sums over
the files' ``final_metrics``.

How a session ended (``status``) is read from its last turn, as the viewer reads it: the
outcome its user step records (``extra.turn_outcome``, from the run's end mark) when there is
one; else from its steps: a model call cancelled (or a tool call cancelled) is
``interrupted``, a model call that failed is ``failed``, tools that ran with no answer after
them is ``max_turns``, an answer is ``completed``, and a turn with no reply yet is
``running``. The ATOF reader
(:mod:`wayline.store.atof`) overrides this with what the events say when it has them: a turn
still open, or the reason the runtime recorded when the turn ended.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from wayline.relay.atif.payloads import timestamp_ns
from wayline.trajectory.load import arguments_of, is_continuation, result_text, text_of

__all__ = [
    "MARK_REASONS",
    "MAX_FIELD_CHARS",
    "STATUSES",
    "SessionRecord",
    "StepText",
    "arguments_text",
    "infer_status",
    "is_wayline_recording",
    "llm_outcome",
    "reason_status",
    "records_of",
    "result_outcome",
    "session_key",
    "step_lines",
    "step_number",
]

STATUSES = ("completed", "failed", "interrupted", "max_turns", "running")
"""Every status a session may have."""

MARK_REASONS = {
    "completed": "completed",
    "max_turns": "max_turns",
    "max_iterations": "max_turns",
    "interrupted": "interrupted",
    "cancelled": "interrupted",
    "api_error": "failed",
    "error": "failed",
    "failed": "failed",
}
"""The reason a runtime records when a turn ends → the session status it means."""

MAX_FIELD_CHARS = 100_000
"""Characters of one step field that are searchable; text past them is not indexed (it is
redacted first, so a cut never leaves part of a secret)."""

JsonDict = dict[str, Any]


@dataclass(slots=True)
class StepText:
    """One searchable field of one step: ``step`` is the 1-based number the viewer shows."""

    step: int
    field: str
    text: str


@dataclass(slots=True)
class SessionRecord:
    """The summary of one trajectory, and its searchable text."""

    session_id: str
    parent_id: str | None
    agent: str | None
    model: str | None
    models: list[str]
    started_ns: int | None
    ended_ns: int | None
    status: str
    steps: int
    tool_calls: int
    tools: dict[str, list[int]]  # name -> [calls, failed calls]
    errors: int
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    cost_usd: float | None
    children: list[str] = field(default_factory=list)
    texts: list[StepText] = field(default_factory=list)
    # Where the trajectory sits in its document: indexes into subagent_trajectories.
    where: tuple[int, ...] = ()

    @property
    def duration_ms(self) -> float | None:
        """Milliseconds from the first to the last instant recorded, or None."""
        if self.started_ns is None or self.ended_ns is None:
            return None
        return round((self.ended_ns - self.started_ns) / 1e6, 3)


def session_key(traj: Mapping[str, Any], parent_key: str | None, fallback: str) -> str:
    """The id a trajectory is listed under: its ``session_id``, unless that is its parent's
    (Relay's subagents share it), then its ``trajectory_id``."""
    sid = traj.get("session_id")
    tid = traj.get("trajectory_id")
    if isinstance(sid, str) and sid and sid != parent_key:
        return sid
    if isinstance(tid, str) and tid and tid != parent_key:
        return tid
    return fallback


def is_wayline_recording(doc: Mapping[str, Any]) -> bool:
    """Whether wayline's exporter wrote the document (it redacted everything before writing)."""
    agent = doc.get("agent")
    extra = agent.get("extra") if isinstance(agent, Mapping) else None
    return isinstance(extra, Mapping) and extra.get("source") == "wayline"


def records_of(
    doc: Mapping[str, Any], fallback_id: str, redact: Callable[[str], str] | None = None
) -> list[SessionRecord]:
    """The root trajectory and every embedded subagent of ``doc``, parents first.

    ``redact`` is applied to every searchable text (None: the text is kept as it is).
    """
    out: list[SessionRecord] = []
    _walk(doc, None, fallback_id, (), redact, out)
    return out


def _walk(
    traj: Mapping[str, Any],
    parent: SessionRecord | None,
    fallback: str,
    where: tuple[int, ...],
    redact: Callable[[str], str] | None,
    out: list[SessionRecord],
) -> None:
    key = session_key(traj, parent.session_id if parent else None, fallback)
    record = _record(traj, key, parent.session_id if parent else None, redact)
    record.where = where
    out.append(record)
    if parent is not None:
        parent.children.append(key)
    for index, sub in enumerate(_l(traj.get("subagent_trajectories"))):
        if type(sub) is dict:
            _walk(sub, record, f"{key}.{index}", (*where, index), redact, out)


# -- reading a trajectory ----------------------------------------------------------------------
#
# JSON documents only (what json.loads gives): plain dicts and lists are tested with ``type()``,
# which costs a tenth of an ``isinstance`` against ``Mapping`` on a path run once per value.

_NOTHING: Mapping[str, Any] = MappingProxyType({})


def _d(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict else _NOTHING


def _l(value: Any) -> list[Any] | tuple[()]:
    return value if type(value) is list else ()


def _number(value: Any) -> float | None:
    kind = type(value)
    if (kind is int or kind is float) and math.isfinite(value):
        return float(value)
    return None


def _text_ns(value: Any) -> int | None:
    if type(value) is not str:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        exact: int | None = timestamp_ns(value)  # RFC 3339 forms fromisoformat refuses
        return exact
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # Harbor writes naive UTC times
    return round(parsed.timestamp() * 1_000_000) * 1000


def _seconds_ns(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else round(number * 1e6) * 1000


def llm_outcome(step: Mapping[str, Any]) -> str | None:
    """``failed`` or ``interrupted`` when the step's model call did not answer, else None."""
    extra = _d(step.get("extra"))
    error = _d(extra.get("llm_response")).get("error")
    if type(error) is not dict and _d(extra.get("invocation")).get("status") != "error":
        return None
    if type(error) is dict and (
        error.get("reason") == "interrupted" or error.get("type") == "TurnInterrupted"
    ):
        return "interrupted"
    return "failed"


def result_outcome(result: Mapping[str, Any], text: str | None) -> str | None:
    """``failed`` or ``interrupted`` for a tool result that is an error or was cancelled."""
    extra = _d(result.get("extra"))
    meta = _d(extra.get("metadata"))
    status = meta.get("status")
    if status == "cancelled" or extra.get("status") == "cancelled":
        return "interrupted"
    if extra.get("is_error") is True or (
        type(status) is str and status.lower() in ("error", "failed", "failure")
    ):
        return "failed"
    if meta.get("otel.status_code") == "ERROR":
        return "failed"
    if text and '"error"' in text and text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if type(value) is dict and value.get("error"):
            return "failed"
    return None


Results = list[Mapping[str, Any]]


def _results_by_call(step: Mapping[str, Any]) -> tuple[dict[Any, Results], Results]:
    """A step's results by the call they answer, and those that name no call of it."""
    results = _l(_d(step.get("observation")).get("results"))
    if not results:
        return {}, []
    known = {c.get("tool_call_id") for c in _l(step.get("tool_calls")) if type(c) is dict}
    known.discard(None)
    by_call: dict[Any, Results] = {}
    loose: Results = []
    for result in results:
        if type(result) is not dict:
            continue
        call_id = result.get("source_call_id")
        if call_id in known:
            by_call.setdefault(call_id, []).append(result)
        else:
            loose.append(result)
    return by_call, loose


def step_number(step: Mapping[str, Any], index: int) -> int:
    """The number the viewer shows for a step: its ``step_id``, else its 1-based position."""
    value = step.get("step_id")
    return value if type(value) is int else index + 1


def arguments_text(call: Mapping[str, Any]) -> str:
    """A tool call's arguments as searchable text: ``name: value`` lines, strings unquoted."""
    args = arguments_of(call)
    if type(args) is dict:
        lines = []
        for name, value in args.items():
            shown = value if type(value) is str else json.dumps(value, ensure_ascii=False)
            lines.append(f"{name}: {shown}")
        return "\n".join(lines)
    return args if type(args) is str else json.dumps(args, ensure_ascii=False)


class _Reader:
    """One pass over a trajectory's steps: its summary and its searchable text."""

    __slots__ = (
        "errors",
        "first",
        "last",
        "metered",
        "models",
        "priced",
        "redact",
        "seen",
        "sums",
        "texts",
        "tool_calls",
        "tools",
    )

    def __init__(self, redact: Callable[[str], str] | None) -> None:
        self.redact = redact
        self.models: list[str] = []
        self.first: int | None = None
        self.last: int | None = None
        self.tools: dict[str, list[int]] = {}
        self.tool_calls = 0
        self.errors = 0
        self.sums = [0.0, 0.0, 0.0, 0.0]  # prompt, completion, cached tokens; cost
        self.seen = [False, False, False, False]
        self.priced = 0
        self.metered = 0
        self.texts: list[StepText] = []

    def instant(self, ns: int | None) -> None:
        if ns is None:
            return
        if self.first is None or ns < self.first:
            self.first = ns
        if self.last is None or ns > self.last:
            self.last = ns

    def text(self, number: int, field: str, text: str | None) -> None:
        if not text or text.isspace():
            return
        if self.redact is not None:
            text = self.redact(text)
        self.texts.append(StepText(number, field, text[:MAX_FIELD_CHARS]))

    def step(self, index: int, step: dict[str, Any]) -> None:
        number = step_number(step, index)
        source = step.get("source")
        searchable = source == "user" or source == "agent"  # system prompts: noise in search
        self.instant(_text_ns(step.get("timestamp")))
        extra = _d(step.get("extra"))
        invocation = _d(extra.get("invocation"))
        self.instant(_seconds_ns(invocation.get("start_timestamp")))
        self.instant(_seconds_ns(invocation.get("end_timestamp")))
        for tool in _l(extra.get("tool_invocations")):
            if type(tool) is dict:
                self.instant(_seconds_ns(tool.get("start_timestamp")))
                self.instant(_seconds_ns(tool.get("end_timestamp")))
        model = step.get("model_name")
        if type(model) is str and model and model not in self.models:
            self.models.append(model)
        if source == "agent" and llm_outcome(step) == "failed":
            self.errors += 1
        if searchable:
            self.text(number, str(source), text_of(step.get("message")))
            reasoning = step.get("reasoning_content")
            if type(reasoning) is str:
                self.text(number, "reasoning", reasoning)
        by_call, loose = _results_by_call(step)
        for call in _l(step.get("tool_calls")):
            if type(call) is not dict:
                continue
            name = str(call.get("function_name") or "?")
            self.tool_calls += 1
            counts = self.tools.setdefault(name, [0, 0])
            counts[0] += 1
            if searchable:
                self.text(number, f"args:{name}", arguments_text(call))
            for result in by_call.get(call.get("tool_call_id"), ()):
                body = result_text(result)
                if result_outcome(result, body) == "failed":
                    counts[1] += 1
                    self.errors += 1
                if searchable:
                    self.text(number, f"result:{name}", body)
        if searchable:
            for result in loose:
                self.text(number, "result", result_text(result))
        metrics = step.get("metrics")
        if type(metrics) is dict:
            self.metered += 1
            for slot, name in enumerate(_METRICS):
                value = _number(metrics.get(name))
                if value is not None:
                    self.sums[slot] += value
                    self.seen[slot] = True
                    if slot == 3:
                        self.priced += 1


_METRICS = ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd")
_TOTALS = ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens")


def _record(
    traj: Mapping[str, Any], key: str, parent: str | None, redact: Callable[[str], str] | None
) -> SessionRecord:
    agent = _d(traj.get("agent"))
    steps = [s for s in _l(traj.get("steps")) if type(s) is dict]
    reader = _Reader(redact)
    primary = agent.get("model_name")
    if type(primary) is str and primary:
        reader.models.append(primary)
    for index, step in enumerate(steps):
        reader.step(index, step)
    totals = _d(traj.get("final_metrics"))
    tokens: list[int | None] = []
    for slot, name in enumerate(_TOTALS):
        value = _number(totals.get(name))
        if value is None and reader.seen[slot]:
            value = reader.sums[slot]
        tokens.append(None if value is None else int(value))
    cost = _number(totals.get("total_cost_usd"))
    if cost is None and not totals and reader.priced and reader.priced == reader.metered:
        cost = reader.sums[3]  # no final_metrics: priced only when every metered step was
    label = agent.get("name")
    return SessionRecord(
        session_id=key,
        parent_id=parent,
        agent=label if type(label) is str else None,
        model=reader.models[0] if reader.models else None,
        models=reader.models,
        started_ns=reader.first,
        ended_ns=reader.last,
        status=infer_status(steps),
        steps=len(steps),
        tool_calls=reader.tool_calls,
        tools=reader.tools,
        errors=reader.errors,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cached_tokens=tokens[2],
        cost_usd=cost,
        texts=reader.texts,
    )


def reason_status(data: Any) -> str | None:
    """The status a turn's recorded end means: its ``reason`` (``completed``, ``max_turns``,
    ``interrupted``, ``api_error``…), else Hermes' ``interrupted``/``completed`` flags; None
    when it does not say (Hermes' ``completed: false``: the steps tell)."""
    if type(data) is not dict:
        return None
    reason = data.get("reason")
    if type(reason) is str and reason in MARK_REASONS:
        return MARK_REASONS[reason]
    if data.get("interrupted") is True:
        return "interrupted"
    if data.get("completed") is True:
        return "completed"
    return None


def infer_status(steps: list[dict[str, Any]]) -> str:
    """How the last turn of ``steps`` ended: what its user step records
    (``extra.turn_outcome``, which wayline's exporter and ``atif convert`` write from the run's
    end mark), else what its steps show (see the module doc)."""
    kept = [s for s in steps if s.get("source") in ("user", "agent")]
    start = 0
    previous: Mapping[str, Any] | None = None
    for index, step in enumerate(kept):
        if step.get("source") == "user" and not is_continuation(previous, step):
            start = index
        previous = step
    if kept and kept[start].get("source") == "user":
        told = reason_status(_d(kept[start].get("extra")).get("turn_outcome"))
        if told is not None:
            return told
    agents = [s for s in kept[start:] if s.get("source") == "agent"]
    if not agents:
        return "running" if kept else "completed"
    last = agents[-1]
    outcome = llm_outcome(last)
    if outcome is not None:
        return outcome
    by_call, loose = _results_by_call(last)
    results = [r for found in by_call.values() for r in found] + loose
    if any(result_outcome(r, None) == "interrupted" for r in results):
        return "interrupted"
    if _l(last.get("tool_calls")):
        return "max_turns"  # tools ran and no model call answered after them
    return "completed"


# -- one line per step (``wayline sessions show``) ---------------------------------------------


def step_lines(traj: Mapping[str, Any], origin_ns: int | None) -> list[JsonDict]:
    """One dict per step: number, source, time from ``origin_ns`` (ms), model, tokens, cost,
    the tools it called (each with ``error``), its outcome and the first line of its text."""
    out: list[JsonDict] = []
    for index, step in enumerate(_l(traj.get("steps"))):
        if type(step) is not dict:
            continue
        at = _text_ns(step.get("timestamp"))
        metrics = _d(step.get("metrics"))
        by_call, _loose = _results_by_call(step)
        calls = []
        for call in _l(step.get("tool_calls")):
            if type(call) is not dict:
                continue
            results = by_call.get(call.get("tool_call_id"), ())
            outcomes = {result_outcome(r, result_text(r)) for r in results}
            calls.append(
                {
                    "name": str(call.get("function_name") or "?"),
                    "error": "failed" in outcomes,
                    "cancelled": "interrupted" in outcomes,
                }
            )
        text = text_of(step.get("message")).strip()
        out.append(
            {
                "step": step_number(step, index),
                "source": step.get("source"),
                "at_ms": None
                if at is None or origin_ns is None
                else round((at - origin_ns) / 1e6, 3),
                "model": step.get("model_name"),
                "input_tokens": _int(metrics.get("prompt_tokens")),
                "output_tokens": _int(metrics.get("completion_tokens")),
                "cost_usd": _number(metrics.get("cost_usd")),
                "tools": calls,
                "outcome": llm_outcome(step) if step.get("source") == "agent" else None,
                "text": text.splitlines()[0][:200] if text else "",
            }
        )
    return out


def _int(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)
