"""The viewer page in a real headless Chromium: what it draws, what it refuses to run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_viewer_load import harbor_trajectory
from viewer_support import PAYLOADS, RELAY_DATA, screenshot

from wayline.viewer import build_view, load_trajectories, load_trajectory, write_page

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI=true) before expect is used
    expect = None


def _page_for(paths: list[Path], out: Path) -> tuple[Path, list[dict[str, Any]]]:
    trajectories = load_trajectories(paths)
    return write_page(trajectories, out), [build_view(t) for t in trajectories]


def _assert_every_step_and_bar(page: Any, view: dict[str, Any]) -> None:
    for step in view["steps"]:
        node = page.locator(f"#step-{step['i']}")
        assert node.count() == 1
        if step["m"]:
            assert step["m"] in node.locator(".msg").first.inner_text()
    assert page.locator("#wl-timeline .tlrow .bar").count() == len(view["spans"]) > 0


def test_demo_page_draws_every_step_bar_and_subagent(demo_run: Path, open_page, tmp_path) -> None:
    """The demo's page: header, every step's message, one bar per span, sub-agent opens in place."""
    page_path = demo_run / "trajectory.html"
    (view,) = [build_view(t) for t in load_trajectories(sorted((demo_run / "atif").glob("*")))]
    page = open_page(page_path)
    header = page.locator("#wl-header").inner_text()
    assert "wayline-scripted" in header
    assert f"{view['h']['in']:,}" in header and f"{view['h']['out']:,}" in header
    _assert_every_step_and_bar(page, view)
    parallel = page.locator("#wl-timeline .tlrow:has(.par)")
    assert parallel.count() == 2  # the two read_file calls of one step
    page.locator("#step-2 .sub button").click()
    sub_text = page.locator("#sub-1-").inner_text()
    for step in view["subs"][0]["steps"]:
        assert step["m"] in sub_text
    screenshot(page, tmp_path, "demo-page")


def test_relay_written_trajectory_page(open_page, tmp_path: Path) -> None:
    """NeMo Relay's plugin-written ATIF: steps, bars, nested sub-agent opened from the timeline."""
    page_path, (view,) = _page_for([RELAY_DATA / "relay_plugin.atif.json"], tmp_path / "r.html")
    page = open_page(page_path)
    _assert_every_step_and_bar(page, view)
    page.locator("#wl-timeline .tlrow", has_text="sub-agent").click()
    assert "sub answer" in page.locator("#sub-1-").inner_text()
    screenshot(page, tmp_path, "relay-plugin-page")


def test_script_injection_shows_as_text_and_never_runs(
    injection_run: Path, open_page, tmp_path: Path
) -> None:
    """Payloads in a tool result and the answer show as text; the flag they set stays unset."""
    page_path, _ = _page_for([injection_run / "atof"], tmp_path / "inject.html")
    page = open_page(page_path)
    answer = page.locator("#wl-steps .step").last.locator(".msg").inner_text()
    for payload in PAYLOADS:
        assert payload in answer
    result = page.locator("#step-2 pre.res").inner_text()  # read_file's JSON result
    assert PAYLOADS[0] in result and PAYLOADS[1] in result
    assert page.evaluate("typeof window.__pwned") == "undefined"
    markup = "#wl-steps img, #wl-steps script, #wl-steps a[href^='javascript']"
    assert page.locator(markup).count() == 0
    assert page.locator("#wl-timeline .bar.approval").count() == 1
    assert page.locator(".step.err").count() == 1 and "1" in page.locator("#wl-errors").inner_text()
    screenshot(page, tmp_path, "injection-page")


def test_deep_link_keyboard_search_and_error_filter(
    injection_run: Path, open_page, tmp_path: Path
) -> None:
    """#step-N focuses that step; j moves on and updates the hash; search and errors filter."""
    page_path, (view,) = _page_for([injection_run / "atof"], tmp_path / "nav.html")
    page = open_page(page_path, "#step-2")
    assert page.locator(".step.target").get_attribute("id") == "step-2"
    page.keyboard.press("j")
    assert page.locator(".step.target").get_attribute("id") == "step-3"
    assert page.evaluate("location.hash") == "#step-3"
    page.keyboard.press("/")
    page.keyboard.type("rm -rf")
    expect(page.locator("#wl-steps .step")).to_have_count(1)
    assert " of " in page.locator("#wl-count").inner_text()
    page.fill("#wl-q", "")
    expect(page.locator("#wl-steps .step")).to_have_count(len(view["steps"]))
    page.check("#wl-errs")
    expect(page.locator("#wl-steps .step")).to_have_count(1)
    assert page.locator("#wl-steps .step.err .errtag").count() >= 1
    assert len(view["steps"]) > 1


def test_long_text_folds_and_copy_button_copies(open_page, tmp_path: Path, browser) -> None:
    """A long result folds behind 'show all'; the copy button puts the arguments on clipboard."""
    document = harbor_trajectory("ATIF-v1.8")
    long_text = "\n".join(f"line {n} of the listing" for n in range(400))
    document["steps"][2]["observation"]["results"][0]["content"] = long_text
    source = tmp_path / "harbor.json"
    source.write_text(json.dumps(document))
    page_path, _ = _page_for([source], tmp_path / "fold.html")
    page = open_page(page_path)
    result = page.locator("#step-3 pre.res")
    assert "line 399 of" not in result.inner_text()
    result.locator("button.fold").click()
    assert "line 399 of the listing" in result.inner_text()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator("#step-3 .call .lbl button.copy").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert json.loads(copied) == {"cmd": "ls"}
    assert "$0.0150" in page.locator("#wl-header").inner_text()


def test_several_files_give_a_picker(demo_run: Path, open_page, tmp_path: Path) -> None:
    """Several inputs make one page whose picker lists and switches between the trajectories."""
    harbor = tmp_path / "harbor.json"
    harbor.write_text(json.dumps(harbor_trajectory()))
    inputs = [RELAY_DATA / "relay_manual.atif.json", harbor, demo_run / "atof"]
    page_path, views = _page_for(inputs, tmp_path / "many.html")
    page = open_page(page_path)
    assert page.locator("#wl-picker li").count() == len(views) >= 3
    page.locator("#wl-picker li a").nth(1).click()
    assert page.locator("#wl-title").inner_text() == "harbor-run-1"
    _assert_every_step_and_bar(page, views[1])
    page.keyboard.press("]")
    assert page.locator("#wl-title").inner_text() == views[2]["title"]
    screenshot(page, tmp_path, "picker-page")


def test_atof_input_page_matches_its_trajectory(open_page, tmp_path: Path) -> None:
    """An ATOF file converted on the fly draws every step and one bar per span."""
    (loaded,) = load_trajectory(RELAY_DATA / "relay_manual.atof.jsonl")
    page_path = write_page([loaded], tmp_path / "atof.html")
    page = open_page(page_path)
    _assert_every_step_and_bar(page, build_view(loaded))
    assert "exact" in page.locator("#wl-timeline .legend").inner_text()
