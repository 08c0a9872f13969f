"""Step-by-step comparison of two ATIF trajectories (``wayline diff`` and replay reports).

Steps are aligned by their content first, then by their shape (source and tool names), in
O(n log n) (:mod:`wayline.trajectory.align`), so one extra step shows as one difference, not a
cascade. Subagent trajectories are compared where the tool call that
produced them is, through ``subagent_trajectory_ref``.

By default volatile fields are ignored: ids, timestamps, durations, usage and metrics, the
``extra`` blocks that hold them, and inside a tool result that is JSON, every key named like
one of them (``session_id``, ``duration_ms``…). Relay's repeated per-call user steps are
folded into their turn. ``strict`` compares every field as written.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from wayline.relay.identify import collector_paused
from wayline.trajectory.align import align
from wayline.trajectory.load import (
    Embedded,
    JsonDict,
    arguments_of,
    is_continuation,
    result_text,
    results_by_call,
    steps_of,
    text_of,
)

_VOLATILE = re.compile(
    r"(^|_)(id|ids|uuid|uuids|timestamp|timestamps|time|duration|elapsed|usage|metrics)(_|$)"
    r"|_ms$|_at$|Id$"
)
_SHOWN = 300

KINDS = ("text", "reasoning", "arguments", "result", "tool_calls", "subagent", "step", "field")
"""What a :class:`Difference` is about; ``field`` is any other field (``--strict``)."""


@dataclass(frozen=True)
class Difference:
    """One difference: where (trajectory, step, tool call), what kind, the path, old and new."""

    trajectory: str
    step: int | None
    kind: str
    path: str
    old: Any
    new: Any
    tool_call: str | None = None

    def location(self) -> str:
        """``step 3 of main, tool call call_1 (terminal)``; a subagent is
        ``main › step 2 call_9 › subagent 1``."""
        text = (
            f"step {self.step} of {self.trajectory}" if self.step is not None else self.trajectory
        )
        return f"{text}, tool call {self.tool_call}" if self.tool_call else text

    def describe(self) -> str:
        """Three lines: location and what differs, then the old and the new value."""
        verb = "differ" if self.kind in ("arguments", "tool_calls") else "differs"
        return (
            f"{self.location()}: {self.kind} {verb} at {self.path or '(the step)'}\n"
            f"  old: {_show(self.old)}\n  new: {_show(self.new)}"
        )

    def to_json(self) -> JsonDict:
        """This difference as JSON data; ``old``/``new`` are left out where absent."""
        out: JsonDict = {
            "trajectory": self.trajectory,
            "step": self.step,
            "tool_call": self.tool_call,
            "kind": self.kind,
            "path": self.path,
        }
        for key, value in (("old", self.old), ("new", self.new)):
            if not is_absent(value):
                out[key] = value
        return out


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING: Any = _Missing()


def is_absent(value: Any) -> bool:
    """Whether a :class:`Difference` side is absent (a missing step, key or call)."""
    return value is _MISSING


def redacted(differences: Sequence[Difference]) -> list[Difference]:
    """Each difference with its old and new values redacted, whoever wrote the files, as every
    output of differences shows them (``wayline diff``, ``replay``, ``serve``, ``mcp``): each
    value as it sits under the last key of its path (``arguments.api_key``), so a credential
    key hides it whatever its shape (``wayline.redaction``; ids kept, nothing cut)."""
    from wayline.redaction import redact_value

    def shown(value: Any, key: str) -> Any:
        if is_absent(value):
            return value
        return redact_value({key: value}, max_string=sys.maxsize)[key]

    out = []
    for d in differences:
        names = [part for part in re.split(r"[.\[\]]", d.path) if part and not part.isdigit()]
        key = names[-1] if names else "value"
        out.append(replace(d, old=shown(d.old, key), new=shown(d.new, key)))
    return out


@dataclass(frozen=True)
class CompareOptions:
    """How to compare.

    ``replay`` leaves out what a replay does not reproduce by design: system steps (the
    current runtime's prompt is used), steps marked ``is_copied_context``, and reasoning
    (served from the recording, not recorded back by the runtime), and the text of a result
    the recording holds only as a subagent reference (its subagent is compared instead).
    ``effective_args`` maps ``(new trajectory's session_id, tool_call_id)`` to the arguments
    the tool really received (after ``tool_request`` middleware). ``skip_children`` holds the
    ``id()`` of old tool calls whose subagents were not replayed.
    """

    strict: bool = False
    replay: bool = False
    effective_args: Mapping[tuple[str, str], Any] = field(default_factory=dict)
    skip_children: frozenset[int] = frozenset()


def compare(
    old: Mapping[str, Any], new: Mapping[str, Any], options: CompareOptions | None = None
) -> list[Difference]:
    """Every difference between two trajectories, in the order the run produced them."""
    walker = _Walker(options or CompareOptions(), Embedded.of(old), Embedded.of(new))
    with collector_paused():  # only acyclic values are built; see collector_paused
        walker.pair("main", old, new)
    return walker.out


def strip_volatile(value: Any) -> Any:
    """``value`` without the keys that name ids, timestamps, durations or usage (recursively)."""
    if isinstance(value, Mapping):
        return {k: strip_volatile(v) for k, v in value.items() if not _VOLATILE.search(str(k))}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def normalized_result(text: str | None, strict: bool) -> Any:
    """A tool result for comparison: JSON is parsed and stripped of volatile keys unless strict."""
    if text is None or strict:
        return text
    if text.lstrip()[:1] in ("{", "["):
        try:
            return strip_volatile(json.loads(text))
        except ValueError:
            pass
    return text


def deep_diff(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """``(path, old, new)`` for every leaf that differs; absent keys are ``(absent)``."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        out: list[tuple[str, Any, Any]] = []
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                out.append((sub, _MISSING, b[key]))
            elif key not in b:
                out.append((sub, a[key], _MISSING))
            else:
                out.extend(deep_diff(a[key], b[key], sub))
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(a):
                out.append((sub, _MISSING, b[i]))
            elif i >= len(b):
                out.append((sub, a[i], _MISSING))
            else:
                out.extend(deep_diff(a[i], b[i], sub))
        return out
    if a == b and type(a) is type(b):
        return []
    return [(path, a, b)]


def summary(step: Mapping[str, Any]) -> JsonDict:
    """A short view of a step for an added or missing step."""
    out: JsonDict = {"source": step.get("source"), "message": text_of(step.get("message"))}
    calls = step.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [c.get("function_name") for c in calls]
    return out


def kept_steps(traj: Mapping[str, Any], *, strict: bool, replay: bool) -> list[JsonDict]:
    """The steps compared: Relay's repeated user steps folded (unless strict); see options."""
    kept: list[JsonDict] = []
    turn_text: str | None = None
    for step in steps_of(traj):
        if replay and (step.get("source") == "system" or step.get("is_copied_context") is True):
            continue
        prev = kept[-1] if kept else None
        if step.get("source") == "user":
            text = text_of(step.get("message"))
            if not strict and is_continuation(prev, step) and text == turn_text:
                continue
            turn_text = text
        kept.append(step)
    return kept


def _key(step: Mapping[str, Any]) -> tuple[Any, ...]:
    names = tuple(c.get("function_name") for c in step.get("tool_calls") or [])
    return (step.get("source"), names)


def _content(step: Mapping[str, Any], shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """What makes two steps of one shape the same for alignment: the text and the arguments."""
    calls = tuple(
        json.dumps(arguments_of(c), sort_keys=True, default=str)
        for c in step.get("tool_calls") or []
    )
    return (shape, text_of(step.get("message")), calls)


def _step_no(step: Mapping[str, Any], fallback: int) -> int:
    value = step.get("step_id")
    return value if isinstance(value, int) and not isinstance(value, bool) else fallback


class _Walker:
    def __init__(self, options: CompareOptions, old: Embedded, new: Embedded) -> None:
        self.opt = options
        self.old = old
        self.new = new
        self.out: list[Difference] = []

    def add(
        self,
        where: str,
        step: int | None,
        kind: str,
        path: str,
        a: Any,
        b: Any,
        call: str | None = None,
    ) -> None:
        self.out.append(Difference(where, step, kind, path, a, b, call))

    def pair(self, where: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
        strict = self.opt.strict
        if strict:
            skip = ("steps", "subagent_trajectories")
            top_a = {k: v for k, v in a.items() if k not in skip}
            top_b = {k: v for k, v in b.items() if k not in skip}
            for path, x, y in deep_diff(top_a, top_b):
                self.add(where, None, "field", path, x, y)
        sa = kept_steps(a, strict=strict, replay=self.opt.replay)
        sb = kept_steps(b, strict=strict, replay=self.opt.replay)
        shape_a, shape_b = [_key(s) for s in sa], [_key(s) for s in sb]
        content_a = [_content(s, k) for s, k in zip(sa, shape_a, strict=True)]
        content_b = [_content(s, k) for s, k in zip(sb, shape_b, strict=True)]
        for tag, i1, i2, j1, j2 in align(shape_a, shape_b, content_a, content_b):
            common = min(i2 - i1, j2 - j1) if tag in ("equal", "replace") else 0
            for k in range(common):
                same = content_a[i1 + k] == content_b[j1 + k]
                self.step(where, b, sa[i1 + k], sb[j1 + k], i1 + k + 1, same)
            for i in range(i1 + common, i2):
                self.add(where, _step_no(sa[i], i + 1), "step", "", summary(sa[i]), _MISSING)
            for j in range(j1 + common, j2):
                self.add(where, _step_no(sb[j], j + 1), "step", "", _MISSING, summary(sb[j]))

    def step(
        self,
        where: str,
        b_traj: Mapping[str, Any],
        x: JsonDict,
        y: JsonDict,
        n: int,
        same: bool = False,
    ) -> None:
        """Compare two paired steps; ``same``: their alignment content (text and every call's
        arguments as sorted JSON) is equal, so the model's arguments need no walk."""
        strict = self.opt.strict
        no = _step_no(x, n)
        if x.get("source") != y.get("source"):
            self.add(where, no, "step", "source", summary(x), summary(y))
            return
        tx, ty = text_of(x.get("message")), text_of(y.get("message"))
        if tx != ty or (strict and x.get("message") != y.get("message")):
            self.add(where, no, "text", "message", x.get("message"), y.get("message"))
        rx, ry = x.get("reasoning_content"), y.get("reasoning_content")
        # A replay serves the recorded reasoning; the runtime does not record it back.
        if text_of(rx) != text_of(ry) and not self.opt.replay:
            self.add(where, no, "reasoning", "reasoning_content", rx, ry)
        calls_x = x.get("tool_calls") or []
        calls_y = y.get("tool_calls") or []
        res_x, res_y = results_by_call(x), results_by_call(y)
        session = str(b_traj.get("session_id") or b_traj.get("trajectory_id") or "")
        for k in range(max(len(calls_x), len(calls_y))):
            if k >= len(calls_x) or k >= len(calls_y):
                cx = calls_x[k] if k < len(calls_x) else None
                cy = calls_y[k] if k < len(calls_y) else None
                self.add(
                    where,
                    no,
                    "tool_calls",
                    f"tool_calls[{k}]",
                    _call_view(cx) if cx else _MISSING,
                    _call_view(cy) if cy else _MISSING,
                )
                continue
            self.call(
                where, no, k, session, x, calls_x[k], calls_y[k], res_x.get(k), res_y.get(k), same
            )
        if strict:
            skip = ("message", "reasoning_content", "tool_calls", "observation", "source")
            for path, a, b in deep_diff(
                {k: v for k, v in x.items() if k not in skip},
                {k: v for k, v in y.items() if k not in skip},
            ):
                self.add(where, no, "field", path, a, b)

    def call(
        self,
        where: str,
        no: int,
        k: int,
        session: str,
        x_step: JsonDict,
        cx: JsonDict,
        cy: JsonDict,
        rx: Mapping[str, Any] | None,
        ry: Mapping[str, Any] | None,
        same_args: bool = False,
    ) -> None:
        strict = self.opt.strict
        label = f"{cx.get('tool_call_id') or '#' + str(k + 1)} ({cx.get('function_name')})"
        if cx.get("function_name") != cy.get("function_name"):
            path = f"tool_calls[{k}].function_name"
            self.add(
                where,
                no,
                "tool_calls",
                path,
                cx.get("function_name"),
                cy.get("function_name"),
                label,
            )
            return
        found = [] if same_args else deep_diff(arguments_of(cx), arguments_of(cy), "arguments")
        key = (session, str(cy.get("tool_call_id")))
        rewritten = key in self.opt.effective_args or _executed(cx) or _executed(cy)
        if not found and (rewritten or not same_args):
            # Same request from the model: compare what ran (a middleware's rewrite, when the
            # recording kept one) with what runs now.
            effective = self.opt.effective_args.get(key, executed_arguments_of(cy))
            found = deep_diff(executed_arguments_of(cx), effective, "arguments")
        for path, a, b in found:
            self.add(where, no, "arguments", path, a, b, label)
        if id(cx) not in self.opt.skip_children:
            kids_x, kids_y = self.old.children(rx), self.new.children(ry)
            for m in range(max(len(kids_x), len(kids_y))):
                kx = kids_x[m] if m < len(kids_x) else None
                ky = kids_y[m] if m < len(kids_y) else None
                sub = f"{where} › step {no} {cx.get('tool_call_id') or k + 1} › subagent {m + 1}"
                if kx is not None and ky is not None:
                    self.pair(sub, kx, ky)
                elif (kx is None) != (ky is None) or m >= min(len(kids_x), len(kids_y)):
                    self.add(
                        where,
                        no,
                        "subagent",
                        f"{_result_path(x_step, rx, k)}.subagent_trajectory_ref[{m}]",
                        _ref_view(kx, m < len(kids_x)),
                        _ref_view(ky, m < len(kids_y)),
                        label,
                    )
        text_x = result_text(rx) if rx is not None else None
        text_y = result_text(ry) if ry is not None else None
        # A recording that kept only the subagent reference (Relay's delegation result) says
        # nothing more about this result than the subagent's steps, compared above.
        by_ref = self.opt.replay and text_x is None and rx is not None and self.old.children(rx)
        # The same text normalizes the same: parse only results that differ as written.
        differs = text_x != text_y and (
            normalized_result(text_x, strict) != normalized_result(text_y, strict)
        )
        if differs and not by_ref:
            self.add(
                where, no, "result", f"observation.results[{k}].content", text_x, text_y, label
            )
        if strict:
            for path, a, b in deep_diff(
                _call_fields(cx),
                _call_fields(cy),
                f"tool_calls[{k}]",
            ):
                self.add(where, no, "field", path, a, b, label)
            for path, a, b in deep_diff(
                _strip(rx, ("content",)), _strip(ry, ("content",)), f"observation.results[{k}]"
            ):
                self.add(where, no, "field", path, a, b, label)


def _executed(call: Mapping[str, Any]) -> bool:
    """Whether a call records arguments that middleware rewrote (``extra.executed_arguments``)."""
    extra = call.get("extra")
    return isinstance(extra, Mapping) and "executed_arguments" in extra


def executed_arguments_of(call: Mapping[str, Any]) -> Any:
    """The arguments a tool call ran with: ``extra.executed_arguments`` when middleware
    rewrote the model's (wayline records both), else the model's own."""
    extra = call.get("extra")
    if isinstance(extra, Mapping) and "executed_arguments" in extra:
        return extra["executed_arguments"]
    return arguments_of(call)


def _result_path(step: Mapping[str, Any], result: Mapping[str, Any] | None, k: int) -> str:
    """Where a call's result sits in the (old) step: results may be in completion order."""
    observation = step.get("observation")
    results = observation.get("results", []) if isinstance(observation, Mapping) else []
    for i, item in enumerate(results):
        if item is result:
            return f"observation.results[{i}]"
    return f"tool_calls[{k}].result"


def _strip(value: Mapping[str, Any] | None, keys: tuple[str, ...]) -> JsonDict:
    return {k: v for k, v in (value or {}).items() if k not in keys}


def _call_fields(call: Mapping[str, Any]) -> JsonDict:
    """A call's other fields (strict mode): arguments, executed ones included, compared above."""
    out = _strip(call, ("arguments", "function_name"))
    extra = out.get("extra")
    if isinstance(extra, Mapping) and "executed_arguments" in extra:
        out["extra"] = _strip(extra, ("executed_arguments",))
    return out


def _call_view(call: Mapping[str, Any]) -> JsonDict:
    return {"function_name": call.get("function_name"), "arguments": arguments_of(call)}


def _ref_view(traj: Mapping[str, Any] | None, referenced: bool) -> Any:
    if not referenced:
        return _MISSING
    if traj is None:
        return "(referenced, not embedded)"
    return {"steps": len(steps_of(traj))}
