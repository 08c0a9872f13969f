"""Delivery: an exporter outage never blocks or breaks the agent; file and console output."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from otel_support import TERMINAL_THEN_PARALLEL

from wayline.plugins.observability.otel.plugin import create
from wayline.plugins.observability.otel.settings import load_settings
from wayline.runtime import build_runtime


class BlockingExporter(SpanExporter):
    """A real exporter whose export waits on an event, like a hung collector connection."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads: set[str] = set()
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Record the calling thread, then block until released."""
        self.threads.add(threading.current_thread().name)
        self.entered.set()
        self.release.wait(60)
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Unblock a pending export."""
        self.release.set()


def test_turn_completes_while_the_exporter_is_blocked(
    scripted_server: Any, home: Path, workdir: Path
) -> None:
    """A hung exporter: turns still complete, the hook thread is not held up, and the spans
    are exported on the SDK's processor thread once the exporter recovers."""
    exporter = BlockingExporter()
    settings = load_settings({"max_export_batch_size": 1, "schedule_delay_ms": 10}, env={})
    plugin = create(settings, span_exporter=exporter, metric_reader=InMemoryMetricReader(), env={})
    try:
        # Park the processor's thread inside export() before the turn starts.
        plugin.pipeline.tracer.start_span("prime").end()
        assert exporter.entered.wait(10)
        srv = scripted_server(TERMINAL_THEN_PARALLEL)
        rt = build_runtime(home, base_url=srv.base_url, model="scripted-model")
        plugin.attach(rt.manager.hooks)
        agent = rt.agent(cwd=workdir)
        result = agent.run_turn("go")
        agent.run_turn("go again")
        assert result.text == "done"
        assert not exporter.release.is_set() and exporter.spans == [], "export still blocked"
        assert plugin.drain(10), "the hook thread is not blocked by the exporter"
        exporter.release.set()
        assert plugin.force_flush(10_000)
        # 8 spans in the first turn and 3 in the second, and the primer.
        assert len(exporter.spans) == 12 and plugin.stats()["exported"] == 12
        assert threading.current_thread().name not in exporter.threads
    finally:
        exporter.release.set()
        plugin.shutdown()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_refused_otlp_endpoint_never_blocks_turns(
    scripted_server: Any, home: Path, workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """OTLP to a port that refuses connections: turns finish, export runs only off-thread,
    failures are counted and logged once."""
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    settings = load_settings(
        {"exporter": "otlp", "endpoint": endpoint, "export_timeout_ms": 200, "metrics": False},
        env={},
    )
    plugin = create(settings, env={})
    counter = plugin.pipeline.counter
    assert counter is not None
    exporter: Any = counter.exporter
    assert type(exporter).__name__ == "OTLPSpanExporter"
    assert exporter._endpoint == f"{endpoint}/v1/traces"
    calls: list[str] = []
    original = exporter.export

    def traced_export(spans: Sequence[ReadableSpan]) -> SpanExportResult:
        calls.append(threading.current_thread().name)
        return original(spans)  # type: ignore[no-any-return]

    exporter.export = traced_export
    try:
        srv = scripted_server(TERMINAL_THEN_PARALLEL)
        rt = build_runtime(home, base_url=srv.base_url, model="scripted-model")
        plugin.attach(rt.manager.hooks)
        agent = rt.agent(cwd=workdir)
        with caplog.at_level(logging.INFO):
            for _ in range(3):
                assert agent.run_turn("go").completed
                plugin.force_flush(10_000)  # the test waits for the export, the agent never does
        stats = plugin.stats()
        assert stats["failed_exports"] >= 3 and stats["exported"] == 0
        assert stats["dropped_export_failed"] == 8 + 3 + 3  # later turns: a plain answer
        assert calls and threading.current_thread().name not in calls
        ours = [r for r in caplog.records if "spans failed (exporter" in r.getMessage()]
        assert len(ours) == 1
        otlp = [r for r in caplog.records if r.name.startswith("opentelemetry.exporter")]
        # How often the SDK logs an outage depends on when its deadline falls; whatever it
        # logged reached us at most once per message (OnceFilter's own test pins the count).
        assert len({r.msg for r in otlp}) == len(otlp), "each OTLP message at most once"
    finally:
        plugin.shutdown()


def test_file_exporter_writes_json_lines(make_otel: Any, tmp_path: Path, workdir: Path) -> None:
    """The offline exporter appends one parseable span per line and metric snapshots; with
    force_flush_on_session_end the turn's spans are on disk when on_session_end returns."""
    spans_file = tmp_path / "out" / "spans.jsonl"
    settings = load_settings(
        {"exporter": "file", "file": str(spans_file), "force_flush_on_session_end": True},
        env={},
    )
    plugin = create(settings, env={})
    obs = plugin.observer
    obs.pre_llm_call(session_id="s", turn_id="s:t", model="m", user_message="hi")
    obs.pre_api_request(session_id="s", turn_id="s:t", api_request_id="r1", model="m")
    obs.post_api_request(
        session_id="s",
        turn_id="s:t",
        api_request_id="r1",
        model="m",
        usage={"input_tokens": 5, "output_tokens": 1},
    )
    obs.on_session_end(session_id="s", turn_id="s:t", completed=True)
    # the session-end flush has written them already (local exporter, healthy)
    lines = spans_file.read_text().splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["api.m", "llm.m", "agent"]
    plugin.shutdown()
    metrics = (tmp_path / "out" / "spans.metrics.jsonl").read_text().splitlines()
    names = {
        m["name"]
        for line in metrics
        for rm in json.loads(line)["resource_metrics"]
        for sm in rm["scope_metrics"]
        for m in sm["metrics"]
    }
    assert {"gen_ai.client.token.usage", "hermes.tokens.prompt", "hermes.sessions"} <= names


def test_console_exporter_writes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """The console exporter prints spans on stderr, keeping stdout for the agent's answer."""
    plugin = create(load_settings({"exporter": "console", "metrics": False}, env={}), env={})
    plugin.observer.pre_llm_call(session_id="s", turn_id="s:t", model="m")
    plugin.observer.on_session_end(session_id="s", turn_id="s:t", completed=True)
    plugin.shutdown()
    out = capsys.readouterr()
    assert '"name": "agent"' in out.err and '"name": "llm.m"' in out.err
    assert out.out == ""


def test_shutdown_ends_open_spans_as_incomplete(make_otel: Any) -> None:
    """At exit every open span is ended; an unfinished turn is marked incomplete."""
    otel = make_otel()
    obs = otel.observer
    obs.pre_llm_call(session_id="s", turn_id="s:t", model="m")
    obs.pre_tool_call(session_id="s", turn_id="s:t", tool_name="t", tool_call_id="c", args={})
    otel.plugin.shutdown()
    names = {s.name: s for s in otel.exporter.get_finished_spans()}
    assert set(names) == {"agent", "llm.m", "tool.t"}
    root = names["agent"].attributes or {}
    assert root["hermes.turn.final_status"] == "incomplete"


def test_once_filter_passes_each_template_once_and_counts_the_rest() -> None:
    """The exporter-log filter lets the first record of each (logger, level, template)
    through and counts every repeat, whatever its arguments."""
    from wayline.plugins.observability.otel.export import OnceFilter

    once = OnceFilter()

    def record(name: str, level: int, msg: str, *args: object) -> logging.LogRecord:
        return logging.LogRecord(name, level, __file__, 1, msg, args, None)

    passed = [
        once.filter(record("otlp", logging.ERROR, "failed %s", 1)),
        once.filter(record("otlp", logging.ERROR, "failed %s", 2)),
        once.filter(record("otlp", logging.WARNING, "failed %s", 3)),
        once.filter(record("other", logging.ERROR, "failed %s", 4)),
        once.filter(record("otlp", logging.ERROR, "failed %s", 5)),
    ]
    assert passed == [True, False, True, True, False]
    assert once.suppressed == 2
