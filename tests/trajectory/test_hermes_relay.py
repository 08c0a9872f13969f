"""Replaying a real Hermes + NeMo Relay recording (tests/data/hermes_relay.atif.json).

Hermes' bundled Relay plugin on nemo-relay 0.10.4 writes no tool end events, so the file's
tool calls have no observations; their results survive in later steps' ``extra.llm_request``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from traj_support import load, run_cli

from wayline.relay.atif.validate import validate_trajectory
from wayline.trajectory import CompareOptions, compare
from wayline.trajectory.recover import RECOVERED_FROM, recover_results

HERMES_ATIF = Path(__file__).resolve().parents[1] / "data" / "hermes_relay.atif.json"
ALPHA = '{"content": "1|alpha_content\\n2|", "total_lines": 1'


def _results(step: dict[str, Any]) -> dict[str, Any]:
    return {r["source_call_id"]: r for r in (step.get("observation") or {}).get("results", [])}


def test_hermes_recording_replays_with_recorded_tools(tmp_path: Path) -> None:
    """`wayline replay FILE --tools recorded` reproduces Hermes' run (exit 0) and says how."""
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "new.json"
    proc = run_cli("replay", HERMES_ATIF, "--tools", "recorded", "-o", out, home=home, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("reproduced ")
    assert "no result recorded for call_alpha (read_file), call_beta (read_file)" in proc.stderr
    assert "call_delegate (delegate_task) recorded only a subagent reference" in proc.stderr
    new = load(out)
    assert [str(p) for p in validate_trajectory(new)] == []
    served = _results(new["steps"][1])
    assert served["call_alpha"]["content"].startswith(ALPHA)  # Hermes' read_file text
    (child,) = new["subagent_trajectories"]
    assert child["steps"][-1]["message"] == "gamma.txt starts with: gamma_content"


def test_recover_fills_lost_results_from_later_requests() -> None:
    """Calls without observations get the tool message text; the delegate's ref stays as is."""
    recorded = load(HERMES_ATIF)
    doc, notes = recover_results(recorded)
    assert "observation" not in recorded["steps"][1]  # the input is not changed
    alpha = _results(doc["steps"][1])["call_alpha"]
    assert alpha["content"].startswith(ALPHA)
    assert alpha["extra"] == {"recovered_from": RECOVERED_FROM}
    delegate = _results(doc["steps"][2])["call_delegate"]
    assert "content" not in delegate and delegate["subagent_trajectory_ref"]
    gamma = _results(doc["subagent_trajectories"][0]["steps"][1])["call_gamma"]
    assert "gamma_content" in gamma["content"]
    assert len(notes) == 3


def test_recover_takes_the_latest_message_of_a_reused_id() -> None:
    """A host that reuses a call id: each call gets the message of the next request after it."""

    def request(*texts: str) -> dict[str, Any]:
        tool = [{"role": "tool", "tool_call_id": "c1", "content": t} for t in texts]
        return {"llm_request": {"messages": [{"role": "user", "content": "go"}, *tool]}}

    call = {"tool_call_id": "c1", "function_name": "terminal", "arguments": {}}
    traj = {
        "steps": [
            {"step_id": 1, "source": "user", "message": "go"},
            {"step_id": 2, "source": "agent", "message": "", "tool_calls": [call]},
            {"step_id": 3, "source": "agent", "tool_calls": [call], "extra": request("one")},
            {"step_id": 4, "source": "agent", "message": "x", "extra": request("one", "two")},
            {"step_id": 5, "source": "agent", "message": "", "tool_calls": [call]},
        ]
    }
    doc, notes = recover_results(traj)
    assert _results(doc["steps"][1])["c1"]["content"] == "one"
    assert _results(doc["steps"][2])["c1"]["content"] == "two"
    assert "observation" not in doc["steps"][4]
    assert notes[-1] == "main: no result recorded anywhere for c1 (terminal)"


def test_reference_only_result_is_compared_through_its_subagent() -> None:
    """In a replay a ref-only recorded result skips text; its subagent's steps still count."""
    old, _ = recover_results(load(HERMES_ATIF))
    new = copy.deepcopy(old)
    _results(new["steps"][2])["call_delegate"]["content"] = json.dumps({"results": []})
    options = CompareOptions(replay=True)
    assert compare(old, new, options) == []
    assert [d.kind for d in compare(old, new)] == ["result"]  # `wayline diff` still shows it
    new["subagent_trajectories"][0]["steps"][-1]["message"] = "something else"
    (diff,) = compare(old, new, options)
    assert diff.kind == "text" and "subagent 1" in diff.trajectory
