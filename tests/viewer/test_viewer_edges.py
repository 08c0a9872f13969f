"""The page's rough edges, in headless Chromium: full card values, a readable axis at 480 px,
1-based numbering, search hits marked, bidirectional controls escaped, rewritten calls marked."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from viewer_support import RELAY_DATA, screenshot

from wayline.viewer import build_view, load_trajectories, load_trajectory, write_page
from wayline.viewer.rewrite import call_rewrite, changes, trace_entries

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI=true) before expect is used
    expect = None

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
LONG_SESSION = "session-" + "-".join(f"part{n:02d}" for n in range(14))
BASE = 1_795_293_778.0


def _document() -> dict[str, Any]:
    """An ATIF document: a long session id, bidi controls in text, a 75-minute timeline, a long
    result whose only search hit lies past its fold."""
    listing = "\n".join(f"line {n} of the listing" for n in range(300)) + "\nthe needle at the end"
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": "open the report"}]
    for n in range(2, 6):
        start = BASE + (n - 2) * 1125.0
        call_id = f"call_{n}"
        name = "evil\u202etxt.exe" if n == 2 else f"file{n}.txt"
        output = (
            f"opened {name} \u2066mixed\u2069 \u200f" if n == 2 else listing if n == 4 else "ok"
        )
        steps.append(
            {
                "step_id": n,
                "source": "agent",
                "message": f"Reading {name}",
                "tool_calls": [{"tool_call_id": call_id, "function_name": "read_file",
                                "arguments": {"path": name}}],
                "observation": {"results": [{"source_call_id": call_id, "content": output}]},
                "extra": {
                    "invocation": {"invocation_id": f"llm-{n}", "status": "completed",
                                   "start_timestamp": start, "end_timestamp": start + 600.0},
                    "tool_invocations": [{"invocation_id": call_id, "status": "completed",
                                          "start_timestamp": start + 600.0,
                                          "end_timestamp": start + 1125.0}],
                },
            }
        )  # fmt: skip
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": LONG_SESSION,
        "agent": {"name": "edge-agent", "version": "1", "model_name": "m"},
        "steps": steps,
    }


def _page(tmp_path: Path) -> Path:
    source = tmp_path / "edges.json"
    source.write_text(json.dumps(_document()))
    return write_page(load_trajectory(source), tmp_path / "edges.html")


def test_cards_show_full_values_at_480_px(open_page, tmp_path: Path) -> None:
    """START, END and SESSION cards show their whole value (wrapped) and name it in a title."""
    page = open_page(_page(tmp_path), width=480)
    for name in ("session", "start", "end"):
        card = page.locator("#wl-header .kv", has=page.locator(f"b:text-is('{name}')"))
        value = card.locator("span")
        text = value.inner_text()
        assert text and text != "–"
        assert card.get_attribute("title") == f"{name}: {text}"
        fits = value.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1")
        assert fits, f"{name} card is cut off: {text}"
    assert LONG_SESSION in page.locator("#wl-header").inner_text().replace("\n", "")
    screenshot(page, tmp_path, "edges-480")


def test_timeline_axis_labels_do_not_overlap_at_480_px(open_page, tmp_path: Path) -> None:
    """At 480 px the axis keeps at least two labels, none overlapping, all inside the page."""
    page = open_page(_page(tmp_path), width=480)
    boxes = [label.bounding_box() for label in page.locator("#wl-axis span").all()]
    assert len(boxes) >= 2
    for left, right in itertools.pairwise(boxes):
        assert left is not None and right is not None
        assert left["x"] + left["width"] <= right["x"], (left, right)
    assert all(b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 480 for b in boxes)
    page.set_viewport_size({"width": 1280, "height": 900})  # wider: more labels, redrawn
    expect(page.locator("#wl-axis span")).not_to_have_count(len(boxes))


def test_numbering_is_one_based_in_links_picker_and_subagents(
    rewrite_run: Path, open_page, tmp_path: Path
) -> None:
    """Trajectory #t1 is the picker's first entry; sub-agent #sub-1- and step-1-N links agree."""
    inputs = [rewrite_run / "atif", RELAY_DATA / "relay_plugin.atif.json"]
    trajectories = load_trajectories(inputs)
    page_path = write_page(trajectories, tmp_path / "two.html")
    page = open_page(page_path, "#t2/step-2")
    hrefs = [a.get_attribute("href") for a in page.locator("#wl-picker li a").all()]
    assert hrefs == ["#t1", "#t2"]
    assert page.locator("#wl-title").inner_text() == trajectories[1].title
    assert page.locator(".step.target").get_attribute("id") == "step-2"
    page.keyboard.press("j")
    assert page.evaluate("location.hash") == "#t2/step-3"
    sub = build_view(trajectories[1])["subs"][0]["steps"][0]
    page.evaluate("(h) => { location.hash = h; }", f"#t2/step-1-{sub['i']}")
    expect(page.locator(".step.target")).to_have_id(f"step-1-{sub['i']}")
    assert page.locator("#sub-1-").count() == 1 and page.locator("#sub-0-").count() == 0
    page.locator("#wl-picker li a").first.click()
    assert page.evaluate("location.hash") == "#t1"


