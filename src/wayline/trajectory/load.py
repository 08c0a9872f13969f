"""Reading ATIF trajectories for replay, diff and export: clear errors, tolerant views.

Accepts wayline's own ATIF (``observability/relay``), NeMo Relay's exporter (Hermes) and
Harbor-style files. Only the structure the three commands rely on is checked; every error
names the file and the field (``steps[3].tool_calls[0].function_name``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JsonDict = dict[str, Any]

STEP_SOURCES = ("user", "agent", "system")


class TrajectoryError(ValueError):
    """A trajectory that cannot be used; ``str()`` is ``source: field: message``."""

    def __init__(self, message: str, *, source: str = "<trajectory>", field: str = "") -> None:
        self.message = message
        self.source = source
        self.field = field
        super().__init__(message)

    def __str__(self) -> str:
        if self.field:
            return f"{self.source}: {self.field}: {self.message}"
        return f"{self.source}: {self.message}"


def load_trajectory(path: str | Path) -> JsonDict:
    """Read and structurally check an ATIF file; raise :class:`TrajectoryError` when unusable."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TrajectoryError(f"cannot read: {reason}", source=source) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrajectoryError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", source=source
        ) from None
    check_structure(data, source)
    return data  # type: ignore[no-any-return]


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}
    return names.get(type(value), "object" if isinstance(value, Mapping) else type(value).__name__)


def check_structure(data: Any, source: str, prefix: str = "") -> None:
    """Check the fields replay, diff and export read; raise :class:`TrajectoryError`."""

    def fail(field: str, message: str) -> TrajectoryError:
        return TrajectoryError(message, source=source, field=f"{prefix}{field}" or "(top level)")

    if not isinstance(data, Mapping):
        raise fail("", f"a trajectory must be a JSON object, got {_kind(data)}")
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise fail("steps", f"expected a list of steps, got {_kind(steps)}")
    for i, step in enumerate(steps):
        at = f"steps[{i}]"
        if not isinstance(step, Mapping):
            raise fail(at, f"expected an object, got {_kind(step)}")
        if step.get("source") not in STEP_SOURCES:
            raise fail(
                f"{at}.source", f"must be one of user, agent, system; got {step.get('source')!r}"
            )
        calls = step.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise fail(f"{at}.tool_calls", f"expected a list, got {_kind(calls)}")
        for j, call in enumerate(calls or ()):
            if not isinstance(call, Mapping):
                raise fail(f"{at}.tool_calls[{j}]", f"expected an object, got {_kind(call)}")
            if not isinstance(call.get("function_name"), str) or not call["function_name"]:
                raise fail(f"{at}.tool_calls[{j}].function_name", "expected a non-empty string")
            args = call.get("arguments", {})
            if not isinstance(args, Mapping | str) and args is not None:
                raise fail(
                    f"{at}.tool_calls[{j}].arguments", f"expected an object, got {_kind(args)}"
                )
        observation = step.get("observation")
        if observation is None:
            continue
        if not isinstance(observation, Mapping) or not isinstance(
            observation.get("results", []), list
        ):
            raise fail(f"{at}.observation", "expected an object with a 'results' list")
        for j, result in enumerate(observation.get("results", [])):
            if not isinstance(result, Mapping):
                raise fail(
                    f"{at}.observation.results[{j}]", f"expected an object, got {_kind(result)}"
                )
    subs = data.get("subagent_trajectories")
    if subs is not None and not isinstance(subs, list):
        raise fail("subagent_trajectories", f"expected a list, got {_kind(subs)}")
    for k, sub in enumerate(subs or ()):
        check_structure(sub, source, f"{prefix}subagent_trajectories[{k}].")


# -- views ------------------------------------------------------------------------------------


class NotTextError(ValueError):
    """Content with parts that are not text (an image, audio): it cannot be replayed as text."""


