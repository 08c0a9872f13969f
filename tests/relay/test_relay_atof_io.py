"""ATOF file export (modes, durability, concurrency) and the tolerant reader/validator."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest
from relay_samples import EXPLICIT_TIMESTAMPS, MANUAL_SCENARIO, PLUGIN_SUBAGENT

from wayline import relay
from wayline.relay.atof import (
    AtofFormatError,
    AtofTornLineWarning,
    iter_events,
    read_events,
    validate_atof,
)

Function = relay.ScopeType.Function


def _exporter(directory: Path, mode: relay.AtofExporterMode) -> relay.AtofExporter:
    config = relay.AtofExporterConfig()
    config.output_directory = str(directory)
    config.filename = "out.jsonl"
    config.mode = mode
    return relay.AtofExporter(config)


@pytest.mark.parametrize(
    ("mode", "kept"),
    [(relay.AtofExporterMode.Append, True), (relay.AtofExporterMode.Overwrite, False)],
)
def test_append_keeps_and_overwrite_truncates(
    tmp_path: Path, mode: relay.AtofExporterMode, kept: bool
) -> None:
    """Append mode keeps earlier lines; Overwrite starts the file empty."""
    path = tmp_path / "out.jsonl"
    path.write_text('{"old":1}\n', encoding="utf-8")
    exporter = _exporter(tmp_path, mode)
    exporter.register("io-test")
    try:
        relay.scope.event("new")
    finally:
        exporter.shutdown()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert (lines[0] == '{"old":1}') is kept
    assert json.loads(lines[-1])["name"] == "new"
    assert len(lines) == (2 if kept else 1)


def test_each_event_is_in_the_file_before_the_call_returns(
    atof_exporter: relay.AtofExporter,
) -> None:
    """A second, independent reader sees every line as soon as the emitting call returns."""
    with open(atof_exporter.path, "rb") as reader:
        handle = relay.scope.push("s", Function)
        assert json.loads(reader.readline())["scope_category"] == "start"
        relay.scope.event("m")
        assert json.loads(reader.readline())["kind"] == "mark"
        relay.scope.pop(handle)
        assert json.loads(reader.readline())["scope_category"] == "end"


def test_default_filename_and_lifecycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default name is Relay's UTC-stamped pattern; shutdown unsubscribes and closes."""
    monkeypatch.chdir(tmp_path)
    exporter = relay.AtofExporter(relay.AtofExporterConfig())
    name = Path(exporter.path).name
    assert name.startswith(f"nemo-relay-events-{time.gmtime().tm_year}-") and "%" not in name
    exporter.register("life")
    assert exporter.deregister("other") is False
    exporter.shutdown()
    assert "life" not in relay.subscribers.registered()
    with pytest.raises(RuntimeError, match="shut down"):
        exporter.register("life")
    with pytest.raises(ValueError, match="'file' or 'stream'"):
        relay.AtofExporter(relay.AtofExporterConfig(sink_type="kafka"))


def test_threads_get_their_own_stacks_and_lose_no_lines(
    atof_exporter: relay.AtofExporter,
) -> None:
    """N threads pushing/popping at once: own roots, correct parents, every line intact."""
    threads_n, depth, rounds = 6, 3, 60
    roots: dict[str, str] = {}

    def work(index: int) -> None:
        roots[f"t{index}"] = relay.scope.get_handle().uuid
        for _ in range(rounds):
            handles = [relay.scope.push(f"t{index}", Function) for _ in range(depth)]
            relay.scope.event(f"t{index}", data={"i": index})
            for handle in reversed(handles):
                relay.scope.pop(handle)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    events = list(iter_events(atof_exporter.path))
    assert len(events) == threads_n * rounds * (2 * depth + 1)
    assert len(set(roots.values())) == threads_n
    by_uuid = {e["uuid"]: e for e in events if e["kind"] == "scope"}
    for event in events:
        parent = by_uuid.get(event["parent_uuid"])
        if parent is None:
            assert event["parent_uuid"] == roots[event["name"]]
        else:
            assert parent["name"] == event["name"]
    assert validate_atof(atof_exporter.path) == []


def test_asyncio_tasks_are_isolated(captured: list[relay.Event]) -> None:
    """Concurrent tasks inherit their creator's scope but never see each other's pushes."""

    async def worker(name: str) -> None:
        for _ in range(5):
            with relay.scope.scope(name, Function):
                await asyncio.sleep(0)
                relay.scope.event(name)
                await asyncio.sleep(0)

    async def main() -> str:
        with relay.scope.scope("agent", relay.ScopeType.Agent) as agent:
            await asyncio.gather(worker("a"), worker("b"), worker("c"))
        return agent.uuid

    agent_uuid = asyncio.run(main())
    scopes = {e.uuid: e for e in captured if e.kind == "scope"}
    for event in captured:
        if event.kind == "mark":
            assert scopes[event.parent_uuid].name == event.name
        elif event.name != "agent":
            assert event.parent_uuid == agent_uuid


