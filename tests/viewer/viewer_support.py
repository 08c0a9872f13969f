"""Shared by the viewer tests: the injection payloads, fixture data and screenshot helper."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

SHOTS = Path("/tmp/wayline-view-shots")
RELAY_DATA = Path(__file__).resolve().parents[1] / "relay" / "atif" / "data"

# Trajectory text that must show as text and never run; each sets window.__pwned if it ran.
PAYLOADS = (
    "<script>window.__pwned=1</script>",
    "</script><script>window.__pwned=2</script>",
    '<img src=x onerror="window.__pwned=3">',
    '<a href="javascript:window.__pwned=4">click me</a>',
)
INJECTION_SCRIPT: dict[str, Any] = {
    "default": {"content": "ok"},
    "rules": [
        {
            "name": "inject",
            "match": {"first_user_contains": "read the payload"},
            "turns": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "payload.txt"}}]},
                {"tool_calls": [{"name": "terminal", "arguments": {"command": "rm -rf ./junk"}}]},
                {"content": "Answer: " + " ".join(PAYLOADS)},
            ],
        }
    ],
}


def screenshot(page: Any, tmp_path: Path, name: str) -> Path:
    """Save a full-page screenshot as a test artifact (tmp_path) and copy it to SHOTS."""
    target = tmp_path / f"{name}.png"
    page.screenshot(path=str(target), full_page=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(target, SHOTS / target.name)
    return target


# A real Hermes 0.19.0 + nemo-relay 0.10.4 run (tests/data/make_hermes_relay.py writes them).
HERMES_DATA = Path(__file__).resolve().parents[1] / "data"
HERMES_ATIF = HERMES_DATA / "hermes_relay.atif.json"
HERMES_ATOF = HERMES_DATA / "hermes_relay.atof.jsonl"
