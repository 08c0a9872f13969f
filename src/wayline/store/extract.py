"""From one ATIF document to what the index keeps: a summary per trajectory, text per step.

Every trajectory of a document is a session of its own: the root and each embedded subagent
(``subagent_trajectories``, at any depth), linked by ``parent_id``. Each trajectory's totals
count only its own steps, as its ``final_metrics`` do, so sums over sessions equal sums over
the files' ``final_metrics``.

How a session ended (``status``) is read from its last turn, as the viewer reads it: a model
call cancelled (or a tool call cancelled) is ``interrupted``, a model call that failed is
``failed``, tools that ran with no answer after them is ``max_turns``, an answer is
``completed``, and a turn with no reply yet is ``running``. The ATOF reader
(:mod:`wayline.store.atof`) overrides this with what the events say when it has them: a turn
still open, or the reason the runtime recorded when the turn ended.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from wayline.relay.atif.payloads import timestamp_ns
from wayline.trajectory.load import arguments_of, is_continuation, result_text, text_of

__all__ = [
    "MAX_FIELD_CHARS",
    "STATUSES",
    "SessionRecord",
    "StepText",
    "is_wayline_recording",
    "records_of",
    "session_key",
    "step_lines",
]

STATUSES = ("completed", "failed", "interrupted", "max_turns", "running")
"""Every status a session may have."""

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
    record = _summary(traj, key, parent.session_id if parent else None)
    record.where = where
    record.texts = list(_texts(traj, redact))
    out.append(record)
    if parent is not None:
        parent.children.append(key)
    for index, sub in enumerate(traj.get("subagent_trajectories") or ()):
        if isinstance(sub, Mapping):
            _walk(sub, record, f"{key}.{index}", (*where, index), redact, out)


# -- summary -----------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _text_ns(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    exact = timestamp_ns(value)
    if exact is not None:
        return exact
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # Harbor writes naive UTC times
    return round(parsed.timestamp() * 1_000_000) * 1000


def _seconds_ns(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else round(number * 1e6) * 1000


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _instants(step: Mapping[str, Any]) -> Iterator[int]:
    at = _text_ns(step.get("timestamp"))
    if at is not None:
        yield at
    extra = _dict(step.get("extra"))
    for invocation in (_dict(extra.get("invocation")), *_dicts(extra.get("tool_invocations"))):
        for key in ("start_timestamp", "end_timestamp"):
            ns = _seconds_ns(invocation.get(key))
            if ns is not None:
                yield ns


def llm_outcome(step: Mapping[str, Any]) -> str | None:
    """``failed`` or ``interrupted`` when the step's model call did not answer, else None."""
    extra = _dict(step.get("extra"))
    error = _dict(extra.get("llm_response")).get("error")
    status = _dict(extra.get("invocation")).get("status")
    if not isinstance(error, Mapping) and status != "error":
        return None
    if isinstance(error, Mapping) and (
        error.get("reason") == "interrupted" or error.get("type") == "TurnInterrupted"
    ):
        return "interrupted"
    return "failed"


def result_outcome(result: Mapping[str, Any], text: str | None) -> str | None:
    """``failed`` or ``interrupted`` for a tool result that is an error or was cancelled."""
    extra = _dict(result.get("extra"))
    meta = _dict(extra.get("metadata"))
    if meta.get("status") == "cancelled" or extra.get("status") == "cancelled":
        return "interrupted"
    status = meta.get("status")
    if extra.get("is_error") is True or (
        isinstance(status, str) and status.lower() in ("error", "failed", "failure")
    ):
        return "failed"
    if meta.get("otel.status_code") == "ERROR":
        return "failed"
    if text and text.lstrip().startswith("{") and '"error"' in text:
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if isinstance(value, dict) and value.get("error"):
            return "failed"
    return None


Results = list[Mapping[str, Any]]


def _results_by_call(step: Mapping[str, Any]) -> tuple[dict[Any, Results], Results]:
    """A step's results by the call they answer, and those that name no call of it."""
    calls = _dicts(step.get("tool_calls"))
    known = {c.get("tool_call_id") for c in calls if c.get("tool_call_id") is not None}
    by_call: dict[Any, list[Mapping[str, Any]]] = {}
    loose: list[Mapping[str, Any]] = []
    for result in _dicts(_dict(step.get("observation")).get("results")):
        call_id = result.get("source_call_id")
        if call_id in known:
            by_call.setdefault(call_id, []).append(result)
        else:
            loose.append(result)
    return by_call, loose