def _write(path: Path, lines: list[str], tail: str = "") -> Path:
    path.write_text("".join(line + "\n" for line in lines) + tail, encoding="utf-8")
    return path


def test_reader_tolerates_a_torn_last_line(tmp_path: Path) -> None:
    """An incomplete last line is skipped with a warning; the complete lines are returned."""
    path = _write(tmp_path / "torn.jsonl", MANUAL_SCENARIO[:3], tail=MANUAL_SCENARIO[3][:40])
    with pytest.warns(AtofTornLineWarning, match=":4: skipped incomplete last line"):
        events = list(iter_events(path))
    assert [e["uuid"] for e in events] == [json.loads(x)["uuid"] for x in MANUAL_SCENARIO[:3]]
    assert any("line 4: line: incomplete last line" in p for p in validate_atof(path))


def test_reader_rejects_a_malformed_middle_line(tmp_path: Path) -> None:
    """A bad line that is not the last raises AtofFormatError naming file and line."""
    path = _write(tmp_path / "bad.jsonl", [MANUAL_SCENARIO[0], "{not json", MANUAL_SCENARIO[1]])
    with pytest.raises(AtofFormatError) as caught:
        list(iter_events(path))
    assert caught.value.line_no == 2 and caught.value.path == str(path)
    assert str(caught.value).startswith(f"{path}:2: invalid JSON")
    array = _write(tmp_path / "array.jsonl", ["[1, 2]", MANUAL_SCENARIO[0]])
    with pytest.raises(AtofFormatError, match="expected a JSON object"):
        read_events(array)


def test_read_events_sorts_by_timestamp(tmp_path: Path) -> None:
    """Events come back in timestamp order (µs, ties in file order), not file order."""
    manual = MANUAL_SCENARIO
    shuffled = [manual[5], manual[0], manual[3], manual[2], manual[4], manual[1]]
    micros = '{"atof_version":"0.1","kind":"mark","name":"early","timestamp":1}'
    path = _write(tmp_path / "shuffled.jsonl", [*shuffled, micros])
    names = [(e["name"], e["kind"]) for e in read_events(path)]
    assert names[0] == ("early", "mark")
    assert [json.dumps(e, separators=(",", ":")) for e in read_events(path)[1:]] == [
        json.dumps(json.loads(x), separators=(",", ":")) for x in manual[:6]
    ]
    assert [e["name"] for e in read_events(path, sort=False)][:2] == ["openai", "demo-agent"]
    no_ts = _write(tmp_path / "nots.jsonl", ['{"kind":"mark","name":"x"}'])
    with pytest.raises(AtofFormatError, match=":1: timestamp"):
        read_events(no_ts)


def test_validate_accepts_relay_output(tmp_path: Path) -> None:
    """Relay's own files (managed scenario, plugin-managed sub-agent) have no problems."""
    assert validate_atof(_write(tmp_path / "a.jsonl", MANUAL_SCENARIO)) == []
    assert validate_atof(_write(tmp_path / "b.jsonl", PLUGIN_SUBAGENT)) == []


def test_validate_reports_each_problem_with_line_and_field(tmp_path: Path) -> None:
    """Envelope, kind and pairing rules are reported per line with the field name."""
    start = json.loads(MANUAL_SCENARIO[0])
    bad_mark = {
        "atof_version": "1.0",
        "kind": "mark",
        "uuid": "nope",
        "timestamp": "yesterday",
        "name": 5,
        "attributes": [],
        "category": "custom",
        "metadata": [],
    }
    bad_scope = {**start, "scope_category": "middle", "attributes": ["b", "A"], "category": ""}
    lonely_end = {**start, "scope_category": "end", "uuid": "01a1ffd9-0000-7000-8000-000000000000"}
    lines = [json.dumps(bad_mark), json.dumps(bad_scope), json.dumps(lonely_end)]
    problems = validate_atof(_write(tmp_path / "bad.jsonl", [*lines, *EXPLICIT_TIMESTAMPS]))
    expected = [
        "line 1: parent_uuid: missing required field",
        "line 1: atof_version: unsupported major version '1.0' (known: 0.x)",
        "line 1: uuid: expected a UUID string, got 'nope'",
        "line 1: timestamp: not an RFC 3339 timestamp with an offset: 'yesterday'",
        "line 1: name: expected a string, got integer",
        "line 1: metadata: expected an object or null, got array",
        "line 1: attributes: a mark must not carry this field",
        "line 1: category_profile.subtype: required when a mark's category is 'custom'",
        "line 2: scope_category: expected 'start' or 'end', got 'middle'",
        "line 2: attributes: flags must be lowercase",
        "line 2: attributes: flags must be sorted and unique",
        "line 2: category: expected a non-empty string, got ''",
        "line 3: uuid: end without a preceding start",
        "line 7: timestamp: end must be later than the start on line 4 (µs)",
        "line 9: timestamp: end must be later than the start on line 8 (µs)",
    ]
    assert problems == expected
