"""In-progress ATIF trajectories and their rendering to ATIF v1.7 dicts.

The builder mutates these objects as events arrive; :func:`render_trajectory` turns a node into
the JSON document. Keys are emitted in Relay's struct field order and ``None`` fields are left out,
because ATIF models forbid unknown keys but accept absent optional ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wayline.relay.atif.payloads import JsonDict, tool_definition_name

SCHEMA_VERSION = "ATIF-v1.7"
FRAMEWORK = "nemo_relay"


UNKNOWN_VERSION = "unknown"
AGENT_METADATA_KEY = "atif_agent"
"""Agent-scope metadata key holding the ATIF ``agent`` block the recording host declared
(``name``, ``version``, ``model_name``, ``extra``): the live exporter and the offline converter
both read it, so a converted ATOF names its agents as the live file does."""


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """The requested ATIF ``agent`` block; ``None`` fields come from the recorded agent scope
    (its :data:`AGENT_METADATA_KEY` metadata), then the scope's name / ``"unknown"``."""

    name: str | None = None
    version: str | None = None
    model_name: str | None = None
    tool_definitions: list[JsonDict] | None = None
    extra: JsonDict | None = None


def _first_str(*values: Any) -> str | None:
    return next((v for v in values if isinstance(v, str) and v), None)


class AgentState:
    """The agent block of one trajectory tree, optionally completed from what the events show."""

    __slots__ = (
        "_infer_model",
        "_infer_tools",
        "_tool_names",
        "extra",
        "model_name",
        "name",
        "tool_definitions",
        "version",
    )

    def __init__(
        self,
        info: AgentInfo,
        fallback_name: str,
        *,
        infer: bool,
        declared: JsonDict | None = None,
    ) -> None:
        recorded = declared or {}
        self.name = _first_str(info.name, recorded.get("name"), fallback_name) or fallback_name
        self.version = _first_str(info.version, recorded.get("version")) or UNKNOWN_VERSION
        self.model_name = _first_str(info.model_name, recorded.get("model_name"))
        self.tool_definitions = (
            list(info.tool_definitions) if info.tool_definitions is not None else None
        )
        extra = info.extra if info.extra is not None else recorded.get("extra")
        self.extra = extra if isinstance(extra, dict) else None
        self._infer_model = infer and self.model_name is None
        self._infer_tools = infer and info.tool_definitions is None
        self._tool_names: set[str] = set()

    def observe_model(self, model: str | None) -> None:
        """Adopt the first model seen when the caller gave none (inference mode only)."""
        if self._infer_model and self.model_name is None and model:
            self.model_name = model

    def observe_tools(self, tools: list[JsonDict]) -> None:
        """Collect tool definitions offered to the model, first definition per name wins."""
        if not self._infer_tools:
            return
        for tool in tools:
            name = tool_definition_name(tool)
            if name is None or name in self._tool_names:
                continue
            self._tool_names.add(name)
            if self.tool_definitions is None:
                self.tool_definitions = []
            self.tool_definitions.append(tool)

    def to_atif(self) -> JsonDict:
        """The ATIF ``agent`` object."""
        block: JsonDict = {"name": self.name, "version": self.version}
        if self.model_name is not None:
            block["model_name"] = self.model_name
        if self.tool_definitions is not None:
            block["tool_definitions"] = self.tool_definitions
        if self.extra is not None:
            block["extra"] = self.extra
        return block


@dataclass(slots=True)
class ToolCall:
    """A tool call issued by a step."""

    call_id: str
    name: str
    arguments: JsonDict
    extra: JsonDict | None = None


@dataclass(eq=False, slots=True)
class OpenTool:
    """A tool span that started and has not ended yet."""

    node: TrajectoryNode
    uuid: str
    name: str
    parent_uuid: str | None
    parent_name: str | None
    call_id: str | None
    start_ns: int | None
    children: list[TrajectoryNode] = field(default_factory=list)


