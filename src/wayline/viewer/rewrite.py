"""Middleware decisions for the page: which tool calls ran with other arguments, who, and why.

A rewritten tool call in an ATIF document keeps the model's ``arguments`` and carries
``extra.executed_arguments`` and ``extra.middleware_trace`` (a list of entries naming the
middleware and its reason); an agent step may carry its request's ``extra.middleware_trace``.
Every field is optional: documents from other producers, or written before these fields existed,
simply show no mark.
"""

from __future__ import annotations

import json
from typing import Any

JsonDict = dict[str, Any]
_NAMED = ("source", "name", "middleware", "plugin")  # who, in the order a label prefers them
_MAX_CHANGES = 50  # a page lists this many changed paths of one call, then a count


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def trace_entries(value: Any) -> list[JsonDict]:
    """A ``middleware_trace`` as a list of ``{"who": …, "why": …, "more": {…}}`` (text only).

    ``who`` joins the entry's source/name fields, ``why`` is its reason, and every other field
    (what changed, a decision) is kept as text under ``more``. Entries that are no objects are
    shown as text under ``why``.
    """
    if not isinstance(value, list):
        return []
    out: list[JsonDict] = []
    for entry in value:
        if not isinstance(entry, dict):
            out.append({"who": "?", "why": _text(entry)})
            continue
        names: list[str] = []
        for key in _NAMED:
            name = entry.get(key)
            if isinstance(name, str) and name and name not in names:
                names.append(name)
        item: JsonDict = {"who": " · ".join(names) or "?"}
        reason = entry.get("reason")
        if reason is not None:
            item["why"] = _text(reason)
        more = {
            str(key): _text(v)
            for key, v in entry.items()
            if key not in _NAMED and key != "reason" and v is not None
        }
        if more:
            item["more"] = more
        out.append(item)
    return out


def changes(before: Any, after: Any, path: str = "") -> list[str]:
    """The paths where ``after`` differs from ``before``, as ``path: old → new`` lines."""
    if isinstance(before, dict) and isinstance(after, dict):
        lines: list[str] = []
        for key in list(before) + [k for k in after if k not in before]:
            where = f"{path}.{key}" if path else str(key)
            if key not in after:
                lines.append(f"{where}: {_text(before[key])} → (removed)")
            elif key not in before:
                lines.append(f"{where}: (added) → {_text(after[key])}")
            else:
                lines.extend(changes(before[key], after[key], where))
        return lines
    if before == after and type(before) is type(after):
        return []
    return [f"{path or '(arguments)'}: {_text(before)} → {_text(after)}"]


def call_rewrite(raw_call: JsonDict) -> JsonDict:
    """Page fields of a tool call that middleware rewrote or decided on; ``{}`` when none.

    ``xa``: the executed arguments (indented JSON) when they differ from the model's;
    ``dx``: the changed paths; ``mt``: the trace entries (:func:`trace_entries`).
    """
    extra = raw_call.get("extra")
    if not isinstance(extra, dict):
        return {}
    out: JsonDict = {}
    if "executed_arguments" in extra:
        executed = extra["executed_arguments"]
        diff = changes(raw_call.get("arguments"), executed)
        if diff:
            out["xa"] = json.dumps(executed, indent=2, ensure_ascii=False, default=str)
            if len(diff) > _MAX_CHANGES:
                diff = [*diff[:_MAX_CHANGES], f"… {len(diff) - _MAX_CHANGES} more changes"]
            out["dx"] = diff
    trace = trace_entries(extra.get("middleware_trace"))
    if trace:
        out["mt"] = trace
    return out


__all__ = ["call_rewrite", "changes", "trace_entries"]
