"""`wayline export otlp` from ATOF and from ATIF keeps what middleware did, as the live plugin
recorded it: the executed arguments and the middleware trace on the tool spans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from record_support import REWRITE_SOURCE, batch, record_session

from wayline.plugins.observability.otel.settings import load_settings
from wayline.relay.atof_reader import iter_events
from wayline.trajectory.otlp.offline import OfflineExport, export_settings
from wayline.trajectory.otlp.recorded import HookCall, atif_hooks, atof_hooks

SCRIPT: dict[str, Any] = {
    "rules": [{"match": {}, "turns": [batch("call", ["EUR", "JPY"]), {"content": "done"}]}]
}
KEYS = ("wayline.middleware.trace", "wayline.middleware.sources")


def _tool_spans(spans: list[Any]) -> dict[str, dict[str, Any]]:
    """Tool spans by call id: the middleware attributes and the input they record."""
    out = {}
    for span in spans:
        attrs = dict(span.attributes or {})
        if span.name.startswith("tool."):
            keep = {k: attrs.get(k) for k in (*KEYS, "input.value")}
            out[str(attrs.get("gen_ai.tool.call.id"))] = keep
    return out


def _exported(calls: list[HookCall]) -> list[Any]:
    memory = InMemorySpanExporter()
    settings = export_settings(load_settings({"capture_content": True}, env={}))
    run = OfflineExport.build(settings, span_exporter=memory, metric_reader=InMemoryMetricReader())
    run.session("s", calls)
    run.finish()
    return list(memory.get_finished_spans())


def test_exports_keep_the_middleware_of_tool_calls(tmp_path: Path) -> None:
    """The rewritten call (EUR -> USD) and the untouched one carry the same middleware
    attributes and executed arguments in the ATOF and ATIF exports as in the live spans."""
    recording = record_session(tmp_path, SCRIPT, ["convert"])
    live = _tool_spans(recording.spans)
    assert REWRITE_SOURCE in str(live["call_0"]["wayline.middleware.sources"])
    from_atof = _tool_spans(_exported(list(atof_hooks(iter_events(recording.atof_path)))))
    from_atif = _tool_spans(
        _exported(list(atif_hooks(json.loads(recording.atif_path.read_text()))))
    )
    for exported in (from_atof, from_atif):
        for call in ("call_0", "call_1"):
            for key in KEYS:
                assert exported[call][key] == live[call][key], (call, key)
        assert '"USD"' in str(exported["call_0"]["input.value"])
