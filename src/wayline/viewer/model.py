"""The page's data for one trajectory: header, steps and timeline spans, from an ATIF document.

Only what the page shows is kept (no ``extra`` payloads such as the relay's ``llm_request``, which
repeat the whole conversation on every step), so the page grows linearly with the trajectory.
Times are milliseconds from the trajectory's earliest known instant. Span timing comes, in order
of preference, from exact scope times (ATOF events), from the relay's ``extra.invocation`` /
``extra.tool_invocations`` (epoch seconds), or, for LLM calls only, from consecutive step
timestamps (marked approximate). A tool whose start event was recorded but whose end event
never was (Hermes' bundled Relay plugin on nemo-relay 0.10.4 writes no tool ends) is drawn up
to the start of the trajectory's next model call, which the result had to precede, and
marked approximate with ``ne`` (no end recorded); with no later model call it is not drawn.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from wayline.relay.atif.payloads import timestamp_ns
from wayline.viewer.load import APPROVAL_MARKS, Timing, Trajectory
from wayline.viewer.rewrite import call_rewrite, trace_entries
from wayline.viewer.turns import (
    SESSION_END,
    assign_marks,
    infer_outcome,
    mark_outcome,
    split_turns,
)
from wayline.viewer.values import (
    content_text,
    header_of,
    is_error_status,
    list_of_dicts,
    llm_cancelled,
    metrics_of,
    ns_of_seconds,
    ns_of_text,
    pretty,
    result_cancelled,
    result_is_error,
    result_text,
    scope_uuid,
)

JsonDict = dict[str, Any]


class _Builder:
    """Walks a trajectory tree collecting steps and spans with absolute nanosecond times."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.timing: Timing = trajectory.timing
        self.marks = trajectory.marks
        self.tool_scopes = trajectory.tool_scopes
        self.scope: str | None = None  # the agent scope of the trajectory being walked
        self.spans: list[JsonDict] = []
        self.instants: list[int] = []
        self.exactness: set[str] = set()
        # (span index, start ns) of tools with a start but no end, in the current trajectory
        self.unended: list[tuple[int, int]] = []

    def _span(
        self,
        kind: str,
        label: str,
        start: int | None,
        end: int | None,
        depth: int,
        where: str,
        step: int,
        *,
        error: bool = False,
        group: str | None = None,
        approx: bool = False,
        cancelled: bool = False,
    ) -> int | None:
        if start is None or end is None:
            return None
        end = max(end, start)
        self.instants.extend((start, end))
        span: JsonDict = {"k": kind, "n": label, "s": start, "e": end, "d": depth, "p": where}
        span["st"] = step
        if error:
            span["er"] = 1
        if cancelled:
            span["cn"] = 1
        if group is not None:
            span["g"] = group
        if approx:
            span["ap"] = 1
        self.spans.append(span)
        return len(self.spans) - 1

    def _unended(
        self, label: str, start: int, depth: int, where: str, step: int, group: str | None
    ) -> None:
        """A tool span with a start but no end: a placeholder the next model call closes."""
        self.instants.append(start)
        span: JsonDict = {"k": "tool", "n": label, "s": start, "e": start, "d": depth, "p": where}
        span.update(st=step, ap=1, ne=1)
        if group is not None:
            span["g"] = group
        self.spans.append(span)
        self.unended.append((len(self.spans) - 1, start))
        self.exactness.add("exact")

    def _close_unended(self, at: int | None) -> None:
        """End the open tool spans at ``at`` (the next model call's start); else drop them."""
        for index, start in self.unended:
            if at is not None and at >= start:
                self.spans[index]["e"] = at
                self.instants.append(at)
            else:
                self.spans[index] = {}
        self.unended = []

    def _exact(self, uuid: Any) -> tuple[int | None, int | None]:
        if isinstance(uuid, str) and uuid in self.timing:
            self.exactness.add("exact")
            return self.timing[uuid]
        return (None, None)

    def _invocation(self, uuid: Any, invocation: Any) -> tuple[int | None, int | None, bool]:
        """Start, end and whether the call failed; exact ATOF times win over the recorded
        ones, and the recorded status counts either way."""
        failed = isinstance(invocation, dict) and is_error_status(invocation.get("status"))
        start, end = self._exact(uuid)
        if start is not None and end is not None:
            return start, end, failed
        if isinstance(invocation, dict):
            start = ns_of_seconds(invocation.get("start_timestamp"))
            end = ns_of_seconds(invocation.get("end_timestamp"))
            if start is not None and end is not None:
                self.exactness.add("ms")
            return start, end, failed
        return None, None, False

    def trajectory(self, doc: JsonDict, where: str, depth: int) -> JsonDict:
        steps_in = [s for s in doc.get("steps") or [] if isinstance(s, dict)]
        subs_in = [s for s in doc.get("subagent_trajectories") or [] if isinstance(s, dict)]
        by_id = {s.get("trajectory_id"): i for i, s in enumerate(subs_in)}
        subs_out: list[JsonDict | None] = [None] * len(subs_in)
        scope = scope_uuid(doc)
        approvals = self._approvals(scope)
        outer_unended, self.unended = self.unended, []
        outer_scope, self.scope = self.scope, scope
        referenced: set[int] = set()
        steps_out: list[JsonDict] = []
        previous_ns: int | None = None
        turns = split_turns(steps_in)
        rows: list[int] = []  # each turn's timeline row, filled when its steps are drawn
        spans: list[tuple[int | None, int | None]] = []  # each turn's first and last instant
        for first, last in turns:
            rows.append(len(self.spans))
            self.spans.append({})
            mark = len(self.instants)
            for step in steps_in[first : last + 1]:
                view, previous_ns = self._step(
                    step, where, depth, previous_ns, by_id, subs_in, subs_out, referenced, approvals
                )
                steps_out.append(view)
            own = self.instants[mark:]
            spans.append((min(own), max(own)) if own else (None, None))
        self._close_unended(None)
        self.unended, self.scope = outer_unended, outer_scope
        marks = [m for m in self.marks if m.get("name") == SESSION_END]
        recorded = assign_marks(spans, [m for m in marks if m.get("parent_uuid") == scope])
        outcomes: list[str] = []
        for number, ((first, last), row, (start, end), known) in enumerate(
            zip(turns, rows, spans, recorded, strict=True), start=1
        ):
            known = known or _step_outcome(steps_in[first : last + 1])
            outcome = known or infer_outcome(steps_out[first : last + 1])
            outcomes.append(outcome)
            steps_out[last]["to"] = outcome
            if known is None:
                steps_out[last]["ti"] = 1  # inferred from the steps, not recorded
            if start is not None and end is not None:
                self.spans[row] = {
                    "k": "turn",
                    "n": f"turn {number}: {outcome}",
                    "s": start,
                    "e": end,
                    "d": depth,
                    "p": where,
                    "st": steps_out[first]["i"],
                    "o": outcome,
                }
        for start, end, label in approvals.values():
            self._span("approval", label, start, end, depth, where, 0)
        for index, sub in enumerate(subs_in):
            if subs_out[index] is None:
                subs_out[index] = self._subagent(sub, f"{where}{index}.", depth, 0, None)
        out: JsonDict = {"steps": steps_out, "subs": subs_out, "h": header_of(doc)}
        out["h"]["turns"] = outcomes
        out["u"] = [i for i in range(len(subs_in)) if i not in referenced]
        return out

    def _step(
        self,
        step: JsonDict,
        where: str,
        depth: int,
        previous_ns: int | None,
        by_id: dict[Any, int],
        subs_in: list[JsonDict],
        subs_out: list[JsonDict | None],
        referenced: set[int],
        approvals: dict[str, tuple[int, int, str]],
    ) -> tuple[JsonDict, int | None]:
        raw_id = step.get("step_id")
        step_id = raw_id if isinstance(raw_id, int) else 0
        extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
        assert isinstance(extra, dict)
        at = ns_of_text(step.get("timestamp"))
        if at is not None:
            self.instants.append(at)
        view: JsonDict = {
            "i": step_id,
            "s": step.get("source"),
            "m": content_text(step.get("message")),
        }
        if at is not None:
            view["t"] = at
        if isinstance(step.get("reasoning_content"), str) and step["reasoning_content"]:
            view["r"] = step["reasoning_content"]
        if isinstance(step.get("model_name"), str):
            view["mo"] = step["model_name"]
        if step.get("is_copied_context") is True:
            view["cp"] = 1
        request_trace = trace_entries(extra.get("middleware_trace"))
        if request_trace:
            view["mt"] = request_trace
        metrics = metrics_of(step.get("metrics"))
        if metrics:
            view["x"] = metrics
        if step.get("source") == "agent":
            invocation = extra.get("invocation")
            uuid = invocation.get("invocation_id") if isinstance(invocation, dict) else None
            start, end, failed = self._invocation(uuid, invocation)
            cancelled = failed and llm_cancelled(extra)
            failed = failed and not cancelled
            approx = False
            if start is None and at is not None and previous_ns is not None:
                start, end, approx = previous_ns, at, True
                self.exactness.add("approx")
            label = str(view.get("mo") or "call")
            if self.unended:
                self._close_unended(start)
            self._span(
                "llm",
                label,
                start,
                end,
                depth,
                where,
                step_id,
                error=failed,
                approx=approx,
                cancelled=cancelled,
            )
            if failed:
                view["e"] = view["le"] = 1
            if cancelled:
                view["cn"] = 1
        calls, orphans = self._calls(
            step, extra, where, depth, step_id, by_id, subs_in, subs_out, referenced, approvals
        )
        if calls:
            view["c"] = calls
        if orphans:
            view["o"] = orphans
        if any(call.get("e") for call in calls) or any(o.get("e") for o in orphans):
            view["e"] = 1
        if any(call.get("cn") for call in calls):
            view["cn"] = 1
        return view, at if at is not None else previous_ns

    def _calls(
        self,
        step: JsonDict,
        extra: JsonDict,
        where: str,
        depth: int,
        step_id: int,
        by_id: dict[Any, int],
        subs_in: list[JsonDict],
        subs_out: list[JsonDict | None],
        referenced: set[int],
        approvals: dict[str, tuple[int, int, str]],
    ) -> tuple[list[JsonDict], list[JsonDict]]:
        raw_calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
        observation = step.get("observation")
        raw_results = observation.get("results") if isinstance(observation, dict) else None
        results = [r for r in raw_results or [] if isinstance(r, dict)]
        by_call: dict[Any, list[JsonDict]] = {}
        orphans_in: list[JsonDict] = []
        known = {c.get("tool_call_id") for c in raw_calls}
        for result in results:
            call_id = result.get("source_call_id")
            if call_id in known and call_id is not None:
                by_call.setdefault(call_id, []).append(result)
            else:
                orphans_in.append(result)
        ancestry = list_of_dicts(extra.get("tool_ancestry"))
        invocations = {
            i.get("invocation_id"): i for i in list_of_dicts(extra.get("tool_invocations"))
        }
        group = f"{where}/{step_id}" if len(raw_calls) > 1 else None
        calls: list[JsonDict] = []
        for index, raw in enumerate(raw_calls):
            call_id = raw.get("tool_call_id")
            name = str(raw.get("function_name") or "?")
            call: JsonDict = {"id": call_id, "n": name}
            arguments = raw.get("arguments")
            call["a"] = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
            call.update(call_rewrite(raw))
            mine = by_call.get(call_id, [])
            scope = ancestry[index].get("function_id") if index < len(ancestry) else None
            if scope is None and self.scope is not None and isinstance(call_id, str):
                scope = self.tool_scopes.get((self.scope, call_id))
            invocation = invocations.get(call_id)
            start, end, failed = self._invocation(scope, invocation)
            texts = [result_text(r) for r in mine]
            failed = failed or any(result_is_error(r, t) for r, t in zip(mine, texts, strict=True))
            # A call the user's cancel stopped is cancelled, not failed, whatever its result
            # text says (wayline's is {"error": "cancelled: …"}).
            cancelled = (
                isinstance(invocation, dict) and invocation.get("status") == "cancelled"
            ) or any(result_cancelled(r) for r in mine)
            failed = failed and not cancelled
            # A result with no text (Relay's delegation result holds only the subagent
            # reference) shows as "no result recorded", not as an empty box.
            texts = [t for t in texts if t]
            if texts:
                call["o"] = "\n\n".join(pretty(t) for t in texts)
            if failed:
                call["e"] = 1
            if cancelled:
                call["cn"] = 1
            open_start = self._exact(scope)[0] if start is None else None
            if open_start is not None:
                self._unended(name, open_start, depth, where, step_id, group)
            else:
                self._span(
                    "tool",
                    name,
                    start,
                    end,
                    depth,
                    where,
                    step_id,
                    error=failed,
                    group=group,
                    cancelled=cancelled,
                )
            approval = approvals.pop(str(call_id), None)
            if approval is not None:
                self._span(
                    "approval", approval[2], approval[0], approval[1], depth + 1, where, step_id
                )
            subs = self._refs(mine, where, depth, step_id, by_id, subs_in, subs_out, referenced)
            if subs[0]:
                call["sub"] = subs[0]
            if subs[1]:
                call["ext"] = subs[1]
            calls.append(call)
        orphans: list[JsonDict] = []
        for result in orphans_in:
            text = result_text(result)
            orphan: JsonDict = {"o": pretty(text)}
            if result_is_error(result, text):
                orphan["e"] = 1
            subs = self._refs([result], where, depth, step_id, by_id, subs_in, subs_out, referenced)
            if subs[0]:
                orphan["sub"] = subs[0]
            if subs[1]:
                orphan["ext"] = subs[1]
            orphans.append(orphan)
        return calls, orphans

    def _refs(
        self,
        results: list[JsonDict],
        where: str,
        depth: int,
        step_id: int,
        by_id: dict[Any, int],
        subs_in: list[JsonDict],
        subs_out: list[JsonDict | None],
        referenced: set[int],
    ) -> tuple[list[int], list[str]]:
        inside: list[int] = []
        external: list[str] = []
        for result in results:
            for ref in list_of_dicts(result.get("subagent_trajectory_ref")):
                index = by_id.get(ref.get("trajectory_id"))
                if index is None or index in referenced:
                    named = ref.get("trajectory_path") or ref.get("trajectory_id")
                    external.append(str(named))
                    continue
                referenced.add(index)
                inside.append(index)
                ref_extra = ref.get("extra") if isinstance(ref.get("extra"), dict) else {}
                assert isinstance(ref_extra, dict)
                subs_out[index] = self._subagent(
                    subs_in[index], f"{where}{index}.", depth, step_id, ref_extra.get("scope_uuid")
                )
        return inside, external

    def _subagent(
        self, doc: JsonDict, where: str, depth: int, step_id: int, scope: Any
    ) -> JsonDict:
        label = str(doc.get("trajectory_id") or "sub-agent")
        agent = doc.get("agent")
        if isinstance(agent, dict) and agent.get("name"):
            label = f"{agent.get('name')} · {label}"
        mark = len(self.spans)
        self.spans.append({})  # placeholder keeps the sub-agent row above its own spans
        first_instant = len(self.instants)
        view = self.trajectory(doc, where, depth + 2)
        start, end = self._exact(scope if scope is not None else scope_uuid(doc))
        if start is None or end is None:
            own = self.instants[first_instant:]
            start, end = (min(own), max(own)) if own else (None, None)
        if start is None or end is None:
            self.spans[mark] = {}
        else:
            view["h"]["dur"] = round((end - start) / 1e6, 3)
            self.instants.extend((start, end))
            self.spans[mark] = {
                "k": "subagent",
                "n": label,
                "s": start,
                "e": end,
                "d": depth + 1,
                "p": where,
                "st": step_id,
            }
        return view

    def _approvals(self, scope: str | None) -> dict[str, tuple[int, int, str]]:
        if scope is None or not self.marks:
            return {}
        opened: dict[str, int] = {}
        found: dict[str, tuple[int, int, str]] = {}
        for mark in self.marks:
            if mark.get("parent_uuid") != scope or mark.get("name") not in APPROVAL_MARKS:
                continue
            data = mark.get("data") if isinstance(mark.get("data"), dict) else {}
            assert isinstance(data, dict)
            key = str(data.get("tool_call_id") or data.get("pattern_key") or "approval")
            at = timestamp_ns(mark.get("timestamp"))
            if at is None:
                continue
            if mark.get("name") == "hermes.approval.request":
                opened[key] = at
            elif key in opened:
                choice = data.get("choice")
                pattern = data.get("pattern_key") or "approval"
                label = str(pattern) + (f" → {choice}" if choice else "")
                found[key] = (opened.pop(key), at, label)
        return found


