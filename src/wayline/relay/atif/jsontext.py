"""ATIF file text: ``json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)``, faster.

The standard library encodes indented JSON with nested Python generators, so every token is
passed up through one generator per nesting level. :func:`dumps_indented` appends to one list
instead (about twice as fast), and :func:`trajectory_text` also reuses the text of steps that
did not change since the trajectory was last written: a live exporter rewrites its file after
every turn, and without the reuse each rewrite would encode the whole, growing session again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from wayline.relay.atif.model import (
    PathFor,
    Step,
    TrajectoryNode,
    render_step,
    render_trajectory,
)
from wayline.relay.jsonfmt import JsonText

__all__ = ["dumps_indented", "trajectory_text", "warm_text"]

_encode_str = json.encoder.encode_basestring  # the C escaper (ensure_ascii=False), if built
_float_repr = float.__repr__
_int_repr = int.__repr__
_STEP_INDENT = "    "  # a step sits in the "steps" list, two levels below its document


class _Unsupported(Exception):
    """A value the fast path does not encode (the standard encoder takes over)."""


class _Encoded:
    """JSON text already encoded at the indentation of the place it goes to."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Cached:
    """A value never mutated once stored (a request message), whose text is kept by identity."""

    __slots__ = ("cache", "value")

    def __init__(self, value: Any, cache: dict[tuple[str, int], tuple[Any, str]]) -> None:
        self.value = value
        self.cache = cache


def _float_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return _float_repr(value)


