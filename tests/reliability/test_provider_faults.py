"""Provider faults from the scripted server: retry policy, error hooks, messages, exports.

Every fault kind runs twice through a real runtime with ``observability/relay`` and
``observability/otel`` enabled: *transient* (the first two attempts fail, the third succeeds)
and *persistent* (every attempt fails until the retries run out). Each run checks the retry
policy (attempt count, ``retry_count``, the wait before a retry, Retry-After), exactly one
``api_request_error`` per failed attempt with the right status/retryable/reason, the final
message, and that ATOF, ATIF and OTel still describe the attempts: failed llm scopes and
api spans are closed with their error, nothing is orphaned.
"""

from __future__ import annotations

import itertools
import json
import socket
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from rel_support import (
    Outputs,
    Probe,
    check_atof,
    outputs_problems,
    read_spans,
    record,
    shutdown_exporters,
    write_config,
)

from wayline.runtime import build_runtime
from wayline.testing.server import ScriptedServer

MAX_RETRIES = 2
BACKOFF = 0.1
BACKOFF_MAX = 2.0


@dataclass(frozen=True)
class Fault:
    """A fault kind and what every failed attempt must report."""

    spec: dict[str, Any]
    status: int | None
    retryable: bool
    reason: str
    error_type: str
    stream: bool = False
    retry_after: float | None = None


