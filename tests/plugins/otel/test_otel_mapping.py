"""Seed 003's hook → span mapping, row by row, through real runtime runs (in-memory export).

Each test drives the real agent against the scripted OpenAI-compatible server with the
plugin subscribed to the runtime's hook bus, then checks span names, parent links, key
attributes, status and the metric points the row produces.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind
from otel_support import (
    DANGEROUS,
    DELEGATE_PARALLEL,
    GOAL,
    TERMINAL_THEN_PARALLEL,
    attrs,
    is_error,
    is_ok,
    points_named,
    value,
)

from wayline.runtime.approvals import Approver

PLAIN = {"default": {"content": "ok"}}
# The explicit bucket boundaries the GenAI semantic conventions give for
# gen_ai.client.token.usage and gen_ai.client.operation.duration (seconds).
SEMCONV_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
SEMCONV_TOKEN_BUCKETS_TOP = (16777216, 67108864)
SEMCONV_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24)
SEMCONV_DURATION_BUCKETS_TOP = (20.48, 40.96, 81.92)


def test_session_start_opens_agent_root_and_session_end_closes_it(
    otel_runtime: Any, workdir: Path
) -> None:
    """on_session_start/on_session_end: one `agent` root per turn with the turn summary."""
    rt, otel = otel_runtime(PLAIN)
    agent = rt.agent(cwd=workdir)
    agent.run_turn("hello")
    agent.run_turn("again")
    agent.finalize()
    view = otel.spans()
    roots = view.named("agent")
    assert len(roots) == 2 and all(r.parent is None for r in roots)
    assert len(view.traces()) == 2, "one trace per turn"
    first, second = (attrs(r) for r in roots)
    for a in (first, second):
        assert a["session.id"] == a["gen_ai.conversation.id"] == agent.session_id
        assert a["gen_ai.operation.name"] == "invoke_agent"
        assert a["gen_ai.agent.name"] == "wayline"
        assert a["openinference.span.kind"] == "AGENT"
        assert a["hermes.session.kind"] == "agent"
        assert a["hermes.turn.final_status"] == "completed"
        assert a["hermes.turn.api_call_count"] == 1 and a["hermes.turn.tool_count"] == 0
        assert a["gen_ai.request.model"] == "scripted-model"
    # on_session_start fires once per session: the second turn's root is synthesized.
    assert "hermes.session.synthesized" not in first
    assert second["hermes.session.synthesized"] is True
    assert first["input.value"] == "hello" and first["output.value"] == "ok"
    assert all(is_ok(r) for r in roots)
    assert value(otel.points(), "hermes.sessions", kind="agent", final_status="completed") == 2


def test_cron_session_gets_a_cron_root(make_otel: Any) -> None:
    """A scheduled run (platform / job id) is rooted at `cron` instead of `agent`."""
    otel = make_otel()
    obs = otel.observer
    obs.on_session_start(session_id="s-cron", platform="cron", model="m")
    obs.pre_llm_call(session_id="s-cron", turn_id="s-cron:t:1", model="m", user_message="tick")
    obs.on_session_end(session_id="s-cron", turn_id="s-cron:t:1", completed=True)
    obs.pre_llm_call(session_id="s-job", turn_id="s-job:t:1", model="m", job_id="nightly")
    obs.on_session_end(session_id="s-job", turn_id="s-job:t:1", completed=True)
    view = otel.spans()
    assert [r.name for r in view.roots()] == ["cron", "cron"]
    assert attrs(view.roots()[1])["hermes.cron.job_id"] == "nightly"
    assert value(otel.points(), "hermes.sessions", kind="cron", final_status="completed") == 2


def test_llm_span_is_child_of_root(otel_runtime: Any, workdir: Path) -> None:
    """pre_llm_call/post_llm_call: `llm.{model}` under the root, with input and output."""
    rt, otel = otel_runtime(PLAIN)
    rt.agent(cwd=workdir).run_turn("what is up")
    view = otel.spans()
    llm = view.one("llm.scripted-model")
    assert view.parent(llm) is view.one("agent")
    a = attrs(llm)
    assert a["openinference.span.kind"] == "LLM" and a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == a["llm.model_name"] == "scripted-model"
    assert a["input.value"] == "what is up" and a["output.value"] == "ok"
    assert is_ok(llm)


def test_api_span_usage_and_token_metrics(otel_runtime: Any, workdir: Path) -> None:
    """pre/post_api_request: `api.{model}` under llm (CLIENT, OK) with usage in both conventions."""
    rt, otel = otel_runtime(PLAIN)
    rt.agent(cwd=workdir).run_turn("hi")
    view = otel.spans()
    api = view.one("api.scripted-model")
    assert view.parent(api) is view.one("llm.scripted-model")
    assert api.kind is SpanKind.CLIENT and is_ok(api)
    a = attrs(api)
    assert a["llm.token_count.prompt"] == a["gen_ai.usage.input_tokens"] > 0
    assert a["llm.token_count.completion"] == a["gen_ai.usage.output_tokens"] > 0
    assert (
        a["llm.token_count.total"]
        == a["gen_ai.usage.input_tokens"] + a["gen_ai.usage.output_tokens"]
    )
    assert list(a["gen_ai.response.finish_reasons"]) == ["stop"]
    assert a["gen_ai.response.model"] and a["server.address"] == "127.0.0.1"
    assert a["hermes.api_call_count"] == 1 and "llm.response.duration_ms" in a
    points = otel.points()
    assert (
        value(points, "hermes.tokens.prompt", model="scripted-model")
        == a["gen_ai.usage.input_tokens"]
    )
    assert value(points, "hermes.api.duration", model="scripted-model") == 1
    usage = points_named(points, "gen_ai.client.token.usage")
    assert {p.attributes["gen_ai.token.type"] for p in usage} == {"input", "output"}
    assert all(p.attributes["gen_ai.operation.name"] == "chat" for p in usage)
    assert tuple(usage[0].raw.explicit_bounds) == SEMCONV_TOKEN_BUCKETS + SEMCONV_TOKEN_BUCKETS_TOP
    (duration,) = points_named(points, "gen_ai.client.operation.duration")
    assert (
        tuple(duration.raw.explicit_bounds)
        == SEMCONV_DURATION_BUCKETS + SEMCONV_DURATION_BUCKETS_TOP
    )
    assert duration.unit == "s"


def test_api_error_closes_attempt_as_error_then_retry_succeeds(
    otel_runtime: Any, workdir: Path
) -> None:
    """api_request_error: the failed attempt ends ERROR with an exception event; retry is OK."""
    rt, otel = otel_runtime(
        {"default": {"content": "ok", "fault": {"status": 500, "times": 1}}},
        runtime={"max_retries": 2},
    )
    rt.agent(cwd=workdir).run_turn("hi")
    view = otel.spans()
    failed, retried = view.named("api.scripted-model")
    llm = view.one("llm.scripted-model")
    assert view.parent(failed) is llm and view.parent(retried) is llm
    assert attrs(failed)["hermes.api_request_id"] == attrs(retried)["hermes.api_request_id"]
    assert is_error(failed) and is_ok(retried)
    a = attrs(failed)
    assert a["error.type"] == "InternalServerError"
    assert a["http.response.status_code"] == a["gen_ai.response.status_code"] == 500
    assert a["hermes.retry.count"] == 0 and a["hermes.max_retries"] == 2
    assert a["hermes.retryable"] is True
    (event,) = [e for e in failed.events if e.name == "exception"]
    assert event.attributes is not None
    assert event.attributes["exception.type"] == "InternalServerError"
    assert event.attributes["exception.escaped"] is False
    assert is_ok(view.one("agent"))  # the turn recovered
    points = otel.points()
    assert (
        value(
            points,
            "hermes.api.error.count",
            error_type="InternalServerError",
            status_class="5xx",
            retryable=True,
        )
        == 1
    )
    assert value(points, "hermes.retry.count") == 1
    errored = [
        p
        for p in points_named(points, "gen_ai.client.operation.duration")
        if p.attributes.get("error.type") == "InternalServerError"
    ]
    assert len(errored) == 1


def test_final_api_failure_marks_turn_incomplete(otel_runtime: Any, workdir: Path) -> None:
    """An API failure that ends the turn: every attempt ERROR, root ERROR with error.type."""
    rt, otel = otel_runtime(
        {"default": {"content": "x", "fault": {"status": 500}}}, runtime={"max_retries": 1}
    )
    rt.agent(cwd=workdir).run_turn("hi")
    view = otel.spans()
    attempts = view.named("api.scripted-model")
    assert len(attempts) == 2 and all(is_error(s) for s in attempts)
    escaped = [e.attributes["exception.escaped"] for s in attempts for e in s.events]  # type: ignore[index]
    assert escaped == [False, True]
    root = view.one("agent")
    assert is_error(root)
    assert attrs(root)["hermes.turn.final_status"] == "incomplete"
    assert attrs(root)["error.type"] == "InternalServerError"
    assert value(otel.points(), "hermes.sessions", final_status="incomplete") == 1


def test_api_error_without_open_span_creates_api_error(make_otel: Any) -> None:
    """api_request_error with no in-flight attempt opens and closes a short `api.error` span."""
    otel = make_otel()
    obs = otel.observer
    obs.pre_llm_call(session_id="s1", turn_id="s1:t:1", model="m", user_message="hi")
    obs.api_request_error(
        session_id="s1",
        turn_id="s1:t:1",
        api_request_id="s1:t:1:api:1",
        model="m",
        provider="custom",
        status_code=None,
        retryable=False,
        reason="timeout",
        error={"type": "APITimeoutError", "message": "timed out"},
    )
    obs.on_session_end(session_id="s1", turn_id="s1:t:1", completed=False, interrupted=False)
    view = otel.spans()
    err = view.one("api.error")
    assert view.parent(err) is view.one("llm.m")
    assert is_error(err) and attrs(err)["error.type"] == "APITimeoutError"
    assert [e.name for e in err.events] == ["exception"]
    assert (
        value(
            otel.points(), "hermes.api.error.count", error_type="APITimeoutError", retryable=False
        )
        == 1
    )


def test_tool_spans_hang_under_their_api_span(otel_runtime: Any, workdir: Path) -> None:
    """pre/post_tool_call: each `tool.{name}` is a child of the api span that asked for it."""
    rt, otel = otel_runtime(TERMINAL_THEN_PARALLEL)
    rt.agent(cwd=workdir).run_turn("go")
    view = otel.spans()
    api1, api2, api3 = view.named("api.scripted-model")
    terminal = view.one("tool.terminal")
    reads = view.named("tool.read_file")
    assert view.parent(terminal) is api1
    assert [view.parent(r) for r in reads] == [api2, api2]
    assert view.children(api3) == []
    t = attrs(terminal)
    assert t["tool.name"] == t["gen_ai.tool.name"] == "terminal"
    assert t["gen_ai.tool.call.id"] == "call_t" and t["gen_ai.operation.name"] == "execute_tool"
    assert t["openinference.span.kind"] == "TOOL"
    assert json.loads(str(t["input.value"])) == {"command": "echo hi"}
    assert t["hermes.tool.command"] == "echo hi"
    assert json.loads(str(t["output.value"]))["output"] == "hi"
    assert t["hermes.tool.outcome"] == "completed" and is_ok(terminal)
    assert {attrs(r)["hermes.tool.target"] for r in reads} == {"a.txt", "b.txt"}
    root = attrs(view.one("agent"))
    assert root["hermes.turn.tool_count"] == 3
    assert root["hermes.turn.tools"] == "terminal,read_file,read_file"
    assert root["hermes.turn.tool_outcomes"] == "completed=3"
    points = otel.points()
    assert value(points, "hermes.tool.calls", tool_name="read_file", outcome="completed") == 2
    assert value(points, "hermes.tool.duration", tool_name="terminal", outcome="completed") == 1


@pytest.mark.parametrize(
    ("status", "outcome", "error"),
    [
        ("ok", "completed", False),
        ("error", "error", True),
        ("blocked", "blocked", False),
        ("timeout", "timeout", False),
        ("cancelled", "cancelled", False),
    ],
)
def test_tool_status_rules(make_otel: Any, status: str, outcome: str, error: bool) -> None:
    """Only an `error` outcome is ERROR; blocked, timeout and cancelled tools stay OK."""
    otel = make_otel()
    obs = otel.observer
    ids = {"session_id": "s", "turn_id": "s:t:1", "api_request_id": "s:t:1:api:1"}
    obs.pre_llm_call(**ids, model="m")
    obs.pre_api_request(**ids, model="m")
    obs.post_api_request(**ids, model="m", usage={"input_tokens": 3, "output_tokens": 2})
    call = {**ids, "tool_name": "terminal", "tool_call_id": "c1", "args": {"command": "x"}}
    obs.pre_tool_call(**call)
    obs.post_tool_call(**call, result="{}", status=status, duration_ms=5, error_message="why")
    view = otel.spans()
    tool = view.one("tool.terminal")
    assert view.parent(tool) is view.one("api.m")
    assert attrs(tool)["hermes.tool.outcome"] == outcome
    assert is_error(tool) is error and is_ok(tool) is not error
    assert value(otel.points(), "hermes.tool.calls", tool_name="terminal", outcome=outcome) == 1


def test_blocked_and_failed_tools_from_the_runtime(otel_runtime: Any, workdir: Path) -> None:
    """A pre_tool_call block stays OK (outcome blocked); an unknown tool is an ERROR span."""
    script = {
        "rules": [
            {
                "match": {},
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "terminal", "arguments": {"command": "echo no"}},
                            {"name": "no_such_tool", "arguments": {}},
                        ]
                    },
                    {"content": "ok"},
                ],
            }
        ]
    }
    rt, otel = otel_runtime(script)

    def block(**kw: Any) -> Any:
        return {"action": "block", "message": "not now"} if kw["tool_name"] == "terminal" else None

    rt.manager.hooks.register("pre_tool_call", block, "policy")
    rt.agent(cwd=workdir).run_turn("go")
    view = otel.spans()
    blocked, unknown = view.one("tool.terminal"), view.one("tool.no_such_tool")
    assert attrs(blocked)["hermes.tool.outcome"] == "blocked" and is_ok(blocked)
    assert attrs(unknown)["hermes.tool.outcome"] == "error" and is_error(unknown)
    assert attrs(unknown)["error.type"] == "unknown_tool"


def test_subagent_span_and_child_root_nesting(otel_runtime: Any, workdir: Path) -> None:
    """subagent_start/stop: `subagent.leaf` under the api span; the child's root nests in it."""
    rt, otel = otel_runtime(DELEGATE_PARALLEL)
    agent = rt.agent(cwd=workdir)
    assert agent.run_turn("delegate please").text == "parent done"
    view = otel.spans()
    assert len(view.traces()) == 1, view.tree()
    parent_root, child_root = view.named("agent")
    delegation = view.one("subagent.leaf")
    first_api = view.children(view.children(parent_root)[0], "api.scripted-model")[0]
    assert view.parent(delegation) is first_api
    assert view.parent(child_root) is delegation
    assert view.parent(view.one("tool.delegate_task")) is first_api
    d = attrs(delegation)
    assert d["gen_ai.operation.name"] == "invoke_agent" and d["gen_ai.agent.name"] == "leaf"
    assert d["hermes.subagent.parent_session_id"] == agent.session_id
    assert d["hermes.subagent.child_session_id"] == attrs(child_root)["session.id"]
    assert d["gen_ai.tool.call.id"] == "call_delegate"
    assert d["hermes.subagent.goal"] == GOAL and d["input.value"] == GOAL
    assert d["hermes.subagent.status"] == "completed" and is_ok(delegation)
    assert d["output.value"] == "child read alpha and beta"
    c = attrs(child_root)
    assert c["hermes.session.is_subagent"] is True and c["hermes.subagent.role"] == "leaf"
    assert c["hermes.subagent.parent_session_id"] == agent.session_id
    points = otel.points()
    assert value(points, "hermes.subagent.count", role="leaf", status="completed") == 1
    assert value(points, "hermes.subagent.duration", role="leaf") == 1


