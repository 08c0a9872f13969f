"""How each turn ended, cancellations and small costs on the page, and every step of a foreign
trajectory drawn, trailing system steps included."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from viewer_support import HERMES_ATIF, HERMES_ATOF

from wayline.viewer import build_view, load_trajectory, trajectory_tree, write_page
from wayline.viewer.tree import money

OUTCOMES = ["completed", "max_turns", "error", "cancelled", "cancelled", "completed"]


@pytest.fixture(scope="module")
def outcome_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """outcome_session.py run for real: its ATIF and ATOF files."""
    base = tmp_path_factory.mktemp("outcomes")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env.pop("OPENAI_API_KEY", None)
    script = Path(__file__).with_name("outcome_session.py")
    proc = subprocess.run(
        [sys.executable, str(script), str(base / "home")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=base,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    reasons = ["completed", "max_turns", "api_error", "interrupted", "interrupted", "completed"]
    assert proc.stdout.split() == reasons
    (atif,) = (base / "home" / "relay" / "atif").glob("*.json")
    (atof,) = (base / "home" / "relay" / "atof").glob("*.jsonl")
    return {"atif": atif, "atof": atof}


@pytest.mark.parametrize("kind", ["atif", "atof"])
def test_every_turn_has_its_outcome(outcome_run: dict[str, Path], kind: str) -> None:
    """Six turns, one of each outcome, from ATIF (its user steps' ``turn_outcome``) and from
    ATOF (its run-end marks), both as the run recorded them, not inferred: the header lists
    them and each turn's last step carries its own."""
    (loaded,) = load_trajectory(outcome_run[kind])
    view = build_view(loaded)
    assert view["h"]["turns"] == OUTCOMES
    ends = [(s["to"], bool(s.get("ti"))) for s in view["steps"] if "to" in s]
    assert ends == [(o, False) for o in OUTCOMES]
    turns = [(s["n"], s["d"]) for s in view["spans"] if s["k"] == "turn"]
    assert turns == [(f"turn {n}: {o}", 0) for n, o in enumerate(OUTCOMES, start=1)]


@pytest.mark.parametrize("kind", ["atif", "atof"])
def test_a_cancellation_is_not_an_error(outcome_run: dict[str, Path], kind: str) -> None:
    """The cancelled tool call and the cancelled model call are marked cancelled, not errors;
    the one error is the model call that failed with a 400."""
    (loaded,) = load_trajectory(outcome_run[kind])
    view = build_view(loaded)
    assert view["h"]["errors"] == 1
    (failed,) = [s for s in view["steps"] if s.get("e")]
    assert failed["to"] == "error" and not failed.get("cn")
    cancelled = [s for s in view["steps"] if s.get("cn")]
    assert [s["to"] for s in cancelled] == ["cancelled", "cancelled"]
    (tool,) = [c for s in cancelled for c in s.get("c", ())]
    assert (tool["n"], tool.get("cn"), tool.get("e")) == ("nap", 1, None)
    marked = [(s["k"], bool(s.get("er"))) for s in view["spans"] if s.get("cn")]
    assert marked == [("tool", False), ("llm", False)]


def test_the_page_shows_outcomes_and_cancellations(
    outcome_run: dict[str, Path], open_page: Any, tmp_path: Path
) -> None:
    """The header card lists every turn's outcome; the timeline has one row per turn in the
    outcome's colour; cancelled calls and steps are tagged cancelled, never error."""
    (loaded,) = load_trajectory(outcome_run["atof"])
    page = open_page(write_page([loaded], tmp_path / "outcomes.html"))
    card = page.locator("#wl-turns").inner_text()
    for number, outcome in enumerate(OUTCOMES, start=1):
        assert f"{number} {outcome}" in card
    rows = page.locator("#wl-timeline .tlrow:has(.bar.turn)")
    assert rows.count() == len(OUTCOMES)
    classes = [rows.nth(i).locator(".bar").get_attribute("class") for i in range(len(OUTCOMES))]
    assert [c.split()[2:] for c in classes if c] == [[], ["stop"], ["err"], ["cn"], ["cn"], []]
    assert page.locator("#wl-errors").inner_text().endswith("1")
    tags = page.locator("#wl-steps .cntag")
    assert tags.count() == 3  # the nap call, its step, and the step whose model call was cut
    assert page.locator("#wl-steps .step.err").count() == 1
    ends = page.locator("#wl-steps .outtag").all_inner_texts()
    assert ends == [f"turn ended: {o}" for o in OUTCOMES]


def _priced(cost: float) -> dict[str, Any]:
    document = json.loads(HERMES_ATIF.read_text(encoding="utf-8"))
    for step in document["steps"]:
        if step["source"] == "agent":
            step.setdefault("metrics", {})["cost_usd"] = cost
    document["final_metrics"]["total_cost_usd"] = cost * 3
    return document


def test_small_costs_keep_their_significant_digits(open_page: Any, tmp_path: Path) -> None:
    """A cheap model's $0.000012 per step shows as such (not $0.0000), in the header, on each
    step and in `view --tree`."""
    path = tmp_path / "cheap.json"
    path.write_text(json.dumps(_priced(0.000012)), encoding="utf-8")
    (loaded,) = load_trajectory(path)
    page = open_page(write_page([loaded], tmp_path / "cheap.html"))
    assert "$0.000036" in page.locator("#wl-header").inner_text()
    assert "$0.000012" in page.locator("#step-2").inner_text()
    assert re.search(r"\$0\.0000(?!\d)", page.locator("#wl-main").inner_text()) is None
    console = Console(width=200, record=True)
    console.print(trajectory_tree(loaded))
    assert "$0.000036" in console.export_text()


def test_money_has_two_significant_digits_at_least() -> None:
    """Costs across magnitudes: never rounded to zero, short when large."""
    assert [money(v) for v in (0.000012, 0.0000012345, 0.0123, 0.5, 1.2345, 0)] == [
        "$0.000012",
        "$0.0000012",
        "$0.0123",
        "$0.5000",
        "$1.23",
        "$0",
    ]


def _with_end_steps(document: dict[str, Any]) -> dict[str, Any]:
    """A Hermes trajectory as Relay writes its closing marks: system steps after the answer."""
    out = copy.deepcopy(document)
    last = out["steps"][-1]["step_id"]
    for offset, mark in enumerate(("hermes.turn.end", "hermes.session.end"), start=1):
        out["steps"].append({"step_id": last + offset, "source": "system", "message": mark})
    return out


def test_a_foreign_trajectorys_trailing_system_steps_are_on_the_page(
    open_page: Any, tmp_path: Path
) -> None:
    """Hermes' trajectory with hermes.turn.end and hermes.session.end as trailing system
    steps: every step is drawn, the last one too, and the turn ends completed."""
    document = _with_end_steps(json.loads(HERMES_ATIF.read_text(encoding="utf-8")))
    path = tmp_path / "hermes.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    (loaded,) = load_trajectory(path)
    view = build_view(loaded)
    assert [s["i"] for s in view["steps"]] == [s["step_id"] for s in document["steps"]]
    assert view["h"]["turns"] == ["completed"]
    page = open_page(write_page([loaded], tmp_path / "hermes.html"))
    drawn = page.locator("#wl-steps > .step")
    assert drawn.count() == len(document["steps"])
    last = page.locator(f"#step-{document['steps'][-1]['step_id']}")
    assert "hermes.session.end" in last.inner_text()
    assert "turn ended: completed" in last.inner_text()


def test_hermes_atof_turns_are_read_from_its_session_end_marks() -> None:
    """Hermes' ATOF records hermes.session.end (completed) for the parent and its child: both
    turns are completed as recorded, not inferred."""
    (loaded,) = load_trajectory(HERMES_ATOF)
    view = build_view(loaded)
    (sub,) = view["subs"]
    for trajectory in (view, sub):
        assert trajectory["h"]["turns"] == ["completed"]
        (end,) = [s for s in trajectory["steps"] if "to" in s]
        assert end["to"] == "completed" and "ti" not in end
