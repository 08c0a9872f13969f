"""Turning a recorded trajectory into what a replay needs: model answers and tool results.

Every agent and subagent trajectory becomes an :class:`AgentScript`: its user turns and, for
each, the recorded model responses in order. :meth:`ReplayPlan.answer` picks the response for
a model request from the request alone (see there), so parallel children stay apart. Tool
results come from the observations, keyed by tool-call id.

A recorded cancellation is part of the plan, so the replay reproduces it: a model call that
was interrupted (Relay's ``llm_response.error.reason`` ``interrupted``) becomes a
response with :data:`CANCEL` set, a cancelled tool call (its result's ``status`` ``cancelled``) a
:class:`RecordedCall` with ``cancelled`` set, and a top-level user turn with no agent step
ends before its first model call. A user step after such a turn is a new turn, not a message
in the middle of one.

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
CANCEL = "cancel"
"""Set (True) in the response of a model call the recording shows interrupted: the replay
cancels the turn there instead of answering."""


@dataclass(frozen=True)
class RecordedCall:
    """One recorded tool call: its tool, arguments and result; ``live`` when it re-runs.

    ``cancelled``: the turn was cancelled while it ran; ``siblings`` are the calls of its step
    that finished first (their results are served before the cancellation is reproduced).
    """

    name: str
    arguments: Any
    result: str | None
    live: bool = False
    cancelled: bool = False
    siblings: tuple[str, ...] = ()


@dataclass
class AgentScript:
    """One recorded agent: its first message, user turns and, per turn, its model responses.

    ``unanswered`` holds the turns (by index) that ended before their first model call.
    """

    label: str
    first_user: str
    user_turns: list[str]
    turns: list[list[JsonDict]]
    depth: int
    unanswered: set[int] = field(default_factory=set)

    @property
    def responses(self) -> list[JsonDict]:
        """Every recorded model response, in order."""
        return [response for turn in self.turns for response in turn]


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

    def answer(self, messages: list[Any]) -> JsonDict:
        """The recorded response to a model request with these chat ``messages``.

        The agent is the one whose first user message the request's first user message
        contains (longer ones tried first, so a message that contains another one does not
        take its conversation; a plugin's context added to it does not matter); the user turn
        is the count of user messages; the call within the turn is the count of assistant
        messages after the last user message. A request the recording has no answer for gets
        :data:`NO_RESPONSE` as its text.
        """
        roles = [m.get("role") if isinstance(m, Mapping) else None for m in messages]
        users = [i for i, role in enumerate(roles) if role == "user"]
        if users:
            first = _text(messages[users[0]].get("content"))
            for agent in sorted(self.agents, key=lambda a: -len(a.first_user)):
                if agent.first_user and agent.first_user in first:
                    turn = len(users) - 1
                    call = roles[users[-1] :].count("assistant")
                    if turn < len(agent.turns) and call < len(agent.turns[turn]):
                        return agent.turns[turn][call]
                    break
        return {"content": NO_RESPONSE}

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
        self.cancelled_turn = False  # the agent step just read ended its turn by a cancel

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
        ended = False  # the turn was cancelled: a user step after it starts a new turn
        starts: list[str] = []  # where each user turn starts, for the notes
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
                if is_continuation(prev, step) and not ended:
                    if text != turn_text:
                        self.plan.notes.append(
                            f"{label}: {at} is a user message in the middle of a turn; not replayed"
                        )
                    prev = step
                    continue
                script.user_turns.append(text)
                script.turns.append([])
                starts.append(at)
                script.first_user = script.first_user or text
                turn_text = text
                ended = False
                prev = step
                continue
            if step.get("llm_call_count") == 0:
                self.plan.notes.append(f"{label}: {at} made no model call; not replayed")
                continue
            if not script.user_turns:
                raise self.fail(prefix, at, "an agent step before any user step cannot be replayed")
            self.cancelled_turn = False
            script.turns[-1].append(self.response(step, label, prefix, at, depth))
            ended = self.cancelled_turn
            prev = step
        self.unanswered(script, starts)
        return script

    def unanswered(self, script: AgentScript, starts: list[str]) -> None:
        """Mark the turns with no agent step: a top-level one ended before its model call."""
        for n, responses in enumerate(script.turns):
            if responses:
                continue
            at = starts[n]
            if script.depth == 0:
                script.unanswered.add(n)
                self.plan.notes.append(
                    f"{script.label}: {at} has no agent step: the turn ended before its model "
                    "call (cancelled); replayed so, and its user step is not compared"
                )
            else:
                self.plan.notes.append(
                    f"{script.label}: {at} has no agent step; a subagent cannot be cancelled "
                    "there, so its model call is answered with no response"
                )

    def response(self, step: JsonDict, label: str, prefix: str, at: str, depth: int) -> JsonDict:
        if _interrupted(step) and not step.get("tool_calls"):
            self.cancelled_turn = True
            return {CANCEL: True}
        out: JsonDict = {"content": self.text(step.get("message"), prefix, f"{at}.message")}
        model = step.get("model_name")
        if isinstance(model, str) and model:
            out["model"] = model
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
        cancelled = _cancelled_calls(step, calls, results)
        finished = tuple(
            str(c.get("tool_call_id"))
            for j, c in enumerate(calls)
            if j not in cancelled and results.get(j) is not None
        )
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
            recorded = RecordedCall(name, args, text, live)
            if j in cancelled and not live:  # a re-run delegation: its subagents cancel
                recorded = RecordedCall(name, args, text, False, True, finished)
            self.plan.calls.setdefault(call_id, []).append(recorded)
        if scripted:
            out["tool_calls"] = scripted
        self.cancelled_turn = bool(cancelled)  # after the subagents, which set it for theirs
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


def _interrupted(step: Mapping[str, Any]) -> bool:
    """Whether the step's model call was cancelled (the turn interrupted while it ran)."""
    extra = step.get("extra")
    response = extra.get("llm_response") if isinstance(extra, Mapping) else None
    error = response.get("error") if isinstance(response, Mapping) else None
    return isinstance(error, Mapping) and error.get("reason") == "interrupted"


def _cancelled_calls(
    step: Mapping[str, Any], calls: list[Any], results: Mapping[int, Mapping[str, Any]]
) -> set[int]:
    """The calls (by index) cancelled while they ran: their result's metadata, or the step's
    tool invocation of that id, says ``cancelled``."""
    extra = step.get("extra")
    invocations = extra.get("tool_invocations") if isinstance(extra, Mapping) else None
    stopped = {
        inv.get("invocation_id")
        for inv in (invocations if isinstance(invocations, list) else [])
        if isinstance(inv, Mapping) and inv.get("status") == "cancelled"
    }
    out: set[int] = set()
    for j, call in enumerate(calls):
        result = results.get(j)
        result_extra = result.get("extra") if isinstance(result, Mapping) else None
        metadata = result_extra.get("metadata") if isinstance(result_extra, Mapping) else None
        status = metadata.get("status") if isinstance(metadata, Mapping) else None
        if status == "cancelled" or (
            isinstance(call, Mapping) and call.get("tool_call_id") in stopped
        ):
            out.add(j)
    return out


def _text(content: Any) -> str:
    """The text of a request message's content (a string or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (p.get("text") for p in content if isinstance(p, Mapping))
        return "".join(p for p in parts if isinstance(p, str))
    return ""


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
