"""Hook order and payload keys for the runtime's scenarios over real HTTP (scripted server)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from wayline.contract.hooks import HOOK_SPECS, TELEMETRY_SCHEMA_VERSION
from wayline.runtime.approvals import Approver

PLAIN = {"default": {"content": "ok"}}


def _assert_seed_keys(recorder: Any) -> None:
    for name, kw, _ in recorder.events:
        missing = HOOK_SPECS[name].contract_fields - kw.keys()
        assert not missing, f"{name} lacks seed fields {sorted(missing)}"
        assert kw["telemetry_schema_version"] == TELEMETRY_SCHEMA_VERSION


def test_plain_reply_hook_order(scripted_server, make_runtime, workdir: Path) -> None:
    """A plain reply fires session start, turn, one API call, transforms, end, finalize in order."""
    srv = scripted_server(PLAIN)
    runtime, rec = make_runtime(srv.base_url)
    agent = runtime.agent(cwd=workdir)
    result = agent.run_turn("hello")
    agent.finalize()
    assert result.text == "ok" and result.completed
    assert rec.names() == [
        "on_session_start",
        "pre_llm_call",
        "pre_api_request",
        "post_api_request",
        "transform_llm_output",
        "post_llm_call",
        "on_session_end",
        "on_session_finalize",
    ]
    _assert_seed_keys(rec)
    post = rec.of("post_api_request")[0]
    assert post["usage"]["input_tokens"] > 0 and post["finish_reason"] == "stop"
    assert post["api_request_id"] == rec.of("pre_api_request")[0]["api_request_id"]


def test_terminal_then_parallel_reads(scripted_server, make_runtime, workdir: Path) -> None:
    """terminal runs alone, then two read_file calls run as one parallel batch, pre hooks first."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {},
                    "turns": [
                        {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo hi"}}]},
                        {
                            "tool_calls": [
                                {"name": "read_file", "arguments": {"path": "a.txt"}},
                                {"name": "read_file", "arguments": {"path": "b.txt"}},
                            ]
                        },
                        {"content": "done"},
                    ],
                }
            ]
        }
    )
    runtime, rec = make_runtime(srv.base_url)
    agent = runtime.agent(cwd=workdir)
    assert agent.run_turn("go").text == "done"
    tool_hooks = [(n, kw.get("tool_name")) for n, kw, _ in rec.events if "tool" in n]
    assert tool_hooks[:3] == [
        ("pre_tool_call", "terminal"),
        ("post_tool_call", "terminal"),
        ("transform_tool_result", "terminal"),
    ]
    assert [n for n, _ in tool_hooks[3:5]] == ["pre_tool_call", "pre_tool_call"]
    posts = rec.of("post_tool_call")
    assert [p["status"] for p in posts] == ["ok", "ok", "ok"]
    assert json.loads(posts[0]["result"])["output"] == "hi"
    # results go back to the model in call order
    tool_msgs = [m for m in agent.messages if m["role"] == "tool"]
    assert "alpha" in tool_msgs[1]["content"] and "beta" in tool_msgs[2]["content"]
    last = srv.requests[-1].body["messages"]
    assert [m["role"] for m in last[-3:]] == ["assistant", "tool", "tool"]
    _assert_seed_keys(rec)


def test_parallel_batch_runs_tool_execution_once_per_call(
    scripted_server, make_runtime, workdir: Path
) -> None:
    """A counting tool_execution middleware sees exactly one run per call in a parallel batch."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {},
                    "turns": [
                        {
                            "tool_calls": [
                                {"name": "read_file", "arguments": {"path": "a.txt"}},
                                {"name": "read_file", "arguments": {"path": "b.txt"}},
                                {"name": "search_files", "arguments": {"pattern": "alp"}},
                            ]
                        },
                        {"content": "done"},
                    ],
                }
            ]
        }
    )
    runtime, rec = make_runtime(srv.base_url)
    counts: dict[str, int] = {}
    threads: set[str] = set()
    lock = threading.Lock()

    def count(**kw: Any) -> Any:
        with lock:
            counts[kw["tool_call_id"]] = counts.get(kw["tool_call_id"], 0) + 1
            threads.add(threading.current_thread().name)
        return kw["next_call"](kw["args"])

    runtime.manager.middleware.register("tool_execution", count, "counter")
    runtime.agent(cwd=workdir).run_turn("go")
    assert sorted(counts.values()) == [1, 1, 1]
    assert len(rec.of("post_tool_call")) == 3


def test_delegation_child_runs_terminal(scripted_server, make_runtime, workdir: Path) -> None:
    """delegate_task runs a child with its own session; subagent start/stop carry both ids."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {"first_user_contains": "CHILD"},
                    "turns": [
                        {
                            "tool_calls": [
                                {"name": "terminal", "arguments": {"command": "echo child"}}
                            ]
                        },
                        {"content": "child says hi"},
                    ],
                },
                {
                    "match": {},
                    "turns": [
                        {
                            "tool_calls": [
                                {"name": "delegate_task", "arguments": {"goal": "CHILD do it"}}
                            ]
                        },
                        {"content": "parent done"},
                    ],
                },
            ]
        }
    )
    runtime, rec = make_runtime(srv.base_url)
    agent = runtime.agent(cwd=workdir)
    assert agent.run_turn("delegate please").text == "parent done"
    start, stop = rec.of("subagent_start")[0], rec.of("subagent_stop")[0]
    child = start["child_session_id"]
    assert stop["child_session_id"] == child and stop["child_status"] == "completed"
    assert stop["child_subagent_id"] == start["child_subagent_id"]
    assert start["parent_session_id"] == agent.session_id == stop["parent_session_id"]
    assert stop["child_summary"] == "child says hi" and stop["duration_ms"] >= 0
    child_hooks = rec.names(child)
    assert child_hooks[0] == "on_session_start" and "on_session_end" in child_hooks
    assert all(
        kw["platform"] == "subagent"
        for n, kw, _ in rec.events
        if kw.get("session_id") == child and "platform" in kw
    )
    names = rec.names()
    assert names.index("subagent_start") < names.index("on_session_start", 1)
    assert names.index("subagent_stop") < max(
        i for i, n in enumerate(names) if n == "post_tool_call"
    )
    result = json.loads(next(m for m in agent.messages if m["role"] == "tool")["content"])
    assert result["results"][0]["status"] == "completed"
    assert result["results"][0]["tool_trace"] == [{"tool": "terminal", "status": "ok"}]
    _assert_seed_keys(rec)