@pytest.mark.parametrize(
    ("status", "error"),
    [
        ("error", True),
        ("failed", True),
        ("cancelled", True),
        ("timeout", True),
        ("completed", False),
        ("interrupted", False),
        (None, False),
    ],
)
def test_subagent_status_rules(make_otel: Any, status: str | None, error: bool) -> None:
    """Failure-like child statuses make the delegation span ERROR; others (or none) stay OK."""
    otel = make_otel()
    obs = otel.observer
    obs.pre_llm_call(session_id="p", turn_id="p:t:1", model="m")
    obs.subagent_start(
        parent_session_id="p", parent_turn_id="p:t:1", child_session_id="c", child_role="leaf"
    )
    # Hermes' subagent_stop carries no child_subagent_id; the child session id is the key.
    obs.subagent_stop(
        parent_session_id="p",
        child_session_id="c",
        child_role="leaf",
        child_status=status,
        duration_ms=12,
    )
    span = otel.spans().one("subagent.leaf")
    assert is_error(span) is error and is_ok(span) is not error
    assert value(otel.points(), "hermes.subagent.count", status=status or "unknown") == 1


@pytest.mark.parametrize(
    ("answer", "choice", "granted"),
    [("o", "once", True), ("d", "deny", False), (None, "timeout", False)],
)
def test_approval_span_per_decision(
    otel_runtime: Any, workdir: Path, answer: str | None, choice: str, granted: bool
) -> None:
    """pre/post approval: `approval.{pattern}` under the api span, always OK, → gated tool."""
    rt, otel = otel_runtime(DANGEROUS)
    (workdir / "scratch").mkdir()
    approver = Approver(rt.manager.hooks, mode="manual", timeout=1, ask=lambda q, t: answer)
    rt.agent(cwd=workdir, approver=approver).run_turn("clean up")
    view = otel.spans()
    approval = view.one("approval.recursive_delete")
    tool = view.one("tool.terminal")
    assert view.parent(approval) is view.parent(tool) is view.named("api.scripted-model")[0]
    a = attrs(approval)
    assert a["gen_ai.tool.call.id"] == attrs(tool)["gen_ai.tool.call.id"] == "call_rm"
    assert a["hermes.approval.pattern_key"] == "recursive_delete"
    assert a["hermes.approval.surface"] == "cli"
    assert a["hermes.approval.choice"] == choice and a["hermes.approval.granted"] is granted
    assert a["hermes.approval.timed_out"] is (choice == "timeout")
    assert a["hermes.approval.duration_ms"] >= 0 and a["hermes.approval.command"]
    assert is_ok(approval), "a denial or timeout is a decision, not an error"
    outcome = "completed" if granted else "blocked"
    assert attrs(tool)["hermes.tool.outcome"] == outcome and is_ok(tool)
    points = otel.points()
    assert (
        value(points, "hermes.approval.count", choice=choice, pattern_key="recursive_delete") == 1
    )
    assert value(points, "hermes.approval.duration", choice=choice) == 1


