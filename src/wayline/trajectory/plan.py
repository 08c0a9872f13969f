"""Turning a recorded trajectory into what a replay needs: a script and the recorded results.

Every agent and subagent trajectory becomes one rule of a :mod:`wayline.testing.script`,
chosen by the conversation's first user message, whose ``turns`` are the recorded agent
steps in order (the scripted server counts turns per conversation, so parallel children
stay apart). Tool results come from the observations, keyed by tool-call id.

What cannot be replayed raises :class:`~wayline.trajectory.load.TrajectoryError` naming the
field (a tool call without an id, multimodal content, two subagents that start alike but go
differently); what is replayed only in part is said in :attr:`ReplayPlan.notes`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wayline.trajectory.load import (
    Embedded,
    JsonDict,
    NotTextError,
    TrajectoryError,
    arguments_of,
    is_continuation,
    result_text,
    results_by_call,
    steps_of,
    text_of,
)

DELEGATE_TOOL = "delegate_task"
NO_RESPONSE = "(replay: the recording has no further model response here)"


@dataclass(frozen=True)
class RecordedCall:
    """One recorded tool call: its tool, arguments and result; ``live`` when it re-runs."""

    name: str
    arguments: Any
    result: str | None
    live: bool = False


@dataclass
class AgentScript:
    """One recorded agent: its first message, user turns and scripted model responses."""

    label: str
    first_user: str
    user_turns: list[str]
    responses: list[JsonDict]
    depth: int


@dataclass
class ReplayPlan:
    """Everything a replay serves: per-agent scripts, recorded tool results, notes."""

    root: AgentScript
    agents: list[AgentScript] = field(default_factory=list)
    calls: dict[str, list[RecordedCall]] = field(default_factory=dict)
    model: str = "scripted-model"
    tool_names: set[str] = field(default_factory=set)
    offered: list[str] = field(default_factory=list)
    definitions: dict[str, JsonDict] = field(default_factory=dict)
    delegation_depth: int = 0
    skip_children: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def script(self) -> JsonDict:
        """The scripted-server script: one rule per agent, longest first message first.

        A rule matches on ``first_user_contains``; trying longer messages first keeps a
        message that contains another one from taking its conversation.
        """
        rules = [
            {
                "name": agent.label,
                "match": {"first_user_contains": agent.first_user},
                "turns": agent.responses,
            }
            for agent in sorted(self.agents, key=lambda a: -len(a.first_user))
            if agent.responses
        ]
        return {"model": self.model, "default": {"content": NO_RESPONSE}, "rules": rules}

    def take(self, call_id: str, name: str) -> RecordedCall | None:
        """The recorded call with this id and tool (each serves once; ids may repeat)."""
        candidates = self.calls.get(call_id) or []
        for i, call in enumerate(candidates):
            if call.name == name:
                return candidates.pop(i)
        return None


def build_plan(traj: Mapping[str, Any], source: str) -> ReplayPlan:
    """Build the replay plan of a loaded trajectory; raise when it cannot be replayed."""
    builder = _Builder(traj, source)
    root = builder.agent(traj, "main", "", 0)
    if not root.user_turns:
        raise TrajectoryError(
            "no user step to start the session from", source=source, field="steps"
        )
    plan = builder.plan
    plan.root = root
    agent = traj.get("agent")
    model = agent.get("model_name") if isinstance(agent, Mapping) else None
    plan.model = model if isinstance(model, str) and model else "scripted-model"
    _definitions(traj, plan)
    _check_ambiguous(plan, source)
    return plan


class _Builder:
    def __init__(self, root: Mapping[str, Any], source: str) -> None:
        self.source = source
        self.embedded = Embedded.of(root)
        self.plan = ReplayPlan(root=AgentScript("main", "", [], [], 0))

    def fail(self, prefix: str, field_: str, message: str) -> TrajectoryError:
        return TrajectoryError(message, source=self.source, field=f"{prefix}{field_}")

    def text(self, value: Any, prefix: str, field_: str) -> str:
        try:
            return text_of(value, strict=True)
        except NotTextError as exc:
            raise self.fail(prefix, field_, f"cannot be replayed: {exc}") from None

    def agent(self, traj: Mapping[str, Any], label: str, prefix: str, depth: int) -> AgentScript:
        script = AgentScript(label, "", [], [], depth)
        self.plan.agents.append(script)
        prev: Mapping[str, Any] | None = None
        turn_text: str | None = None
        for i, step in enumerate(steps_of(traj)):
            at = f"steps[{i}]"
            source = step.get("source")
            if source == "system":
                continue
            if step.get("is_copied_context") is True:
                self.plan.notes.append(f"{label}: {at} is copied context; not replayed")
                continue
            if source == "user":
                text = self.text(step.get("message"), prefix, f"{at}.message")
                if is_continuation(prev, step):
                    if text != turn_text:
                        self.plan.notes.append(
                            f"{label}: {at} is a user message in the middle of a turn; not replayed"
                        )
                    prev = step
                    continue
                if prev is not None and prev.get("source") == "user":
                    self.plan.notes.append(
                        f"{label}: {at} follows another user step; replayed as a new turn"
                    )
                script.user_turns.append(text)
                script.first_user = script.first_user or text
                turn_text = text
                prev = step
                continue
            if step.get("llm_call_count") == 0:
                self.plan.notes.append(f"{label}: {at} made no model call; not replayed")
                continue
            if not script.user_turns:
                raise self.fail(prefix, at, "an agent step before any user step cannot be replayed")
            script.responses.append(self.response(step, label, prefix, at, depth))
            prev = step
        return script

    def response(self, step: JsonDict, label: str, prefix: str, at: str, depth: int) -> JsonDict:
        out: JsonDict = {"content": self.text(step.get("message"), prefix, f"{at}.message")}
        if step.get("reasoning_content"):
            note = "reasoning_content is served to the model client but not compared"
            if note not in self.plan.notes:
                self.plan.notes.append(note)
            out["reasoning"] = self.text(
                step.get("reasoning_content"), prefix, f"{at}.reasoning_content"
            )
        metrics = step.get("metrics")
        usage = _usage(metrics) if isinstance(metrics, Mapping) else None
        if usage:
            out["usage"] = usage
        calls = step.get("tool_calls") or []
        results = results_by_call(step)
        scripted: list[JsonDict] = []
        for j, call in enumerate(calls):
            call_id = call.get("tool_call_id")
            field_ = f"{at}.tool_calls[{j}].tool_call_id"
            if not isinstance(call_id, str) or not call_id:
                raise self.fail(
                    prefix, field_, "missing: a tool call without an id cannot be replayed"
                )
            name = str(call["function_name"])
            args = arguments_of(call)
            scripted.append({"name": name, "id": call_id, "arguments": args})
            self.plan.tool_names.add(name)
            result = results.get(j)
            text = None
            if result is not None:
                try:
                    text = result_text(result, strict=True)
                except NotTextError as exc:
                    raise self.fail(
                        prefix, f"{at}.observation", f"cannot be replayed: {exc}"
                    ) from None
            live = self.children(call, result, label, prefix, f"{at}.tool_calls[{j}]", depth)
            self.plan.calls.setdefault(call_id, []).append(RecordedCall(name, args, text, live))
        if scripted:
            out["tool_calls"] = scripted
        return out

    def children(
        self,
        call: JsonDict,
        result: Mapping[str, Any] | None,
        label: str,
        prefix: str,
        at: str,
        depth: int,
    ) -> bool:
        """Plan the subagents a call delegated to; True when the call itself re-runs."""
        kids = self.embedded.children(result)
        name = call.get("function_name")
        who = f"{label}: {at} ({name} {call.get('tool_call_id')})"
        if not kids:
            return False
        if name != DELEGATE_TOOL:
            self.plan.skip_children.add(id(call))
            self.plan.notes.append(
                f"{who} delegated through a tool wayline does not have; its recorded result is "
                "served and its subagent is not replayed"
            )
            return False
        if any(kid is None for kid in kids):
            self.plan.skip_children.add(id(call))
            self.plan.notes.append(
                f"{who}: a subagent trajectory is referenced but not embedded; the recorded "
                "result is served instead of delegating"
            )
            return False
        for m, kid in enumerate(kids):
            assert kid is not None
            self.plan.delegation_depth = max(self.plan.delegation_depth, depth + 1)
            self.agent(
                kid,
                f"subagent {m + 1} of {label} {at}",
                f"{prefix}<subagent {kid.get('trajectory_id') or kid.get('session_id')}>.",
                depth + 1,
            )
        return True


def _usage(metrics: Mapping[str, Any]) -> JsonDict:
    out: JsonDict = {}
    for key in ("prompt_tokens", "completion_tokens", "cached_tokens"):
        value = metrics.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[key] = value
    return out


def _definitions(traj: Mapping[str, Any], plan: ReplayPlan) -> None:
    """Tool definitions the recording knows: ``agent.tool_definitions``, else the request's."""
    found: list[Any] = []
    agent = traj.get("agent")
    if isinstance(agent, Mapping) and isinstance(agent.get("tool_definitions"), list):
        found = agent["tool_definitions"]
    else:
        for step in steps_of(traj):
            request = (
                (step.get("extra") or {}).get("llm_request")
                if isinstance(step.get("extra"), Mapping)
                else None
            )
            if isinstance(request, Mapping) and isinstance(request.get("tools"), list):
                found = request["tools"]
                break
    for tool in found:
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            plan.offered.append(fn["name"])
            if isinstance(fn.get("parameters"), Mapping) and "depth limit>" not in json.dumps(fn):
                plan.definitions[fn["name"]] = dict(fn)


def _check_ambiguous(plan: ReplayPlan, source: str) -> None:
    seen: dict[str, AgentScript] = {}
    for agent in plan.agents:
        other = seen.setdefault(agent.first_user, agent)
        if other is not agent and other.responses != agent.responses:
            raise TrajectoryError(
                f"cannot be replayed: {agent.label} and {other.label} start with the same user "
                f"message {agent.first_user[:80]!r} but go differently, so their model responses "
                "cannot be told apart",
                source=source,
            )
