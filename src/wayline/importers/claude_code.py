"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``) into ATIF.

One line per record: ``user`` and ``assistant`` lines carry an Anthropic Messages API message
(``message.content`` blocks: ``text``, ``thinking``, ``tool_use``, ``tool_result``), with the
line's ``uuid``, ``timestamp``, ``sessionId`` and, on assistant lines, ``message.usage`` and
``message.model``. Claude Code writes one line per content block of a response, all with the
same ``message.id`` and usage: those lines are one agent step, its usage counted once.

Subagents: lines with ``isSidechain: true`` (older versions keep them in the session file) and
the files ``<session>/subagents/**/agent-<id>.jsonl`` (newer versions) become embedded
subagent trajectories, referenced from the result of the ``Task``/``Agent`` call that started
them (matched by the ``agentId`` the result line names, else in call order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wayline.importers.common import (
    Imported,
    ImportFailure,
    Trajectory,
    metrics_of,
    read_jsonl,
    text_of,
    when,
)
from wayline.relay.atif.model import Step
from wayline.relay.atif.payloads import JsonDict

__all__ = ["AGENT", "DELEGATING_TOOLS", "read_claude_code", "subagent_files"]

AGENT = "claude-code"
DELEGATING_TOOLS = ("Task", "Agent")
_SKIPPED_TYPES = ("file-history-snapshot", "queue-operation", "progress", "attachment")

Line = tuple[int, JsonDict]


class _Builder:
    """Adds the lines of one trajectory (the session or one subagent) in file order."""

    def __init__(self, trajectory: Trajectory, path: Path) -> None:
        self.t = trajectory
        self.path = path
        self.by_message: dict[str, Step] = {}
        self.skipped = 0
        self.summaries: list[str] = []
        # agentId named by a result line -> the tool call id whose result it is
        self.agent_calls: dict[str, str] = {}

    def add(self, number: int, line: JsonDict) -> None:
        kind = line.get("type")
        if not isinstance(kind, str):
            raise ImportFailure(self.path, number, "type", "missing or not a string")
        if kind in ("user", "assistant"):
            message = line.get("message")
            if not isinstance(message, dict):
                raise ImportFailure(self.path, number, "message", "missing or not an object")
            if kind == "user":
                self._user(number, line, message)
            else:
                self._assistant(number, line, message)
        elif kind == "system":
            text = line.get("content")
            extra = _ids(line)
            for key in ("subtype", "level"):
                if isinstance(line.get(key), str):
                    extra[key] = line[key]
            self.t.step(
                "system", text if isinstance(text, str) else "", when(line.get("timestamp")), extra
            )
        elif kind == "summary":
            if isinstance(line.get("summary"), str):
                self.summaries.append(line["summary"])
        else:
            self.skipped += 1  # snapshots, queue operations and record kinds newer than this reader

    def _user(self, number: int, line: JsonDict, message: JsonDict) -> None:
        content = message.get("content")
        stamp = when(line.get("timestamp"))
        texts: list[str] = []
        blocks = content if isinstance(content, list) else [content]
        for index, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    raise ImportFailure(
                        self.path, number, f"message.content[{index}].tool_use_id", "missing"
                    )
                extra: JsonDict = {"uuid": line.get("uuid")} if line.get("uuid") else {}
                if block.get("is_error") is True:
                    extra["is_error"] = True
                result_text = text_of(block.get("content"))
                if not self.t.result(call_id, result_text, extra):
                    self.t.orphan_result(call_id, result_text, extra)
                agent_id = _agent_id_of(line)
                if agent_id is not None:
                    self.agent_calls.setdefault(agent_id, call_id)
            elif block is not None:
                texts.append(text_of(block))
        if texts:
            extra = _ids(line)
            if line.get("isMeta") is True:
                extra["is_meta"] = True
            self.t.step("user", "\n".join(texts), stamp, extra)

    def _assistant(self, number: int, line: JsonDict, message: JsonDict) -> None:
        message_id = message.get("id")
        model = message.get("model") if isinstance(message.get("model"), str) else None
        step = self.by_message.get(message_id) if isinstance(message_id, str) else None
        if step is None:
            extra = _ids(line)
            if isinstance(message_id, str):
                extra["message_id"] = message_id
            step = self.t.step("agent", "", when(line.get("timestamp")), extra, model=model)
            if isinstance(message_id, str):
                self.by_message[message_id] = step
        else:
            uuid = line.get("uuid")
            if isinstance(uuid, str):
                step.extra.setdefault("merged_uuids", []).append(uuid)
        if isinstance(line.get("requestId"), str):
            step.extra["request_id"] = line["requestId"]
        if isinstance(message.get("stop_reason"), str):
            step.extra["stop_reason"] = message["stop_reason"]
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        for index, block in enumerate(blocks):
            self._block(number, index, step, block)
        metrics = metrics_of(message.get("usage"))
        if metrics is not None:
            step.metrics = metrics  # every line of one response repeats its usage: once

    def _block(self, number: int, index: int, step: Step, block: Any) -> None:
        if isinstance(block, str):
            step.message = _joined(step.message, block)
            return
        if not isinstance(block, dict):
            return
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            step.message = _joined(step.message, block["text"])
        elif kind == "thinking":
            thought = block.get("thinking")
            if isinstance(thought, str):
                step.reasoning = _joined(step.reasoning or "", thought)
        elif kind == "redacted_thinking":
            step.extra["redacted_thinking"] = step.extra.get("redacted_thinking", 0) + 1
        elif kind in ("tool_use", "server_tool_use"):
            call_id, name = block.get("id"), block.get("name")
            where = f"message.content[{index}]"
            if not isinstance(call_id, str) or not call_id:
                raise ImportFailure(self.path, number, f"{where}.id", "missing")
            if not isinstance(name, str) or not name:
                raise ImportFailure(self.path, number, f"{where}.name", "missing")
            raw = block.get("input")
            arguments = raw if isinstance(raw, dict) else ({} if raw is None else {"input": raw})
            self.t.call(step, call_id, name, arguments)


def _joined(before: str, text: str) -> str:
    return f"{before}\n\n{text}" if before else text


def _ids(line: JsonDict) -> JsonDict:
    extra: JsonDict = {}
    if isinstance(line.get("uuid"), str):
        extra["uuid"] = line["uuid"]
    return extra


def _agent_id_of(line: JsonDict) -> str | None:
    result = line.get("toolUseResult")
    if isinstance(result, dict) and isinstance(result.get("agentId"), str):
        return str(result["agentId"])
    return line["agentId"] if isinstance(line.get("agentId"), str) else None


def _chains(lines: list[Line]) -> list[list[Line]]:
    """Sidechain lines grouped into conversations by ``parentUuid`` (a line whose parent is
    not among them joins the latest conversation)."""
    chains: list[list[Line]] = []
    owner: dict[str, int] = {}
    for number, line in lines:
        parent = line.get("parentUuid")
        if isinstance(parent, str) and parent in owner:
            index = owner[parent]
        elif parent is None or not chains:
            chains.append([])
            index = len(chains) - 1
        else:
            index = len(chains) - 1
        chains[index].append((number, line))
        if isinstance(line.get("uuid"), str):
            owner[line["uuid"]] = index
    return chains


def subagent_files(session_file: Path) -> list[Path]:
    """The subagent transcripts Claude Code keeps beside a session file."""
    folder = session_file.with_suffix("") / "subagents"
    return sorted(folder.rglob("agent-*.jsonl")) if folder.is_dir() else []


def _first_str(lines: list[Line], key: str) -> str | None:
    return next((line[key] for _, line in lines if isinstance(line.get(key), str)), None)


def _delegation_name(trajectory: Trajectory, call_id: str | None) -> str:
    found = trajectory.calls.get(call_id) if call_id else None
    if found is not None:
        arguments = found[1].arguments
        for key in ("subagent_type", "description"):
            if isinstance(arguments.get(key), str) and arguments[key]:
                return str(arguments[key])
    return "sidechain"


def read_claude_code(path: Path) -> list[Imported]:
    """The session in ``path`` (a Claude Code JSONL transcript) with its subagents."""
    lines = list(read_jsonl(path))
    if not lines:
        raise ImportFailure(path, None, "file", "empty: no records")
    main = [(n, line) for n, line in lines if line.get("isSidechain") is not True]
    side = [(n, line) for n, line in lines if line.get("isSidechain") is True]
    session_id = _first_str(lines, "sessionId") or path.stem
    standalone_agent = _first_str(lines, "agentId") if not main else None
    source_id = f"{session_id}-agent-{standalone_agent}" if standalone_agent else session_id
    root = Trajectory.root(source_id, AGENT, _first_str(lines, "version"), None)
    builder = _Builder(root, path)
    for number, line in main if main else side:
        builder.add(number, line)
    groups: list[tuple[str | None, list[Line], Path]] = []
    if main:
        groups = [(_first_str(chain, "agentId"), chain, path) for chain in _chains(side)]
    for file in subagent_files(path):
        sub_lines = list(read_jsonl(file))
        agent_id = _first_str(sub_lines, "agentId") or file.stem.removeprefix("agent-")
        groups.append((agent_id, sub_lines, file))
    _add_subagents(root, builder, groups)
    if not root.node.steps:
        raise ImportFailure(path, None, "file", "no user, assistant or system messages")
    extra: JsonDict = {}
    if builder.summaries:
        extra["summaries"] = builder.summaries
    source: JsonDict = {"skipped_records": builder.skipped} if builder.skipped else {}
    cwd = _first_str(lines, "cwd")
    if cwd is not None:
        source["cwd"] = cwd
    return [Imported(root, AGENT, source_id, path, source, extra)]


def _add_subagents(
    root: Trajectory, builder: _Builder, groups: list[tuple[str | None, list[Line], Path]]
) -> None:
    linked = set(builder.agent_calls.values())
    unlinked = [
        call.call_id
        for step in root.agent_steps()
        for call in step.tool_calls
        if call.name in DELEGATING_TOOLS and call.call_id not in linked
    ]
    for position, (agent_id, lines, file) in enumerate(groups, start=1):
        call_id = builder.agent_calls.get(agent_id) if agent_id else None
        if call_id is None and unlinked:
            call_id = unlinked.pop(0)
        label = agent_id or str(position)
        child = root.child(f"agent-{label}", _delegation_name(root, call_id))
        child.node.scope_uuid = agent_id
        sub = _Builder(child, file)
        for number, line in lines:
            sub.add(number, line)
        if not child.node.steps:
            root.node.children.remove(child.node)
            continue
        if call_id is not None:
            root.link(call_id, child)
