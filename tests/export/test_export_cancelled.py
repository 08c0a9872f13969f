"""A cancelled turn is exported as it ran: from ATOF and from ATIF, its root span says
``interrupted`` with the live plugin's status, and its failed model call the live error."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from test_export_mapping import exported

import wayline
from wayline.relay.atof_reader import iter_events
from wayline.testing.server import ScriptedServer
from wayline.trajectory.otlp.recorded import atif_hooks, atof_hooks

SCRIPT = {
    "default": {"content": "ok"},
    "rules": [
        {"match": {"last_user_contains": "slow"}, "respond": {"content": "late", "delay": 30}}
    ],
}
CONFIG = "plugins:\n  entries:\n    observability/otel:\n      exporter: file\n"


def _record(home: Path) -> str:
    async def main() -> str:
        with ScriptedServer(SCRIPT) as model:
            plugins = ["observability/relay", "observability/otel"]
            async with wayline.Agent("m", model.base_url, "k", plugins=plugins, home=home) as agent:
                await agent.arun("hello")
                turn = asyncio.create_task(agent.arun("slow please"))
                await asyncio.to_thread(model.wait_for_requests, 2, 10)
                turn.cancel()
                try:
                    await turn
                except asyncio.CancelledError:
                    pass
                else:
                    raise AssertionError("the slow turn ended before it was cancelled")
                await agent.arun("again")
                return agent.session_id

    return asyncio.run(main())


def _outcomes(spans: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    """Span id -> (name, status code, the turn's final status, the error type)."""
    return {
        s["context"]["span_id"]: (
            s["name"],
            s["status"]["status_code"],
            s["attributes"].get("hermes.turn.final_status"),
            s["attributes"].get("error.type"),
        )
        for s in spans
        if s["name"] == "agent" or s["name"].startswith("api.")
    }


def test_cancelled_turn_exports_as_it_ran(tmp_path: Path) -> None:
    """Live, ATOF and ATIF agree on each turn's outcome: completed, interrupted, completed."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(CONFIG)
    sid = _record(home)
    live_spans = [json.loads(x) for x in (home / "otel" / "spans.jsonl").read_text().splitlines()]
    live = _outcomes(live_spans)
    finals = [v[2] for v in live.values() if v[0] == "agent"]
    assert sorted(finals) == ["completed", "completed", "interrupted"]
    atof = home / "relay" / "atof" / "wayline-atof.jsonl"
    atif = home / "relay" / "atif" / f"wayline-atif-{sid}.json"
    assert _outcomes(exported(atof_hooks(iter_events(atof)))) == live
    assert _outcomes(exported(atif_hooks(json.loads(atif.read_text())))) == live
