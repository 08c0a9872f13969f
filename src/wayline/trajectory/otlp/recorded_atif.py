"""An ATIF trajectory turned back into the hook calls it stands for (see :mod:`.recorded`).

ATIF keeps less than ATOF. What is used: the session id and model, each user step (a turn's
start), each agent step (one provider attempt: its ``extra.invocation`` times and status, its
``extra.llm_response``), its tool calls with their ``extra.tool_invocations`` times and their
observation results (whose ``extra.metadata`` holds the turn and attempt ids the hooks
carried), and embedded subagent trajectories, replayed where their delegating call ran.
Ids the file does not hold are made from positions (``{session}:turn:{n}``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from wayline.trajectory.otlp.recorded import HookCall, answer_counts, response_and_usage

__all__ = ["trajectory_hooks"]

_TOOL_STATUS = {"completed": "ok", "error": "error", "cancelled": "cancelled"}


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _ns_of_text(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
    except ValueError:
        return None


def _ns_of_seconds(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return int(value * 1e9)
    return None


class _Trajectory:
    """Walks one trajectory, keeping the clock monotonic and the turn open between steps."""

    def __init__(self, doc: Mapping[str, Any], embedded: dict[str, Mapping[str, Any]]) -> None:
        self.doc = doc
        self.embedded = embedded
        self.sid = str(doc.get("session_id") or doc.get("trajectory_id") or "session")
        self.model = _dict(doc.get("agent")).get("model_name")
        self.ns = 0
        self.turn: str | None = None
        self.turns = 0
        self.attempts = 0
        self.answer: Any = None
        # How the open turn ended, when its last model call failed: "interrupted" (a
        # cancelled turn) or "api_error"; None while it goes well.
        self.failed: str | None = None
        # How the turn ended as its user step records it (wayline's relay plugin writes it).
        self.outcome: dict[str, Any] = {}

    def at(self, *candidates: int | None) -> int:
        for ns in candidates:
            if ns is not None:
                self.ns = max(self.ns, ns)
                return self.ns
        return self.ns

    def base(self, **more: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"session_id": self.sid}
        if self.model:
            out["model"] = self.model
        if self.turn is not None:
            out["turn_id"] = self.turn
        out.update({k: v for k, v in more.items() if v is not None})
        return out

    def hooks(self, extra_start: Mapping[str, Any] | None = None) -> Iterator[HookCall]:
        steps = [s for s in self.doc.get("steps") or () if isinstance(s, Mapping)]
        first = _ns_of_text(steps[0].get("timestamp")) if steps else None
        yield "on_session_start", self.base(**dict(extra_start or {})), self.at(first)
        for step in steps:
            if step.get("source") == "user":
                yield from self.end_turn()
                yield from self.user(step)
            elif step.get("source") == "agent":
                yield from self.agent(step)
        yield from self.end_turn()
        yield "on_session_finalize", {"session_id": self.sid}, self.at()

    def turn_id_in(self, step: Mapping[str, Any]) -> str | None:
        for result in _dict(step.get("observation")).get("results") or ():
            turn = _dict(_dict(_dict(result).get("extra")).get("metadata")).get("turn_id")
            if isinstance(turn, str):
                return turn
        return None

    def user(self, step: Mapping[str, Any]) -> Iterator[HookCall]:
        self.turns += 1
        self.attempts = 0
        told = _dict(_dict(step.get("extra")).get("turn_outcome"))
        self.outcome = {k: told[k] for k in ("completed", "interrupted", "reason") if k in told}
        later = [s for s in self.doc.get("steps") or () if isinstance(s, Mapping)]
        index = later.index(step) if step in later else 0
        recorded = next(
            (t for s in later[index + 1 :] if (t := self.turn_id_in(s)) is not None), None
        )
        own = _dict(step.get("extra")).get("turn_id")
        self.turn = own if isinstance(own, str) else recorded or f"{self.sid}:turn:{self.turns}"
        ns = self.at(_ns_of_text(step.get("timestamp")))
        yield "pre_llm_call", self.base(user_message=step.get("message")), ns

    def end_turn(self) -> Iterator[HookCall]:
        if self.turn is None:
            return
        yield "post_llm_call", self.base(assistant_response=self.answer), self.at()
        failed = self.failed
        outcome = self.outcome or {
            "completed": failed is None,
            "interrupted": failed == "interrupted",
            "reason": failed or "completed",
        }
        yield "on_session_end", self.base(**outcome), self.at()
        self.turn = None
        self.answer = None
        self.failed = None
        self.outcome = {}

    def agent(self, step: Mapping[str, Any]) -> Iterator[HookCall]:
        if self.turn is None:  # an agent step before any user step still has a turn
            self.turns += 1
            self.turn = f"{self.sid}:turn:{self.turns}"
            yield "pre_llm_call", self.base(), self.at(_ns_of_text(step.get("timestamp")))
        extra = _dict(step.get("extra"))
        invocation = _dict(extra.get("invocation"))
        results = _dict(step.get("observation")).get("results") or []
        metas = [_dict(_dict(_dict(r).get("extra")).get("metadata")) for r in results]
        rid = next((m["api_request_id"] for m in metas if m.get("api_request_id")), None)
        self.attempts += 1
        rid = rid or f"{self.turn}:api:{self.attempts}"
        start = self.at(_ns_of_seconds(invocation.get("start_timestamp")))
        pre = self.base(api_request_id=rid, api_call_count=self.attempts, started_at=start / 1e9)
        if extra.get("middleware_trace"):
            pre["middleware_trace"] = extra["middleware_trace"]
        yield "pre_api_request", pre, start
        end = self.at(
            _ns_of_seconds(invocation.get("end_timestamp")), _ns_of_text(step.get("timestamp"))
        )
        timing = {
            "started_at": start / 1e9,
            "ended_at": end / 1e9,
            "api_duration": (end - start) / 1e9,
        }
        if invocation.get("status") == "error":
            # The relay plugin keeps the hook's error as the step's llm_response.
            recorded = _dict(_dict(extra.get("llm_response")).get("error"))
            error = {
                "type": str(recorded.get("type") or "error"),
                "message": str(recorded.get("message") or extra.get("error") or "error"),
            }
            more = {
                k: recorded[k]
                for k in ("reason", "status_code", "retry_count", "retryable")
                if recorded.get(k) is not None
            }
            self.failed = "interrupted" if recorded.get("reason") == "interrupted" else "api_error"
            failure = self.base(api_request_id=rid, error=error, **more, **timing)
            yield "api_request_error", failure, end
            return
        self.failed = None
        response, usage = response_and_usage(extra.get("llm_response"))
        post = self.base(api_request_id=rid, response=response, usage=usage, **timing)
        if isinstance(response, Mapping):
            post["finish_reason"] = response.get("finish_reason")
            post["response_model"] = response.get("model") or step.get("model_name")
            post.update(answer_counts(response))
        yield "post_api_request", post, end
        self.answer = step.get("message")
        yield from self.tools(step, extra, rid)

    def tools(
        self, step: Mapping[str, Any], extra: Mapping[str, Any], rid: str
    ) -> Iterator[HookCall]:
        results = {
            r.get("source_call_id"): r
            for r in _dict(step.get("observation")).get("results") or ()
            if isinstance(r, Mapping)
        }
        invocations = {
            i.get("invocation_id"): i
            for i in extra.get("tool_invocations") or ()
            if isinstance(i, Mapping)
        }
        # A step's calls may have run in parallel: each is timed from the step's start, not
        # after the call before it, so their spans overlap as the calls did.
        step_ns = latest = self.ns
        for call in step.get("tool_calls") or ():
            if not isinstance(call, Mapping):
                continue
            self.ns = step_ns
            call_id = call.get("tool_call_id")
            name = call.get("function_name")
            timing = _dict(invocations.get(call_id))
            start = self.at(_ns_of_seconds(timing.get("start_timestamp")))
            common = self.base(api_request_id=rid, tool_name=name, tool_call_id=call_id)
            # What ran: the arguments after request middleware, and who changed them.
            call_extra = _dict(call.get("extra"))
            pre = {**common, "args": call_extra.get("executed_arguments", call.get("arguments"))}
            if call_extra.get("middleware_trace"):
                pre["middleware_trace"] = call_extra["middleware_trace"]
            yield "pre_tool_call", pre, start
            result = _dict(results.get(call_id))
            for ref in result.get("subagent_trajectory_ref") or ():
                yield from self.child(_dict(ref), call_id)
            end = self.at(_ns_of_seconds(timing.get("end_timestamp")))
            status = _TOOL_STATUS.get(str(timing.get("status")), "ok")
            done = {**common, "result": result.get("content"), "status": status}
            done["duration_ms"] = (end - start) // 1_000_000
            latest = max(latest, self.ns)
            yield "post_tool_call", done, end
        self.ns = latest

    def child(self, ref: Mapping[str, Any], call_id: Any) -> Iterator[HookCall]:
        key = ref.get("trajectory_id") or ref.get("session_id")
        doc = self.embedded.get(str(key)) if key else None
        if doc is None:
            return
        child = _Trajectory(doc, self.embedded)
        child.ns = self.ns
        # The relay plugin names a child agent "{parent agent}/{role}".
        agent_name = str(_dict(doc.get("agent")).get("name") or "")
        role = agent_name.rpartition("/")[2] if "/" in agent_name else "subagent"
        link = {
            "parent_session_id": self.sid,
            "parent_turn_id": self.turn,
            "parent_tool_call_id": call_id,
            "child_session_id": child.sid,
            "child_role": role,
        }
        yield "subagent_start", dict(link), self.at()
        yield from child.hooks()
        self.ns = max(self.ns, child.ns)
        yield "subagent_stop", {**link, "child_status": "completed"}, self.at()


def _index(doc: Mapping[str, Any], found: dict[str, Mapping[str, Any]]) -> None:
    for sub in doc.get("subagent_trajectories") or ():
        if isinstance(sub, Mapping):
            for key in ("trajectory_id", "session_id"):
                value = sub.get(key)
                if isinstance(value, str) and value:
                    found.setdefault(value, sub)
            _index(sub, found)


def trajectory_hooks(document: Mapping[str, Any]) -> Iterator[HookCall]:
    """The hook calls of an ATIF trajectory and of the subagents embedded in it."""
    embedded: dict[str, Mapping[str, Any]] = {}
    _index(document, embedded)
    yield from _Trajectory(document, embedded).hooks()
