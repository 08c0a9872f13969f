"""Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) into ATIF.

Each line is ``{"timestamp", "type", "payload"}``: ``session_meta`` (the session id, cwd, CLI
version), ``turn_context`` (the model of the turns that follow), ``response_item`` (what was
sent to and returned by the model: ``message``, ``reasoning``, ``function_call``,
``custom_tool_call`` and their ``*_output``) and ``event_msg`` (the UI's events: the user's
and agent's messages again, ``token_count`` usage). Older rollouts put the items on the lines
themselves without the wrapper.

One model response (its reasoning, message and calls) is one agent step; a tool output or a
user message ends it. A message recorded both as an event and as a response item is one step.
Reasoning summaries are the step's ``reasoning_content`` (encrypted reasoning is not kept).
``token_count`` gives the step its metrics from ``last_token_usage`` (repeats counted once).
"""

from __future__ import annotations

from pathlib import Path

from wayline.importers.common import (
    Imported,
    ImportFailure,
    Trajectory,
    arguments_of,
    metrics_of,
    read_jsonl,
    text_of,
    when,
)
from wayline.relay.atif.model import Step
from wayline.relay.atif.payloads import JsonDict

__all__ = ["AGENT", "read_codex"]

AGENT = "codex"
_ITEM_TYPES = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
)


class _Builder:
    def __init__(self, trajectory: Trajectory, path: Path) -> None:
        self.t = trajectory
        self.path = path
        self.model: str | None = None
        self.step: Step | None = None  # the agent step a response is still adding to
        self.last_user: Step | None = None  # the user step no agent step has followed yet
        self.last_usage: object = None
        self.skipped = 0

    def _agent(self, stamp: str | None) -> Step:
        if self.step is None:
            self.step = self.t.step("agent", "", stamp, None, model=self.model)
            self.last_user = None
        return self.step

    def _close(self) -> None:
        self.step = None

    def user(self, text: str, stamp: str | None, extra: JsonDict) -> None:
        if self.last_user is not None and self.last_user.message == text:
            self.last_user.extra.update(extra)  # the same message as event and as item
            return
        self._close()
        self.last_user = self.t.step("user", text, stamp, extra)

    def agent_text(self, text: str, stamp: str | None, extra: JsonDict) -> None:
        if self.step is not None and (self.step.message == text or text in self.step.message):
            return
        step = self._agent(stamp)
        step.message = f"{step.message}\n\n{text}" if step.message else text
        step.extra.update(extra)

    def item(self, number: int, item: JsonDict, stamp: str | None) -> None:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            text = text_of(item.get("content"))
            if role == "user":
                self.user(text, stamp, {"item": "response_item"})
            elif role == "assistant":
                self.agent_text(text, stamp, {})
            elif isinstance(role, str):
                self._close()
                self.t.step("system", text, stamp, {"role": role})
            else:
                raise ImportFailure(self.path, number, "payload.role", "missing")
        elif kind == "reasoning":
            summary = item.get("summary")
            texts = [text_of(part) for part in summary] if isinstance(summary, list) else []
            step = self._agent(stamp)
            if any(texts):
                joined = "\n".join(t for t in texts if t)
                step.reasoning = f"{step.reasoning}\n{joined}" if step.reasoning else joined
            if item.get("encrypted_content"):
                step.extra["encrypted_reasoning"] = True
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = item.get("call_id") or item.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise ImportFailure(self.path, number, "payload.call_id", "missing")
            name = item.get("name") if isinstance(item.get("name"), str) else kind
            raw = item.get("arguments") if kind == "function_call" else item.get("input")
            if kind == "local_shell_call":
                raw = item.get("action")
            step = self._agent(stamp)
            call = self.t.call(step, call_id, str(name), arguments_of(raw))
            call.extra = {**(call.extra or {}), "type": kind}
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise ImportFailure(self.path, number, "payload.call_id", "missing")
            output = item.get("output")
            if isinstance(output, dict) and "content" in output:
                output = output["content"]
            text = output if isinstance(output, str) else text_of(output)
            if not self.t.result(call_id, text, {}):
                self.t.orphan_result(call_id, text, {})
            if self.step is not None and self.step.results:
                self._close()
        else:
            self.skipped += 1

    def event(self, number: int, event: JsonDict, stamp: str | None) -> None:
        kind = event.get("type")
        if kind == "user_message":
            message = event.get("message")
            if not isinstance(message, str):
                raise ImportFailure(self.path, number, "payload.message", "missing")
            self.user(message, stamp, {"item": "event_msg"})
        elif kind == "agent_message":
            message = event.get("message")
            if isinstance(message, str):
                self.agent_text(message, stamp, {})
        elif kind == "token_count":
            self._tokens(event.get("info"))
        elif kind == "collab_tool_call":
            call = self.t.calls.get(str(event.get("call_id")))
            if call is not None and isinstance(event.get("new_thread_id"), str):
                call[1].extra = {**(call[1].extra or {}), "child_thread_id": event["new_thread_id"]}
        else:
            self.skipped += 1  # UI events that repeat what the response items hold

    def _tokens(self, info: object) -> None:
        if not isinstance(info, dict):
            return
        total = info.get("total_token_usage")
        if total is not None and total == self.last_usage:
            return  # the same count reported again
        self.last_usage = total
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return
        usage: JsonDict = {}
        for key, value in last.items():
            if key == "input_tokens":
                usage["prompt_tokens"] = value
            elif key == "output_tokens":
                usage["completion_tokens"] = value
            elif key == "cached_input_tokens":
                usage["prompt_tokens_details"] = {"cached_tokens": value}
            else:
                usage[key] = value
        steps = self.t.agent_steps()
        target = self.step or (steps[-1] if steps else None)
        if target is not None and target.metrics is None:
            target.metrics = metrics_of(usage)


