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

A spawned agent (``multi_agent_v1.spawn_agent``) writes a rollout of its own whose
``session_meta`` names its parent thread. Imported alone it is its own session
(``extra.source.parent_session_id``); imported in one batch with its parent's rollout it is
embedded in the parent, referenced from the result of the call that spawned it (the call the
child names, else the ``spawn_agent`` call whose result or ``item_completed`` event names the
child's thread), and is not written on its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from wayline.importers.common import (
    Batch,
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

__all__ = ["AGENT", "Threads", "read_codex"]

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
        self.spawned: dict[str, str] = {}  # child thread id -> the call that spawned it

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
            self.step.extra.update(extra)
            return
        step = self._agent(stamp)
        step.message = f"{step.message}\n\n{text}" if step.message else text
        step.extra.update(extra)

    def item(self, number: int, item: JsonDict, stamp: str | None) -> None:
        kind = item.get("type")
        ids: JsonDict = {"message_id": item["id"]} if isinstance(item.get("id"), str) else {}
        if kind == "message":
            role = item.get("role")
            text = text_of(item.get("content"))
            if role == "user":
                self.user(text, stamp, {"item": "response_item", **ids})
            elif role == "assistant":
                self.agent_text(text, stamp, ids)
            elif isinstance(role, str):
                self._close()
                self.t.step("system", text, stamp, {"role": role, **ids})
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
            if isinstance(item.get("namespace"), str):
                call.extra["namespace"] = item["namespace"]  # multi_agent_v1.spawn_agent …
            if isinstance(item.get("id"), str):
                call.extra["item_id"] = item["id"]
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
            if isinstance(event.get("new_thread_id"), str):
                self._spawned(event.get("call_id"), [event["new_thread_id"]])
        elif kind == "item_completed" and isinstance(event.get("item"), dict):
            done = event["item"]  # newer versions: a spawn_agent call names the threads it made
            if done.get("type") == "CollabAgentToolCall" and done.get("tool") == "spawn_agent":
                self._spawned(done.get("id"), done.get("receiver_thread_ids"))
            else:
                self.skipped += 1
        else:
            self.skipped += 1  # UI events that repeat what the response items hold

    def _spawned(self, call_id: object, threads: object) -> None:
        found = self.t.calls.get(call_id) if isinstance(call_id, str) else None
        if found is None or not isinstance(threads, list):
            return
        for thread in threads:
            if isinstance(thread, str):
                self.spawned.setdefault(thread, found[1].call_id)
                found[1].extra = {**(found[1].extra or {}), "child_thread_id": thread}

    def spawn_call(self, thread: str, named: object) -> str | None:
        """The call that spawned ``thread``: the one the child names, else the one an event
        or the call's own result (``{"agent_id": …}``) names."""
        if isinstance(named, str) and named in self.t.calls:
            return self.t.calls[named][1].call_id
        if thread in self.spawned:
            return self.spawned[thread]
        for step in self.t.agent_steps():
            for result in step.results:
                try:
                    output = json.loads(result.content or "")
                except ValueError:
                    continue
                if isinstance(output, dict) and output.get("agent_id") == thread:
                    return result.source_call_id
        return None

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


Lines = list[tuple[int, JsonDict]]


def _meta(path: Path, lines: Lines) -> JsonDict:
    """The ``session_meta`` payload (or the older layout's header line); {} when none."""
    first_number, first = lines[0]
    if first.get("type") == "session_meta":
        payload = first.get("payload")
        if not isinstance(payload, dict):
            raise ImportFailure(path, first_number, "payload", "missing or not an object")
        meta: JsonDict = payload
    elif "type" not in first and "id" in first:
        meta = first  # the older flat layout: the first line is the session's header
    else:
        return {}
    if not isinstance(meta.get("id") or meta.get("session_id"), str):
        raise ImportFailure(path, first_number, "payload.id", "missing or not a string")
    return meta


def _spawn(meta: JsonDict) -> JsonDict:
    """``source.subagent.thread_spawn`` of a spawned agent's rollout; {} for any other."""
    source = meta.get("source")
    subagent = source.get("subagent") if isinstance(source, dict) else None
    thread = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    return thread if isinstance(thread, dict) else {}


def parent_of(meta: JsonDict) -> str | None:
    """The thread that spawned this rollout's agent, if one did."""
    parent = _spawn(meta).get("parent_thread_id")
    return parent if isinstance(parent, str) else None


def _head(path: Path) -> JsonDict | None:
    """The ``session_meta`` payload on the first line of ``path``, without reading the rest."""
    try:
        with path.open("rb") as handle:
            first = handle.readline()
    except OSError:
        return None
    if b'"session_meta"' not in first:
        return None
    try:
        line = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        return None
    payload = line.get("payload") if isinstance(line, dict) else None
    return payload if isinstance(payload, dict) and isinstance(payload.get("id"), str) else None


class Threads:
    """The Codex rollouts among the files of one batch: each thread's file, and the threads
    each thread spawned. Built from first lines only, once per batch."""

    def __init__(self, files: Iterable[Path]) -> None:
        self.file: dict[str, Path] = {}
        self.children: dict[str, list[str]] = {}
        for path in files:
            if path.suffix != ".jsonl":
                continue
            meta = _head(path)
            if meta is None:
                continue
            thread = str(meta["id"])
            self.file.setdefault(thread, path)
            parent = parent_of(meta)
            if parent is not None:
                self.children.setdefault(parent, []).append(thread)

    @classmethod
    def of(cls, batch: Batch | None) -> Threads:
        """The batch's index (an empty one without a batch)."""
        if batch is None:
            return cls(())
        known = batch.memo.get("codex-threads")
        if isinstance(known, Threads):
            return known
        made = cls(batch.files)
        batch.memo["codex-threads"] = made
        return made


def _fill(trajectory: Trajectory, path: Path, lines: Lines, meta: JsonDict) -> _Builder:
    builder = _Builder(trajectory, path)
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
    if not trajectory.node.steps:
        raise ImportFailure(path, None, "file", "no messages or tool calls")
    return builder


def _lines(path: Path) -> Lines:
    lines = list(read_jsonl(path))
    if not lines:
        raise ImportFailure(path, None, "file", "empty: no records")
    return lines


def _source_of(meta: JsonDict, builder: _Builder) -> JsonDict:
    source: JsonDict = {}
    for key in ("cwd", "originator", "model_provider", "cli_version"):
        if isinstance(meta.get(key), str):
            source[key] = meta[key]
    spawn = _spawn(meta)
    if spawn:
        source["parent_session_id"] = spawn.get("parent_thread_id")
        source["spawn_call_id"] = spawn.get("spawn_call_id")
        for key in ("agent_nickname", "agent_role", "depth"):
            if spawn.get(key) is not None:
                source[key] = spawn[key]
    if builder.skipped:
        source["skipped_records"] = builder.skipped
    return source


def _embed(
    parent: Trajectory, thread_id: str, builder: _Builder, threads: Threads, seen: set[str]
) -> list[str]:
    """Embed the rollouts of the threads ``thread_id`` spawned (and theirs); their ids."""
    embedded: list[str] = []
    for child_id in threads.children.get(thread_id, []):
        if child_id in seen:
            continue  # a rollout naming an ancestor as its child: read once
        seen.add(child_id)
        path = threads.file[child_id]
        lines = _lines(path)
        meta = _meta(path, lines)
        spawn = _spawn(meta)
        name = spawn.get("agent_nickname") or spawn.get("agent_role") or "subagent"
        child = parent.child(f"agent-{child_id}", str(name))
        child.node.scope_uuid = child_id
        sub = _fill(child, path, lines, meta)
        child.node.extra = {"source": {"session_id": child_id, "path": str(path)}}
        child.node.extra["source"].update(_source_of(meta, sub))
        call_id = builder.spawn_call(child_id, spawn.get("spawn_call_id"))
        if call_id is not None:
            parent.link(call_id, child)
        embedded += [child_id, *_embed(child, child_id, sub, threads, seen)]
    return embedded


def read_codex(path: Path, batch: Batch | None = None) -> list[Imported]:
    """The session of one Codex rollout file, with the agents it spawned whose rollouts are
    in ``batch``; nothing for a spawned agent whose parent's rollout is in ``batch``."""
    lines = _lines(path)
    meta = _meta(path, lines)
    threads = Threads.of(batch)
    parent = parent_of(meta)
    if parent is not None and parent in threads.file:
        return []  # embedded by its parent's import
    session_id = meta.get("id") or meta.get("session_id")
    source_id = session_id if isinstance(session_id, str) else path.stem
    version = meta.get("cli_version") if isinstance(meta.get("cli_version"), str) else None
    root = Trajectory.root(source_id, AGENT, version, None)
    builder = _fill(root, path, lines, meta)
    source = _source_of(meta, builder)
    embedded = _embed(root, source_id, builder, threads, {source_id})
    extra: JsonDict = {}
    if isinstance(meta.get("instructions"), str):
        extra["instructions"] = meta["instructions"]
    return [Imported(root, AGENT, source_id, path, source, extra, embedded)]
