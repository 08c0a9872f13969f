"""Cancelled turns replay as they ran: the replay cancels the turn where the recording was
cancelled (a model call, a tool call, before the model call), and the turns after it replay
as turns, not as messages in the middle of one; nothing of it is a divergence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import replay_agents
from replay_agents import make_napper, record_cancelled
from traj_support import run_cli

import wayline
from wayline.testing import replay

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cancelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recorded session with a model call and a tool call cancelled (``record_cancelled``)."""
    return record_cancelled(tmp_path_factory.mktemp("cancelled"))


def _steps(trajectory: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(source, message, interrupted model call, tool results) of every step."""
    out = []
    for step in trajectory["steps"]:
        error = ((step.get("extra") or {}).get("llm_response") or {}).get("error") or {}
        results = [r["content"] for r in (step.get("observation") or {}).get("results", [])]
        out.append((step["source"], step.get("message"), error.get("reason"), results))
    return out


CANCELLED_TOOL = '{"error": "cancelled: the user interrupted this tool call"}'
AS_RECORDED = [
    ("user", "hello", None, []),
    ("agent", "fine", None, []),
    ("user", "slow one", None, []),
    ("agent", "", "interrupted", []),
    ("user", "nap please", None, []),
    ("agent", "Napping.", None, [CANCELLED_TOOL]),
    ("user", "bye", None, []),
    ("agent", "fine", None, []),
]


def test_the_recording_holds_both_cancellations(cancelled: Path) -> None:
    """The fixture is what the tests below need: an interrupted model call, a cancelled tool
    call, and a turn after each."""
    assert _steps(json.loads(cancelled.read_text())) == AS_RECORDED


def test_cancelled_turns_replay_clean_with_the_agent(cancelled: Path) -> None:
    """Replayed with its agent, the session reproduces without a note, and the new run was
    cancelled at the same two places: the model call and the nap call."""
    report = replay(cancelled, agent=make_napper)
    assert report.reproduced, report.describe()
    assert report.notes == []
    assert report.new is not None
    assert _steps(report.new) == AS_RECORDED


def test_a_recorded_cancellation_does_not_run_the_tool_live(cancelled: Path) -> None:
    """With live tools the cancelled ``nap`` call is cancelled again, not run."""
    naps: list[float] = []

    def nap(seconds: float) -> str:
        """Sleep for some seconds."""
        naps.append(seconds)
        return "rested"

    def factory(**kw: Any) -> wayline.Agent:
        return wayline.Agent(model="m", tools=[nap], **kw)

    report = replay(cancelled, agent=factory, tools="live")
    assert report.reproduced, report.describe()
    assert naps == []


def test_cancelled_turns_replay_clean_from_the_cli(cancelled: Path, tmp_path: Path) -> None:
    """``wayline replay`` exits 0 on the session, from config (``nap`` served from the
    recording) and with ``--agent``, with no ``note:`` line; so does its ATOF file."""
    shutil.copy(replay_agents.__file__, tmp_path / "replay_agents.py")
    atof = cancelled.parents[1] / "atof" / "wayline-atof.jsonl"
    for args in (
        (cancelled,),
        (cancelled, "--agent", "replay_agents:make_napper"),
        (atof,),
    ):
        proc = run_cli(
            "replay", *args, "-o", tmp_path / "n.json", home=tmp_path / "h", cwd=tmp_path
        )
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        assert proc.stdout.startswith("reproduced "), proc.stdout
        assert "note:" not in proc.stderr


def test_a_turn_without_an_agent_step_replays_cancelled(tmp_path: Path) -> None:
    """A user step followed by another user step (the turn ended before its model call)
    replays as a turn cancelled there, with a note; the next turn gets its own answer."""
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": "ATIF-v1.7",
                "session_id": "s1",
                "agent": {"name": "wayline", "version": "1", "model_name": "m"},
                "steps": [
                    {"step_id": 1, "source": "user", "message": "first question"},
                    {"step_id": 2, "source": "user", "message": "second question"},
                    {"step_id": 3, "source": "agent", "message": "the answer"},
                ],
            }
        )
    )
    report = replay(path)
    assert report.reproduced, report.describe()
    assert report.notes == [
        "main: steps[0] has no agent step: the turn ended before its model call (cancelled); "
        "replayed so, and its user step is not compared"
    ]
    assert report.new is not None
    # The cancelled turn made no model call, so wayline's record of the run has no step for it.
    assert [(s["source"], s["message"]) for s in report.new["steps"]] == [
        ("user", "second question"),
        ("agent", "the answer"),
    ]


def test_a_call_that_finished_before_the_cancel_keeps_its_result(tmp_path: Path) -> None:
    """In a step whose calls ran in parallel, the call that finished before the cancel gets
    its recorded result, even when it comes second, and the cancelled one is cancelled again:
    the replay reproduces."""
    cancelled_result = {
        "source_call_id": "call_b",
        "content": CANCELLED_TOOL,
        "extra": {"metadata": {"status": "cancelled"}},
    }
    path = tmp_path / "parallel.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": "ATIF-v1.7",
                "session_id": "s2",
                "agent": {"name": "wayline", "version": "1", "model_name": "m"},
                "steps": [
                    {"step_id": 1, "source": "user", "message": "look twice"},
                    {
                        "step_id": 2,
                        "source": "agent",
                        "message": "Looking.",
                        "tool_calls": [
                            {"tool_call_id": "call_b", "function_name": "look", "arguments": {}},
                            {"tool_call_id": "call_a", "function_name": "look", "arguments": {}},
                        ],
                        "observation": {
                            "results": [
                                cancelled_result,
                                {"source_call_id": "call_a", "content": "seen"},
                            ]
                        },
                    },
                    {"step_id": 3, "source": "user", "message": "and now?"},
                    {"step_id": 4, "source": "agent", "message": "done"},
                ],
            }
        )
    )
    report = replay(path)
    assert report.reproduced, report.describe()
    assert report.new is not None
    source, message, _, results = _steps(report.new)[1]
    assert (source, message, sorted(results)) == (
        "agent",
        "Looking.",
        sorted(["seen", CANCELLED_TOOL]),
    )