def _relative(view: JsonDict, origin: int) -> None:
    for step in view["steps"]:
        if "t" in step:
            step["t"] = round((step["t"] - origin) / 1e6, 3)
    for sub in view["subs"]:
        _relative(sub, origin)


def _count_errors(view: JsonDict) -> int:
    own = sum(
        sum(1 for c in step.get("c", ()) if c.get("e"))
        + sum(1 for o in step.get("o", ()) if o.get("e"))
        + (1 if step.get("e") and not step.get("c") and not step.get("o") else 0)
        for step in view["steps"]
    )
    total = own + sum(_count_errors(sub) for sub in view["subs"])
    view["h"]["errors"] = total
    return total


def build_view(trajectory: Trajectory) -> JsonDict:
    """The page's data for one trajectory (sub-agents nested, spans flattened in row order)."""
    builder = _Builder(trajectory)
    view = builder.trajectory(trajectory.document, "", 0)
    spans = [span for span in builder.spans if span]
    instants = builder.instants
    origin = min(instants) if instants else 0
    for span in spans:
        span["s"] = round((span["s"] - origin) / 1e6, 3)
        span["e"] = round((span["e"] - origin) / 1e6, 3)
    _relative(view, origin)
    _count_errors(view)
    header = view["h"]
    if instants:
        header["start"] = _iso(min(instants))
        header["end"] = _iso(max(instants))
        header["dur"] = round((max(instants) - min(instants)) / 1e6, 3)
    if "exact" in builder.exactness:
        view["timing"] = "exact (ATOF event times, nanoseconds)"
    elif "ms" in builder.exactness:
        view["timing"] = "recorded invocation times"
    elif "approx" in builder.exactness:
        view["timing"] = "estimated from step timestamps"
    else:
        view["timing"] = "none"
    view["spans"] = spans
    view["title"] = trajectory.title
    view["src"] = trajectory.source
    view["kind"] = trajectory.kind
    view["w"] = list(trajectory.warnings)
    return view


def _iso(ns: int) -> str:
    seconds, nanos = divmod(ns, 1_000_000_000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{nanos // 1000:06d}Z"


def _step_outcome(steps: Any) -> str | None:
    """The outcome the turn's user step records (``extra.turn_outcome``, written by wayline's
    relay plugin and by ``atif convert`` of its ATOF), or None when it records none."""
    for step in steps:
        extra = step.get("extra") if isinstance(step, dict) else None
        if step.get("source") == "user" and isinstance(extra, dict):
            outcome = extra.get("turn_outcome")
            if isinstance(outcome, dict):
                return mark_outcome({"data": outcome})
    return None
