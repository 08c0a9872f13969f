"""ATOF, ATIF, OTel spans and the hook stream tell the same story of generated sessions.

Hypothesis draws sessions (user turns, parallel ``convert`` batches, delegations, calls
that middleware rewrites and calls that fail); each runs through the real runtime with both
observability plugins and a hook recorder, and every record must agree with the hooks on the
model calls, tool calls, executed arguments, results, statuses, token usage, parent/child
links and times. Model calls carry their own start/end times, so those spans agree to the
microsecond; tool and delegation spans carry the time of their hook call, which the queued
plugins share, so ATOF, ATIF and OTel agree within 1 ms and the recorder (a plain callback
registered last) stamps no earlier.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan
from record_support import (
    BAD_CURRENCY,
    CHILD_MARK,
    TEMPERATURE,
    Recording,
    batch,
    delegate,
    record_session,
)

from wayline.relay.atif.payloads import timestamp_ns

TOLERANCE_NS = 1_000_000  # 1 ms
OUTCOMES = {"ok": "completed", "error": "error"}

Turn = list[tuple[str, list[str]]]  # ("batch" | "delegate", currencies)

currencies = st.lists(st.sampled_from(["EUR", "GBP", "USD", BAD_CURRENCY]), min_size=1, max_size=3)
steps = st.tuples(st.sampled_from(["batch", "delegate"]), currencies)
sessions = st.lists(st.lists(steps, max_size=2), min_size=1, max_size=2)


def script_for(turns: list[Turn]) -> tuple[dict[str, Any], list[str]]:
    """The scripted server's rules and the user messages of a drawn session."""
    children: list[dict[str, Any]] = []
    parent: list[dict[str, Any]] = []
    for t, turn in enumerate(turns):
        for s, (kind, drawn) in enumerate(turn):
            prefix = f"t{t}s{s}"
            if kind == "batch":
                parent.append(batch(prefix, drawn))
            else:
                goal = f"{CHILD_MARK}-{prefix} convert"
                children.append(
                    {
                        "match": {"first_user_contains": goal},
                        "turns": [batch(f"{prefix}c", drawn), {"content": f"{prefix} child"}],
                    }
                )
                parent.append(delegate(f"{prefix}d", goal))
        parent.append({"content": f"turn {t} done"})
    users = [f"user turn {t}" for t in range(len(turns))]
    return {"rules": [*children, {"match": {}, "turns": parent}]}, users


# -- views of each record ------------------------------------------------------------------


@dataclass
class Span:
    """A start/end pair of one record, with its ids and payloads."""

    start: dict[str, Any]
    end: dict[str, Any]

    @property
    def duration_ns(self) -> int:
        """End minus start, from the events' timestamps."""
        start, end = timestamp_ns(self.start["timestamp"]), timestamp_ns(self.end["timestamp"])
        assert start is not None and end is not None
        return end - start


def atof_spans(events: list[dict[str, Any]], category: str) -> dict[str, Span]:
    """ATOF scopes of one category by uuid, start and end paired."""
    starts: dict[str, dict[str, Any]] = {}
    out: dict[str, Span] = {}
    for event in events:
        if event.get("kind") != "scope" or event.get("category") != category:
            continue
        if event["scope_category"] == "start":
            starts[event["uuid"]] = event
        else:
            out[event["uuid"]] = Span(starts.pop(event["uuid"]), event)
    assert not starts, f"{category} scopes never ended: {sorted(starts)}"
    return out


