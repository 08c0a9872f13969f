"""``wayline import`` of OTLP JSON: a real wayline session (a delegation, parallel tools) sent
with ``wayline export otlp`` to a loopback receiver, its protobuf requests written as OTLP JSON
lines (the Collector file exporter's layout), imported back and compared with the session's
own ATIF."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    DATA,
    calls,
    calls_by_step,
    check_valid,
    results,
    run_import,
    steps,
    trajectories,
    written,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
from export_support import OtlpSink, record


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The recorded session's ATIF and its spans as an OTLP JSON lines file."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    root = tmp_path_factory.mktemp("otlp")
    files = record(root)
    sink = OtlpSink()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WAYLINE_"))}
        env["WAYLINE_HOME"] = str(files["home"])
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "wayline",
                "export",
                "otlp",
                str(files["atif"]),
                "--endpoint",
                sink.url,
                "--no-metrics",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        lines = [
            json.dumps(MessageToDict(ExportTraceServiceRequest.FromString(body)))
            for path, _, body in sink.requests
            if path == "/v1/traces"
        ]
    finally:
        sink.close()
    target = root / "spans.jsonl"
    target.write_text("\n".join(lines) + "\n")
    return json.loads(files["atif"].read_text()), target


def test_round_trip_keeps_steps_calls_results_and_subagents(
    exported: tuple[dict[str, Any], Path], home: Path
) -> None:
    """The imported session has the original's steps (by kind and text), tool calls (id, name,
    arguments; step by step, a step's parallel calls in any order), results (each once),
    token counts and its delegated child embedded under the same call."""
    original, spans = exported
    (document,) = written(run_import(spans, home=home))
    check_valid(document)
    assert document["session_id"] == original["session_id"]

    def shape(doc: dict[str, Any]) -> list[tuple[str, str]]:
        return [(s["source"], s["message"]) for s in steps(doc)]

    assert shape(document) == shape(original)
    assert calls_by_step(document) == calls_by_step(original)
    # Parallel calls' results are in the order their hooks reached the recorder, a race
    # between tool threads (the times can say otherwise by microseconds): compared as a set.
    assert sorted(results(document), key=repr) == sorted(results(original), key=repr)
    assert len(list(trajectories(document))) == len(list(trajectories(original))) == 2
    for key in ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens"):
        assert document["final_metrics"].get(key) == original["final_metrics"].get(key)
    (ref,) = [
        (r["source_call_id"], len(r["subagent_trajectory_ref"]))
        for s in document["steps"]
        for r in (s.get("observation") or {}).get("results") or []
        if r.get("subagent_trajectory_ref")
    ]
    assert ref == ("call_delegate", 1)


def test_one_otlp_http_body_is_read_too(
    exported: tuple[dict[str, Any], Path], home: Path, tmp_path: Path
) -> None:
    """The same spans as one OTLP/HTTP JSON body (all requests merged) import alike."""
    original, spans = exported
    merged: dict[str, Any] = {"resourceSpans": []}
    for line in spans.read_text().splitlines():
        merged["resourceSpans"].extend(json.loads(line)["resourceSpans"])
    body = tmp_path / "body.json"
    body.write_text(json.dumps(merged))
    (document,) = written(run_import(body, home=home))
    assert calls_by_step(document) == calls_by_step(original)


def test_span_without_trace_id_is_an_error(tmp_path: Path, home: Path) -> None:
    """A span with no traceId: exit 2, one error line naming the file, line and field."""
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "00f067aa0ba902b7"}]}]}]}
    broken = tmp_path / "spans.jsonl"
    broken.write_text(json.dumps(request) + "\n" + json.dumps(request) + "\n")
    proc = run_import(broken, home=home)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {broken}:1: resourceSpans[0].scopeSpans[0].spans[0].traceId: missing"
    ]


THIRD_PARTY = sorted((DATA / "otlp").glob("*.jsonl"))  # SOURCES.md: real instrumentation


def _spans(path: Path) -> list[dict[str, Any]]:
    """Every span of the file, its attributes as a plain dict."""
    out = []
    for raw in path.read_text().splitlines():
        for resource in json.loads(raw)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attrs = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                    out.append({**span, "attrs": attrs})
    return out


def _expected(path: Path) -> dict[str, Any]:
    """What the spans hold, read independently: model calls (with token counts), tool calls
    (id, name, arguments) and tool results, each once."""
    model_calls, tool_calls, tool_results, users = [], {}, {}, set()
    for span in _spans(path):
        a = span["attrs"]
        if a.get("openinference.span.kind") == "LLM" or a.get("gen_ai.operation.name") == "chat":
            prompt = a.get("gen_ai.usage.input_tokens", a.get("llm.token_count.prompt"))
            done = a.get("gen_ai.usage.output_tokens", a.get("llm.token_count.completion"))
            model_calls.append((int(prompt), int(done)))
            for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
                for message in json.loads(a.get(key, "[]")):
                    if message["role"] == "user":
                        users |= {p["content"] for p in message["parts"] if p["type"] == "text"}
                    for part in message["parts"]:
                        if part["type"] == "tool_call":
                            tool_calls[part["id"]] = (part["name"], part["arguments"])
                        elif part["type"] == "tool_call_response":
                            tool_results[part["id"]] = part["response"]
            for key, value in a.items():
                if key.endswith("tool_call.function.name"):
                    prefix = key.removesuffix("function.name")
                    arguments = json.loads(a[prefix + "function.arguments"])
                    tool_calls[a[prefix + "id"]] = (value, arguments)
                elif key.endswith("message.role") and value == "user":
                    users.add(a[key.removesuffix("role") + "content"])
                elif key.endswith("message.tool_call_id"):
                    tool_results[value] = a[key.removesuffix("tool_call_id") + "content"]
        elif a.get("openinference.span.kind") == "TOOL":
            (call_id,) = [i for i, (name, _) in tool_calls.items() if name == a["tool.name"]]
            tool_results[call_id] = a["output.value"]
    return {
        "model_calls": model_calls,
        "calls": tool_calls,
        "results": tool_results,
        "users": users,
    }


@pytest.mark.parametrize("sample", THIRD_PARTY, ids=lambda p: p.stem)
def test_third_party_spans_keep_every_model_call_tool_call_and_result(
    sample: Path, home: Path
) -> None:
    """Spans of real third-party instrumentation (OpenInference's OpenAI Agents instrumentor,
    OpenTelemetry's openai-v2 with GenAI message attributes, each call its own trace): one
    session; the user message, every model call as one agent step with its token counts, and
    every tool call (id, name, arguments) and result exactly once; the file validates."""
    expected = _expected(sample)
    assert expected["model_calls"] and expected["calls"] and expected["results"]
    documents = written(run_import(sample, home=home))
    assert len(documents) == 1  # one conversation, even when each model call is its own trace
    for document in documents:
        check_valid(document)
    span_ids = {s["spanId"] for s in _spans(sample)}
    all_steps = [s for d in documents for s in steps(d)]
    measured = [
        (s["metrics"]["prompt_tokens"], s["metrics"]["completion_tokens"])
        for s in all_steps
        if s["source"] == "agent" and (s.get("extra") or {}).get("from") != "input_messages"
    ]
    assert sorted(measured) == sorted(expected["model_calls"])
    assert [s["message"] for s in all_steps if s["source"] == "user"] == sorted(expected["users"])
    assert all(
        base64.b64encode(bytes.fromhex(s["extra"]["span_id"])).decode() in span_ids
        for s in all_steps
        if s["source"] == "agent"
    )
    got_calls = {c[0]: (c[1], c[2]) for d in documents for c in calls(d)}
    assert got_calls == expected["calls"]
    assert sorted(c[0] for d in documents for c in calls(d)) == sorted(set(got_calls))
    got_results = [r for d in documents for r in results(d)]
    assert dict(got_results) == expected["results"]
    assert len(got_results) == len(expected["results"])
