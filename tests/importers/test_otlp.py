"""``wayline import`` of OTLP JSON: a real wayline session (a delegation, parallel tools) sent
with ``wayline export otlp`` to a loopback receiver, its protobuf requests written as OTLP JSON
lines (the Collector file exporter's layout), imported back and compared with the session's
own ATIF."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import calls, check_valid, results, run_import, steps, trajectories, written

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
    arguments), results, token counts and its delegated child embedded under the same call."""
    original, spans = exported
    (document,) = written(run_import(spans, home=home))
    check_valid(document)
    assert document["session_id"] == original["session_id"]

    def shape(doc: dict[str, Any]) -> list[tuple[str, str]]:
        return [(s["source"], s["message"]) for s in steps(doc)]

    assert shape(document) == shape(original)
    assert calls(document) == calls(original)
    assert results(document) == results(original)
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
    assert calls(document) == calls(original)


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