def _write(value: Any, indent: str, out: list[str]) -> None:
    """Append ``value``'s text; the caller has written what precedes it on its line."""
    kind = type(value)
    if kind is str:
        out.append(_encode_str(value))
    elif kind is dict or kind is JsonText:
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        separator = ",\n" + inner
        out.append("{\n" + inner)
        first = True
        for key in sorted(value):
            if type(key) is not str:
                raise _Unsupported
            if first:
                first = False
            else:
                out.append(separator)
            out.append(_encode_str(key) + ": ")
            _write(value[key], inner, out)
        out.append("\n" + indent + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        separator = ",\n" + inner
        out.append("[\n" + inner)
        first = True
        for item in value:
            if first:
                first = False
            else:
                out.append(separator)
            _write(item, inner, out)
        out.append("\n" + indent + "]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(_int_repr(value))
    elif kind is float:
        out.append(_float_text(value))
    elif kind is _Encoded:
        out.append(value.text)
    elif kind is _Cached:
        key = (indent, id(value.value))
        known = value.cache.get(key)
        if known is None or known[0] is not value.value:
            pieces: list[str] = []
            _write(value.value, indent, pieces)
            known = value.cache[key] = (value.value, "".join(pieces))
        out.append(known[1])
    else:
        raise _Unsupported


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)``, byte for byte."""
    out: list[str] = []
    try:
        _write(value, "", out)
    except (_Unsupported, RecursionError):
        # Subclasses, non-str keys, cycles: the standard encoder's rules (and errors) apply.
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return "".join(out)


_SHARED_LISTS = ("messages", "tools")


def _shared_lists(step: Any, cache: dict[tuple[str, int], tuple[Any, str]]) -> Any:
    """``step`` with its ``extra.llm_request`` messages and tools read through ``cache``.

    Each user step carries its whole request, i.e. the conversation so far and the tool
    schemas: without the cache a session's file would encode its early messages once per
    later turn, and the same tools once per turn.
    """
    extra = step.get("extra") if type(step) is dict else None
    if type(extra) is not dict:
        return step
    request = extra.get("llm_request")
    if not isinstance(request, dict):
        return step
    shared = {
        key: [_Cached(item, cache) for item in items]
        for key in _SHARED_LISTS
        if type(items := request.get(key)) is list
    }
    if not shared:
        return step
    return {**step, "extra": {**extra, "llm_request": {**request, **shared}}}


def _stable_key(step: Step) -> int | None:
    """What can still change how a stored ``step`` renders, or None when that is unknown.

    The builder sets a step's fields when it creates it and afterwards only appends tool
    results (with their ancestry and invocation); a result's sub-agents, though, render as
    references that change while those sub-agents run. So a step without sub-agents renders
    the same as long as its result count is the same.
    """
    results = step.results
    for result in results:
        if result.children:
            return None
    return len(results)


Entry = tuple[Any, str, int | None]
"""A step's cached render, its text, and its :func:`_stable_key` when they were made."""


def _encoded_steps(
    node: TrajectoryNode, steps: list[Step], indent: str, path_for: PathFor | None
) -> list[Any]:
    """Each step as its text, reused while the step is known not to have changed.

    A step with the same :func:`_stable_key` as when its text was made is not even rendered
    (a write of a long session is then mostly joining texts); any other step is rendered and
    compared with the cached render, which is cheap: an unchanged step renders to new dicts
    holding the very same payload objects, which compare by identity.
    """
    cache, values = _caches(node)
    out: list[Any] = []
    for index, step in enumerate(steps):
        known = cache.get((indent, index))
        key = _stable_key(step)
        if known is None or key is None or known[2] != key:
            rendered = render_step(index + 1, step, path_for)
            if known is None or known[0] != rendered:
                known = (rendered, _step_text(rendered, indent, values), key)
            else:  # unchanged after all: keep the text, under the step's current key
                known = (known[0], known[1], key)
            cache[indent, index] = known
        out.append(_Encoded(known[1]))
    return out


def _caches(
    node: TrajectoryNode,
) -> tuple[dict[tuple[str, int], Entry], dict[tuple[str, int], tuple[Any, str]]]:
    """The node's step texts and request-message texts (created on first use)."""
    if node.text_cache is None:
        node.text_cache = {}
    if node.value_texts is None:
        node.value_texts = {}
    return node.text_cache, node.value_texts


def _step_text(step: Any, indent: str, values: dict[tuple[str, int], tuple[Any, str]]) -> str:
    pieces: list[str] = []
    _write(_shared_lists(step, values), indent, pieces)
    return "".join(pieces)


def warm_text(
    node: TrajectoryNode, indent: str = "", pause: Callable[[], None] | None = None
) -> None:
    """Encode now the steps a later write would encode, as far as they are settled.

    A session's file is written when the session ends, and the agent waits for that write:
    encoding each step once it stops changing (a user step at once, an agent step once every
    tool call has its result) leaves that write little more than joining texts. Steps are
    checked against the render at write time all the same (see :func:`_encoded_steps`), and
    the embedded layout is the one warmed (``subagents="all"`` files re-encode their own).
    ``pause`` is called before each step is encoded (a worker that shares its CPU).
    """
    step_indent = indent + _STEP_INDENT
    cache, values = _caches(node)
    steps = node.steps
    index = node.warmed
    while index < len(steps):
        step = steps[index]
        if step.source != "user" and len(step.results) < len(step.tool_calls):
            break
        if (step_indent, index) not in cache:
            if pause is not None:
                pause()
            rendered = render_step(index + 1, step)
            try:
                text = _step_text(rendered, step_indent, values)
                cache[step_indent, index] = (rendered, text, _stable_key(step))
            except (_Unsupported, RecursionError):
                break  # the write falls back to json.dumps for this trajectory
        index += 1
    node.warmed = index
    for child in node.children:
        warm_text(child, step_indent, pause)


def _document(
    node: TrajectoryNode, doc: dict[str, Any], indent: str, path_for: PathFor | None
) -> dict[str, Any]:
    doc["steps"] = _encoded_steps(node, doc["steps"], indent + _STEP_INDENT, path_for)
    embedded = doc.get("subagent_trajectories")
    if embedded:
        children = [child for child in node.children if child.steps]
        doc["subagent_trajectories"] = [
            _Encoded(_text(child, child_doc, indent + _STEP_INDENT, path_for))
            for child, child_doc in zip(children, embedded, strict=True)
        ]
    return doc


def _text(node: TrajectoryNode, doc: dict[str, Any], indent: str, path_for: PathFor | None) -> str:
    out: list[str] = []
    _write(_document(node, doc, indent, path_for), indent, out)
    return "".join(out)


def trajectory_text(node: TrajectoryNode, path_for: PathFor | None = None) -> str:
    """``dumps_indented(render_trajectory(node, path_for))``, reusing unchanged steps' text."""
    doc = render_trajectory(node, path_for, steps=False)  # _encoded_steps renders what it must
    try:
        return _text(node, doc, "", path_for)
    except (_Unsupported, RecursionError):
        node.text_cache = node.value_texts = None
        return json.dumps(
            render_trajectory(node, path_for), indent=2, sort_keys=True, ensure_ascii=False
        )
