"""`wayline.testing.replay`: the in-process helper returns the divergence report."""

from __future__ import annotations

from pathlib import Path

import pytest
from traj_support import write_rewriter

from wayline.testing import replay
from wayline.trajectory import TrajectoryError


def test_helper_reports_a_rewritten_argument(recorded: dict[str, Path], tmp_path: Path) -> None:
    """With a plugin directory the report's first difference is the rewritten argument; the
    parent step's call diverges after the child's."""
    clean = replay(recorded["trajectory"])
    assert clean.reproduced and clean.first is None and clean.notes == []
    plugin = write_rewriter(tmp_path / "src")
    report = replay(recorded["trajectory"], plugins=[plugin], output=tmp_path / "out.json")
    assert not report.reproduced
    first = report.first
    assert first is not None
    assert (first.trajectory, first.step, first.tool_call) == (
        "main › step 2 call_delegate › subagent 1",
        2,
        "call_beta (read_file)",
    )
    assert (first.kind, first.path, first.old, first.new) == (
        "arguments",
        "arguments.path",
        "beta.txt",
        "alpha.txt",
    )
    assert report.differences[1].location() == "step 3 of main, tool call call_r2 (read_file)"
    assert (tmp_path / "out.json").exists()


def test_helper_raises_for_unreplayable_input(tmp_path: Path) -> None:
    """A trajectory without a user step cannot start a session: TrajectoryError names it."""
    path = tmp_path / "t.json"
    path.write_text('{"steps": [{"source": "agent", "message": "hi"}]}')
    with pytest.raises(TrajectoryError, match=r"t\.json: steps\[0\]: an agent step before"):
        replay(path)


def test_harbor_style_trajectory_replays(tmp_path: Path) -> None:
    """A Harbor-run agent's file (system step, text-part content, a tool wayline lacks, no
    llm_call_count) replays with recorded tools; the system step is not replayed."""
    path = tmp_path / "harbor.json"
    path.write_text(
        """{"schema_version": "ATIF-v1.5", "session_id": "h1",
        "agent": {"name": "terminus-2", "version": "2.0", "model_name": "m"},
        "steps": [
          {"step_id": 1, "source": "system", "message": "You are in a terminal."},
          {"step_id": 2, "source": "user", "message": [{"type": "text", "text": "list files"}]},
          {"step_id": 3, "source": "agent", "message": "Listing.",
           "reasoning_content": "ls is enough",
           "tool_calls": [{"tool_call_id": "t1", "function_name": "bash_command",
                           "arguments": {"keystrokes": "ls\\n"}}],
           "observation": {"results": [{"source_call_id": "t1",
                           "content": [{"type": "text", "text": "a.txt b.txt"}]}]}},
          {"step_id": 4, "source": "agent", "message": "Two files: a.txt and b.txt."}
        ]}"""
    )
    report = replay(path, output=tmp_path / "new.json")
    assert report.reproduced, report.describe()
    new = report.new
    assert new is not None
    agent_steps = [s for s in new["steps"] if s["source"] == "agent"]
    assert report.notes == ["reasoning_content is served to the model client but not compared"]
    assert agent_steps[0]["observation"]["results"][0]["content"] == "a.txt b.txt"
    assert agent_steps[-1]["message"] == "Two files: a.txt and b.txt."
