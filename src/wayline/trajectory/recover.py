"""Tool results a recording lost, recovered from the model requests it kept.

Hermes' bundled NeMo Relay plugin on nemo-relay 0.10.4 writes no tool end events (Relay's
``tools.call_end`` rejects the raw result), so its ATIF has tool calls without observations.
The results are not gone: the next model request carried each one to the model as a ``tool``
message, and Relay keeps that request in the step's ``extra.llm_request``. A replay serves and
compares those texts. They are the results as the model saw them, after the recording host's
``transform_tool_result`` hooks.

A result recorded only as a ``subagent_trajectory_ref`` (Relay's delegation result) stays as
it is: the subagent's own steps are what a replay compares there.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from wayline.trajectory.load import (
    JsonDict,
    NotTextError,
    result_text,
    results_by_call,
    steps_of,
    text_of,
)

RECOVERED_FROM = "extra.llm_request"


def recover_results(traj: Mapping[str, Any]) -> tuple[JsonDict, list[str]]:
    """A copy of ``traj`` with lost tool results filled in from later requests, and notes.

    Each filled result carries ``extra.recovered_from = "extra.llm_request"``. The notes say,
    per trajectory, which calls were filled and which are compared through their subagents.
    """
    doc: JsonDict = copy.deepcopy(dict(traj))
    notes: list[str] = []
    _recover(doc, "main", notes)
    return doc, notes


def _recover(traj: JsonDict, label: str, notes: list[str]) -> None:
    steps = steps_of(traj)
    filled: list[str] = []
    by_ref: list[str] = []
    lost: list[str] = []
    for i, step in enumerate(steps):
        results = results_by_call(step)
        for j, call in enumerate(step.get("tool_calls") or []):
            call_id = call.get("tool_call_id")
            result = results.get(j)
            if result is not None and result_text(result) is not None:
                continue
            named = f"{call_id} ({call.get('function_name')})"
            if result is not None and result.get("subagent_trajectory_ref"):
                by_ref.append(named)
                continue
            text = _sent_result(steps, i, call_id) if isinstance(call_id, str) else None
            if text is None:
                lost.append(named)
                continue
            filled.append(named)
            extra = {"recovered_from": RECOVERED_FROM}
            if isinstance(result, dict):
                result["content"] = text
                old = result.get("extra")
                result["extra"] = {**(old if isinstance(old, dict) else {}), **extra}
            else:
                observation = step.setdefault("observation", {"results": []})
                observation.setdefault("results", []).append(
                    {"source_call_id": call_id, "content": text, "extra": extra}
                )
    if filled:
        notes.append(
            f"{label}: no result recorded for {', '.join(filled)}; served and compared from "
            f"the tool messages of later model requests ({RECOVERED_FROM})"
        )
    if by_ref:
        notes.append(
            f"{label}: {', '.join(by_ref)} recorded only a subagent reference, no result "
            "text; compared through the subagent's steps"
        )
    if lost:
        notes.append(f"{label}: no result recorded anywhere for {', '.join(lost)}")
    for sub in traj.get("subagent_trajectories") or ():
        if isinstance(sub, dict):
            name = sub.get("trajectory_id") or sub.get("session_id") or "?"
            _recover(sub, f"subagent {name}", notes)


def _sent_result(steps: list[JsonDict], after: int, call_id: str) -> str | None:
    """The text of the ``tool`` message for ``call_id`` in the first later request holding one.

    The last such message of that request is taken: a request repeats the whole history,
    and an id a host reuses across turns names the latest call there.
    """
    for step in steps[after + 1 :]:
        extra = step.get("extra")
        request = extra.get("llm_request") if isinstance(extra, Mapping) else None
        messages = request.get("messages") if isinstance(request, Mapping) else None
        found: str | None = None
        for message in messages if isinstance(messages, list) else ():
            if (
                isinstance(message, Mapping)
                and message.get("role") == "tool"
                and message.get("tool_call_id") == call_id
            ):
                found = _message_text(message.get("content"))
        if found is not None:
            return found
    return None


def _message_text(content: Any) -> str | None:
    # Only text: an image a tool returned cannot be served back as a recorded text result.
    if not isinstance(content, str | list):
        return None
    try:
        return text_of(content, strict=True)
    except NotTextError:
        return None


__all__ = ["RECOVERED_FROM", "recover_results"]
