"""Two agents in one process each own their record, in their own home; an agent's plugin
instances are its own. (Sixteen and sixty-four at once, in threads and with asyncio, and agents
closed in turn: tests/reliability/test_agents_at_once.py.)"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import wayline
from wayline.testing.server import ScriptedServer

PLUGINS = ["observability/relay", "observability/otel"]
CONFIG = "plugins:\n  entries:\n    observability/otel:\n      exporter: file\n"


@pytest.fixture
def default_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$WAYLINE_HOME`` points at a home no agent is given: nothing may land there."""
    home = tmp_path / "default-home"
    home.mkdir()
    monkeypatch.setenv("WAYLINE_HOME", str(home))
    for key in list(os.environ):
        if key.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_", "WAYLINE_OTEL_", "OTEL_")):
            monkeypatch.delenv(key)
    return home


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted model answering every request with one line."""
    with ScriptedServer({"default": {"content": "hi"}}) as srv:
        yield srv


def _home(root: Path, i: int) -> Path:
    home = root / f"home-{i}"
    home.mkdir()
    (home / "config.yaml").write_text(CONFIG)
    return home


def _agent(srv: ScriptedServer, home: Path) -> wayline.Agent:
    return wayline.Agent("m", srv.base_url, "k", plugins=PLUGINS, home=home)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def assert_own_record(home: Path, session_id: str, others: set[str]) -> None:
    """ATOF, ATIF and OTel spans of ``home`` are complete and name only ``session_id``."""
    atof = home / "relay" / "atof" / "wayline-atof.jsonl"
    events = [json.loads(line) for line in atof.read_text().splitlines()]
    scopes = [(e["kind"], e.get("scope_category"), e["name"]) for e in events]
    root = f"hermes-session-{session_id}"
    assert ("scope", "start", root) in scopes and ("scope", "end", root) in scopes
    assert ("mark", None, "hermes.turn.end") in scopes
    atif_files = list((home / "relay" / "atif").iterdir())
    assert [p.name for p in atif_files] == [f"wayline-atif-{session_id}.json"]
    trajectory = json.loads(atif_files[0].read_text())
    assert trajectory["session_id"] == session_id and trajectory["steps"]
    spans = [json.loads(line) for line in (home / "otel" / "spans.jsonl").read_text().splitlines()]
    assert {s["attributes"].get("session.id") for s in spans} == {session_id}
    assert {"agent", "api.m"} <= {s["name"] for s in spans}
    text = atof.read_text() + (home / "otel" / "spans.jsonl").read_text()
    assert not [other for other in others if other in text]


def test_two_agents_alive_at_once_each_keep_their_record(
    tmp_path: Path, default_home: Path, server: ScriptedServer
) -> None:
    """Two open agents run one after the other: each home gets its own complete record."""
    homes = [_home(tmp_path, i) for i in range(2)]
    agents = [_agent(server, home) for home in homes]
    try:
        for agent in agents:
            assert agent.run("hello").completed
    finally:
        for agent in agents:
            agent.close()
    ids = [agent.session_id for agent in agents]
    for home, sid in zip(homes, ids, strict=True):
        assert_own_record(home, sid, set(ids) - {sid})
    assert _files(default_home) == []


def test_closed_agent_has_no_plugin_instance(
    tmp_path: Path, default_home: Path, server: ScriptedServer
) -> None:
    """``Agent.plugin`` gives the open instance; after ``close()`` the instance is gone."""
    agent = _agent(server, _home(tmp_path, 0))
    relay = agent.plugin("observability/relay")
    assert agent.run("hello").completed
    assert relay.drain(10.0)
    assert (tmp_path / "home-0" / "relay" / "atof" / "wayline-atof.jsonl").stat().st_size > 0
    agent.close()
    with pytest.raises(KeyError):
        agent.plugin("observability/relay")
