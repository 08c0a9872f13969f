"""`wayline diff` tells the two runs' costs apart (metrics are otherwise volatile)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from wayline.trajectory.cost import cost_line, run_cost


def trajectory(cost: float | None, child_cost: float | None = None) -> dict[str, Any]:
    """A small valid ATIF run whose one agent step cost ``cost`` (None: unpriced)."""
    metrics: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 2}
    totals: dict[str, Any] = {"total_prompt_tokens": 10, "total_steps": 2}
    if cost is not None:
        metrics["cost_usd"] = cost
        totals["total_cost_usd"] = cost
    doc: dict[str, Any] = {
        "schema_version": "ATIF-v1.6",
        "session_id": "s",
        "agent": {"name": "wayline", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {"step_id": 2, "source": "agent", "message": "hello", "metrics": metrics},
        ],
        "final_metrics": totals,
    }
    if child_cost is not None:
        child = json.loads(json.dumps(doc))
        child["session_id"] = child["trajectory_id"] = "child"
        child["steps"][1]["metrics"]["cost_usd"] = child_cost
        child["final_metrics"]["total_cost_usd"] = child_cost
        doc["subagent_trajectories"] = [child]
    return doc


def test_run_cost_adds_embedded_subagents() -> None:
    """A run's cost includes its embedded subagents' totals."""
    assert run_cost(trajectory(0.25, child_cost=0.5)) == 0.75


def test_unpriced_run_has_unknown_cost() -> None:
    """A run with no priced step has no cost (None), never $0."""
    assert run_cost(trajectory(None)) is None
    assert cost_line(trajectory(None), trajectory(None)) is None
    assert cost_line(trajectory(None), trajectory(0.5)) == "cost: unknown -> $0.500000"


def test_cost_line_shows_the_change() -> None:
    """Old and new cost with the absolute and relative change."""
    line = cost_line(trajectory(0.04), trajectory(0.05))
    assert line == "cost: $0.040000 -> $0.050000 (+$0.010000, +25.0%)"


def test_wayline_diff_prints_the_costs(tmp_path: Path) -> None:
    """The real CLI prints the cost line after the differences (here: none)."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(trajectory(0.04)))
    new.write_text(json.dumps(trajectory(0.03)))
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "diff", str(old), str(new)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["same", "cost: $0.040000 -> $0.030000 (-$0.010000, -25.0%)"]