FAULTS: dict[str, Fault] = {
    "http_429_retry_after": Fault(
        {"status": 429, "retry_after": 1}, 429, True, "rate_limit", "RateLimitError", retry_after=1
    ),
    "http_500": Fault({"status": 500}, 500, True, "server_error", "InternalServerError"),
    "http_503": Fault({"status": 503}, 503, True, "overloaded", "InternalServerError"),
    "connect_refused": Fault({}, None, True, "connection_error", "APIConnectionError"),
    "read_timeout": Fault({"hang": 3}, None, True, "timeout", "APITimeoutError"),
    "reset_mid_body": Fault(
        {"cut_stream_after": 0}, None, True, "connection_error", "APIConnectionError"
    ),
    "reset_no_response": Fault(
        {"reset": True}, None, True, "connection_error", "APIConnectionError"
    ),
    "malformed_json": Fault({"malformed": True}, None, True, "invalid_response", "JSONDecodeError"),
    "sse_cut_midway": Fault(
        {"cut_stream_after": 2}, None, True, "connection_error", "APIConnectionError", stream=True
    ),
    "empty_choices": Fault(
        {"empty_choices": True}, None, True, "invalid_response", "InvalidAPIResponse"
    ),
    "http_400_not_retried": Fault({"status": 400}, 400, False, "format_error", "BadRequestError"),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _script(fault: Fault, transient: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {"content": "recovered"}
    if fault.spec:
        answer["fault"] = {**fault.spec, **({"times": 2} if transient else {})}
    return {"model": "scripted-model", "default": answer}


def _run(
    name: str, transient: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], int]:
    """Run one fault scenario; (problems, failed attempts)."""
    fault = FAULTS[name]
    home = tmp_path / "home"
    home.mkdir()
    out = Outputs(tmp_path / "out")
    for key, value in out.env().items():
        monkeypatch.setenv(key, value)
    servers: list[ScriptedServer] = []
    refused = not fault.spec
    if refused:
        port = _free_port()
        base_url = f"http://127.0.0.1:{port}/v1"
    else:
        servers.append(ScriptedServer(_script(fault, transient)).start())
        base_url = servers[0].base_url
    write_config(
        home,
        base_url,
        out,
        model={"max_retries": MAX_RETRIES, "timeout": 0.5, "stream": fault.stream},
    )
    runtime = build_runtime(home)
    # Retry-After is honoured up to backoff_max, so the cap stays above the scripted 1 s.
    provider = replace(runtime.settings.provider, backoff_base=BACKOFF, backoff_max=BACKOFF_MAX)
    runtime.settings = runtime.settings.with_(provider=provider)
    probe = Probe()
    probe.attach(runtime.manager.hooks)
    timing: list[tuple[str, float, float]] = []

    def on_error(**kw: Any) -> None:
        timing.append(("error", kw["started_at"], kw["ended_at"]))

    def on_pre(**kw: Any) -> None:
        timing.append(("pre", kw["started_at"], kw["started_at"]))

    def start_server_on_second_error(**kw: Any) -> None:
        # Transient "connection refused": the server comes up after two refused attempts.
        if refused and transient and len(probe.of("api_request_error")) == 2 and not servers:
            servers.append(ScriptedServer(_script(fault, True), port=port).start())

    runtime.manager.hooks.register("api_request_error", on_error, "timing")
    runtime.manager.hooks.register("pre_api_request", on_pre, "timing")
    runtime.manager.hooks.register("api_request_error", start_server_on_second_error, "timing")
    work = tmp_path / "work"
    work.mkdir()
    agent = runtime.agent(cwd=work)
    try:
        result = agent.run_turn("hello")
    finally:
        agent.finalize()
        for server in servers:
            server.stop()
        shutdown_exporters(runtime)  # the files are complete before they are checked
    problems: list[str] = []

    def want(cond: bool, what: str) -> None:
        if not cond:
            problems.append(what)

    errors = probe.of("api_request_error")
    attempts = probe.of("pre_api_request")
    failed = 2 if transient and fault.retryable else (MAX_RETRIES + 1 if fault.retryable else 1)
    want(len(errors) == failed, f"{len(errors)} api_request_error for {failed} failed attempts")
    want(len(attempts) == failed + (1 if transient and fault.retryable else 0), "attempt count")
    want(len({a["api_request_id"] for a in attempts}) == 1, "retries changed api_request_id")
    for i, err in enumerate(errors):
        got = (err.get("status_code"), err.get("retryable"), err.get("reason"))
        want(got == (fault.status, fault.retryable, fault.reason), f"attempt {i}: {got}")
        want(err.get("retry_count") == i, f"attempt {i}: retry_count {err.get('retry_count')}")
    _check_waits(timing, fault, want)
    if transient and fault.retryable:
        want(result.completed and result.text == "recovered", f"not recovered: {result.text!r}")
        want(len(probe.of("post_api_request")) == 1, "post_api_request count")
    else:
        want(not result.completed and result.reason == "api_error", f"reason {result.reason}")
        _check_message(result.text, fault, failed, base_url, want)
    ends = probe.of("on_session_end")
    want(len(ends) == 1 and ends[0].get("reason") == result.reason, "on_session_end")
    problems += _check_exports(out, fault, failed, transient)
    return problems, len(errors)


def _check_waits(timing: list[tuple[str, float, float]], fault: Fault, want: Any) -> None:
    """The wait between a failed attempt and its retry follows the policy (lower bounds)."""
    retry = 0
    for (kind, _, ended), (nxt, started, _) in itertools.pairwise(timing):
        if kind != "error" or nxt != "pre":
            continue
        if fault.retry_after is not None:
            floor = fault.retry_after
        else:
            floor = min(BACKOFF_MAX, BACKOFF * 2**retry) / 2
        want(started - ended >= floor * 0.95, f"retry {retry} after {started - ended:.3f}s")
        retry += 1


def _check_message(text: str, fault: Fault, attempts: int, base_url: str, want: Any) -> None:
    want(text.startswith("error: the model provider"), f"message {text!r}")
    want(fault.reason in text, f"message lacks the reason: {text!r}")
    if fault.status is not None:
        want(f"HTTP {fault.status}" in text, f"message lacks the status: {text!r}")
    want(f"{attempts} attempt" in text, f"message lacks the attempt count: {text!r}")
    want(base_url in text, f"message lacks the endpoint: {text!r}")


def _check_exports(out: Outputs, fault: Fault, failed: int, transient: bool) -> list[str]:
    problems = [f"export: {p}" for p in outputs_problems(out)]
    atof = check_atof(out.atof)
    llm_ends = [
        e for e in atof.lines if e.get("category") == "llm" and e.get("scope_category") == "end"
    ]
    errors = [e for e in llm_ends if (e.get("metadata") or {}).get("otel.status_code") == "ERROR"]
    if len(errors) != failed:
        problems.append(f"ATOF: {len(errors)} failed llm scopes for {failed} failed attempts")
    for event in errors:
        data = event.get("data") or {}
        data = json.loads(data) if isinstance(data, str) else data
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict) or error.get("reason") != fault.reason:
            problems.append(f"ATOF: failed llm scope without its reason: {str(data)[:200]}")
    spans = read_spans(out.spans)
    api = [s for s in spans if s["name"].startswith("api.")]
    bad = [s for s in api if s["status"]["status_code"] == "ERROR"]
    if len(bad) != failed:
        problems.append(f"OTel: {len(bad)} ERROR api spans for {failed} failed attempts")
    for span in bad:
        if not any(e["name"] == "exception" for e in span.get("events") or []):
            problems.append("OTel: failed api span without an exception event")
    roots = [s for s in spans if s["name"] == "agent"]
    if len(roots) != 1:
        problems.append(f"OTel: {len(roots)} agent roots")
    elif (not transient or not fault.retryable) and roots[0]["status"]["status_code"] != "ERROR":
        problems.append("OTel: the root of a failed turn is not ERROR")
    atif = sorted(out.atif.glob("*.json"))
    if len(atif) != 1:
        problems.append(f"ATIF: {len(atif)} trajectory files")
    return problems


@pytest.mark.parametrize("transient", [True, False], ids=["transient", "persistent"])
@pytest.mark.parametrize("name", sorted(FAULTS))
@pytest.mark.timeout(120)
def test_provider_fault(
    name: str, transient: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault is retried by the policy, reported once per attempt, and exported as it happened."""
    problems, errors = _run(name, transient, tmp_path, monkeypatch)
    label = f"provider fault {name} ({'transient' if transient else 'persistent'}): deviations"
    key = f"fault_{name}_{'transient' if transient else 'persistent'}"
    record(key, label, len(problems))
    assert errors > 0, "the fault never happened"
    assert not problems, "\n".join(problems)
