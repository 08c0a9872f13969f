"""`wayline export otlp` maps a recorded session exactly as the live otel plugin did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from export_support import NOT_RECORDED, json_spans, tree
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from wayline.plugins.observability.otel.settings import load_settings
from wayline.relay.atof_reader import iter_events
from wayline.trajectory.otlp.offline import OfflineExport, export_settings
from wayline.trajectory.otlp.recorded import atif_hooks, atof_hooks


def exported(calls: Any, seed: str = "s") -> list[dict[str, Any]]:
    """The spans an offline export of ``calls`` produces, as the SDK's JSON."""
    memory = InMemorySpanExporter()
    run = OfflineExport.build(
        export_settings(load_settings({}, env={})),
        span_exporter=memory,
        metric_reader=InMemoryMetricReader(),
    )
    run.session(seed, calls)
    run.finish()
    return json_spans(span.to_json(indent=None) for span in memory.get_finished_spans())


def test_atof_export_equals_the_live_spans(recorded: dict[str, Path]) -> None:
    """Span tree, kinds, statuses and attributes from the ATOF equal the live plugin's, ids
    and times normalized (and without the few fields the ATOF does not record)."""
    live = json_spans(recorded["live"].read_text().splitlines())
    offline = exported(atof_hooks(iter_events(recorded["atof"])))
    assert len(offline) == len(live) >= 10
    live_tree, offline_tree = tree(live), tree(offline)
    assert sorted(offline_tree) == sorted(live_tree)
    for path, expected in live_tree.items():
        assert offline_tree[path] == expected, path


def test_atof_export_keeps_cost_and_subagent_nesting(recorded: dict[str, Path]) -> None:
    """The cost attribute survives the round trip and the child agent nests under its
    delegation span in the parent's trace."""
    offline = exported(atof_hooks(iter_events(recorded["atof"])))
    costs = [s["attributes"].get("llm.cost.total") for s in offline if s["name"] == "api.gpt-4o"]
    assert costs[0] == (1000 * 2.50 + 3000 * 1.25 + 50 * 10.00) / 1_000_000
    assert len({s["context"]["trace_id"] for s in offline}) == 1
    paths = tree(offline)
    assert any(
        " / subagent." in p and p.endswith(" / agent[" + p.split("agent[")[-1]) for p in paths
    )


def test_only_unrecorded_fields_differ(recorded: dict[str, Path]) -> None:
    """Without dropping anything, the differences are exactly the fields named NOT_RECORDED
    (plus times): nothing else is lost on the way through the record."""
    live = tree(json_spans(recorded["live"].read_text().splitlines()), drop=frozenset())
    offline = tree(exported(atof_hooks(iter_events(recorded["atof"]))), drop=frozenset())
    missing = {
        key
        for path, span in live.items()
        for key, value in span["attributes"].items()
        if offline[path]["attributes"].get(key) != value
    }
    assert missing <= NOT_RECORDED | {"error.type"}


def test_atif_export_has_the_live_tree(recorded: dict[str, Path]) -> None:
    """From the ATIF (which keeps less), the same spans with the same names, parents, kinds
    and statuses, and the same model, usage, cost and tool attributes."""
    live = tree(json_spans(recorded["live"].read_text().splitlines()))
    offline = tree(exported(atif_hooks(json.loads(recorded["atif"].read_text()))))
    assert sorted(offline) == sorted(live)
    shared = (
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "llm.cost.total",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "hermes.tool.outcome",
        "session.id",
        "hermes.turn_id",
        "hermes.api_request_id",
        "hermes.turn.tool_count",
    )
    for path, span in live.items():
        assert (offline[path]["kind"], offline[path]["status"]) == (span["kind"], span["status"])
        for key in shared:
            assert offline[path]["attributes"].get(key) == span["attributes"].get(key), (path, key)


def test_exporting_twice_gives_the_same_ids(recorded: dict[str, Path]) -> None:
    """Ids derive from the session, not from the file or the run: the same session exported
    twice, under any file name, gives the same trace and span ids (another session gets
    others: test_export_ids)."""

    def ids(seed: str) -> list[tuple[str, str]]:
        spans = exported(atof_hooks(iter_events(recorded["atof"])), seed)
        return sorted((s["context"]["trace_id"], s["context"]["span_id"]) for s in spans)

    first, second, renamed = ids("atof:a"), ids("atof:a"), ids("atof:b")
    assert first == second == renamed


def _ns(iso: str) -> int:
    """An OTel SDK JSON time (ISO 8601 with microseconds, UTC) as integer microseconds."""
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000)


def test_atif_export_times_each_tool_call_as_recorded(recorded: dict[str, Path]) -> None:
    """Each tool span from the ATIF starts and ends at its call's recorded invocation times:
    the recording's two parallel reads, given times where the second ran inside the first
    (as parallel calls do), overlap in the export as recorded, the second ending first."""
    document = json.loads(recorded["atif"].read_text())
    (step,) = [s for s in document["steps"] if len(s.get("tool_calls") or ()) == 2]
    first, second = step["extra"]["tool_invocations"]
    base = first["start_timestamp"]
    first["start_timestamp"], first["end_timestamp"] = base, base + 0.3
    second["start_timestamp"], second["end_timestamp"] = base + 0.05, base + 0.1
    recorded_times = {
        i["invocation_id"]: (i["start_timestamp"], i["end_timestamp"])
        for s in document["steps"]
        for i in (s.get("extra") or {}).get("tool_invocations") or ()
    }
    spans = exported(atif_hooks(document))
    tools = {
        s["attributes"]["gen_ai.tool.call.id"]: s
        for s in spans
        if s["attributes"].get("gen_ai.tool.call.id") in recorded_times
    }
    assert len(tools) >= 3  # the delegation and the two parallel reads
    for call_id, span in tools.items():
        start, end = recorded_times[call_id]
        assert abs(_ns(span["start_time"]) - round(start * 1_000_000)) <= 1, call_id
        assert abs(_ns(span["end_time"]) - round(end * 1_000_000)) <= 1, call_id
