"""The script a :class:`~wayline.testing.server.ScriptedServer` answers from.

A script is a YAML or JSON file (or a Python mapping) that says what the fake model replies.
It is built so that parallel and nested conversations sharing one server (a parent agent and
the subagents it delegates to) stay deterministic **without any global ordering**: every reply
is chosen from the request alone.

* A *rule* is chosen by ``match`` conditions on the request's messages; rules are tried in
  order and the first whose conditions all hold answers. ``default`` answers when none does.
* Within a rule, ``turns`` is indexed by the conversation turn, which is
  ``1 + the number of assistant messages already in the request``. With ``scope: user_turn``
  it is indexed by the model call within the current user turn instead (``1 + the assistant
  messages after the last user message``), so ``turns`` start again at each user message. A
  rule whose ``turns`` are used up no longer matches, so later rules (or ``default``) take
  over. ``respond`` is a single response for every turn.

Example::

    model: scripted-model            # or a list; the first is the default reported model
    default: {content: "ok"}
    rules:
      - name: delegation-parent
        match: {first_user_contains: "delegate"}
        turns:
          - tool_calls: [{name: delegate_task, arguments: {goal: "run echo"}}]
          - content: "all done"
      - match: {any_contains: "boom"}
        respond: {content: "x", fault: {status: 500, times: 1}}

Match conditions (all must hold; an empty ``match`` always holds): ``first_user_contains``,
``last_user_contains``, ``any_contains`` (any message), ``system_contains`` (system/developer
messages), ``last_contains`` (the last message), ``tool_result_contains`` (any tool message),
``last_role``, ``model`` (request model, exact), ``has_tool`` (a tool of that name is offered),
``turn`` (exact turn number, counted as the rule's ``scope`` says), ``user_turn`` (the number of
user messages in the request: 2 is the second user turn).

A response has ``content`` (string or null), ``reasoning`` (sent as ``reasoning_content``),
``tool_calls`` (``name``, ``arguments`` as a mapping or a raw string, optional ``id``,
``omit_id``), ``finish_reason``, ``usage`` (``prompt_tokens``, ``completion_tokens``,
``total_tokens``, ``cached_tokens``, ``reasoning_tokens`` overrides; ``null`` sends no usage),
``delay`` (seconds) and ``fault``. A fault has ``status`` (400-599) with optional ``body`` and
``retry_after``, or one of ``malformed``, ``empty_choices``, ``cut_stream_after``, ``reset``;
``hang`` (seconds) may be combined with any of them. ``times`` limits the fault to the first N
requests that reach it (per rule and turn; ``scope: conversation`` counts per conversation).

Scripts are validated strictly; a bad one raises :class:`ScriptError` naming the file, the line
and the field (``rules[2].turns[0].fault.status``). See ``docs/scripted-server.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wayline.testing._script_parse import (
    FaultSpec,
    Match,
    ResponseSpec,
    ScriptError,
    ToolCallSpec,
    UsageSpec,
    parse_script,
)

__all__ = [
    "FaultSpec",
    "Match",
    "RequestView",
    "ResponseSpec",
    "Rule",
    "Script",
    "ScriptError",
    "ScriptSource",
    "Selection",
    "ToolCallSpec",
    "UsageSpec",
    "load_script",
    "parse_script_text",
]

_PathKey = tuple[str | int, ...]


def message_text(content: Any) -> str:
    """Return the text of a message ``content`` (a string, null or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


@dataclass(frozen=True)
class RequestView:
    """What the script looks at in one chat request: roles, texts, turn and conversation."""

    model: str
    roles: tuple[str, ...]
    texts: tuple[str, ...]
    tool_names: frozenset[str]
    turn: int
    conversation: str
    prompt_chars: int
    user_turn: int = 1
    call_in_user_turn: int = 1

    @classmethod
    def from_body(cls, body: Any) -> RequestView:
        """Build the view of a parsed request body; raise ``ValueError`` when it is not a chat."""
        if not isinstance(body, Mapping):
            raise ValueError("request body must be a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("'messages' must be a non-empty array")
        roles: list[str] = []
        texts: list[str] = []
        prompt_chars = 0
        for i, msg in enumerate(messages):
            if not isinstance(msg, Mapping) or not isinstance(msg.get("role"), str):
                raise ValueError(f"messages[{i}] must be an object with a string 'role'")
            roles.append(msg["role"])
            text = message_text(msg.get("content"))
            texts.append(text)
            prompt_chars += len(text)
            for call in msg.get("tool_calls") or ():
                fn = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(fn, Mapping):
                    prompt_chars += len(str(fn.get("name", ""))) + len(str(fn.get("arguments", "")))
        model = body.get("model")
        tools = body.get("tools")
        tool_names: set[str] = set()
        for tool in tools if isinstance(tools, list) else ():
            fn = tool.get("function") if isinstance(tool, Mapping) else None
            if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
                tool_names.add(fn["name"])
        # The system prompt plus the first user message identify a conversation: a retry or a
        # later turn of it keeps them, while a delegated child gets its own goal as user text.
        head = [[r, t] for r, t in zip(roles, texts, strict=True) if r in ("system", "developer")]
        first_user = next((t for r, t in zip(roles, texts, strict=True) if r == "user"), "")
        digest = hashlib.sha256(json.dumps([head, first_user]).encode()).hexdigest()
        last_user = max((i for i, r in enumerate(roles) if r == "user"), default=-1)
        return cls(
            model=model if isinstance(model, str) else "",
            roles=tuple(roles),
            texts=tuple(texts),
            tool_names=frozenset(tool_names),
            turn=1 + roles.count("assistant"),
            conversation=digest[:12],
            prompt_chars=prompt_chars,
            user_turn=max(1, roles.count("user")),
            call_in_user_turn=1 + roles[last_user + 1 :].count("assistant"),
        )

    def turn_in(self, scope: str) -> int:
        """The turn number a rule of ``scope`` counts (``conversation`` or ``user_turn``)."""
        return self.call_in_user_turn if scope == "user_turn" else self.turn

    def _of_role(self, *roles: str) -> list[str]:
        return [t for r, t in zip(self.roles, self.texts, strict=True) if r in roles]

    def satisfies(self, match: Match, scope: str = "conversation") -> bool:
        """Return whether every condition of ``match`` holds for this request (``turn`` as
        counted in ``scope``)."""
        users = self._of_role("user")
        systems = self._of_role("system", "developer")
        tools = self._of_role("tool")
        checks: list[tuple[str | int | None, Callable[[Any], bool]]] = [
            (match.first_user_contains, lambda s: bool(users) and s in users[0]),
            (match.last_user_contains, lambda s: bool(users) and s in users[-1]),
            (match.any_contains, lambda s: any(s in t for t in self.texts)),
            (match.system_contains, lambda s: any(s in t for t in systems)),
            (match.last_contains, lambda s: s in self.texts[-1]),
            (match.tool_result_contains, lambda s: any(s in t for t in tools)),
            (match.last_role, lambda s: self.roles[-1] == s),
            (match.model, lambda s: self.model == s),
            (match.has_tool, lambda s: s in self.tool_names),
            (match.turn, lambda n: self.turn_in(scope) == n),
            (match.user_turn, lambda n: self.user_turn == n),
        ]
        return all(value is None or check(value) for value, check in checks)


@dataclass(frozen=True)
class Rule:
    """One scripted rule: when ``match`` holds, answer from ``turns`` or with ``respond``.

    ``scope`` says what ``turns`` count: ``conversation`` (every model call of the
    conversation) or ``user_turn`` (the calls since the last user message)."""

    index: int
    name: str
    match: Match
    turns: tuple[ResponseSpec, ...] | None
    respond: ResponseSpec | None
    scope: str = "conversation"

    def response_for(self, turn: int, user_turn: int = 1) -> tuple[ResponseSpec, int] | None:
        """Return the response for ``turn`` and its counter slot, or None when turns ran out.

        With ``scope: user_turn`` the slot also tells user turns apart, so a fault's
        ``times`` counts in each user turn."""
        if self.turns is None:
            assert self.respond is not None
            return self.respond, -1
        if turn > len(self.turns):
            return None
        slot = turn - 1
        if self.scope == "user_turn":
            slot += (user_turn - 1) * len(self.turns)
        return self.turns[turn - 1], slot


@dataclass(frozen=True)
class Selection:
    """The answer chosen for one request: rule name (None for ``default``), response, fault key."""

    rule: str | None
    rule_index: int
    turn: int
    response: ResponseSpec
    slot: int

    def fault_key(self, conversation: str) -> tuple[int, int, str] | None:
        """Return the key of the fault counter this request advances, if the response has one."""
        fault = self.response.fault
        if fault is None:
            return None
        return (self.rule_index, self.slot, conversation if fault.scope == "conversation" else "")


@dataclass(frozen=True)
class Script:
    """A validated script: reported models, ordered rules and the default response."""

    models: tuple[str, ...]
    default: ResponseSpec
    rules: tuple[Rule, ...]
    chunk_chars: int = 8
    source: str = "<script>"

    @property
    def model(self) -> str:
        """The model id reported when the request names none of the script's models."""
        return self.models[0]

    def select(self, view: RequestView) -> Selection:
        """Choose the response for a request: the first matching rule with a turn left."""
        for rule in self.rules:
            if not view.satisfies(rule.match, rule.scope):
                continue
            found = rule.response_for(view.turn_in(rule.scope), view.user_turn)
            if found is not None:
                return Selection(rule.name, rule.index, view.turn, found[0], found[1])
        return Selection(None, -1, view.turn, self.default, -1)


ScriptSource = Script | Mapping[str, Any] | str | os.PathLike[str]
"""A script object, a mapping in the script format, or the path of a YAML/JSON file."""


def _node_lines(node: yaml.Node, path: _PathKey, out: dict[_PathKey, int], depth: int = 0) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if depth > 64:  # guards against self-referencing aliases
        return
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:  # PyYAML would silently keep only the last one
                    raise yaml.MarkedYAMLError(
                        problem=f"duplicate key {key_node.value!r}",
                        problem_mark=key_node.start_mark,
                    )
                seen.add(key_node.value)
                key_path = (*path, str(key_node.value))
                out[key_path] = key_node.start_mark.line + 1
                _node_lines(value_node, key_path, out, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _node_lines(item, (*path, i), out, depth + 1)


def _compose_yaml(text: str) -> tuple[Any, dict[_PathKey, int]]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {(): 1}
        lines: dict[_PathKey, int] = {}
        _node_lines(node, (), lines)
        return loader.construct_document(node), lines
    finally:
        loader.dispose()


def parse_script_text(text: str, source: str = "<string>", fmt: str = "yaml") -> Script:
    """Parse and validate script text in ``fmt`` (``"yaml"`` or ``"json"``)."""
    lines: dict[_PathKey, int] = {}
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"invalid JSON: {exc.msg}", source=source, line=exc.lineno) from None
        try:  # JSON is YAML, so the YAML composer can tell where each field sits
            lines = _compose_yaml(text)[1]
        except yaml.YAMLError:
            lines = {}
    else:
        try:
            data, lines = _compose_yaml(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            line = mark.line + 1 if mark is not None else None
            raise ScriptError(f"invalid YAML: {problem}", source=source, line=line) from None
    return _build(data, source, lines)


def load_script(source: ScriptSource) -> Script:
    """Load a script from a :class:`Script`, a mapping, or a ``.yaml``/``.yml``/``.json`` path."""
    if isinstance(source, Script):
        return source
    if isinstance(source, Mapping):
        return _build(source, "<script>", {})
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ScriptError(f"cannot read script: {reason}", source=str(path)) from None
    fmt = "json" if path.suffix.lower() == ".json" else "yaml"
    return parse_script_text(text, source=str(path), fmt=fmt)


def _build(data: Any, source: str, lines: dict[_PathKey, int]) -> Script:
    parsed = parse_script(data, source, lines)
    rules = tuple(
        Rule(index=i, name=name, match=match, turns=turns, respond=respond, scope=scope)
        for i, (name, match, turns, respond, scope) in enumerate(parsed.rules)
    )
    return Script(
        models=parsed.models,
        default=parsed.default,
        rules=rules,
        chunk_chars=parsed.chunk_chars,
        source=source,
    )