def test_500_then_success_keeps_api_request_id(
    scripted_server, make_runtime, workdir: Path
) -> None:
    """One HTTP 500 gives one api_request_error, then post_api_request with the same id."""
    srv = scripted_server({"default": {"content": "ok", "fault": {"status": 500, "times": 1}}})
    runtime, rec = make_runtime(srv.base_url)
    runtime.agent(cwd=workdir).run_turn("hi")
    names = [n for n in rec.names() if "api" in n]
    assert names == ["pre_api_request", "api_request_error", "pre_api_request", "post_api_request"]
    err = rec.of("api_request_error")[0]
    assert err["status_code"] == 500 and err["retryable"] is True and err["retry_count"] == 0
    assert err["reason"] == "server_error" and err["error"]["type"] == "InternalServerError"
    assert err["api_request_id"] == rec.of("post_api_request")[0]["api_request_id"]
    _assert_seed_keys(rec)


def _dangerous_server(scripted_server: Any) -> Any:
    return scripted_server(
        {
            "rules": [
                {
                    "match": {},
                    "turns": [
                        {
                            "tool_calls": [
                                {"name": "terminal", "arguments": {"command": "rm -rf ./scratch"}}
                            ]
                        },
                        {"content": "finished"},
                    ],
                }
            ]
        }
    )


def _run_with_answer(
    scripted_server: Any, make_runtime: Any, workdir: Path, answer: str | None
) -> Any:
    srv = _dangerous_server(scripted_server)
    runtime, rec = make_runtime(srv.base_url)
    (workdir / "scratch").mkdir()
    approver = Approver(runtime.manager.hooks, mode="manual", timeout=1, ask=lambda q, t: answer)
    runtime.agent(cwd=workdir, approver=approver).run_turn("clean up")
    return rec


def test_dangerous_command_approved(scripted_server, make_runtime, workdir: Path) -> None:
    """Approving once runs the command; the approval hooks carry pattern keys and choice."""
    rec = _run_with_answer(scripted_server, make_runtime, workdir, "o")
    pre, post = rec.of("pre_approval_request")[0], rec.of("post_approval_response")[0]
    assert post["choice"] == "once" and "recursive_delete" in pre["pattern_keys"]
    assert pre["tool_call_id"] == rec.of("pre_tool_call")[0]["tool_call_id"]
    assert rec.of("post_tool_call")[0]["status"] == "ok"
    assert not (workdir / "scratch").exists()
    _assert_seed_keys(rec)


def test_dangerous_command_denied(scripted_server, make_runtime, workdir: Path) -> None:
    """Denying blocks the command: status blocked, the directory survives."""
    rec = _run_with_answer(scripted_server, make_runtime, workdir, "d")
    assert rec.of("post_approval_response")[0]["choice"] == "deny"
    assert rec.of("post_tool_call")[0]["status"] == "blocked"
    assert (workdir / "scratch").exists()


def test_dangerous_command_timeout(scripted_server, make_runtime, workdir: Path) -> None:
    """No answer within the timeout is reported as choice 'timeout' and blocks the command."""
    rec = _run_with_answer(scripted_server, make_runtime, workdir, None)
    assert rec.of("post_approval_response")[0]["choice"] == "timeout"
    assert rec.of("post_tool_call")[0]["status"] == "blocked"
    assert (workdir / "scratch").exists()