def test_max_turns_ends_incomplete_and_interrupt_ends_ok(make_otel: Any) -> None:
    """on_session_end statuses: incomplete → ERROR (reason kept); interrupted → OK."""
    otel = make_otel()
    obs = otel.observer
    for n, (completed, interrupted, reason) in enumerate(
        [(False, False, "max_turns"), (False, True, "interrupted")]
    ):
        turn = f"s:t:{n}"
        obs.pre_llm_call(session_id="s", turn_id=turn, model="m")
        obs.pre_api_request(session_id="s", turn_id=turn, api_request_id=f"{turn}:api:1")
        obs.on_session_end(
            session_id="s",
            turn_id=turn,
            completed=completed,
            interrupted=interrupted,
            reason=reason,
        )
    view = otel.spans()
    incomplete, interrupted_root = view.named("agent")
    assert attrs(incomplete)["hermes.turn.final_status"] == "incomplete"
    assert is_error(incomplete) and attrs(incomplete)["hermes.turn.reason"] == "max_turns"
    assert attrs(interrupted_root)["hermes.turn.final_status"] == "interrupted"
    assert is_ok(interrupted_root)
    # the api attempt left open by the interrupted turn was closed with it
    assert all(s.end_time for s in view.named("api.unknown"))
    assert all(
        attrs(s)["hermes.span.closed_by"] == "session_end" for s in view.named("api.unknown")
    )


def test_metric_labels_carry_no_ids(otel_runtime: Any, workdir: Path) -> None:
    """No metric point is labelled with a session, turn, request or tool-call id."""
    rt, otel = otel_runtime(DELEGATE_PARALLEL)
    agent = rt.agent(cwd=workdir)
    agent.run_turn("delegate please")
    view = otel.spans()
    ids = {agent.session_id}
    for span in view.spans:
        a = attrs(span)
        for key in ("session.id", "hermes.turn_id", "hermes.api_request_id", "gen_ai.tool.call.id"):
            if key in a:
                ids.add(str(a[key]))
    label_values = {str(v) for p in otel.points() for v in p.attributes.values()}
    assert label_values and not (label_values & ids)
    forbidden = {"session.id", "session_id", "turn_id", "gen_ai.conversation.id"}
    assert not forbidden & {k for p in otel.points() for k in p.attributes}
