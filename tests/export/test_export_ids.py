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


def test_a_resumed_session_gets_new_ids(tmp_path: Path) -> None:
    """A session resumed in a second process keys its turns by their own ids: each process's
    turn is its own trace, and no span id repeats in the appended span file."""
    import os
    import subprocess
    import sys

    from wayline.testing.server import ScriptedServer

    home = tmp_path / "home"
    home.mkdir()
    with ScriptedServer({"default": {"content": "ok"}}) as model:
        (home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  default: m\n  base_url: {model.base_url}\n"
            "plugins:\n  enabled:\n    - observability/otel\n"
            "  entries:\n    observability/otel:\n      exporter: file\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WAYLINE_"))}
        env["WAYLINE_HOME"] = str(home)

        def chat(*args: str) -> None:
            proc = subprocess.run(
                [sys.executable, "-m", "wayline", "chat", "-Q", *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert proc.returncode == 0, proc.stderr

        chat("-q", "first")
        (transcript,) = (home / "sessions").glob("*.jsonl")
        chat("-q", "second", "--resume", transcript.stem)
    spans = [json.loads(x) for x in (home / "otel" / "spans.jsonl").read_text().splitlines()]
    roots = [s for s in spans if s["name"] == "agent"]
    assert len(roots) == 2
    assert len({s["context"]["trace_id"] for s in roots}) == 2
    ids = [s["context"]["span_id"] for s in spans]
    assert len(ids) == len(set(ids))
