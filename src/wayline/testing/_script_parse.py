"""Strict validation of the script format into frozen specs (see :mod:`wayline.testing.script`).

Every error names the source, the line (when the script came from text) and the field path,
such as ``rules[2].turns[0].fault.status``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

_PathKey = tuple[str | int, ...]

ROLES = ("system", "developer", "user", "assistant", "tool")


class ScriptError(ValueError):
    """A script that cannot be used; ``str()`` is ``source:line: field: message``."""

    def __init__(
        self, message: str, *, source: str = "<script>", line: int | None = None, field: str = ""
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        super().__init__(message)

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


@dataclass(frozen=True)
class ToolCallSpec:
    """A scripted tool call; ``arguments`` is the exact JSON string sent to the client."""

    name: str
    arguments: str
    id: str | None = None
    omit_id: bool = False


@dataclass(frozen=True)
class UsageSpec:
    """Usage overrides; a None field is computed from the request and the output."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True)
class FaultSpec:
    """A scripted failure, applied to the first ``times`` requests reaching it (None: always)."""

    status: int | None = None
    body: str | Mapping[str, Any] | None = None
    retry_after: float | None = None
    times: int | None = None
    scope: str = "rule"
    malformed: bool = False
    empty_choices: bool = False
    cut_stream_after: int | None = None
    reset: bool = False
    hang: float = 0.0

    @property
    def kind(self) -> str:
        """A short label of the fault for the request log, e.g. ``status:500`` or ``reset``."""
        if self.status is not None:
            label = f"status:{self.status}"
        elif self.malformed:
            label = "malformed"
        elif self.empty_choices:
            label = "empty_choices"
        elif self.cut_stream_after is not None:
            label = f"cut_stream_after:{self.cut_stream_after}"
        elif self.reset:
            label = "reset"
        else:
            return f"hang:{self.hang:g}"
        return f"hang:{self.hang:g}+{label}" if self.hang else label


@dataclass(frozen=True)
class ResponseSpec:
    """One scripted answer: content and/or tool calls, usage, delay and an optional fault."""

    content: str | None = "ok"
    reasoning: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    finish_reason: str | None = None
    usage: UsageSpec | None = UsageSpec()
    delay: float = 0.0
    fault: FaultSpec | None = None


@dataclass(frozen=True)
class Match:
    """Conditions on a request; every field that is not None must hold."""

    first_user_contains: str | None = None
    last_user_contains: str | None = None
    any_contains: str | None = None
    system_contains: str | None = None
    last_contains: str | None = None
    tool_result_contains: str | None = None
    last_role: str | None = None
    model: str | None = None
    has_tool: str | None = None
    turn: int | None = None
    user_turn: int | None = None


RULE_SCOPES = ("conversation", "user_turn")
"""What a rule's ``turns`` count: model calls of the whole conversation (the default), or of
the current user turn (``turns`` start again at each user message)."""


class ParsedScript(NamedTuple):
    """The validated pieces of a script; rules are ``(name, match, turns, respond, scope)``."""

    models: tuple[str, ...]
    default: ResponseSpec
    rules: list[tuple[str, Match, tuple[ResponseSpec, ...] | None, ResponseSpec | None, str]]
    chunk_chars: int


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}.get(
        type(value), "mapping" if isinstance(value, Mapping) else type(value).__name__
    )


