"""The viewer on a real Hermes + NeMo Relay recording (ATIF and its ATOF stream)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from viewer_support import HERMES_ATIF, HERMES_ATOF, screenshot

from wayline.viewer import build_view, load_trajectory, write_page


def _walk_steps(view: dict[str, Any]) -> list[dict[str, Any]]:
    steps = list(view["steps"])
    for sub in view["subs"]:
        steps.extend(_walk_steps(sub))
    return steps


def test_hermes_relay_page_draws_every_step_and_bar(open_page, tmp_path: Path) -> None:
    """Hermes' Relay ATIF: every step's message (sub-agent too), one bar per view span."""
    (loaded,) = load_trajectory(HERMES_ATIF)
    view = build_view(loaded)
    page = open_page(write_page([loaded], tmp_path / "hermes.html"))
    assert "Hermes Agent" in page.locator("#wl-header").inner_text()
    for step in view["steps"]:
        node = page.locator(f"#step-{step['i']}")
        assert node.count() == 1
        if step["m"]:
            assert step["m"] in node.locator(".msg").first.inner_text()
    assert page.locator("#wl-timeline .tlrow .bar").count() == len(view["spans"]) > 0
    # The two parallel reads have no result in the file (Relay 0.10.4 wrote no tool ends).
    assert page.locator("#step-2 .call").count() == 2
    assert page.locator("#step-2").inner_text().lower().count("no result recorded") == 2
    page.locator("#step-3 .sub button").click()
    sub_text = page.locator("#sub-1-").inner_text()
    (sub,) = view["subs"]
    for step in sub["steps"]:
        assert step["m"] in sub_text
    assert "gamma.txt starts with: gamma_content" in sub_text
    page.evaluate("window.scrollTo(0, 0)")  # the sticky toolbar otherwise covers step 1
    screenshot(page, tmp_path, "hermes-relay-page")


def test_hermes_relay_atof_page_draws_unended_tools(open_page, tmp_path: Path) -> None:
    """Hermes' ATOF stream: tools with a start and no end show as bars up to the next call."""
    (loaded,) = load_trajectory(HERMES_ATOF)
    view = build_view(loaded)
    page = open_page(write_page([loaded], tmp_path / "hermes-atof.html"))
    assert page.locator("#wl-timeline .tlrow .bar").count() == len(view["spans"])
    tools = page.locator("#wl-timeline .bar.tool.ap")
    assert tools.count() == 4  # alpha, beta, delegate_task, the child's gamma
    assert "no end recorded" in (tools.first.get_attribute("title") or "")
    assert page.locator("#wl-timeline .tlrow:has(.par)").count() == 2
    for step in view["steps"]:
        assert step["m"] in page.locator(f"#step-{step['i']}").inner_text()
    assert len(_walk_steps(view)) == 7  # 4 steps, and the sub-agent's 3 (listed apart here)
    screenshot(page, tmp_path, "hermes-relay-atof-page")


def test_unended_tool_span_ends_at_next_model_call() -> None:
    """A tool start without end is drawn to the next LLM start, approximate; none has no bar."""
    (loaded,) = load_trajectory(HERMES_ATOF)
    spans = build_view(loaded)["spans"]
    order = [(s["k"], s["n"]) for s in spans if s["d"] == 0 and s["k"] != "turn"]
    assert order == [
        ("llm", "scripted-model"),
        ("tool", "read_file"),
        ("tool", "read_file"),
        ("llm", "scripted-model"),
        ("tool", "delegate_task"),
        ("llm", "scripted-model"),
    ]
    llm_starts = [s["s"] for s in spans if s["k"] == "llm" and s["d"] == 0]
    tools = [s for s in spans if s["k"] == "tool"]
    assert all(s.get("ne") == 1 and s.get("ap") == 1 for s in tools)
    assert [s["e"] for s in tools if s["d"] == 0] == [llm_starts[1], llm_starts[1], llm_starts[2]]
    assert all(s["s"] < s["e"] for s in tools)
    # The ATIF file has no tool timing at all: no tool bars, never invented ones.
    (atif,) = load_trajectory(HERMES_ATIF)
    assert [s for s in build_view(atif)["spans"] if s["k"] == "tool"] == []


def test_result_without_text_is_not_an_empty_result() -> None:
    """Relay's delegate result (only a subagent reference) has no 'o' text but keeps its sub."""
    (loaded,) = load_trajectory(HERMES_ATIF)
    (call,) = build_view(loaded)["steps"][2]["c"]
    assert call["n"] == "delegate_task" and "o" not in call and call["sub"] == [0]


def test_view_tree_smoke_on_hermes_files() -> None:
    """`wayline view --tree` prints both Hermes files' steps, calls and the sub-agent; exit 0."""
    for path in (HERMES_ATIF, HERMES_ATOF):
        proc = subprocess.run(
            [sys.executable, "-m", "wayline", "view", "--tree", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
        )
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout
        assert out.count("read_file") == 3 and "delegate_task" in out and "sub-agent" in out
        assert "gamma.txt starts with: gamma_content" in out
        assert "Traceback" not in proc.stderr