def test_search_marks_hits_and_opens_the_fold_they_are_in(open_page, tmp_path: Path) -> None:
    """A query filters to its steps, wraps each hit in <mark>, and unfolds text hiding a hit."""
    page = open_page(_page(tmp_path))
    page.keyboard.press("/")
    page.keyboard.type("NEEDLE")
    expect(page.locator("#wl-count")).to_have_text("1 of 5 steps")
    marks = page.locator("#wl-steps mark")
    expect(marks).to_have_count(1)
    assert marks.first.inner_text() == "needle"
    assert marks.first.is_visible()  # past the fold of a 301-line result, which opened
    page.fill("#wl-q", "")
    expect(page.locator("#wl-steps .step")).to_have_count(5)
    assert page.locator("#wl-steps mark").count() == 0


def test_bidirectional_controls_are_shown_escaped(open_page, tmp_path: Path) -> None:
    """No bidi control reaches the page's text; each shows as a marked ⟨U+XXXX⟩ instead."""
    page = open_page(_page(tmp_path))
    text = page.evaluate("document.body.textContent + document.title")
    assert not any(c in text for c in BIDI)
    step = page.locator("#step-2").inner_text()
    assert "evil⟨U+202E⟩txt.exe" in step and "⟨U+2066⟩mixed⟨U+2069⟩" in step
    assert page.locator("#step-2 .bidi").count() >= 4
    titles = page.evaluate("[...document.querySelectorAll('[title]')].map((e) => e.title).join()")
    assert not any(c in titles for c in BIDI)


def test_rewritten_tool_call_shows_who_changed_it_and_why(
    rewrite_run: Path, open_page, tmp_path: Path
) -> None:
    """A real session's rewritten call: the model's EUR, the executed USD, fx-policy's reason;
    the call the middleware left alone has no mark; the model requests name their middleware."""
    for source in (rewrite_run / "atif", rewrite_run / "atof"):
        page_path = write_page(load_trajectories([source]), tmp_path / f"{source.name}.html")
        page = open_page(page_path)
        rewritten = page.locator(".call.rw")
        expect(rewritten).to_have_count(1)
        assert "rewritten by fx-policy" in rewritten.locator(".rwtag").inner_text()
        assert '"EUR"' in rewritten.locator("pre.args").first.inner_text()
        assert '"USD"' in rewritten.locator("pre.xargs").inner_text()
        assert "currency: EUR → USD" in rewritten.locator(".changes").inner_text()
        assert "fx-policy: settle in USD only" in rewritten.locator(".trace").inner_text()
        assert "2.00 USD" in rewritten.locator("pre.res").inner_text()
        other = page.locator(".call", has_text="JPY")
        assert other.count() == 1 and "rw" not in (other.get_attribute("class") or "")
        requests = page.locator(".step > .sh .mwtag")
        assert requests.count() >= 1
        assert "tuner" in requests.first.inner_text()
        assert "steadier answers" in page.locator(".step > .trace").first.inner_text()
        screenshot(page, tmp_path, f"rewrite-{source.name}")


def test_tree_names_the_rewrite(rewrite_run: Path) -> None:
    """`wayline view --tree` shows the executed arguments, the change and fx-policy's reason."""
    (atif,) = sorted((rewrite_run / "atif").glob("*.json"))
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "view", "--tree", str(atif)],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "changed currency: EUR → USD" in proc.stdout
    assert "middleware fx-policy: settle in USD only" in proc.stdout
    assert proc.stdout.count("ran with") == 1


def test_rewrite_fields_are_optional_and_tolerant() -> None:
    """Absent, empty or odd middleware fields give no mark; entries keep every field as text."""
    assert call_rewrite({"arguments": {"a": 1}}) == {}
    assert call_rewrite({"arguments": {"a": 1}, "extra": {"executed_arguments": {"a": 1}}}) == {}
    assert call_rewrite({"arguments": {"a": 1}, "extra": "odd"}) == {}
    same = {"arguments": {"a": 1}, "extra": {"middleware_trace": [{"source": "audit"}]}}
    assert call_rewrite(same) == {"mt": [{"who": "audit"}]}
    assert trace_entries("not a list") == []
    entries = trace_entries([{"name": "pin", "source": "sandbox", "reason": 7, "field": "cwd"}, 3])
    assert entries == [
        {"who": "sandbox · pin", "why": "7", "more": {"field": "cwd"}},
        {"who": "?", "why": "3"},
    ]
    assert changes({"a": {"b": 1, "c": 2}}, {"a": {"b": 2}, "d": True}) == [
        "a.b: 1 → 2",
        "a.c: 2 → (removed)",
        "d: (added) → true",
    ]
    assert changes([1], [1, 2]) == ["(arguments): [1] → [1, 2]"]
    assert changes(1, 1.0) == ["(arguments): 1 → 1.0"]