class _Checker:
    """Validates values at paths, raising :class:`ScriptError` with the path's line."""

    def __init__(self, source: str, lines: Mapping[_PathKey, int]) -> None:
        self.source = source
        self.lines = lines

    def error(self, path: _PathKey, message: str) -> ScriptError:
        probe = path
        while probe and probe not in self.lines:  # a missing key reports its parent's line
            probe = probe[:-1]
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        return ScriptError(
            message, source=self.source, line=self.lines.get(probe), field=field or "(top level)"
        )

    def mapping(self, value: Any, path: _PathKey, allowed: tuple[str, ...]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(path, f"expected a mapping, got {_type_name(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.error(path, f"keys must be strings, got {key!r}")
            if key not in allowed:
                raise self.error(
                    (*path, key), f"unknown key {key!r} (allowed: {', '.join(allowed)})"
                )
        return value

    def string(self, value: Any, path: _PathKey, *, nullable: bool = False) -> str | None:
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            want = "a string or null" if nullable else "a string"
            raise self.error(path, f"expected {want}, got {_type_name(value)}")
        return value

    def integer(self, value: Any, path: _PathKey, low: int, high: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"expected an integer, got {_type_name(value)}")
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f">= {low}"
            raise self.error(path, f"must be {bound}, got {value}")
        return value

    def number(self, value: Any, path: _PathKey, *, positive: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(path, f"expected a number of seconds, got {_type_name(value)}")
        if value < 0 or (positive and value == 0):
            raise self.error(path, f"must be {'> 0' if positive else '>= 0'}, got {value}")
        return float(value)

    def boolean(self, value: Any, path: _PathKey) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {_type_name(value)}")
        return value


_RESPONSE_KEYS = ("content", "reasoning", "tool_calls", "finish_reason", "usage", "delay", "fault")
_TOOL_CALL_KEYS = ("name", "arguments", "id", "omit_id")
_USAGE_KEYS = tuple(UsageSpec.__dataclass_fields__)
_FAULT_KEYS = tuple(FaultSpec.__dataclass_fields__)
_MATCH_KEYS = tuple(Match.__dataclass_fields__)
_EXCLUSIVE_FAULTS = ("status", "malformed", "empty_choices", "cut_stream_after", "reset")


def _tool_call(chk: _Checker, raw: Any, path: _PathKey) -> ToolCallSpec:
    spec = chk.mapping(raw, path, _TOOL_CALL_KEYS)
    if "name" not in spec:
        raise chk.error((*path, "name"), "a tool call needs a 'name'")
    name = chk.string(spec["name"], (*path, "name"))
    args = spec.get("arguments", {})
    if isinstance(args, Mapping):
        arguments = json.dumps(args, ensure_ascii=False)
    elif isinstance(args, str):
        arguments = args  # sent verbatim, so a script can send arguments that are not JSON
    else:
        raise chk.error(
            (*path, "arguments"), f"expected a mapping or a string, got {_type_name(args)}"
        )
    call_id = chk.string(spec.get("id"), (*path, "id"), nullable=True)
    omit_id = chk.boolean(spec.get("omit_id", False), (*path, "omit_id"))
    if omit_id and call_id is not None:
        raise chk.error((*path, "omit_id"), "'omit_id' cannot be combined with 'id'")
    assert name is not None
    return ToolCallSpec(name=name, arguments=arguments, id=call_id, omit_id=omit_id)


def _fault(chk: _Checker, raw: Any, path: _PathKey) -> FaultSpec:
    spec = chk.mapping(raw, path, _FAULT_KEYS)
    # ``is`` tests because ``cut_stream_after: 0`` is a real fault although ``0 == False``.
    kinds = [k for k in _EXCLUSIVE_FAULTS if spec.get(k) is not None and spec.get(k) is not False]
    if len(kinds) > 1:
        raise chk.error(path, f"choose one of {', '.join(kinds)}; they cannot be combined")
    if not kinds and "hang" not in spec:
        raise chk.error(path, f"a fault needs one of {', '.join(_EXCLUSIVE_FAULTS)} or 'hang'")
    for key in ("body", "retry_after"):
        if key in spec and "status" not in spec:
            raise chk.error((*path, key), f"'{key}' needs 'status'")
    body = spec.get("body")
    if body is not None and not isinstance(body, str | Mapping):
        raise chk.error((*path, "body"), f"expected a string or a mapping, got {_type_name(body)}")
    scope = chk.string(spec.get("scope", "rule"), (*path, "scope"))
    if scope not in ("rule", "conversation"):
        raise chk.error((*path, "scope"), f"must be 'rule' or 'conversation', got {scope!r}")

    def opt_int(key: str, low: int, high: int | None = None) -> int | None:
        return None if spec.get(key) is None else chk.integer(spec[key], (*path, key), low, high)

    def opt_bool(key: str) -> bool:
        return chk.boolean(spec.get(key, False), (*path, key))

    retry_after = spec.get("retry_after")
    return FaultSpec(
        status=opt_int("status", 400, 599),
        body=body,
        retry_after=None
        if retry_after is None
        else chk.number(retry_after, (*path, "retry_after")),
        times=opt_int("times", 1),
        scope=scope or "rule",
        malformed=opt_bool("malformed"),
        empty_choices=opt_bool("empty_choices"),
        cut_stream_after=opt_int("cut_stream_after", 0),
        reset=opt_bool("reset"),
        hang=chk.number(spec["hang"], (*path, "hang"), positive=True) if "hang" in spec else 0.0,
    )


def _usage(chk: _Checker, raw: Any, path: _PathKey) -> UsageSpec | None:
    if raw is None:
        return None
    spec = chk.mapping(raw, path, _USAGE_KEYS)
    return UsageSpec(**{k: chk.integer(v, (*path, k), 0) for k, v in spec.items()})


def _response(chk: _Checker, raw: Any, path: _PathKey) -> ResponseSpec:
    spec = chk.mapping(raw, path, _RESPONSE_KEYS)
    calls_raw = spec.get("tool_calls", [])
    if not isinstance(calls_raw, list):
        raise chk.error((*path, "tool_calls"), f"expected a list, got {_type_name(calls_raw)}")
    calls = tuple(_tool_call(chk, c, (*path, "tool_calls", i)) for i, c in enumerate(calls_raw))
    if "content" in spec:
        content = chk.string(spec["content"], (*path, "content"), nullable=True)
    else:
        content = None if calls else ""
    finish = spec.get("finish_reason")
    return ResponseSpec(
        content=content,
        reasoning=chk.string(spec.get("reasoning"), (*path, "reasoning"), nullable=True),
        tool_calls=calls,
        finish_reason=None if finish is None else chk.string(finish, (*path, "finish_reason")),
        usage=_usage(chk, spec["usage"], (*path, "usage")) if "usage" in spec else UsageSpec(),
        delay=chk.number(spec.get("delay", 0), (*path, "delay")),
        fault=_fault(chk, spec["fault"], (*path, "fault")) if "fault" in spec else None,
    )


def _match(chk: _Checker, raw: Any, path: _PathKey) -> Match:
    spec = chk.mapping(raw, path, _MATCH_KEYS)
    values: dict[str, Any] = {}
    for key, value in spec.items():
        if key in ("turn", "user_turn"):
            values[key] = chk.integer(value, (*path, key), 1)
            continue
        values[key] = chk.string(value, (*path, key))
        if key == "last_role" and value not in ROLES:
            raise chk.error((*path, key), f"must be one of {', '.join(ROLES)}, got {value!r}")
    return Match(**values)


def parse_script(data: Any, source: str, lines: Mapping[_PathKey, int]) -> ParsedScript:
    """Validate a loaded script document; raise :class:`ScriptError` on the first problem."""
    chk = _Checker(source, lines)
    top = chk.mapping(data, (), ("model", "default", "rules", "chunk_chars", "description"))
    raw_model = top.get("model", "scripted-model")
    names = raw_model if isinstance(raw_model, list) else [raw_model]
    models = tuple(
        chk.string(m, ("model", i) if isinstance(raw_model, list) else ("model",)) or ""
        for i, m in enumerate(names)
    )
    if not models or not all(models):
        raise chk.error(("model",), "expected a non-empty model id or a non-empty list of them")
    if "description" in top:
        chk.string(top["description"], ("description",))
    default = _response(chk, top["default"], ("default",)) if "default" in top else ResponseSpec()
    raw_rules = top.get("rules", [])
    if not isinstance(raw_rules, list):
        raise chk.error(("rules",), f"expected a list, got {_type_name(raw_rules)}")
    rules = []
    for i, raw in enumerate(raw_rules):
        path: _PathKey = ("rules", i)
        rule = chk.mapping(raw, path, ("name", "match", "turns", "respond", "scope"))
        if ("turns" in rule) == ("respond" in rule):
            raise chk.error(path, "a rule needs exactly one of 'turns' or 'respond'")
        name = chk.string(rule.get("name", f"rules[{i}]"), (*path, "name")) or f"rules[{i}]"
        match = _match(chk, rule.get("match", {}), (*path, "match"))
        turns = None
        if "turns" in rule:
            raw_turns = rule["turns"]
            if not isinstance(raw_turns, list) or not raw_turns:
                raise chk.error((*path, "turns"), "expected a non-empty list of responses")
            turns = tuple(_response(chk, t, (*path, "turns", j)) for j, t in enumerate(raw_turns))
        respond = _response(chk, rule["respond"], (*path, "respond")) if "respond" in rule else None
        scope = chk.string(rule.get("scope", "conversation"), (*path, "scope"))
        if scope not in RULE_SCOPES:
            raise chk.error(
                (*path, "scope"), f"must be 'conversation' or 'user_turn', got {scope!r}"
            )
        rules.append((name, match, turns, respond, scope or "conversation"))
    chunk_chars = chk.integer(top.get("chunk_chars", 8), ("chunk_chars",), 1)
    return ParsedScript(models, default, rules, chunk_chars)
