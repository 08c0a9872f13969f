"""ATIF trajectories → OpenAI chat fine-tuning samples (JSONL), and a validator for them.

One sample per agent trajectory (and per subagent trajectory on request)::

    {"messages": [{"role": "system", ...}, {"role": "user", ...},
                  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                   "type": "function", "function": {"name": "f", "arguments": "{...}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": "..."},
                  {"role": "assistant", "content": "final"}],
     "tools": [{"type": "function", "function": {"name": "f", "parameters": {...}}}]}

Steps marked ``is_copied_context`` are left out; Relay's repeated per-call user steps are
folded into their turn. :func:`validate_sample` checks OpenAI's documented rules for the
chat fine-tuning format.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from wayline.redaction import redact_value
from wayline.trajectory.load import (
    Embedded,
    JsonDict,
    NotTextError,
    arguments_of,
    is_continuation,
    result_text,
    results_by_call,
    steps_of,
    text_of,
)

ROLES = ("system", "developer", "user", "assistant", "tool")
_MESSAGE_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "weight", "refusal"},
    "tool": {"role", "content", "tool_call_id"},
}


@dataclass
class Export:
    """The samples built from some trajectories, and why others were skipped."""

    samples: list[JsonDict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def is_completed(traj: Mapping[str, Any]) -> bool:
    """Whether a trajectory ended with a final answer.

    Its last agent message is a text answer without tool calls that no user step follows, and
    no model invocation recorded an error status. System steps after the answer (Hermes with
    Relay records its ``hermes.turn.end`` and ``hermes.session.end`` marks as steps) and copied
    context do not count.
    """
    steps = [s for s in steps_of(traj) if s.get("is_copied_context") is not True]
    for step in steps:
        extra = step.get("extra")
        invocation = extra.get("invocation") if isinstance(extra, Mapping) else None
        if isinstance(invocation, Mapping) and invocation.get("status") in ("error", "failed"):
            return False
    while steps and steps[-1].get("source") == "system":
        steps.pop()
    if not steps:
        return False
    last = steps[-1]
    return (
        last.get("source") == "agent"
        and not last.get("tool_calls")
        and bool(text_of(last.get("message")).strip())
    )


def export_samples(
    trajectories: list[tuple[str, JsonDict]],
    *,
    only_completed: bool = False,
    include_subagents: bool = False,
    known_tools: Mapping[str, JsonDict] | None = None,
) -> Export:
    """Build fine-tuning samples from ``(name, trajectory)`` pairs, redacted whoever wrote them.

    ``known_tools`` (name → OpenAI function schema) fills in tool definitions the recording
    does not carry intact.
    """
    out = Export()
    for name, read in trajectories:
        # Whoever wrote the file: what is exported is redacted (wayline.redaction; ids and
        # structure kept, nothing cut), before the arguments are encoded as JSON strings.
        root = redact_value(read, max_string=sys.maxsize)
        embedded = Embedded.of(root)
        for label, traj in _agents(name, root, embedded, include_subagents):
            if only_completed and not is_completed(traj):
                out.skipped.append(f"{label}: not completed")
                continue
            try:
                sample = build_sample(traj, root, known_tools or {})
            except NotTextError as exc:
                out.skipped.append(f"{label}: {exc}")
                continue
            problems = validate_sample(sample)
            if problems:
                out.skipped.append(f"{label}: {problems[0]}")
                continue
            out.samples.append(sample)
    return out


def _agents(
    name: str, root: JsonDict, embedded: Embedded, include_subagents: bool
) -> Iterator[tuple[str, JsonDict]]:
    yield name, root
    if not include_subagents:
        return
    seen: set[int] = set()
    for sub in embedded.by_id.values():
        if id(sub) in seen:
            continue  # indexed under both its trajectory_id and session_id
        seen.add(id(sub))
        yield f"{name} subagent {sub.get('trajectory_id') or sub.get('session_id')}", sub


def build_sample(
    traj: Mapping[str, Any], root: Mapping[str, Any], known_tools: Mapping[str, JsonDict]
) -> JsonDict:
    """One sample of one agent trajectory (raises ``NotTextError`` for multimodal content)."""
    messages: list[JsonDict] = []
    system = _system_prompt(traj)
    if system:
        messages.append({"role": "system", "content": system})
    prev: Mapping[str, Any] | None = None
    turn_text: str | None = None
    used: list[str] = []
    for step in steps_of(traj):
        if step.get("is_copied_context") is True:
            continue
        source = step.get("source")
        text = text_of(step.get("message"), strict=True)
        if source == "system":
            if not messages:
                messages.append({"role": "system", "content": text})
            continue
        if source == "user":
            if not (is_continuation(prev, step) and text == turn_text):
                messages.append({"role": "user", "content": text})
            turn_text = text
            prev = step
            continue
        prev = step
        calls = step.get("tool_calls") or []
        assistant: JsonDict = {"role": "assistant", "content": text or None}
        if not calls:
            assistant["content"] = text
            messages.append(assistant)
            continue
        assistant["tool_calls"] = [
            {
                "id": str(call.get("tool_call_id") or f"call_{len(messages)}_{j}"),
                "type": "function",
                "function": {
                    "name": str(call["function_name"]),
                    "arguments": json.dumps(arguments_of(call), ensure_ascii=False),
                },
            }
            for j, call in enumerate(calls)
        ]
        messages.append(assistant)
        results = results_by_call(step)
        for j, call in enumerate(assistant["tool_calls"]):
            used.append(call["function"]["name"])
            result = results.get(j)
            content = result_text(result, strict=True) if result is not None else None
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content or ""})
    sample: JsonDict = {"messages": messages}
    tools = _tools(traj, root, used, known_tools)
    if tools:
        sample["tools"] = tools
    return sample


def _request(step: Mapping[str, Any]) -> Mapping[str, Any] | None:
    extra = step.get("extra")
    request = extra.get("llm_request") if isinstance(extra, Mapping) else None
    return request if isinstance(request, Mapping) else None


def _system_prompt(traj: Mapping[str, Any]) -> str | None:
    for step in steps_of(traj):
        request = _request(step)
        for message in request.get("messages") or [] if request else []:
            if isinstance(message, Mapping) and message.get("role") in ("system", "developer"):
                return text_of(message.get("content"))
        if request is not None:
            return None
    return None


def _tools(
    traj: Mapping[str, Any],
    root: Mapping[str, Any],
    used: list[str],
    known: Mapping[str, JsonDict],
) -> list[JsonDict]:
    """Definitions from the recording when intact, else from ``known``; used tools only if
    nothing lists what was offered."""
    recorded: list[Any] = []
    for owner in (traj, root):
        agent = owner.get("agent")
        if isinstance(agent, Mapping) and isinstance(agent.get("tool_definitions"), list):
            recorded = agent["tool_definitions"]
            break
    if not recorded:
        for step in steps_of(traj):
            request = _request(step)
            if request is not None and isinstance(request.get("tools"), list):
                recorded = request["tools"]
                break
    names: list[str] = []
    schemas: dict[str, JsonDict] = {}
    for tool in recorded:
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            names.append(fn["name"])
            # The relay sanitizer cuts deep schemas ("<dict depth limit>"): not a usable schema.
            if "depth limit>" not in json.dumps(fn, default=str):
                schemas[fn["name"]] = dict(fn)
    for name in used:
        if name not in names:
            names.append(name)
    out = []
    for name in dict.fromkeys(names):
        schema = schemas.get(name) or known.get(name)
        if schema is not None:
            out.append({"type": "function", "function": dict(schema)})
    return out


# -- validation -------------------------------------------------------------------------------


def validate_sample(sample: Any) -> list[str]:
    """Problems of one sample against OpenAI's chat fine-tuning rules (empty: valid).

    Rules: an object with a non-empty ``messages`` list (optional ``tools``,
    ``parallel_tool_calls``, ``metadata``); every message has a known ``role`` and only that
    role's keys; text ``content`` (an assistant's may be null when it has ``tool_calls``);
    each tool call has an ``id``, ``type: function`` and a ``function`` with a ``name`` and
    JSON-string ``arguments``; a ``tool`` message answers an earlier, unanswered call id
    before the next user or assistant message; ``weight`` is 0 or 1; at least one assistant
    message; tools are ``{"type": "function", "function": {"name", ...}}``.
    """
    if not isinstance(sample, Mapping):
        return ["a sample must be a JSON object"]
    problems: list[str] = []
    extra = set(sample) - {"messages", "tools", "parallel_tool_calls", "metadata"}
    if extra:
        problems.append(f"unknown top-level keys: {', '.join(sorted(extra))}")
    messages = sample.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages: must be a non-empty list"]
    pending: set[str] = set()
    assistants = 0
    for i, message in enumerate(messages):
        at = f"messages[{i}]"
        if not isinstance(message, Mapping):
            problems.append(f"{at}: must be an object")
            continue
        role = message.get("role")
        if role not in ROLES:
            problems.append(f"{at}.role: must be one of {', '.join(ROLES)}, got {role!r}")
            continue
        unknown = set(message) - _MESSAGE_KEYS[role]
        if unknown:
            problems.append(f"{at}: unknown keys for role {role}: {', '.join(sorted(unknown))}")
        content = message.get("content")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in pending:
                problems.append(f"{at}.tool_call_id: {call_id!r} answers no earlier open call")
            else:
                pending.discard(call_id)
            if not isinstance(content, str):
                problems.append(f"{at}.content: must be a string")
            continue
        if pending and role in ("user", "assistant"):
            problems.append(f"{at}: tool calls {sorted(pending)} are not answered before it")
            pending = set()
        if role != "assistant":
            if not isinstance(content, str):
                problems.append(f"{at}.content: must be a string")
            continue
        assistants += 1
        problems.extend(_assistant_problems(message, at, pending))
    if assistants == 0:
        problems.append("messages: needs at least one assistant message")
    problems.extend(_tools_problems(sample))
    return problems


def _assistant_problems(message: Mapping[str, Any], at: str, pending: set[str]) -> list[str]:
    problems: list[str] = []
    content = message.get("content")
    calls = message.get("tool_calls")
    if "weight" in message and message["weight"] not in (0, 1):
        problems.append(f"{at}.weight: must be 0 or 1")
    if calls is None:
        if not isinstance(content, str):
            problems.append(f"{at}.content: must be a string when there are no tool_calls")
        return problems
    if content is not None and not isinstance(content, str):
        problems.append(f"{at}.content: must be a string or null")
    if not isinstance(calls, list) or not calls:
        return [*problems, f"{at}.tool_calls: must be a non-empty list"]
    for j, call in enumerate(calls):
        where = f"{at}.tool_calls[{j}]"
        if not isinstance(call, Mapping):
            problems.append(f"{where}: must be an object")
            continue
        if set(call) - {"id", "type", "function"}:
            problems.append(
                f"{where}: unknown keys {sorted(set(call) - {'id', 'type', 'function'})}"
            )
        if not isinstance(call.get("id"), str) or not call["id"]:
            problems.append(f"{where}.id: must be a non-empty string")
        elif call["id"] in pending:
            problems.append(f"{where}.id: {call['id']!r} is used twice")
        else:
            pending.add(call["id"])
        if call.get("type") != "function":
            problems.append(f"{where}.type: must be 'function'")
        fn = call.get("function")
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            problems.append(f"{where}.function.name: must be a non-empty string")
            continue
        args = fn.get("arguments")
        if not isinstance(args, str):
            problems.append(f"{where}.function.arguments: must be a JSON string")
            continue
        try:
            json.loads(args)
        except ValueError:
            problems.append(f"{where}.function.arguments: is not valid JSON")
    return problems


def _tools_problems(sample: Mapping[str, Any]) -> list[str]:
    if "parallel_tool_calls" in sample and not isinstance(sample["parallel_tool_calls"], bool):
        return ["parallel_tool_calls: must be true or false"]
    if "tools" not in sample:
        return []
    tools = sample["tools"]
    if not isinstance(tools, list):
        return ["tools: must be a list"]
    problems: list[str] = []
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(tool, Mapping) or tool.get("type") != "function":
            problems.append(f"tools[{i}].type: must be 'function'")
        elif not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            problems.append(f"tools[{i}].function.name: must be a non-empty string")
        elif "parameters" in fn and not isinstance(fn["parameters"], Mapping):
            problems.append(f"tools[{i}].function.parameters: must be an object (a JSON schema)")
    return problems