def text_of(content: Any, *, strict: bool = False) -> str:
    """The text of ATIF content: a string, null, or a list of content parts.

    With ``strict``, a non-text part raises :class:`NotTextError` naming its type.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type", "text") == "text":
                texts.append(str(part.get("text") or ""))
            elif isinstance(part, str):
                texts.append(part)
            elif strict:
                kind = part.get("type") if isinstance(part, Mapping) else _kind(part)
                raise NotTextError(f"a content part of type {kind!r} (multimodal content)")
        return "".join(texts)
    if strict:
        raise NotTextError(f"content of type {_kind(content)}")
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def arguments_of(call: Mapping[str, Any]) -> Any:
    """A tool call's arguments as data (a JSON string is parsed when it can be)."""
    args = call.get("arguments")
    if args is None:
        return {}
    if isinstance(args, str):
        try:
            return json.loads(args) if args.strip() else {}
        except ValueError:
            return args
    return args


def result_text(result: Mapping[str, Any], *, strict: bool = False) -> str | None:
    """The text a tool returned: ``content``, else Relay's ``extra.tool_result`` as JSON."""
    content = result.get("content")
    if content is not None:
        return text_of(content, strict=strict)
    extra = result.get("extra")
    if isinstance(extra, Mapping) and "tool_result" in extra:
        raw = extra["tool_result"]
        return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return None


def steps_of(traj: Mapping[str, Any]) -> list[JsonDict]:
    """The trajectory's steps (checked to be objects by :func:`check_structure`)."""
    return list(traj.get("steps") or [])


def is_continuation(prev_kept: Mapping[str, Any] | None, step: Mapping[str, Any]) -> bool:
    """Whether a user step only repeats its turn's message before another model call.

    Relay's exporter writes the latest user message before *every* model call of a turn;
    wayline writes it once. A user step that follows an agent step which called tools is the
    same turn going on.
    """
    return (
        step.get("source") == "user"
        and prev_kept is not None
        and prev_kept.get("source") == "agent"
        and bool(prev_kept.get("tool_calls"))
    )


def results_by_call(step: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    """Tool-call index → its observation result (by ``source_call_id``, else in order)."""
    calls = step.get("tool_calls") or []
    observation = step.get("observation")
    results = observation.get("results", []) if isinstance(observation, Mapping) else []
    index = {c.get("tool_call_id"): i for i, c in enumerate(calls) if c.get("tool_call_id")}
    out: dict[int, Mapping[str, Any]] = {}
    loose: list[Mapping[str, Any]] = []
    for result in results:
        i = index.get(result.get("source_call_id"))
        if i is not None and i not in out:
            out[i] = result
        else:
            loose.append(result)
    free = [i for i in range(len(calls)) if i not in out]
    for i, result in zip(free, loose, strict=False):
        out[i] = result
    return out


@dataclass(frozen=True)
class Embedded:
    """Every embedded subagent trajectory, found by ``trajectory_id`` or ``session_id``."""

    by_id: dict[str, JsonDict]

    @classmethod
    def of(cls, root: Mapping[str, Any]) -> Embedded:
        """Index the embedded trajectories of ``root`` at any nesting depth."""
        found: dict[str, JsonDict] = {}
        for sub in _walk_embedded(root):
            for key in ("trajectory_id", "session_id"):
                value = sub.get(key)
                if isinstance(value, str) and value:
                    found.setdefault(value, sub)
        return cls(found)

    def children(self, result: Mapping[str, Any] | None) -> list[JsonDict | None]:
        """The trajectories a result's ``subagent_trajectory_ref`` names (None: not embedded)."""
        if result is None:
            return []
        refs = result.get("subagent_trajectory_ref")
        if isinstance(refs, Mapping):
            refs = [refs]
        out: list[JsonDict | None] = []
        for ref in refs if isinstance(refs, list) else ():
            if not isinstance(ref, Mapping):
                continue
            hit = None
            for key in ("trajectory_id", "session_id"):
                value = ref.get(key)
                if isinstance(value, str) and value in self.by_id:
                    hit = self.by_id[value]
                    break
            out.append(hit)
        return out


def _walk_embedded(traj: Mapping[str, Any]) -> Iterator[JsonDict]:
    for sub in traj.get("subagent_trajectories") or ():
        if isinstance(sub, dict):
            yield sub
            yield from _walk_embedded(sub)