@dataclass(slots=True)
class ObservationResult:
    """One tool result attached to the step that issued the call."""

    source_call_id: str | None
    content: str | None
    extra: JsonDict
    children: list[TrajectoryNode]


@dataclass(eq=False, slots=True)
class Step:
    """One ATIF step under construction."""

    source: str
    timestamp: str | None
    message: str
    model_name: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ObservationResult] = field(default_factory=list)
    metrics: JsonDict | None = None
    llm_call_count: int | None = None
    extra: JsonDict = field(default_factory=dict)
    tool_ancestry: dict[str, JsonDict] = field(default_factory=dict)
    tool_invocations: dict[str, JsonDict] = field(default_factory=dict)


class TrajectoryNode:
    """A trajectory being built: a root (top-level agent scope) or an embedded sub-agent."""

    __slots__ = (
        "_child_ids",
        "agent",
        "calls",
        "children",
        "declared_session",
        "ended",
        "events",
        "extra",
        "name",
        "notes",
        "open_tools",
        "parent",
        "parent_scope_uuid",
        "root",
        "scope_uuid",
        "session_id",
        "steps",
        "trajectory_id",
    )

    def __init__(
        self,
        trajectory_id: str,
        session_id: str | None,
        *,
        agent: AgentState,
        scope_uuid: str | None = None,
        name: str = "",
        parent: TrajectoryNode | None = None,
        parent_scope_uuid: str | None = None,
        declared_session: bool = False,
    ) -> None:
        self.trajectory_id = trajectory_id
        self.session_id = session_id
        self.agent = agent
        self.scope_uuid = scope_uuid
        self.name = name
        self.parent = parent
        self.parent_scope_uuid = parent_scope_uuid
        self.declared_session = declared_session
        self.root: TrajectoryNode = parent.root if parent is not None else self
        self.steps: list[Step] = []
        self.children: list[TrajectoryNode] = []
        self.calls: dict[str, Step] = {}
        self.open_tools: dict[str, OpenTool] = {}
        self.ended = False
        self.notes: str | None = None
        self.extra: JsonDict | None = None
        self.events: list[Any] | None = None
        self._child_ids: set[str] = set()

    def unique_child_id(self, wanted: str, fallback: str) -> str:
        """Reserve a trajectory id for a new sub-agent, unique among this node's sub-agents."""
        chosen = wanted
        if chosen in self._child_ids or chosen == self.trajectory_id:
            chosen = fallback
        base, n = chosen, 1
        while chosen in self._child_ids or chosen == self.trajectory_id:
            n += 1  # the same scope started twice (a duplicated event): still a unique id
            chosen = f"{base}-{n}"
        self._child_ids.add(chosen)
        return chosen

    def descendants(self) -> list[TrajectoryNode]:
        """Every embeddable sub-agent below this node, depth first in start order."""
        found: list[TrajectoryNode] = []
        for child in self.children:
            if child.steps:
                found.append(child)
                found.extend(child.descendants())
        return found


PathFor = Callable[[TrajectoryNode], str | None]


def _no_path(node: TrajectoryNode) -> str | None:
    return None


def final_metrics(steps: list[Step]) -> JsonDict:
    """Totals over the steps that carry metrics, plus ``total_steps``; no cost total unless
    every step with metrics was priced."""
    totals: JsonDict = {}
    for key, total_key in (
        ("prompt_tokens", "total_prompt_tokens"),
        ("completion_tokens", "total_completion_tokens"),
        ("cached_tokens", "total_cached_tokens"),
        ("cost_usd", "total_cost_usd"),
    ):
        values = [step.metrics[key] for step in steps if step.metrics and key in step.metrics]
        if key == "cost_usd" and len(values) != sum(1 for step in steps if step.metrics):
            continue  # a step the table could not price: the total is unknown, not too low
        if values:
            totals[total_key] = sum(values)
    totals["total_steps"] = len(steps)
    return totals


