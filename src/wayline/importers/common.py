"""What every importer shares: errors naming file, line and field; ATIF steps; redaction;
atomic writing under a name derived from the source's own session id.

Importers build :class:`~wayline.relay.atif.model.TrajectoryNode` trees, the same objects the
live exporter renders, so an imported file has the shape of a recorded one (steps, tool calls,
observations on the step that issued the call, embedded subagents referenced from the
delegating call's result).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wayline.redaction import redact_value
from wayline.relay.atif.files import write_text_atomic
from wayline.relay.atif.jsontext import dumps_document
from wayline.relay.atif.model import (
    AgentInfo,
    AgentState,
    ObservationResult,
    Step,
    ToolCall,
    TrajectoryNode,
    render_trajectory,
)
from wayline.relay.atif.payloads import JsonDict, timestamp_text, usage_metrics
from wayline.relay.atif.validate import validate_trajectory

__all__ = [
    "FORMATS",
    "Batch",
    "ImportFailure",
    "Imported",
    "Trajectory",
    "output_name",
    "read_jsonl",
    "render_document",
    "write_imported",
]

FORMATS = ("claude-code", "codex", "inspect", "otlp-json")


class ImportFailure(ValueError):
    """Input an importer cannot read: which file, which line (1-based, when it has lines),
    which field, and why."""

    def __init__(self, path: Path | str, line: int | None, field_name: str, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field_name
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {field_name}: {reason}")


def read_jsonl(path: Path) -> Iterator[tuple[int, JsonDict]]:
    """``(line number, object)`` for each non-blank line; a line that is not a JSON object is
    an :class:`ImportFailure` naming it."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise ImportFailure(path, None, "file", f"cannot read: {exc.strerror or exc}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                raise ImportFailure(path, number, "line", f"not JSON ({exc})") from None
            if not isinstance(value, dict):
                raise ImportFailure(path, number, "line", "not a JSON object")
            yield number, value


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks
    (other parts are named in brackets, e.g. ``[image]``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif isinstance(block.get("type"), str):
                parts.append(f"[{block['type']}]")
    return "\n".join(parts)


def arguments_of(raw: Any) -> JsonDict:
    """Tool-call arguments as an object: a JSON object (or its text) as it is; anything else
    kept whole under ``input`` (a free-form custom tool's patch text, a list)."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            return {"input": raw}
        return parsed if isinstance(parsed, dict) else {"input": raw}
    return {"input": raw}


def when(value: Any) -> str | None:
    """An RFC 3339 step timestamp, or None for anything that is not one."""
    return timestamp_text(value) if isinstance(value, str) else None


def metrics_of(usage: Any) -> JsonDict | None:
    """ATIF step metrics from a provider usage object (Anthropic or OpenAI keys), wayline's
    own mapping: prompt tokens include cached ones, the rest goes to ``metrics.extra``."""
    if not isinstance(usage, dict):
        return None
    return usage_metrics(None, {"usage": usage})


@dataclass
class Trajectory:
    """One trajectory being imported (a session or an embedded subagent)."""

    node: TrajectoryNode
    calls: dict[str, tuple[Step, ToolCall]] = field(default_factory=dict)

    @classmethod
    def root(
        cls, session_id: str, agent: str, version: str | None, model: str | None
    ) -> Trajectory:
        """A top-level trajectory named by the source's session id."""
        state = AgentState(
            AgentInfo(name=agent, version=version, model_name=model), agent, infer=True
        )
        return cls(TrajectoryNode(session_id, session_id, agent=state, declared_session=True))

    def child(self, trajectory_id: str, name: str, model: str | None = None) -> Trajectory:
        """An embedded subagent of this trajectory (referenced by whichever result names it)."""
        parent = self.node
        state = AgentState(
            AgentInfo(
                name=f"{parent.agent.name}/{name}", version=parent.agent.version, model_name=model
            ),
            name,
            infer=True,
        )
        unique = parent.unique_child_id(trajectory_id, f"{trajectory_id}-sub")
        node = TrajectoryNode(unique, parent.session_id, agent=state, name=name, parent=parent)
        parent.children.append(node)
        return Trajectory(node)

    def step(
        self,
        source: str,
        message: str,
        timestamp: str | None,
        extra: JsonDict | None = None,
        *,
        model: str | None = None,
    ) -> Step:
        """Append a step (``user``, ``agent`` or ``system``)."""
        step = Step(source=source, timestamp=timestamp, message=message)
        if source == "agent" and model:
            step.model_name = model
            self.node.agent.observe_model(model)
        if extra:
            step.extra.update(extra)
        self.node.steps.append(step)
        return step

    def call(self, step: Step, call_id: str, name: str, arguments: JsonDict) -> ToolCall:
        """A tool call issued by ``step``; a repeated id in one trajectory gets a suffix (ATIF
        ids are unique per step, and results find their call by id)."""
        unique, n = call_id, 1
        while unique in self.calls:
            n += 1
            unique = f"{call_id}#{n}"
        call = ToolCall(unique, name, arguments)
        if unique != call_id:
            call.extra = {"source_call_id": call_id}
        step.tool_calls.append(call)
        self.calls[unique] = (step, call)
        self.calls.setdefault(call_id, (step, call))
        return call

    def result(
        self,
        call_id: str | None,
        content: str | None,
        extra: JsonDict | None = None,
        children: list[TrajectoryNode] | None = None,
    ) -> bool:
        """Attach a tool result to the step that issued ``call_id``; False when no step did."""
        found = self.calls.get(call_id) if call_id is not None else None
        if found is None:
            return False
        step, call = found
        step.results.append(
            ObservationResult(call.call_id, content, dict(extra or {}), list(children or []))
        )
        return True

    def result_of(self, call_id: str) -> ObservationResult | None:
        """The result already attached for ``call_id``, if any."""
        found = self.calls.get(call_id)
        if found is None:
            return None
        step, call = found
        return next((r for r in step.results if r.source_call_id == call.call_id), None)

    def orphan_result(self, call_id: str | None, content: str | None, extra: JsonDict) -> None:
        """A result whose call the source does not hold: kept on a system step, its id in
        ``extra`` (ATIF lets a result name only a call of its own step)."""
        note = {"source_call_id": call_id, **extra} if call_id else dict(extra)
        ids = {"uuid": extra["uuid"]} if "uuid" in extra else {}
        self.step("system", content or "", None, {**ids, "orphan_tool_result": note})

    def link(self, call_id: str, child: Trajectory) -> None:
        """Reference ``child`` from the result of ``call_id`` (a result without content when
        the source recorded none)."""
        existing = self.result_of(call_id)
        if existing is not None:
            existing.children.append(child.node)
        elif not self.result(call_id, None, None, [child.node]):
            return

    def agent_steps(self) -> list[Step]:
        """This trajectory's agent steps."""
        return [s for s in self.node.steps if s.source == "agent"]


@dataclass
class Imported:
    """One session read from a source, ready to render."""

    trajectory: Trajectory
    fmt: str
    source_id: str
    path: Path
    source_extra: JsonDict = field(default_factory=dict)
    extra: JsonDict = field(default_factory=dict)
    #: source session ids embedded here that an earlier import may have written on their own
    embedded: list[str] = field(default_factory=list)


@dataclass
class Batch:
    """The files of one ``wayline import`` run, which a reader may look across (a Codex
    rollout finds the rollouts of the agents it spawned among them)."""

    files: tuple[Path, ...]
    memo: dict[str, object] = field(default_factory=dict)  # what a reader derived, once


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def output_name(fmt: str, source_id: str) -> str:
    """The file an import writes: ``import-<format>-<session id>.json``; the same source
    session always gives the same name, so importing it again replaces it."""
    safe = _UNSAFE.sub("_", source_id).strip("._") or "session"
    if safe != source_id or len(safe) > 120:
        digest = hashlib.sha256(source_id.encode("utf-8")).hexdigest()[:12]
        safe = f"{safe[:100]}-{digest}"
    return f"import-{fmt}-{safe}.json"


def render_document(imported: Imported) -> JsonDict:
    """The ATIF document of ``imported``, redacted as every wayline output is (credential keys
    hidden, secret-looking text replaced; ids and structure kept, nothing cut)."""
    node = imported.trajectory.node
    node.extra = {
        **imported.extra,
        "source": {
            "format": imported.fmt,
            "session_id": imported.source_id,
            "path": str(imported.path),
            **imported.source_extra,
        },
    }
    document = render_trajectory(node)
    redacted: JsonDict = redact_value(document, max_string=sys.maxsize)
    return redacted


def write_imported(imported: Imported, directory: Path) -> Path:
    """Validate (Harbor's rules) and write ``imported`` atomically; returns the path.

    A document that does not validate is an :class:`ImportFailure` and nothing is written.
    """
    document = render_document(imported)
    problems = validate_trajectory(document)
    if problems:
        first = problems[0]
        raise ImportFailure(imported.path, None, first.path, f"not valid ATIF: {first.message}")
    target = directory / output_name(imported.fmt, imported.source_id)
    write_text_atomic(target, dumps_document(document))
    return target
