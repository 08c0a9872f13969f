"""A session's steps as ``wayline mcp`` shows them: one short line each, and one step whole.

:func:`step_facts` reads what every line needs from a raw ATIF step (kind, status, tools,
duration, cost) without its text, so the failed steps of a 10,000-step session are found in
one pass; :func:`step_text` makes the text of only the lines a page shows. :func:`render_step`
shows one step whole, redacted, with every long string and list cut where it says how to read
on (``path`` and ``offset``), and :func:`resolve` finds the value such a path names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wayline.mcp.paging import clip
from wayline.store.extract import llm_outcome, result_outcome, step_number
from wayline.trajectory.load import arguments_of, result_text, results_by_call, text_of

__all__ = [
    "FIRST_KEYS",
    "PathError",
    "StepFacts",
    "render_step",
    "resolve",
    "step_facts",
    "step_text",
]

FIRST_KEYS = (
    "step_id",
    "source",
    "timestamp",
    "model_name",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
)
"""The fields a step shows first; the rest (``extra``: ids, the request sent) follow."""

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


class PathError(ValueError):
    """A ``path`` that names nothing in the step; ``str()`` says which part."""


@dataclass(frozen=True, slots=True)
class StepFacts:
    """What one line of a session's summary says about a step, its text aside."""

    index: int  # position in the trajectory's steps
    number: int  # the number the viewer and the index show
    kind: str  # user, agent, system
    status: str  # ok, failed, interrupted
    tools: tuple[tuple[str, str], ...]  # (name, ok/failed/interrupted) per call
    took_ms: float | None
    cost_usd: float | None
    llm_failed: bool  # the model call itself failed (not only a tool)


def _seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _took_ms(extra: Mapping[str, Any]) -> float | None:
    """From the model call's start to the last end of it and its tools (ATIF's seconds)."""
    spans: list[Any] = [extra.get("invocation")]
    tools = extra.get("tool_invocations")
    if isinstance(tools, list):
        spans.extend(tools)
    starts: list[float] = []
    ends: list[float] = []
    for span in spans:
        if isinstance(span, Mapping):
            start, end = _seconds(span.get("start_timestamp")), _seconds(span.get("end_timestamp"))
            if start is not None and end is not None and end >= start:
                starts.append(start)
                ends.append(end)
    if not starts:
        return None
    return round((max(ends) - min(starts)) * 1000, 3)


def step_facts(steps: list[Any]) -> list[StepFacts]:
    """The facts of every step that is an object, in order."""
    out: list[StepFacts] = []
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        kind = str(step.get("source") or "?")
        found_extra = step.get("extra")
        extra: Mapping[str, Any] = found_extra if isinstance(found_extra, dict) else {}
        outcome = llm_outcome(step) if kind == "agent" else None
        by_call = results_by_call(step)
        tools: list[tuple[str, str]] = []
        calls = step.get("tool_calls")
        for k, call in enumerate(calls if isinstance(calls, list) else []):
            if not isinstance(call, Mapping):
                continue
            result = by_call.get(k)
            found = result_outcome(result, result_text(result)) if result is not None else None
            state = {"failed": "failed", "interrupted": "interrupted"}.get(found or "", "ok")
            tools.append((str(call.get("function_name") or "?"), state))
        states = {state for _, state in tools}
        if outcome is not None:
            status = outcome
        elif "failed" in states:
            status = "failed"
        elif "interrupted" in states:
            status = "interrupted"
        else:
            status = "ok"
        metrics = step.get("metrics")
        cost = _seconds(metrics.get("cost_usd")) if isinstance(metrics, Mapping) else None
        out.append(
            StepFacts(
                index=index,
                number=step_number(step, index),
                kind=kind,
                status=status,
                tools=tuple(tools),
                took_ms=_took_ms(extra) if kind == "agent" else None,
                cost_usd=cost,
                llm_failed=outcome is not None,
            )
        )
    return out


def _arguments_preview(call: Mapping[str, Any]) -> str:
    args = arguments_of(call)
    if isinstance(args, Mapping):
        shown = ", ".join(
            f"{name}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
            for name, value in args.items()
        )
    else:
        shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return f"{call.get('function_name') or '?'}({shown})"


def step_text(step: Mapping[str, Any], limit: int, redact: Callable[[str], str] | None) -> str:
    """The first ``limit`` characters a line shows: the message, else the model's error,
    else the calls with their arguments; redacted whole before it is cut."""
    text = text_of(step.get("message")).strip()
    if not text:
        extra = step.get("extra")
        response = extra.get("llm_response") if isinstance(extra, Mapping) else None
        error = response.get("error") if isinstance(response, Mapping) else None
        if isinstance(error, Mapping):
            text = f"model call failed: {error.get('message') or error.get('type') or error}"
    if not text:
        calls = step.get("tool_calls")
        if isinstance(calls, list):
            text = "; ".join(_arguments_preview(c) for c in calls if isinstance(c, Mapping))
    if redact is not None:
        text = redact(text[: limit * 4])  # enough to keep, redacted before the cut
    return clip(text, limit)