def _render_ref(child: TrajectoryNode, path_for: PathFor) -> JsonDict:
    ref: JsonDict = {"trajectory_id": child.trajectory_id}
    if child.declared_session and child.session_id is not None:
        ref["session_id"] = child.session_id
    path = path_for(child)
    if path is not None:
        ref["trajectory_path"] = path
    ref["extra"] = {"name": child.name, "scope_uuid": child.scope_uuid}
    return ref


def _render_result(result: ObservationResult, path_for: PathFor) -> JsonDict:
    out: JsonDict = {}
    if result.source_call_id is not None:
        out["source_call_id"] = result.source_call_id
    if result.content is not None:
        out["content"] = result.content
    refs = [_render_ref(child, path_for) for child in result.children if child.steps]
    if refs:
        out["subagent_trajectory_ref"] = refs
    if result.extra:
        out["extra"] = result.extra
    return out


def _render_call(call: ToolCall) -> JsonDict:
    out: JsonDict = {
        "tool_call_id": call.call_id,
        "function_name": call.name,
        "arguments": call.arguments,
    }
    if call.extra:
        out["extra"] = call.extra
    return out


def _render_step(step_id: int, step: Step, path_for: PathFor) -> JsonDict:
    out: JsonDict = {"step_id": step_id}
    if step.timestamp is not None:
        out["timestamp"] = step.timestamp
    out["source"] = step.source
    if step.model_name is not None:
        out["model_name"] = step.model_name
    out["message"] = step.message
    if step.reasoning is not None:
        out["reasoning_content"] = step.reasoning
    if step.tool_calls:
        out["tool_calls"] = [_render_call(call) for call in step.tool_calls]
    if step.results:
        out["observation"] = {"results": [_render_result(r, path_for) for r in step.results]}
    if step.metrics is not None:
        out["metrics"] = step.metrics
    if step.llm_call_count is not None:
        out["llm_call_count"] = step.llm_call_count
    extra = dict(step.extra)
    if step.tool_ancestry:
        order = [call.call_id for call in step.tool_calls if call.call_id in step.tool_ancestry]
        extra["tool_ancestry"] = [step.tool_ancestry[call_id] for call_id in order]
        extra["tool_invocations"] = [step.tool_invocations[call_id] for call_id in order]
    if extra:
        out["extra"] = extra
    return out


def render_step(step_id: int, step: Step, path_for: PathFor | None = None) -> JsonDict:
    """One step as :func:`render_trajectory` renders it (by default: no sub-agent paths)."""
    return _render_step(step_id, step, path_for if path_for is not None else _no_path)


def render_trajectory(
    node: TrajectoryNode, path_for: PathFor | None = None, *, steps: bool = True
) -> JsonDict:
    """The ATIF v1.7 document of ``node``, sub-agents with steps embedded recursively.

    ``path_for`` names a standalone file for a sub-agent (subagent export mode ``all``); its
    value goes into the reference's ``trajectory_path``. ``steps=False`` leaves the
    :class:`Step` objects themselves in ``"steps"`` (for a writer that renders only the steps
    it has no text for).
    """
    paths = path_for if path_for is not None else _no_path
    doc: JsonDict = {"schema_version": SCHEMA_VERSION}
    if node.session_id is not None:
        doc["session_id"] = node.session_id
    doc["trajectory_id"] = node.trajectory_id
    doc["agent"] = node.agent.to_atif()
    doc["steps"] = (
        [_render_step(i, step, paths) for i, step in enumerate(node.steps, start=1)]
        if steps
        else list(node.steps)
    )
    if node.notes is not None:
        doc["notes"] = node.notes
    doc["final_metrics"] = final_metrics(node.steps)
    embedded = [child for child in node.children if child.steps]
    if embedded:
        doc["subagent_trajectories"] = [
            render_trajectory(child, paths, steps=steps) for child in embedded
        ]
    extra = dict(node.extra) if node.extra is not None else {}
    if node.events is not None:
        extra["observed_events"] = node.events
    if extra:
        doc["extra"] = extra
    return doc
