"""`export sft --only-completed` on Hermes + Relay trajectories, which end with system steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wayline.trajectory.sft import is_completed

from .support import HERMES_ATIF, invoke


def _with_end_marks(document: dict[str, Any]) -> dict[str, Any]:
    """The trajectory as Relay writes Hermes' closing marks: system steps after the answer."""
    steps = document["steps"]
    last = steps[-1]["step_id"]
    for offset, mark in enumerate(("hermes.turn.end", "hermes.session.end"), start=1):
        steps.append({"step_id": last + offset, "source": "system", "message": mark})
    return document


def test_only_completed_looks_past_trailing_system_steps(tmp_path: Path) -> None:
    """A final answer followed by `hermes.*.end` system steps counts as completed and exports."""
    document = _with_end_marks(json.loads(HERMES_ATIF.read_text(encoding="utf-8")))
    assert is_completed(document)
    path = tmp_path / "hermes.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "sft.jsonl"
    result = invoke("export", "sft", "--only-completed", path, "-o", out, home=tmp_path / "h")
    assert result.exit_code == 0, result.stderr
    (sample,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    final = sample["messages"][-1]
    assert final["role"] == "assistant" and final["content"].startswith("alpha.txt holds")


def test_a_turn_cut_off_before_its_answer_is_still_not_completed() -> None:
    """System steps after a tool call (no answer yet) or after a new user message do not
    make the trajectory completed."""
    document = json.loads(HERMES_ATIF.read_text(encoding="utf-8"))
    calling = {**document, "steps": _with_end_marks({"steps": document["steps"][:2]})["steps"]}
    assert calling["steps"][1]["tool_calls"] and not is_completed(calling)
    asked = dict(document)
    asked["steps"] = [*document["steps"], {"step_id": 99, "source": "user", "message": "and?"}]
    assert not is_completed(_with_end_marks(asked))
