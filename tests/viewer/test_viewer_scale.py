"""A 5,000-step page in headless Chromium: few steps in the DOM, every step reachable, the later
data chunks appended, search and deep links across them (the bench measures 100,000 steps)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wayline.viewer import decode_data, load_trajectory, render_page, write_page
from wayline.viewer.page import CHUNK_STEPS, FIRST_STEPS

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI=true) before expect is used
    expect = None

STEPS = 5000
BASE = 1_795_293_778.0
ERROR_STEP = 3000  # the only failing call
UNIQUE = "zebra-quartz-7781"  # appears in one step's tool output only, far past the first chunk


def _trajectory(steps: int) -> dict[str, Any]:
    out: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": "go"}]
    for n in range(2, steps + 1):
        call_id = f"call_{n}"
        text = f"item {n}: " + ("the output of a command " * 12)
        if n == 4321:
            text += UNIQUE
        if n == ERROR_STEP:
            text = json.dumps({"error": "no such item"})
        start = BASE + n
        out.append(
            {
                "step_id": n,
                "source": "agent",
                "message": f"Step {n}: look at item {n}.",
                "tool_calls": [{"tool_call_id": call_id, "function_name": "read_file",
                                "arguments": {"path": f"items/{n}.txt"}}],
                "observation": {"results": [{"source_call_id": call_id, "content": text}]},
                "extra": {"invocation": {"invocation_id": f"llm-{n}", "status": "completed",
                                         "start_timestamp": start,
                                         "end_timestamp": start + 0.5}},
            }
        )  # fmt: skip
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": f"scale-{steps}",
        "agent": {"name": "scale-agent", "version": "1"},
        "steps": out,
    }


@pytest.fixture(scope="module")
def large_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 5,000-step page, written once for the module."""
    directory = tmp_path_factory.mktemp("scale")
    source = directory / "scale.json"
    source.write_text(json.dumps(_trajectory(STEPS)))
    return write_page(load_trajectory(source), directory / "scale.html")


def test_large_page_splits_its_steps_into_chunks(large_page: Path) -> None:
    """The first data element holds the first steps; the rest follow the script in chunks."""
    html = large_page.read_text()
    first = decode_data(html.split('id="wl-data" data-encoding="deflate-base64">')[1].split("<")[0])
    (item,) = first["items"]
    assert len(item["steps"]) == FIRST_STEPS and item["more"] == STEPS - FIRST_STEPS
    chunks = html.split('class="wl-more" data-item="0" data-encoding="deflate-base64">')[1:]
    assert len(chunks) == -(-(STEPS - FIRST_STEPS) // CHUNK_STEPS)
    assert html.index("<script>") < html.index('class="wl-more"')
    ids = [s["i"] for chunk in chunks for s in decode_data(chunk.split("<")[0])]
    assert ids == list(range(FIRST_STEPS + 1, STEPS + 1))


def test_large_page_keeps_few_steps_in_the_dom(large_page: Path, open_page) -> None:
    """All 5,000 steps load, but only those near the view are drawn, even at the very end."""
    page = open_page(large_page)
    expect(page.locator("#wl-count")).to_have_text("5,000 steps")
    drawn = page.locator("#wl-steps > .step")
    assert 0 < drawn.count() < 100
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    expect(page.locator(f"#step-{STEPS}")).to_be_visible()
    assert drawn.count() < 100
    page.evaluate("window.scrollTo(0, 0)")
    expect(page.locator("#step-1")).to_be_visible()


def test_deep_link_search_and_keys_reach_a_step_in_a_later_chunk(
    large_page: Path, open_page
) -> None:
    """#step-4321 opens it once its chunk is in; search finds and marks its unique word."""
    page = open_page(large_page, "#step-4321")
    expect(page.locator(".step.target")).to_have_id("step-4321")
    page.keyboard.press("j")
    assert page.evaluate("location.hash") == "#step-4322"
    page.keyboard.press("/")
    page.keyboard.type(UNIQUE)
    expect(page.locator("#wl-count")).to_have_text("1 of 5,000 steps")
    expect(page.locator("#wl-steps mark")).to_have_text([UNIQUE])
    assert page.locator("#wl-steps > .step").get_attribute("id") == "step-4321"


def test_page_bytes_grow_linearly(tmp_path: Path) -> None:
    """Bytes per step at 5,000 steps are no more than at 500 (compression amortizes)."""
    sizes = {}
    for steps in (500, STEPS):
        source = tmp_path / f"t{steps}.json"
        source.write_text(json.dumps(_trajectory(steps)))
        sizes[steps] = len(render_page(load_trajectory(source)).encode()) / steps
    assert sizes[STEPS] <= sizes[500]


def test_next_error_key_reaches_an_error_in_a_later_chunk(large_page: Path, open_page) -> None:
    """`e` from the top jumps to the one failing step, thousands of steps below."""
    page = open_page(large_page)
    assert page.locator("#wl-errors").inner_text().endswith("1")
    page.keyboard.press("e")
    expect(page.locator(".step.target")).to_have_id(f"step-{ERROR_STEP}")
    assert page.evaluate("location.hash") == f"#step-{ERROR_STEP}"
    page.locator("#wl-errors").click()
    expect(page.locator("#wl-count")).to_have_text("1 of 5,000 steps")