def trajectories(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """An ATIF document and every embedded sub-agent trajectory, depth first."""
    yield doc
    for child in doc.get("subagent_trajectories", []):
        yield from trajectories(child)


def otel_by(spans: list[ReadableSpan], prefix: str, key: str) -> dict[str, ReadableSpan]:
    """Finished spans whose name starts with ``prefix``, by one attribute."""
    found: dict[str, ReadableSpan] = {}
    for span in spans:
        if span.name.startswith(prefix):
            found[str((span.attributes or {})[key])] = span
    return found


def otel_ns(span: ReadableSpan) -> int:
    """A finished span's duration."""
    assert span.start_time is not None and span.end_time is not None
    return span.end_time - span.start_time


def hook_times(recording: Recording, name: str, key: str) -> dict[str, int]:
    """When each payload of hook ``name`` was reported, by one of its fields."""
    return {
        str(payload[key]): at
        for (hook, payload), at in zip(recording.hooks.calls, recording.hooks.times, strict=True)
        if hook == name
    }


def near(a: int, b: int) -> bool:
    """Two durations (ns) within the tolerance."""
    return abs(a - b) <= TOLERANCE_NS


# -- the agreement -------------------------------------------------------------------------


def check_model_calls(recording: Recording) -> None:
    """One llm span / agent step / api span per post_api_request, with its usage and trace."""
    posts = {p["api_request_id"]: p for p in recording.hooks.of("post_api_request")}
    pres = {p["api_request_id"]: p for p in recording.hooks.of("pre_api_request")}
    llm = {
        s.start["metadata"]["api_request_id"]: s
        for s in atof_spans(recording.events, "llm").values()
    }
    apis = otel_by(recording.spans, "api.", "hermes.api_request_id")
    assert set(llm) == set(apis) == set(posts) == set(pres)
    for rid, post in posts.items():
        trace = pres[rid]["middleware_trace"]
        assert llm[rid].start["metadata"]["middleware_trace"] == trace
        # What the agent asked for next to what was sent: cooler() added the temperature.
        assert pres[rid]["original_request_fields"] == {"temperature": None}
        assert llm[rid].start["metadata"]["original_request_fields"] == {"temperature": None}
        assert llm[rid].start["data"]["content"]["temperature"] == TEMPERATURE
        assert llm[rid].end["data"]["usage"]["input_tokens"] == post["usage"]["input_tokens"]
        attrs = apis[rid].attributes or {}
        assert json.loads(str(attrs["wayline.middleware.trace"])) == trace
        assert attrs["gen_ai.request.temperature"] == TEMPERATURE
        assert attrs["llm.token_count.prompt"] == post["usage"]["input_tokens"]
        assert attrs["llm.token_count.completion"] == post["usage"]["output_tokens"]
        assert near(llm[rid].duration_ns, otel_ns(apis[rid]))  # both: started_at..ended_at
    # ATIF: per session, the agent steps are the model calls in order, with their usage.
    for doc in trajectories(recording.atif):
        session = doc["session_id"]
        expected = [
            p["usage"] for p in recording.hooks.of("post_api_request") if p["session_id"] == session
        ]
        agent_steps = [s for s in doc["steps"] if s.get("llm_call_count") == 1]
        assert [
            (s["metrics"]["prompt_tokens"], s["metrics"]["completion_tokens"]) for s in agent_steps
        ] == [(u["input_tokens"], u["output_tokens"]) for u in expected]
        for step in agent_steps:
            assert step["extra"]["middleware_trace"][0]["source"] == "tuner"


def check_tool_calls(recording: Recording) -> None:
    """Every tool call: executed arguments, trace, result, status and duration agree."""
    pres = {p["tool_call_id"]: p for p in recording.hooks.of("pre_tool_call")}
    posts = {p["tool_call_id"]: p for p in recording.hooks.of("post_tool_call")}
    asked = {
        call["id"]: json.loads(call["arguments"])
        for p in recording.hooks.of("post_api_request")
        for call in p["response"]["assistant_message"]["tool_calls"]
    }
    tools = {
        s.start["metadata"]["tool_call_id"]: s
        for s in atof_spans(recording.events, "tool").values()
    }
    spans = otel_by(recording.spans, "tool.", "gen_ai.tool.call.id")
    calls: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {}
    for doc in trajectories(recording.atif):
        for step in doc["steps"]:
            results = {
                r["source_call_id"]: r for r in step.get("observation", {}).get("results", [])
            }
            invocations = {
                i["invocation_id"]: i for i in step.get("extra", {}).get("tool_invocations", [])
            }
            for call in step.get("tool_calls", []):
                cid = call["tool_call_id"]
                calls[cid] = (call, results[cid], invocations[cid])
    assert set(pres) == set(posts) == set(tools) == set(spans) == set(calls) == set(asked)
    started = hook_times(recording, "pre_tool_call", "tool_call_id")
    ended = hook_times(recording, "post_tool_call", "tool_call_id")
    for cid, pre in pres.items():
        post, atof, span, (call, result, invocation) = (
            posts[cid],
            tools[cid],
            spans[cid],
            calls[cid],
        )
        executed, trace = pre["args"], pre.get("middleware_trace") or []
        attrs = span.attributes or {}
        # What ran: the hook's arguments, in every record; the model's stay in ATIF.
        assert atof.start["data"] == executed
        assert json.loads(str(attrs["gen_ai.tool.call.arguments"])) == executed
        assert call["arguments"] == asked[cid]
        if executed != asked[cid]:
            assert call["extra"] == {"executed_arguments": executed, "middleware_trace": trace}
            assert atof.start["metadata"]["original_arguments"] == asked[cid]
            assert json.loads(str(attrs["wayline.middleware.trace"])) == trace
        else:
            assert "extra" not in call
        # What came back, and how it ended.
        assert atof.end["data"] == post["result"] == result["content"]
        assert attrs["gen_ai.tool.call.result"] == post["result"]
        assert atof.end["metadata"]["status"] == post["status"]
        assert attrs["hermes.tool.outcome"] == OUTCOMES[post["status"]]
        assert invocation["status"] == OUTCOMES[post["status"]]
        # When: every record spans pre_tool_call to post_tool_call. The queued plugins share
        # one stamp per hook call (ATOF and OTel agree); the recorder, a plain callback
        # registered last, stamps after them.
        start_ns, end_ns = (
            timestamp_ns(atof.start["timestamp"]),
            timestamp_ns(atof.end["timestamp"]),
        )
        assert start_ns is not None and end_ns is not None
        assert span.start_time is not None and span.end_time is not None
        assert near(start_ns, span.start_time) and near(end_ns, span.end_time)
        assert near(span.end_time - span.start_time, atof.duration_ns)
        assert start_ns <= started[cid] and end_ns <= ended[cid]
        atif_ns = int((invocation["end_timestamp"] - invocation["start_timestamp"]) * 1e9)
        assert near(atif_ns, atof.duration_ns)
        assert post["duration_ms"] * 1_000_000 <= atof.duration_ns + TOLERANCE_NS


def check_delegations(recording: Recording, expected: int) -> None:
    """Each delegation links the same parent and child everywhere, for as long."""
    starts = recording.hooks.of("subagent_start")
    assert len(starts) == expected
    stops = {p["child_session_id"]: p for p in recording.hooks.of("subagent_stop")}
    agents = atof_spans(recording.events, "agent")
    scope_of = {s.start["metadata"]["session_id"]: s for s in agents.values()}
    embedded = {doc["session_id"]: doc for doc in trajectories(recording.atif)}
    subagent_spans = otel_by(recording.spans, "subagent.", "hermes.subagent.child_session_id")
    assert {p["child_session_id"] for p in starts} == set(stops) == set(subagent_spans)
    marks = {
        (event["name"], event["metadata"]["child_session_id"]): timestamp_ns(event["timestamp"])
        for event in recording.events
        if event.get("kind") == "mark" and event["name"].startswith("hermes.subagent.")
    }
    sub_started = hook_times(recording, "subagent_start", "child_session_id")
    sub_stopped = hook_times(recording, "subagent_stop", "child_session_id")
    delegations = {
        s.start["metadata"]["tool_call_id"]: s
        for s in atof_spans(recording.events, "tool").values()
    }
    for start in starts:
        child, parent = start["child_session_id"], start["parent_session_id"]
        # Links: the child's scope under its parent's, its trajectory embedded under the
        # delegating call, its OTel span naming both sessions.
        assert scope_of[child].start["parent_uuid"] == scope_of[parent].start["uuid"]
        assert child in embedded and embedded[child]["agent"]["name"].startswith("wayline/")
        call = start["parent_tool_call_id"]
        refs = [
            ref["trajectory_id"]
            for doc in trajectories(recording.atif)
            for step in doc["steps"]
            for result in step.get("observation", {}).get("results", [])
            if result.get("source_call_id") == call
            for ref in result.get("subagent_trajectory_ref", [])
        ]
        assert refs == [embedded[child]["trajectory_id"]]
        attrs = subagent_spans[child].attributes or {}
        assert attrs["hermes.subagent.parent_session_id"] == parent
        assert attrs["gen_ai.tool.call.id"] == call
        # When: ATOF's start/stop marks and the OTel span are stamped as the hooks came (in
        # plugin order); the runtime's duration_ms (whole ms) lies within the marks, and
        # the child's own scope between them.
        begun = marks["hermes.subagent.start", child]
        stopped = marks["hermes.subagent.stop", child]
        assert begun is not None and stopped is not None
        span = subagent_spans[child]
        assert span.start_time is not None and span.end_time is not None
        assert begun <= span.start_time <= sub_started[child]
        assert stopped <= span.end_time <= sub_stopped[child]
        assert stops[child]["duration_ms"] * 1_000_000 <= stopped - begun + TOLERANCE_NS
        child_start = timestamp_ns(scope_of[child].start["timestamp"])
        child_end = timestamp_ns(scope_of[child].end["timestamp"])
        assert child_start is not None and child_end is not None
        assert begun <= child_start <= child_end <= stopped + TOLERANCE_NS
        assert delegations[call].duration_ns + TOLERANCE_NS >= stopped - begun


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(turns=sessions)
def test_every_record_agrees_with_the_hooks(turns: list[Turn]) -> None:
    """Generated sessions: ATOF, ATIF and OTel agree with the hook stream on model calls, tool
    calls (executed arguments, results, statuses), usage, parent/child links and durations."""
    script, users = script_for(turns)
    with tempfile.TemporaryDirectory() as tmp:
        recording = record_session(Path(tmp), script, users)
    check_model_calls(recording)
    check_tool_calls(recording)
    check_delegations(recording, sum(kind == "delegate" for turn in turns for kind, _ in turn))
