"""The live plugin, the ATOF export and the ATIF export of one session give every span the
same trace and span ids, so a backend keyed by id stores each span once, whatever the mix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_export_mapping import exported

from wayline.relay.atof_reader import iter_events
from wayline.trajectory.otlp.recorded import atif_hooks, atof_hooks


def _ids(spans: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(trace id, span id) -> span name."""
    return {(s["context"]["trace_id"], s["context"]["span_id"]): s["name"] for s in spans}


def _live(recorded: dict[str, Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in recorded["live"].read_text().splitlines()]


def test_atof_export_has_the_live_ids(recorded: dict[str, Path]) -> None:
    """Every span exported from the ATOF has the id (and name) of its live twin."""
    live = _ids(_live(recorded))
    offline = _ids(exported(atof_hooks(iter_events(recorded["atof"]))))
    assert len(live) >= 10
    assert offline == live


def test_atif_export_has_the_live_ids(recorded: dict[str, Path]) -> None:
    """Every span exported from the ATIF has the id (and name) of its live twin."""
    live = _ids(_live(recorded))
    offline = _ids(exported(atif_hooks(json.loads(recorded["atif"].read_text()))))
    assert offline == live


def test_two_sessions_never_share_an_id(recorded: dict[str, Path]) -> None:
    """Ids derive from the session: the same calls under another session id get other ids."""
    calls = list(atof_hooks(iter_events(recorded["atof"])))
    renamed = json.loads(json.dumps(calls).replace('"session_id": "', '"session_id": "other-'))
    first, second = _ids(exported(calls)), _ids(exported(renamed))
    assert not set(first) & set(second)
