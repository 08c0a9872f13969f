"""The one ATOF → ATIF mapping, fed one event dict at a time.

Both entry points use it: the live :class:`~wayline.relay.atif.exporter.AtifExporter` (events from
relay subscribers) and the offline converter (events from an ATOF file). It keeps only what is
still needed: open scopes, open LLM/tool spans and the steps of unfinished trajectories, so the
converter's memory follows open scopes and steps, not the number of events.

Mapping (Relay 0.10.4's exporter): LLM start → ``user`` step when the request opens a fresh user
turn; LLM end → ``agent`` step (message, parsed tool calls, model, metrics, ``llm_call_count=1``);
tool end → observation result on the step that issued the call. Marks and plain scopes produce no
steps. An Agent scope nested in another trajectory becomes an embedded sub-agent, referenced from
the observation of the tool that was open in the parent when the sub-agent started.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from wayline.relay.atif.fields import (
    ancestry_of,
    declared_agent,
    invocation_of,
    middleware_trace,
    note_execution,
    relay_extra,
    status_of,
)
from wayline.relay.atif.model import (
    UNKNOWN_VERSION,
    AgentInfo,
    AgentState,
    ObservationResult,
    OpenTool,
    Step,
    ToolCall,
    TrajectoryNode,
)
from wayline.relay.atif.payloads import (
    JsonDict,
    as_dict,
    as_str,
    fresh_user_text,
    parse_arguments,
    parse_response,
    request_body,
    request_messages,
    request_tools,
    timestamp_ns,
    timestamp_text,
    tool_call_id,
    usage_metrics,
)

INCOMPLETE_NOTE = "incomplete: the input ended before the root scope ended"

# Called with each finished root trajectory (session mode).
CompletionCallback = Callable[[TrajectoryNode], None]


@dataclass(slots=True)
class _Scope:
    name: str
    node: TrajectoryNode
    owner: bool = False


@dataclass(slots=True)
class _OpenLlm:
    node: TrajectoryNode
    ancestry: JsonDict
    start_ns: int | None
    model: str | None
    trace: list[Any] | None = None


class _HoldsNode(Protocol):
    @property
    def node(self) -> TrajectoryNode: ...


_Held = TypeVar("_Held", bound=_HoldsNode)


TURN_END_MARK = "hermes.session.end"
"""The mark the relay plugin emits when a run ends, with its outcome."""


class TrajectoryBuilder:
    """Builds ATIF trajectories from ATOF event dicts fed in delivery (file) order.

    Session mode (no ``session_id``): every top-level Agent scope, or top-level custom scope with
    metadata ``nemo_relay_scope_role="turn"``, is a root trajectory (``session_id`` =
    ``trajectory_id`` = its scope UUID, as Relay's plugin exporter does); ``on_complete`` gets it
    when its scope ends, and :meth:`finish` flushes the rest. Events outside any root are grouped
    per unknown parent into "unscoped" trajectories that :meth:`finish` hands over.

    Manual mode (``session_id`` given, like Relay's ``AtifExporter``): one trajectory collects
    everything; if an Agent scope's metadata names this session (``session_id`` or
    ``trajectory_id``), the trajectory is anchored to that scope and unrelated top-level work that
    follows is ignored. :attr:`manual_root` holds it.

    Malformed events (not an object, no ``uuid``/``kind``) are counted in :attr:`skipped`.
    """

    def __init__(
        self,
        agent: AgentInfo | None = None,
        *,
        session_id: str | None = None,
        on_complete: CompletionCallback | None = None,
        include_events: bool = False,
        infer_agent: bool = True,
    ) -> None:
        self._info = agent if agent is not None else AgentInfo()
        self._on_complete = on_complete
        self._include_events = include_events
        self._infer = infer_agent
        self._scopes: dict[str, _Scope] = {}
        self._dead: set[str] = set()
        self._llms: dict[str, _OpenLlm] = {}
        self._tools: dict[str, OpenTool] = {}
        self._roots: dict[str, TrajectoryNode] = {}
        self._unscoped: dict[str, TrajectoryNode] = {}
        self._anchored = False
        self.skipped = 0
        self.manual_root: TrajectoryNode | None = None
        if session_id is not None:
            state = AgentState(self._info, "unknown", infer=infer_agent)
            self.manual_root = TrajectoryNode(session_id, session_id, agent=state)

    @property
    def held(self) -> dict[str, int]:
        """Sizes of the in-flight state: open scopes/spans, unfinished trajectories, retired ids."""
        return {
            "scopes": len(self._scopes),
            "llm_spans": len(self._llms),
            "tool_spans": len(self._tools),
            "trajectories": len(self._roots) + len(self._unscoped),
            "retired": len(self._dead),
        }

    # -- routing -------------------------------------------------------------------------------

    def feed(self, event: Mapping[str, Any]) -> None:
        """Apply one ATOF event dict."""
        if not isinstance(event, Mapping):
            self.skipped += 1
            return
        kind = event.get("kind")
        uuid = as_str(event.get("uuid"))
        if uuid is None or kind not in ("scope", "mark"):
            self.skipped += 1
            return
        parent = as_str(event.get("parent_uuid"))
        if kind == "mark":
            if event.get("name") == TURN_END_MARK:
                self._note_outcome(event, parent)
            self._record_mark(event, parent)
            return
        phase = event.get("scope_category")
        category = event.get("category")
        if category != "llm" and category != "tool":
            name = as_str(event.get("name")) or ""
            self.feed_scope(phase, uuid, parent, category, name, event.get("metadata"), event)
        elif phase == "start":
            if parent is not None and parent in self._dead:
                self._dead.add(uuid)
            elif category == "llm":
                self._llm_start(event, uuid, parent)
            else:
                self._tool_start(event, uuid, parent)
        elif phase == "end":
            if uuid in self._dead:
                self._dead.discard(uuid)
            elif category == "llm":
                self._llm_end(event, uuid, parent)
            else:
                self._tool_end(event, uuid, parent)
        else:
            self.skipped += 1

    def feed_scope(
        self,
        phase: Any,
        uuid: str,
        parent: str | None,
        category: Any,
        name: str,
        metadata: Any,
        event: Mapping[str, Any] | None = None,
    ) -> None:
        """Apply a scope event of any category but ``llm``/``tool`` given as its fields.

        These events only shape the tree (agent scopes start trajectories; others map their
        work to the trajectory above), so the live exporter hands over the few fields read
        here instead of a parsed event. ``event`` is the whole dict, if there is one (only
        it is kept when the builder keeps raw events).
        """
        if phase == "start":
            if parent is not None and parent in self._dead:
                self._dead.add(uuid)
                return
            self._scope_start(event, uuid, parent, category, name, as_dict(metadata))
        elif phase == "end":
            if uuid in self._dead:
                self._dead.discard(uuid)
                return
            self._scope_end(event, uuid)
        else:
            self.skipped += 1

    def finish(self) -> None:
        """End of input: hand over unfinished roots (with a note) and unscoped trajectories."""
        for root in list(self._roots.values()):
            root.notes = INCOMPLETE_NOTE
            self._finalize(root)
        unscoped = list(self._unscoped.values())
        self._unscoped.clear()
        if self._on_complete is not None:
            for node in unscoped:
                self._on_complete(node)

    def _node_for(self, parent: str | None) -> TrajectoryNode | None:
        scope = self._scopes.get(parent) if parent is not None else None
        if scope is not None:
            return scope.node
        if self.manual_root is not None:
            return None if self._anchored else self.manual_root
        key = parent or ""
        node = self._unscoped.get(key)
        if node is None:
            state = AgentState(self._info, "unknown", infer=self._infer)
            node = TrajectoryNode(parent or "unscoped", parent or "unscoped", agent=state)
            if self._include_events:
                node.events = []
            self._unscoped[key] = node
        return node

    def _scope_name(self, uuid: str | None) -> str | None:
        scope = self._scopes.get(uuid) if uuid is not None else None
        return scope.name if scope is not None else None

    def _record(self, node: TrajectoryNode, event: Mapping[str, Any] | None) -> None:
        events = node.root.events
        if events is not None and event is not None:
            events.append(dict(event))

    def _note_outcome(self, event: Mapping[str, Any], parent: str | None) -> None:
        """A run's end mark (the relay plugin's ``hermes.session.end``): how the turn ended,
        kept on the turn's user step as ``extra.turn_outcome`` (``reason``, ``completed``,
        ``interrupted``), so a reader of the ATIF need not guess it from the steps, with the
        turn's id as ``extra.turn_id`` (the record's other exports name the turn by it). A turn
        that recorded no user step of its own (cancelled before its model call) leaves the
        previous turn's outcome as it was."""
        scope = self._scopes.get(parent) if parent is not None else None
        node = scope.node if scope is not None else None
        data = as_dict(event.get("data"))
        if node is None or data is None:
            return
        user = next((step for step in reversed(node.steps) if step.source == "user"), None)
        if user is None or "turn_outcome" in user.extra:
            return
        outcome = {k: data[k] for k in ("reason", "completed", "interrupted") if k in data}
        if outcome:
            user.extra["turn_outcome"] = outcome
        turn = as_str((as_dict(event.get("metadata")) or {}).get("turn_id"))
        if turn is not None:
            user.extra["turn_id"] = turn

    def _record_mark(self, event: Mapping[str, Any], parent: str | None) -> None:
        if not self._include_events or parent is None:
            return
        scope = self._scopes.get(parent)
        node = scope.node if scope is not None else self._unscoped.get(parent)
        if node is not None:
            self._record(node, event)

    # -- scopes and sub-agents -----------------------------------------------------------------

    def _scope_start(
        self,
        event: Mapping[str, Any] | None,
        uuid: str,
        parent: str | None,
        category: Any,
        name: str,
        metadata: JsonDict | None,
    ) -> None:
        parent_scope = self._scopes.get(parent) if parent is not None else None
        if parent_scope is not None:
            node = parent_scope.node
            if category == "agent":
                child = self._new_subagent(node, uuid, name, parent, metadata)
                self._scopes[uuid] = _Scope(name, child, owner=True)
            else:
                self._scopes[uuid] = _Scope(name, node)
            self._record(node, event)
            return
        if self.manual_root is not None:
            self._manual_top_level(event, uuid, name, category, metadata)
            return
        role = metadata.get("nemo_relay_scope_role") if metadata is not None else None
        if category == "agent" or (category == "custom" and role == "turn"):
            node = self._new_root(uuid, name, metadata)
            self._scopes[uuid] = _Scope(name, node, owner=True)
        else:
            found = self._node_for(parent)
            assert found is not None  # session mode always finds or creates a node
            node = found
            self._scopes[uuid] = _Scope(name, node)
        self._record(node, event)

    def _manual_top_level(
        self,
        event: Mapping[str, Any] | None,
        uuid: str,
        name: str,
        category: Any,
        metadata: JsonDict | None,
    ) -> None:
        root = self.manual_root
        assert root is not None
        if self._anchored:
            self._dead.add(uuid)
            return
        if category == "agent" and metadata is not None:
            wanted = root.session_id
            if wanted in (metadata.get("session_id"), metadata.get("trajectory_id")):
                self._anchored = True
                root.scope_uuid = uuid
                root.name = name
                if metadata.get("trajectory_id") == wanted:
                    # A scope that names its trajectory is one of our own sessions: the same
                    # agent block and extra as the converter gives it (see _new_root).
                    declared = declared_agent(metadata)
                    root.agent = AgentState(self._info, name, infer=self._infer, declared=declared)
                    root.extra = relay_extra(uuid, metadata)
        self._scopes[uuid] = _Scope(name, root)
        self._record(root, event)

    def _new_root(self, uuid: str, name: str, metadata: JsonDict | None) -> TrajectoryNode:
        declared = declared_agent(metadata)
        state = AgentState(self._info, name, infer=self._infer, declared=declared)
        # A scope that names its trajectory keeps that id (our own sessions do); Relay's
        # scopes do not, and their trajectory is named by the scope UUID, as Relay names it.
        named = as_str((metadata or {}).get("trajectory_id"))
        trajectory = named if named is not None else uuid
        session = as_str((metadata or {}).get("session_id")) if named is not None else None
        node = TrajectoryNode(
            trajectory, session or trajectory, agent=state, scope_uuid=uuid, name=name
        )
        node.extra = relay_extra(uuid, metadata)
        if self._include_events:
            node.events = []
        self._roots[uuid] = node
        return node

    def _new_subagent(
        self,
        parent_node: TrajectoryNode,
        uuid: str,
        name: str,
        parent_scope: str | None,
        metadata: JsonDict | None,
    ) -> TrajectoryNode:
        md = metadata or {}
        wanted = as_str(md.get("trajectory_id")) or uuid
        declared = as_str(md.get("session_id"))
        # The child is an agent of its own (its own tools, model and, when recorded, name);
        # unnamed, it keeps its parent's name as Relay's exporter does.
        # The caller's AgentInfo names the root agent only.
        agent = AgentState(
            AgentInfo(), parent_node.agent.name, infer=self._infer, declared=declared_agent(md)
        )
        if agent.version == UNKNOWN_VERSION:
            agent.version = parent_node.agent.version
        child = TrajectoryNode(
            parent_node.unique_child_id(wanted, uuid),
            declared if declared is not None else parent_node.session_id,
            agent=agent,
            scope_uuid=uuid,
            name=name,
            parent=parent_node,
            parent_scope_uuid=parent_scope,
            declared_session=declared is not None and declared != parent_node.session_id,
        )
        parent_node.children.append(child)
        # Tools are not on the scope stack, so the delegating tool is the one open in the parent
        # trajectory when the sub-agent starts (the latest, unless metadata names its call id).
        hint = as_str(md.get("parent_tool_call_id")) or as_str(md.get("tool_call_id"))
        tools = parent_node.open_tools
        tool = next((t for t in tools.values() if hint and t.call_id == hint), None)
        if tool is None and tools:
            tool = next(reversed(tools.values()))
        if tool is not None:
            tool.children.append(child)
        return child

    def _scope_end(self, event: Mapping[str, Any] | None, uuid: str) -> None:
        scope = self._scopes.pop(uuid, None)
        if scope is None:
            return
        node = scope.node
        self._record(node, event)
        if scope.owner:
            node.ended = True
            if node.parent is None and self.manual_root is None:
                self._finalize(node)

    def _finalize(self, root: TrajectoryNode) -> None:
        self._roots.pop(root.scope_uuid or "", None)
        # Work of this tree still open (e.g. a background sub-agent) can no longer reach a file.
        self._retire(self._scopes, root)
        self._retire(self._llms, root)
        self._retire(self._tools, root)
        if self._on_complete is not None:
            self._on_complete(root)

    def _retire(self, table: dict[str, _Held], root: TrajectoryNode) -> None:
        stale = [key for key, value in table.items() if value.node.root is root]
        for key in stale:
            del table[key]
            self._dead.add(key)

    # -- LLM spans -----------------------------------------------------------------------------

    def _llm_start(self, event: Mapping[str, Any], uuid: str, parent: str | None) -> None:
        node = self._node_for(parent)
        if node is None:
            self._dead.add(uuid)
            return
        name = as_str(event.get("name")) or ""
        profile = as_dict(event.get("category_profile"))
        data = event.get("data")
        ancestry = ancestry_of(uuid, name, parent, self._scope_name(parent))
        model = as_str((profile or {}).get("model_name"))
        trace = middleware_trace(as_dict(event.get("metadata")))
        start_ns = timestamp_ns(event.get("timestamp"))
        self._llms[uuid] = _OpenLlm(node, ancestry, start_ns, model, trace)
        node.agent.observe_tools(request_tools(data))
        text = fresh_user_text(request_messages(profile, data))
        if text is not None:
            extra: JsonDict = {"ancestry": ancestry}
            body = request_body(data)
            if body is not None:
                extra["llm_request"] = body
            timestamp = timestamp_text(event.get("timestamp"))
            node.steps.append(Step("user", timestamp, text, extra=extra))
        self._record(node, event)

    def _llm_end(self, event: Mapping[str, Any], uuid: str, parent: str | None) -> None:
        opened = self._llms.pop(uuid, None)
        node = opened.node if opened is not None else self._node_for(parent)
        if node is None:
            return
        name = as_str(event.get("name")) or ""
        profile = as_dict(event.get("category_profile"))
        metadata = as_dict(event.get("metadata"))
        data = event.get("data")
        parsed = parse_response(profile, data)
        model = parsed.model or as_str((profile or {}).get("model_name"))
        if model is None and opened is not None:
            model = opened.model
        ancestry = (
            opened.ancestry
            if opened is not None
            else ancestry_of(uuid, name, parent, self._scope_name(parent))
        )
        status = status_of(metadata)
        end_ns = timestamp_ns(event.get("timestamp"))
        start_ns = opened.start_ns if opened is not None else None
        extra: JsonDict = {
            "ancestry": ancestry,
            "invocation": invocation_of(uuid, start_ns, end_ns, status),
        }
        if data is not None:
            extra["llm_response"] = data
        if opened is not None and opened.trace is not None:
            extra["middleware_trace"] = opened.trace
        if status == "error" and metadata is not None:
            extra["error"] = metadata.get("otel.status_description", "error")
        calls = [
            ToolCall(call.call_id or f"{uuid}-{index}", call.name, call.arguments)
            for index, call in enumerate(parsed.calls)
        ]
        step = Step(
            "agent",
            timestamp_text(event.get("timestamp")),
            parsed.text,
            model_name=model,
            reasoning=parsed.reasoning,
            tool_calls=calls,
            metrics=usage_metrics(profile, data),
            llm_call_count=1,
            extra=extra,
        )
        node.steps.append(step)
        for call in calls:
            node.calls[call.call_id] = step
        node.agent.observe_model(model)
        self._record(node, event)

    # -- tool spans ----------------------------------------------------------------------------

    def _tool_start(self, event: Mapping[str, Any], uuid: str, parent: str | None) -> None:
        tool = self._open_tool(event, uuid, parent, event.get("data"))
        if tool is None:
            self._dead.add(uuid)
            return
        self._record(tool.node, event)

    def _open_tool(
        self, event: Mapping[str, Any], uuid: str, parent: str | None, arguments: Any
    ) -> OpenTool | None:
        node = self._node_for(parent)
        if node is None:
            return None
        name = as_str(event.get("name")) or ""
        call_id = tool_call_id(
            as_dict(event.get("category_profile")), as_dict(event.get("metadata"))
        )
        if call_id is None or call_id not in node.calls:
            # No model step issued this call: record it as a no-LLM orchestration step
            # (ATIF v1.7, llm_call_count=0) so its result still has a same-step tool call.
            call_id = call_id or uuid
            step = Step(
                "agent",
                timestamp_text(event.get("timestamp")),
                "",
                tool_calls=[ToolCall(call_id, name, parse_arguments(arguments))],
                llm_call_count=0,
            )
            node.steps.append(step)
            node.calls[call_id] = step
        else:
            note_execution(node.calls[call_id], call_id, arguments, event.get("metadata"))
        tool = OpenTool(
            node,
            uuid,
            name,
            parent,
            self._scope_name(parent),
            call_id,
            timestamp_ns(event.get("timestamp")),
        )
        self._tools[uuid] = tool
        node.open_tools[uuid] = tool
        return tool

    def _tool_end(self, event: Mapping[str, Any], uuid: str, parent: str | None) -> None:
        profile = as_dict(event.get("category_profile"))
        metadata = as_dict(event.get("metadata"))
        name = as_str(event.get("name")) or ""
        tool = self._tools.pop(uuid, None)
        if tool is None:
            # An end without a start (the stream began mid-call): open it now, arguments unknown.
            tool = self._open_tool(event, uuid, parent, None)
            if tool is None:
                return
            del self._tools[uuid]
            tool.start_ns = None
        node = tool.node
        node.open_tools.pop(uuid, None)
        call_id = tool.call_id or uuid
        step = node.calls.get(call_id)
        if step is None:
            return
        data = event.get("data")
        extra: JsonDict
        if tool.children:
            # Relay describes the delegation by the sub-agent scope it produced.
            first = tool.children[0]
            extra = {
                "event_uuid": first.scope_uuid,
                "event_name": first.name,
                "parent_event_uuid": first.parent_scope_uuid,
            }
        else:
            extra = {"event_uuid": uuid, "event_name": name, "parent_event_uuid": parent}
        extra = {key: value for key, value in extra.items() if value is not None}
        if metadata is not None:
            extra["metadata"] = metadata
        if data is not None:
            extra["tool_result"] = data
        annotation = (profile or {}).get("tool_result_annotation")
        if annotation is not None:
            extra["tool_result_annotation"] = annotation
        content = data if isinstance(data, str) else None
        step.results.append(ObservationResult(call_id, content, extra, tool.children))
        status = status_of(metadata)
        end_ns = timestamp_ns(event.get("timestamp"))
        step.tool_ancestry[call_id] = ancestry_of(uuid, name, tool.parent_uuid, tool.parent_name)
        step.tool_invocations[call_id] = invocation_of(call_id, tool.start_ns, end_ns, status)
        self._record(node, event)