# -- one step whole ----------------------------------------------------------------------------


def ordered(step: Mapping[str, Any]) -> dict[str, Any]:
    """The step's fields with :data:`FIRST_KEYS` first."""
    out = {key: step[key] for key in FIRST_KEYS if key in step}
    out.update((key, value) for key, value in step.items() if key not in out)
    return out


def parse_path(path: str) -> list[str | int]:
    """``tool_calls[0].arguments.command`` as its parts; :class:`PathError` when malformed."""
    parts: list[str | int] = []
    rest = path.strip()
    position = 0
    for found in _PATH_PART.finditer(rest):
        gap = rest[position : found.start()]
        if gap not in ("", "."):
            raise PathError(f"path: {path!r} is not a path like tool_calls[0].arguments")
        parts.append(int(found.group(2)) if found.group(2) is not None else found.group(1))
        position = found.end()
    if not parts or rest[position:]:
        raise PathError(f"path: {path!r} is not a path like tool_calls[0].arguments")
    return parts


def resolve(value: Any, path: str) -> Any:
    """The value ``path`` names inside ``value``; :class:`PathError` names the part missing."""
    here = value
    walked = ""
    for part in parse_path(path):
        if isinstance(part, int):
            if not isinstance(here, list) or part >= len(here):
                size = f" (it has {len(here)} items)" if isinstance(here, list) else ""
                raise PathError(f"path: {walked or '(the step)'} has no item [{part}]{size}")
            here = here[part]
            walked += f"[{part}]"
        else:
            if not isinstance(here, Mapping) or part not in here:
                keys = ", ".join(list(here)[:12]) if isinstance(here, Mapping) else ""
                hint = f" (its keys: {keys})" if keys else ""
                raise PathError(f"path: {walked or '(the step)'} has no field {part!r}{hint}")
            here = here[part]
            walked += f".{part}" if walked else part
    return here


def _join(base: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{base}[{part}]"
    return f"{base}.{part}" if base else part


class _Cutter:
    """A copy of a value with strings past ``max_string`` and lists past ``max_items`` cut,
    each cut saying where it is (``path``) and where the rest starts (``offset``)."""

    def __init__(self, max_string: int, max_items: int) -> None:
        self.max_string = max_string
        self.max_items = max_items
        self.cuts: list[str] = []

    def walk(self, value: Any, path: str) -> Any:
        if isinstance(value, str):
            if len(value) <= self.max_string:
                return value
            self.cuts.append(f"{path or '(value)'}: {len(value):,} chars")
            rest = len(value) - self.max_string
            note = f"…[{rest:,} more chars: path={path!r} offset={self.max_string}]"
            return value[: self.max_string] + note
        if isinstance(value, Mapping):
            return {key: self.walk(item, _join(path, str(key))) for key, item in value.items()}
        if isinstance(value, list):
            kept = [
                self.walk(item, _join(path, i)) for i, item in enumerate(value[: self.max_items])
            ]
            if len(value) > self.max_items:
                self.cuts.append(f"{path or '(value)'}: {len(value):,} items")
                more = len(value) - self.max_items
                kept.append(f"…[{more:,} more items: path={path!r} offset={self.max_items}]")
            return kept
        return value


_LEVELS = ((2_000, 50), (600, 20), (200, 8), (80, 4))


def render_step(
    value: Any, budget: int, *, base: str = "", max_string: int | None = None
) -> tuple[str, list[str]]:
    """``value`` as indented JSON of at most ``budget`` characters, and what was cut.

    Long strings and lists are cut, less at first and more while the JSON does not fit
    (``max_string``: the most characters a string keeps at the first try); each cut names its
    ``path`` (below ``base``) and ``offset``, to read on with ``get_step``. What still does not
    fit at the smallest cut is cut at ``budget`` with a note.
    """
    levels = list(_LEVELS)
    if max_string is not None:
        levels = [(min(max_string, s), n) for s, n in levels]
        levels.insert(0, (max_string, _LEVELS[0][1]))
    cuts: list[str] = []
    text = ""
    for strings, items in levels:
        cutter = _Cutter(strings, items)
        text = json.dumps(cutter.walk(value, base), ensure_ascii=False, indent=1, default=str)
        cuts = cutter.cuts
        if len(text) <= budget:
            return text, cuts
    note = "\n…[cut at the size limit: ask for a part with path]"
    return text[: max(0, budget - len(note))] + note, [*cuts, "(the whole value: size limit)"]