def _summary(traj: Mapping[str, Any], key: str, parent: str | None) -> SessionRecord:
    agent = _dict(traj.get("agent"))
    steps = _dicts(traj.get("steps"))
    models: list[str] = []
    primary = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
    if primary:
        models.append(primary)
    first = last = None
    tools: dict[str, list[int]] = {}
    tool_calls = errors = 0
    sums = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "cost_usd": 0.0}
    seen = {k: False for k in sums}
    priced = metered = 0
    for step in steps:
        for ns in _instants(step):
            first = ns if first is None or ns < first else first
            last = ns if last is None or ns > last else last
        model = step.get("model_name")
        if isinstance(model, str) and model and model not in models:
            models.append(model)
        if step.get("source") == "agent" and llm_outcome(step) == "failed":
            errors += 1
        by_call, _loose = _results_by_call(step)
        for call in _dicts(step.get("tool_calls")):
            name = str(call.get("function_name") or "?")
            tool_calls += 1
            counts = tools.setdefault(name, [0, 0])
            counts[0] += 1
            for result in by_call.get(call.get("tool_call_id"), ()):
                if result_outcome(result, result_text(result)) == "failed":
                    counts[1] += 1
                    errors += 1
        metrics = step.get("metrics")
        if isinstance(metrics, Mapping):
            metered += 1
            for name in sums:
                value = _number(metrics.get(name))
                if value is not None:
                    sums[name] += value
                    seen[name] = True
                    if name == "cost_usd":
                        priced += 1
    totals = _dict(traj.get("final_metrics"))

    def total(name: str, key_: str) -> int | None:
        value = _number(totals.get(key_))
        if value is not None:
            return int(value)
        return int(sums[name]) if seen[name] else None

    cost = _number(totals.get("total_cost_usd"))
    if cost is None and not totals and priced and priced == metered:
        cost = sums["cost_usd"]  # no final_metrics: priced only when every metered step was
    return SessionRecord(
        session_id=key,
        parent_id=parent,
        agent=agent.get("name") if isinstance(agent.get("name"), str) else None,
        model=primary or (models[0] if models else None),
        models=models,
        started_ns=first,
        ended_ns=last,
        status=infer_status(steps),
        steps=len(steps),
        tool_calls=tool_calls,
        tools=tools,
        errors=errors,
        input_tokens=total("prompt_tokens", "total_prompt_tokens"),
        output_tokens=total("completion_tokens", "total_completion_tokens"),
        cached_tokens=total("cached_tokens", "total_cached_tokens"),
        cost_usd=cost,
    )


def infer_status(steps: list[Mapping[str, Any]]) -> str:
    """How the last turn of ``steps`` ended, from the steps alone (see the module doc)."""
    kept = [s for s in steps if s.get("source") in ("user", "agent")]
    start = 0
    previous: Mapping[str, Any] | None = None
    for index, step in enumerate(kept):
        if step.get("source") == "user" and not is_continuation(previous, step):
            start = index
        previous = step
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
    if _dicts(last.get("tool_calls")):
        return "max_turns"  # tools ran and no model call answered after them
    return "completed"


# -- searchable text ---------------------------------------------------------------------------


def step_number(step: Mapping[str, Any], index: int) -> int:
    """The number the viewer shows for a step: its ``step_id``, else its 1-based position."""
    value = step.get("step_id")
    return value if isinstance(value, int) and not isinstance(value, bool) else index + 1


def arguments_text(call: Mapping[str, Any]) -> str:
    """A tool call's arguments as searchable text: ``name: value`` lines, strings unquoted."""
    args = arguments_of(call)
    if isinstance(args, Mapping):
        lines = []
        for name, value in args.items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f"{name}: {shown}")
        return "\n".join(lines)
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _texts(traj: Mapping[str, Any], redact: Callable[[str], str] | None) -> Iterator[StepText]:
    def make(number: int, name: str, text: str | None) -> StepText | None:
        if not text or not text.strip():
            return None
        if redact is not None:
            text = redact(text)
        return StepText(number, name, text[:MAX_FIELD_CHARS])

    for index, step in enumerate(_dicts(traj.get("steps"))):
        number = step_number(step, index)
        source = step.get("source")
        if source not in ("user", "agent"):
            continue  # system prompts repeat in every session: noise in a search
        found = [make(number, str(source), text_of(step.get("message")))]
        reasoning = step.get("reasoning_content")
        if isinstance(reasoning, str):
            found.append(make(number, "reasoning", reasoning))
        by_call, loose = _results_by_call(step)
        for call in _dicts(step.get("tool_calls")):
            name = str(call.get("function_name") or "?")
            found.append(make(number, f"args:{name}", arguments_text(call)))
            for result in by_call.get(call.get("tool_call_id"), ()):
                found.append(make(number, f"result:{name}", result_text(result)))
        for result in loose:
            found.append(make(number, "result", result_text(result)))
        yield from (item for item in found if item is not None)


# -- one line per step (``wayline sessions show``) ---------------------------------------------


def step_lines(traj: Mapping[str, Any], origin_ns: int | None) -> list[JsonDict]:
    """One dict per step: number, source, time from ``origin_ns`` (ms), model, tokens, cost,
    the tools it called (each with ``error``), its outcome and the first line of its text."""
    out: list[JsonDict] = []
    for index, step in enumerate(_dicts(traj.get("steps"))):
        at = _text_ns(step.get("timestamp"))
        metrics = _dict(step.get("metrics"))
        by_call, _loose = _results_by_call(step)
        calls = []
        for call in _dicts(step.get("tool_calls")):
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
