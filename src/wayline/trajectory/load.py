"""Reading ATIF trajectories for replay, diff and export: clear errors, tolerant views.

Accepts wayline's own ATIF (``observability/relay``), NeMo Relay's exporter (Hermes) and
Harbor-style files, and ATOF event files, converted in memory. Only the structure the three
commands rely on is checked; every error names the file and the field
(``steps[3].tool_calls[0].function_name``). Input no trajectory holds (nesting deeper than
:data:`MAX_DEPTH`, integers too long to convert, ``NaN``, invalid UTF-8) is a
:class:`TrajectoryError` too, never a crash.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wayline.relay.identify import collector_paused

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


MAX_DEPTH = 128
"""How deeply JSON may nest (objects and lists); real trajectories stay far below it, and a
bound keeps every recursive reader of the document (compare, export, validate) safe."""


def load_trajectory(path: str | Path) -> JsonDict:
    """Read one trajectory: an ATIF file, or an ATOF file holding one (converted in memory).

    Raises :class:`TrajectoryError` naming the file (and the field) when it cannot be used.
    """
    found = load_trajectories(path)
    if len(found) != 1:
        raise TrajectoryError(
            f"the ATOF events hold {len(found)} trajectories; write them out with "
            f"`wayline atif convert {path}` and pick one",
            source=str(path),
        )
    return found[0]


def load_trajectories(path: str | Path) -> list[JsonDict]:
    """Every trajectory of one file: an ATIF file's one, or each root of an ATOF file's events.

    ATOF (Relay's JSONL event stream) is converted in memory with the ATOF → ATIF mapping of
    :mod:`wayline.relay.atif`, as ``wayline atif convert`` would write it. Raises
    :class:`TrajectoryError` naming the file (and the field) when it cannot be used.
    """
    source = str(path)
    file_path = Path(path)
    kind = identify_input(file_path)
    if kind == "atof":
        return _from_atof(file_path)
    data = parse_json(read_text(file_path), source)
    with collector_paused():  # a walk that builds no cycles, over a heap just grown
        check_structure(data, source)
    return [data]


def identify_input(path: Path) -> str:
    """``"atif"`` or ``"atof"``: what ``path`` holds, from its first bytes.

    Anything else is refused before the file is read whole, with a :class:`TrajectoryError`
    saying what it is: not a regular file (a FIFO, a device), empty, not UTF-8, not JSON, or
    JSON of another kind (OpenTelemetry spans, a session transcript).
    """
    from wayline.relay.identify import InputFileError, identify

    try:
        found = identify(path)
    except InputFileError as exc:
        raise TrajectoryError(exc.message, source=str(path)) from None
    if found.kind == "json":
        return "atif"  # read whole: its fields say what is missing
    if found.kind not in ("atif", "atof"):
        raise TrajectoryError(
            f"{found.label}, not a trajectory (ATIF .json or ATOF .jsonl expected)",
            source=str(path),
        )
    return found.kind


def read_text(path: Path) -> str:
    """The whole file as text; :class:`TrajectoryError` when unreadable or not UTF-8."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TrajectoryError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TrajectoryError(f"not UTF-8 text (byte {exc.start})", source=str(path)) from None
    finally:
        del raw  # the bytes go before the text is parsed


def parse_json(text: str, source: str) -> Any:
    """Parse a JSON document, refusing what no trajectory holds: nesting deeper than
    :data:`MAX_DEPTH`, integers too long to convert, ``NaN``/``Infinity`` and numbers beyond
    a float's range. Raises :class:`TrajectoryError` with one line saying which."""
    try:
        with collector_paused():
            data = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise TrajectoryError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", source=source
        ) from None
    except RecursionError:
        raise TrajectoryError(
            f"JSON nested too deeply (over {MAX_DEPTH} levels)", source=source
        ) from None
    except ValueError as exc:
        raise TrajectoryError(f"unreadable JSON value: {_short(exc)}", source=source) from None
    with collector_paused():
        deep = json_depth(data) > MAX_DEPTH
    if deep:
        raise TrajectoryError(f"JSON nested too deeply (over {MAX_DEPTH} levels)", source=source)
    return data