def read_codex(path: Path) -> list[Imported]:
    """The session of one Codex rollout file."""
    lines = list(read_jsonl(path))
    if not lines:
        raise ImportFailure(path, None, "file", "empty: no records")
    meta: JsonDict = {}
    first_number, first = lines[0]
    if first.get("type") == "session_meta":
        payload = first.get("payload")
        if not isinstance(payload, dict):
            raise ImportFailure(path, first_number, "payload", "missing or not an object")
        meta = payload
    elif "type" not in first and "id" in first:
        meta = first  # the older flat layout: the first line is the session's header
    session_id = meta.get("id") or meta.get("session_id")
    if meta and not isinstance(session_id, str):
        raise ImportFailure(path, first_number, "payload.id", "missing or not a string")
    source_id = session_id if isinstance(session_id, str) else path.stem
    version = meta.get("cli_version") if isinstance(meta.get("cli_version"), str) else None
    root = Trajectory.root(source_id, AGENT, version, None)
    builder = _Builder(root, path)
    for number, line in lines[1:] if meta else lines:
        kind = line.get("type")
        stamp = when(line.get("timestamp"))
        payload = line.get("payload")
        wrapped = ("response_item", "event_msg", "turn_context", "session_meta", "compacted")
        if kind in wrapped and not isinstance(payload, dict):
            raise ImportFailure(path, number, "payload", "missing or not an object")
        if kind == "response_item":
            assert isinstance(payload, dict)
            builder.item(number, payload, stamp)
        elif kind == "event_msg":
            assert isinstance(payload, dict)
            builder.event(number, payload, stamp)
        elif kind == "turn_context":
            assert isinstance(payload, dict)
            if isinstance(payload.get("model"), str):
                builder.model = payload["model"]
        elif kind in _ITEM_TYPES and payload is None:
            builder.item(number, line, stamp)  # the older layout: the item is the line
        elif not isinstance(kind, str):
            raise ImportFailure(path, number, "type", "missing or not a string")
        else:
            builder.skipped += 1
    if not root.node.steps:
        raise ImportFailure(path, None, "file", "no messages or tool calls")
    source: JsonDict = {}
    for key in ("cwd", "originator", "model_provider", "cli_version"):
        if isinstance(meta.get(key), str):
            source[key] = meta[key]
    spawn = meta.get("source")
    if isinstance(spawn, dict):
        thread = (
            (spawn.get("subagent") or {}).get("thread_spawn")
            if isinstance(spawn.get("subagent"), dict)
            else None
        )
        if isinstance(thread, dict):
            source["parent_session_id"] = thread.get("parent_thread_id")
            source["spawn_call_id"] = thread.get("spawn_call_id")
    if builder.skipped:
        source["skipped_records"] = builder.skipped
    extra: JsonDict = {}
    if isinstance(meta.get("instructions"), str):
        extra["instructions"] = meta["instructions"]
    return [Imported(root, AGENT, source_id, path, source, extra)]