def test_pre_tool_call_block_skips_approval_and_execution(
    scripted_server, make_runtime, workdir: Path
) -> None:
    """A pre_tool_call block ends the call as blocked before approval, execution or transform."""
    srv = _dangerous_server(scripted_server)
    runtime, rec = make_runtime(srv.base_url)
    (workdir / "scratch").mkdir()
    runtime.manager.hooks.register(
        "pre_tool_call", lambda **kw: {"action": "block", "message": "no deletes"}, "policy"
    )
    runtime.agent(cwd=workdir).run_turn("clean up")
    post = rec.of("post_tool_call")[0]
    assert post["status"] == "blocked" and post["error_type"] == "plugin_block"
    assert not rec.of("pre_approval_request") and not rec.of("transform_tool_result")
    assert (workdir / "scratch").exists()


def test_max_turns_ends_turn_with_message(scripted_server, make_runtime, workdir: Path) -> None:
    """Hitting --max-turns ends the turn, not completed, with a clear message."""
    srv = scripted_server(
        {"default": {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}}
    )
    runtime, rec = make_runtime(srv.base_url, max_turns=2)
    result = runtime.agent(cwd=workdir).run_turn("loop forever")
    assert not result.completed and "maximum of 2" in result.text
    end = rec.of("on_session_end")[0]
    assert end["completed"] is False and end["reason"] == "max_turns"
    assert len(rec.of("pre_api_request")) == 2


def test_streaming_reply_with_tools(scripted_server, make_runtime, workdir: Path) -> None:
    """Streaming responses (SSE) reconstruct tool calls and usage like the JSON path."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {},
                    "turns": [
                        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                        {"content": "streamed answer"},
                    ],
                }
            ]
        }
    )
    runtime, rec = make_runtime(srv.base_url, stream=True)
    assert runtime.agent(cwd=workdir).run_turn("go").text == "streamed answer"
    assert all(r.body.get("stream") is True for r in srv.requests)
    assert rec.of("post_api_request")[-1]["usage"]["output_tokens"] > 0
    assert rec.of("post_tool_call")[0]["status"] == "ok"


def test_bad_tool_input_does_not_crash(scripted_server, make_runtime, workdir: Path) -> None:
    """Malformed tool JSON and an unknown tool become tool errors; the session goes on."""
    srv = scripted_server(
        {
            "rules": [
                {
                    "match": {},
                    "turns": [
                        {
                            "tool_calls": [
                                {"name": "read_file", "arguments": "{not json"},
                                {"name": "no_such_tool", "arguments": {}},
                            ]
                        },
                        {"content": "recovered"},
                    ],
                }
            ]
        }
    )
    runtime, rec = make_runtime(srv.base_url)
    assert runtime.agent(cwd=workdir).run_turn("go").text == "recovered"
    posts = rec.of("post_tool_call")
    assert [p["error_type"] for p in posts] == ["invalid_arguments", "unknown_tool"]
    assert all(p["status"] == "error" for p in posts)


def test_garbage_json_from_server_ends_with_clear_message(
    scripted_server, make_runtime, workdir: Path
) -> None:
    """A server answering garbage exhausts retries and ends the turn with a clear message."""
    srv = scripted_server({"default": {"content": "x", "fault": {"malformed": True}}})
    runtime, rec = make_runtime(srv.base_url, max_retries=1)
    result = runtime.agent(cwd=workdir).run_turn("hi")
    assert not result.completed and result.text.startswith("error: the model provider failed")
    assert len(rec.of("api_request_error")) == 2
    assert rec.of("on_session_end")[0]["reason"] == "api_error"


def test_api_hooks_leave_sanitizing_to_queued_observers(
    scripted_server: Any, home: Path, workdir: Path
) -> None:
    """With only queued observers, ``request`` and ``response`` arrive Unsanitized (the
    request body is what the server received, minus transport settings) and sanitize to the
    sanitized fields; with a plain callback too, everyone gets the sanitized dicts."""
    from wayline.host import QueuedObserver
    from wayline.redaction.sanitize import sanitize
    from wayline.redaction.unsanitized import Unsanitized
    from wayline.runtime import build_runtime

    srv = scripted_server(PLAIN)
    runtime = build_runtime(home, base_url=srv.base_url, model="scripted-model")
    seen: list[dict[str, Any]] = []

    class Lazy(QueuedObserver):
        def enqueue(self, payload: dict[str, Any]) -> None:
            seen.append(payload)

    lazy = Lazy()
    bus = runtime.manager.hooks
    bus.register("pre_api_request", lazy, "lazy")
    bus.register("post_api_request", lazy, "lazy")
    agent = runtime.agent(cwd=workdir)
    assert agent.run_turn("hello").completed
    pre, post = seen
    request, response = pre["request"], post["response"]
    assert type(request) is Unsanitized and type(response) is Unsanitized
    sent = srv.requests[0].body
    assert request.raw["body"]["messages"] == sent["messages"]
    assert request.raw["body"]["model"] == sent["model"]
    assert "timeout" not in request.raw["body"] and "http_client" not in request.raw["body"]
    assert request.value() == sanitize(request.raw)
    assert response.value()["assistant_message"]["content"] == "ok"

    bus.register("pre_api_request", lambda **kw: seen.append(kw), "plain")
    assert agent.run_turn("again").completed
    assert type(seen[2]["request"]) is dict and seen[2]["request"] is seen[3]["request"]
    assert seen[2]["request"]["body"]["messages"][-1]["content"] == "again"
    agent.finalize()
