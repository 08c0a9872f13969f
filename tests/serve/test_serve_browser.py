"""``wayline serve`` in Debian's Chromium: the list, its filters and search, a session, a deep
link into the viewer, and the diff of two sessions.

``WAYLINE_UPDATE_SCREENSHOTS=1`` saves the screenshots docs/sessions.md shows.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from serve_support import Served
from store_support import Recorded

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


def screenshot(page: Any, name: str) -> None:
    """Save docs/images/NAME when WAYLINE_UPDATE_SCREENSHOTS=1 (the docs' pictures)."""
    if os.environ.get("WAYLINE_UPDATE_SCREENSHOTS") == "1":
        page.screenshot(path=str(IMAGES / name), full_page=True)


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("html[data-ready='1']", timeout=15_000)


def _listed(page: Any) -> set[str]:
    return set(page.eval_on_selector_all("#rows tr", "rows => rows.map(r => r.dataset.session)"))


def test_list_shows_every_session_with_charts(
    page: Any, served: Served, recorded: Recorded
) -> None:
    """The list shows every recorded session with its status, and the nine charts."""
    _open(page, served.base + "/")
    assert _listed(page) == set(recorded.ids.values())
    failed = page.locator(f'#rows tr[data-session="{recorded.ids["failed"]}"] .status')
    assert failed.inner_text() == "failed"
    assert page.locator("#charts figure.chart").count() == 9
    assert page.locator("#charts rect").count() > 0
    screenshot(page, "serve-list.png")


def test_filter_and_search_from_the_form(page: Any, served: Served, recorded: Recorded) -> None:
    """Choosing a status, then searching Chinese text, lists exactly the matching sessions."""
    _open(page, served.base + "/")
    page.select_option("select[name=status]", "failed")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/?*status=failed*")
    page.wait_for_selector("html[data-ready='1']")
    assert _listed(page) == {recorded.ids["failed"]}
    page.select_option("select[name=status]", "")
    page.fill("input[name=q]", "答案")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/?*q=*")
    page.wait_for_selector("#hit-rows tr")
    page.wait_for_selector("html[data-ready='1']")
    assert _listed(page) == {recorded.ids["tools"]}
    assert page.locator("#hit-rows mark").first.inner_text() == "答案"
    link = page.locator("#hit-rows td.step a").first.get_attribute("href")
    assert link == f"/sessions/{recorded.ids['tools']}/view?step=3"


def test_open_a_session_and_deep_link_a_step(page: Any, served: Served, recorded: Recorded) -> None:
    """A session opens from the list; its step link opens the viewer focused on that step."""
    session = recorded.ids["tools"]
    _open(page, served.base + "/")
    page.click(f'#rows tr[data-session="{session}"] td.id a')
    page.wait_for_url(f"**/sessions/{session}")
    page.wait_for_selector("#session[data-steps='3']")
    assert page.locator("#status .status").inner_text() == "completed"
    assert "add, boom" in page.locator("[data-card=tools] dd").inner_text()
    page.click("#steps tr[data-step='3'] td.step a")
    page.wait_for_url(f"**/sessions/{session}/view#step-3")
    page.wait_for_selector("html[data-ready='1']")
    assert page.locator(".step.target").get_attribute("id") == "step-3"
    assert "答案是三" in page.locator("#step-3").inner_text()


def test_a_delegated_child_opens_at_its_own_steps(
    page: Any, served: Served, recorded: Recorded
) -> None:
    """A delegated child's viewer link, and its step links, open its parent's page focused
    on the child's own steps inside it."""
    child = recorded.ids["child"]
    steps = served.get(f"/api/sessions/{child}").json()["steps"]
    last = steps[-1]["step"]
    assert "child done" in steps[-1]["text"]
    _open(page, f"{served.base}/sessions/{child}")
    page.click("#open-view")
    page.wait_for_url(f"**/sessions/{child}/view#step-1-1")
    page.wait_for_selector(".step.target")
    assert page.locator(".step.target").get_attribute("id") == "step-1-1"
    _open(page, f"{served.base}/sessions/{child}")
    page.wait_for_selector(f"#session[data-steps='{len(steps)}']")
    page.click(f"#steps tr[data-step='{last}'] td.step a")
    page.wait_for_url(f"**/sessions/{child}/view#step-1-{last}")
    page.wait_for_selector(".step.target")
    target = page.locator(".step.target")
    assert target.get_attribute("id") == f"step-1-{last}"
    assert "مرحبا بالعالم" in target.inner_text()
    _open(page, served.base + "/")
    view = page.locator(f'#rows tr[data-session="{child}"] a', has_text="view")
    assert view.get_attribute("href") == f"/sessions/{child}/view?step=1"


def test_diff_of_two_picked_sessions(page: Any, served: Served, recorded: Recorded) -> None:
    """Two sessions picked in the list open the diff page of the two."""
    first, second = recorded.ids["tools"], recorded.ids["max_turns"]
    _open(page, served.base + "/")
    button = page.locator("#diff")
    assert button.is_disabled()
    page.check(f'#rows tr[data-session="{first}"] input.pick')
    page.check(f'#rows tr[data-session="{second}"] input.pick')
    assert button.is_enabled()
    button.click()
    page.wait_for_url("**/diff?*")
    assert page.locator("h1").inner_text() == f"wayline diff: session {first} → session {second}"
    assert page.locator("table tr").count() > 1
    screenshot(page, "serve-diff.png")
