"""Many agents alive in one process, both observability plugins on, each with its own home.

2, 16 and (long variant) 64 agents run at once, in threads and with ``asyncio.gather`` of
``arun``. Every session's ATOF, ATIF and OTel spans must be complete and in its own home:
nothing lost, nothing misrouted, nothing in the default home. Then agents are created, run
and closed in turn, and the process's thread and open-file counts must come back to where
they were.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from rel_support import full_scale, record, scaled

import wayline
from wayline.testing.server import ScriptedServer

PLUGINS = ["observability/relay", "observability/otel"]
CONFIG = "plugins:\n  entries:\n    observability/otel:\n      exporter: file\n"
COUNTS = (2, 16, 64) if full_scale() else (2, 16)


def _home(root: Path, name: str) -> Path:
    home = root / name
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(CONFIG)
    return home


def _problems(home: Path, sid: str, others: set[str]) -> tuple[int, int]:
    """(lost, misrouted): 1 if the session's ATOF, ATIF or OTel record is incomplete or absent;
    1 if the home holds another agent's session."""
    atof = home / "relay" / "atof" / "wayline-atof.jsonl"
    atif = home / "relay" / "atif" / f"wayline-atif-{sid}.json"
    spans = home / "otel" / "spans.jsonl"
    if not (atof.is_file() and atif.is_file() and spans.is_file()):
        return 1, 0
    names = {
        (e["kind"], e.get("scope_category"), e["name"])
        for e in map(json.loads, atof.read_text().splitlines())
    }
    root = f"hermes-session-{sid}"
    span_rows = [json.loads(line) for line in spans.read_text().splitlines()]
    complete = (
        {("scope", "start", root), ("scope", "end", root)} <= names
        and json.loads(atif.read_text())["steps"]
        and {"agent", "api.m"} <= {s["name"] for s in span_rows}
    )
    text = atof.read_text() + spans.read_text() + "".join(p.name for p in atif.parent.iterdir())
    return int(not complete), int(any(other in text for other in others))


def _check(root: Path, homes: list[Path], ids: list[str], default: Path, key: str) -> None:
    lost = misrouted = 0
    for home, sid in zip(homes, ids, strict=True):
        a, b = _problems(home, sid, set(ids) - {sid})
        lost, misrouted = lost + a, misrouted + b
    stray = sum(1 for p in default.rglob("*") if p.is_file())
    record(f"{key}_lost", f"{key}: sessions lost", lost)
    record(f"{key}_misrouted", f"{key}: sessions misrouted", misrouted)
    record(f"{key}_default_home", f"{key}: files in the default home", stray)
    assert (lost, misrouted, stray) == (0, 0, 0)


@pytest.fixture
def default_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The ``$WAYLINE_HOME`` no agent is given."""
    home = tmp_path / "default"
    home.mkdir()
    monkeypatch.setenv("WAYLINE_HOME", str(home))
    for name in list(os.environ):
        if name.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_", "WAYLINE_OTEL_", "OTEL_")):
            monkeypatch.delenv(name)
    return home


@pytest.mark.slow
@pytest.mark.parametrize("count", COUNTS)
def test_agents_in_threads(tmp_path: Path, default_home: Path, count: int) -> None:
    """``count`` agents run at once on threads: every record complete and in its own home."""
    homes = [_home(tmp_path, f"h{i}") for i in range(count)]
    with ScriptedServer({"default": {"content": "hi"}}) as srv:
        agents = [wayline.Agent("m", srv.base_url, "k", plugins=PLUGINS, home=h) for h in homes]
        gate = threading.Barrier(count)

        def run(agent: wayline.Agent) -> bool:
            gate.wait()
            return agent.run("hello").completed

        try:
            with ThreadPoolExecutor(count) as pool:
                assert all(pool.map(run, agents))
        finally:
            for agent in agents:
                agent.close()
    ids = [a.session_id for a in agents]
    _check(tmp_path, homes, ids, default_home, f"many_agents_threads_{count}")


@pytest.mark.slow
@pytest.mark.parametrize("count", COUNTS)
def test_agents_with_asyncio(tmp_path: Path, default_home: Path, count: int) -> None:
    """``count`` agents gathered with ``arun``: every record complete and in its own home."""
    homes = [_home(tmp_path, f"h{i}") for i in range(count)]
    with ScriptedServer({"default": {"content": "hi"}}) as srv:

        async def main() -> list[str]:
            agents = [wayline.Agent("m", srv.base_url, "k", plugins=PLUGINS, home=h) for h in homes]
            try:
                results = await asyncio.gather(*(a.arun("hello") for a in agents))
                assert all(r.completed for r in results)
                return [a.session_id for a in agents]
            finally:
                for agent in agents:
                    agent.close()

        ids = asyncio.run(main())
    _check(tmp_path, homes, ids, default_home, f"many_agents_asyncio_{count}")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_agents_closed_in_turn_release_everything(tmp_path: Path, default_home: Path) -> None:
    """Agents created, run and closed in turn leave the thread and open-file counts as they were."""
    rounds = scaled(20, 200)
    with ScriptedServer({"default": {"content": "hi"}}) as srv:

        def one(i: int) -> None:
            home = _home(tmp_path, f"r{i}")
            with wayline.Agent("m", srv.base_url, "k", plugins=PLUGINS, home=home) as agent:
                assert agent.run("hello").completed

        one(0)  # what stays for the process (imports, the shared hook thread) starts here
        baseline, fds = set(threading.enumerate()), len(os.listdir("/proc/self/fd"))
        for i in range(1, rounds + 1):
            one(i)
        # A closed agent's threads have been told to stop; give each a bounded while to end.
        extra = [t for t in threading.enumerate() if t not in baseline]
        for thread in extra:
            thread.join(10)
        left = [t.name for t in threading.enumerate() if t not in baseline]
        extra_threads = len(left)
        extra_fds = max(0, len(os.listdir("/proc/self/fd")) - fds)
    record("many_agents_threads_left", f"threads left after {rounds} agents", extra_threads)
    record("many_agents_files_left", f"open files left after {rounds} agents", extra_fds)
    assert (extra_threads, extra_fds) == (0, 0), left
