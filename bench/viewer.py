"""Benchmark: ``wayline view`` page size per step and first-screen time in headless Chromium.

Builds synthetic Relay-shaped ATIF trajectories (a user step, then agent steps that each make an
LLM call and two parallel tool calls, with invocation times), renders each page, and opens the
10,000-step page from file:// in Debian's Chromium (``/usr/bin/chromium``, driven by playwright;
nothing is downloaded). First screen = the page script's ``performance.now()`` when its first
draw (header, timeline, first chunk of steps) is done. Goal: under 2,000 ms at 10,000 steps, and
bytes/step at 10,000 steps about equal to bytes/step at 1,000 (linear growth).

    .venv/bin/python bench/viewer.py [--sizes 1000,10000] [--runs 3] [--keep DIR]

Prints numbers only; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from wayline.viewer import load_trajectory, render_page

BASE = 1_795_293_778.0
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def trajectory(steps: int) -> dict[str, Any]:
    """A Relay-shaped ATIF document with ``steps`` steps (one user step, the rest agent steps)."""
    out: list[dict[str, Any]] = [
        {"step_id": 1, "source": "user", "message": "Work through the backlog, item by item."}
    ]
    clock = BASE
    for n in range(2, steps + 1):
        start, clock = clock, clock + 0.4
        calls, results, invocations = [], [], []
        for k in range(2):
            call_id = f"call_{n}_{k}"
            calls.append(
                {"tool_call_id": call_id, "function_name": "read_file",
                 "arguments": {"path": f"notes/item-{n}-{k}.txt"}}
            )  # fmt: skip
            results.append(
                {"source_call_id": call_id,
                 "content": json.dumps({"content": f"item {n}.{k}: " + "lorem ipsum " * 8})}
            )  # fmt: skip
            invocations.append(
                {"invocation_id": call_id, "start_timestamp": round(clock, 3),
                 "end_timestamp": round(clock + 0.05, 3), "status": "completed"}
            )  # fmt: skip
        clock += 0.06
        out.append(
            {
                "step_id": n,
                "source": "agent",
                "model_name": "bench-model",
                "message": f"Step {n}: reading the next two items of the backlog.",
                "tool_calls": calls,
                "observation": {"results": results},
                "metrics": {"prompt_tokens": 1000 + n, "completion_tokens": 40},
                "llm_call_count": 1,
                "extra": {
                    "invocation": {
                        "invocation_id": f"llm-{n}",
                        "status": "completed",
                        "start_timestamp": round(start, 3),
                        "end_timestamp": round(start + 0.4, 3),
                    },
                    "tool_invocations": invocations,
                },
            }
        )
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": f"bench-{steps}",
        "agent": {"name": "bench-agent", "version": "1", "model_name": "bench-model"},
        "steps": out,
    }


def first_screen_ms(page_path: Path, runs: int) -> list[float]:
    """Milliseconds from navigation to the page's first full draw, ``runs`` fresh loads."""
    from playwright.sync_api import sync_playwright

    times: list[float] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            for _ in range(runs):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(page_path.resolve().as_uri())
                page.wait_for_selector("html[data-ready='1']", timeout=60_000)
                times.append(float(page.evaluate("window.__wlReady")))
                page.close()
        finally:
            browser.close()
    return times


def run(sizes: tuple[int, ...], runs: int, keep: Path | None) -> None:
    """Render a page per size, print bytes/step, the ratio, and first-screen time at the largest."""
    directory = keep or Path(tempfile.mkdtemp(prefix="wayline-bench-viewer-"))
    directory.mkdir(parents=True, exist_ok=True)
    per_step: dict[int, float] = {}
    pages: dict[int, Path] = {}
    for size in sizes:
        source = directory / f"bench-{size}.json"
        source.write_text(json.dumps(trajectory(size)))
        began = time.perf_counter()
        html = render_page(load_trajectory(source))
        render_s = time.perf_counter() - began
        pages[size] = directory / f"bench-{size}.html"
        pages[size].write_text(html, encoding="utf-8")
        size_bytes = len(html.encode("utf-8"))
        per_step[size] = size_bytes / size
        print(
            f"viewer page  {size:>7,} steps: {size_bytes:>12,} bytes  "
            f"{per_step[size]:8.1f} bytes/step  (load+render {render_s * 1000:.0f} ms in Python)"
        )
    small, large = min(sizes), max(sizes)
    ratio = per_step[large] / per_step[small]
    print(
        f"viewer page  bytes/step {large:,} vs {small:,}: "
        f"{per_step[large]:.1f} / {per_step[small]:.1f} = {ratio:.3f}x  (goal: ~1.0, linear)"
    )
    times = first_screen_ms(pages[large], runs)
    print(
        f"viewer first screen at {large:,} steps in headless Chromium: "
        f"median {statistics.median(times):.0f} ms over {runs} loads "
        f"(min {min(times):.0f}, max {max(times):.0f}; goal < 2000 ms)"
    )


def main() -> None:
    """Command line: sizes, loads per measurement, and a directory to keep the pages in."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    run(sizes, args.runs, args.keep)


if __name__ == "__main__":
    main()