def json_depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (a scalar is 0), without recursion.

    Walks level by level and keeps only containers, so a large document costs one pass over
    its values; stops past :data:`MAX_DEPTH`.
    """
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return depth
        below: list[Any] = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, dict | list):
                    below.append(child)
        level = below
    return depth


def json_problem(exc: BaseException) -> str:
    """One line for why a JSON parser refused a document (deep nesting, a huge integer…)."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    return f"{type(exc).__name__}: {_short(exc)}"


def sniff_kind(path: Path) -> str | None:
    """``"atif"`` or ``"atof"`` when the start of a file shows which it is, else ``None``.

    Reads at most the first 64 KiB (:func:`wayline.relay.identify.identify`); a file that is
    no trajectory input (a FIFO, empty, not JSON, OpenTelemetry spans…) is ``None``.
    """
    from wayline.relay.identify import InputFileError, identify

    try:
        kind = identify(path).kind
    except InputFileError:
        return None
    if kind == "json":
        return "atif"
    return kind if kind in ("atif", "atof") else None


def _finite_float(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _short(exc: BaseException) -> str:
    text = str(exc)
    if "integer string conversion" in text:
        return "an integer with more digits than Python converts (4300)"
    return text if len(text) <= 200 else text[:200] + "…"


def looks_like_atof(path: Path, text: str) -> bool:
    """Whether a file is an ATOF event stream: a ``.jsonl`` name, or a first line that is one
    event object (``kind``, no ``steps``)."""
    if path.suffix == ".jsonl":
        return True
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        event = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(event, dict) and "kind" in event and "steps" not in event


def _from_atof(path: Path) -> list[JsonDict]:
    """The ATOF file's trajectories (each root with steps, else its subagents), in memory."""
    from wayline.relay.atif.builder import TrajectoryBuilder
    from wayline.relay.atif.model import AgentInfo, TrajectoryNode, render_trajectory
    from wayline.relay.atof import AtofFormatError, AtofTornLineWarning, iter_events

    source = str(path)
    nodes: list[TrajectoryNode] = []
    builder = TrajectoryBuilder(AgentInfo(), on_complete=nodes.append)
    with warnings.catch_warnings(record=True) as torn:
        warnings.simplefilter("always", AtofTornLineWarning)  # a torn last line: as converted
        try:
            for event in iter_events(path):
                builder.feed(event)
            builder.finish()
        except AtofFormatError as exc:
            raise TrajectoryError(f"line {exc.line_no}: {exc.message}", source=source) from None
        except OSError as exc:
            raise TrajectoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise TrajectoryError(
                f"ATOF events that cannot be converted: {type(exc).__name__}: {_short(exc)}",
                source=source,
            ) from None
    roots = _with_steps(nodes)
    if not roots and any(issubclass(w.category, AtofTornLineWarning) for w in torn):
        line = str(torn[0].message).removeprefix(f"{source}:").split(":", 1)[0]
        raise TrajectoryError(
            f"truncated: line {line} is incomplete, and no ATOF event before it has steps",
            source=source,
        )
    if not roots:
        raise TrajectoryError(
            "not a trajectory: no ATOF event with steps (ATIF .json or ATOF .jsonl expected)",
            source=source,
        )
    out: list[JsonDict] = []
    for node in roots:
        try:
            document = json.loads(json.dumps(render_trajectory(node), default=str))
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise TrajectoryError(
                f"ATOF events that cannot be converted: {type(exc).__name__}: {_short(exc)}",
                source=source,
            ) from None
        if json_depth(document) > MAX_DEPTH:
            raise TrajectoryError(
                f"JSON nested too deeply (over {MAX_DEPTH} levels)", source=source
            )
        check_structure(document, source)
        out.append(document)
    return out


def _with_steps(nodes: list[Any]) -> list[Any]:
    # A root without steps (a session that only delegated) is no ATIF document; its
    # subagents are trajectories of their own, as `wayline atif convert` writes them.
    found: list[Any] = []
    for node in nodes:
        if node.steps:
            found.append(node)
        else:
            found.extend(_with_steps(node.children))
    return found


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
