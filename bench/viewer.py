"""Benchmark: ``wayline view`` at 100,000 steps: page size, first screen, JS heap and search.

Builds a synthetic coding-agent session in wayline's ATIF shape: each agent step has a short
thought, one tool call (``read_file``, ``search_files`` or ``terminal`` with an OpenAI-style
random call id) and about 400 characters of output drawn from a synthetic code base of 40 files
(so outputs repeat only when the same lines are read again, as in real sessions), token
metrics and recorded invocation times. It renders pages at 1,000 and 100,000 steps, and opens
the large one from file:// in Debian's Chromium (``/usr/bin/chromium``, driven by playwright;
nothing is downloaded) to measure:

- first screen: the page script's ``performance.now()`` once its first screen is painted
  (data inflated and parsed, header, timeline and first steps drawn), median of ``--runs`` loads;
- JS heap: ``performance.memory.usedJSHeapSize`` after a garbage collection, once the page has
  appended every step and built its search text (the largest of the loads);
- search: from the keydown of a query's last character to the first ``<mark>`` painted in the
  step list (the other characters are typed first, as a person would);
- page bytes per step, and its ratio between the 100k and 1k pages.

    .venv/bin/python bench/viewer.py [--sizes 1000,100000] [--runs 3] [--keep DIR] [--json]

Prints measured/goal lines (``--json``: one JSON list of rows for ``python -m bench``); it asserts
nothing about time. Without Chromium or playwright it prints why and measures sizes only.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from wayline.viewer import load_trajectory, render_page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-precise-memory-info",
    "--js-flags=--expose-gc",
]
BASE = 1_795_293_778.0
QUERY = "parse_manifest_entry"  # one function name of the synthetic code base
GOALS = {"first": 1000.0, "heap": 300.0, "search": 300.0, "bytes": 250.0, "ratio": 1.2}

_WORDS = " ".join(
    (
        "config request session token cache entry manifest record buffer result handler worker",
        "queue event scope parent child batch window frame payload schema field value index path",
        "offset limit stream reader writer client server retry timeout status error message user",
        "agent tool call model usage metric span trace plugin hook filter",
    )
).split()
_TEMPLATES = (
    "def {a}_{b}(self, {c}: {T}, {d}: int = {n}) -> {T}:",
    '    """Return the {a} {b} for {c}, or None when the {d} is empty."""',
    "    {a}_{b} = self._{c}.get({d}_{a}, {n})",
    "    if {a} is None or len({b}) > {n}:",
    '        raise ValueError(f"{a} {b}: {{{c}!r}} is not a valid {d}")',
    "    for {a} in sorted(self.{b}_{c}, key=lambda item: item.{d}):",
    "        {a}.{b}({c}=self.{d}, timeout={n}.0)",
    "    return {T}({a}={b}_{c}, {d}=len({a}))",
    "class {T}{U}({T}):",
    "    {a}: list[{T}] = field(default_factory=list)",
    "import {a}.{b} as {c}_{d}",
    "        self.{a}_{b}.append(({c}, {d}, {n}))",
    "# {a} {b} are kept per {c} so a {d} never sees a stale {a}",
    '    log.debug("{a} %s {b} %d", {c}, {n})',
)


def _code_base(rng: random.Random) -> list[list[str]]:
    files = []
    for _ in range(40):
        lines = []
        for _ in range(200):
            a, b, c, d = (rng.choice(_WORDS) for _ in range(4))
            t, u = rng.choice(_WORDS).title(), rng.choice(_WORDS).title()
            line = rng.choice(_TEMPLATES).format(
                a=a, b=b, c=c, d=d, T=t, U=u, n=rng.randint(0, 999)
            )
            lines.append(line)
        files.append(lines)
    files[7][120] = "def parse_manifest_entry(raw: bytes, strict: bool = True) -> Entry:"
    return files


def _call_id(rng: random.Random) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return "call_" + "".join(rng.choice(alphabet) for _ in range(24))


def _thought(rng: random.Random, path: str) -> str:
    verbs = ("Check", "Read", "Look at", "Find", "Open", "Inspect")
    goals = (
        *("how it handles the empty case", "where the retry limit is set", "the callers"),
        *("what the test expects", "the schema it validates", "why the timeout fires"),
    )
    return f"{rng.choice(verbs)} {path} to see {rng.choice(goals)}."


def _tool(rng: random.Random, files: list[list[str]]) -> tuple[str, dict[str, Any], str]:
    index = rng.randrange(len(files))
    path = f"src/app/{_WORDS[index]}_{_WORDS[(index * 7) % len(_WORDS)]}.py"
    start = rng.randrange(0, 190)
    lines = []
    for number, line in enumerate(files[index][start:], start + 1):
        lines.append(f"{number:6d}|{line}")
        if sum(len(x) + 1 for x in lines) >= 400:
            break
    text = "\n".join(lines)
    kind = rng.random()
    if kind < 0.6:
        output = json.dumps({"content": text, "total_lines": 200, "truncated": False})
        return "read_file", {"path": path, "offset": start + 1, "limit": len(lines)}, output
    if kind < 0.85:
        word = rng.choice(_WORDS)
        output = json.dumps({"matches": [f"{path}:{ln}" for ln in lines[:6]], "count": len(lines)})
        return "search_files", {"pattern": word, "path": "src/app"}, output
    command = f"sed -n {start + 1},{start + len(lines)}p {path}"
    return "terminal", {"command": command}, json.dumps({"output": text, "exit_code": 0})


def trajectory(steps: int, seed: int = 7) -> dict[str, Any]:
    """A wayline-shaped ATIF document: one user step, then ``steps - 1`` coding-agent steps."""
    rng = random.Random(seed)
    files = _code_base(rng)
    out: list[dict[str, Any]] = [
        {"step_id": 1, "source": "user", "message": "Fix the failing manifest test.",
         "timestamp": "2026-11-21T20:43:53.256Z"}
    ]  # fmt: skip
    clock = BASE
    for n in range(2, steps + 1):
        name, arguments, output = _tool(rng, files)
        call_id = _call_id(rng)
        llm_start, llm_end = clock, clock + rng.uniform(0.3, 2.5)
        tool_end = llm_end + rng.uniform(0.001, 0.2)
        clock = tool_end
        out.append(
            {
                "step_id": n,
                "source": "agent",
                "model_name": "gpt-4.1",
                "message": _thought(rng, str(arguments.get("path", "the tree"))),
                "tool_calls": [
                    {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
                ],
                "observation": {"results": [{"source_call_id": call_id, "content": output}]},
                "metrics": {
                    "prompt_tokens": 2000 + 130 * (n % 200),
                    "completion_tokens": rng.randint(20, 90),
                    "cached_tokens": 1800 + 128 * (n % 200),
                },
                "extra": {
                    "invocation": {
                        "invocation_id": f"llm-{n}",
                        "status": "completed",
                        "start_timestamp": round(llm_start, 3),
                        "end_timestamp": round(llm_end, 3),
                    },
                    "tool_invocations": [
                        {
                            "invocation_id": call_id,
                            "status": "completed",
                            "start_timestamp": round(llm_end, 3),
                            "end_timestamp": round(tool_end, 3),
                        }
                    ],
                },
            }
        )
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": f"bench-{steps}",
        "agent": {"name": "bench-agent", "version": "1", "model_name": "gpt-4.1"},
        "steps": out,
    }


def _browser_problem() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


# Installed before the query's last keystroke: keydown time, then the first painted <mark> of
# the whole query (a frame after it is in the DOM) sets window.__wlSearchMs.
_SEARCH_JS = """() => {
  const steps = document.getElementById('wl-steps');
  let t0 = null;
  window.__wlSearchMs = undefined;
  const first = () => { t0 = performance.now(); };
  document.addEventListener('keydown', first, {capture: true, once: true});
  const done = () => { window.__wlSearchMs = performance.now() - t0; };
  const watch = new MutationObserver(() => {
    const m = steps.querySelector('mark');
    if (t0 !== null && m && m.textContent.toLowerCase() === 'QUERY') {
      watch.disconnect();
      requestAnimationFrame(() => setTimeout(done, 0));
    }
  });
  watch.observe(steps, {childList: true, subtree: true});
}""".replace("QUERY", QUERY.lower())


def measure_browser(page_path: Path, runs: int) -> dict[str, float]:
    """First screen (median of ``runs`` loads), heap and search latency (median) for one page."""
    from playwright.sync_api import sync_playwright

    firsts: list[float] = []
    searches: list[float] = []
    heap = 0.0
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for _ in range(runs):
                # a context of its own per load: no heap shared with the previous load's page
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                page.goto(page_path.resolve().as_uri())
                page.wait_for_selector("html[data-ready='1']", timeout=120_000)
                firsts.append(float(page.evaluate("window.__wlReady")))
                page.wait_for_function("() => window.__wlHay === 1", timeout=120_000)
                page.evaluate("window.gc && window.gc()")
                heap = max(heap, float(page.evaluate("performance.memory.usedJSHeapSize")) / 1e6)
                page.focus("#wl-q")
                page.keyboard.type(QUERY[:-1])
                page.wait_for_function(
                    "() => document.getElementById('wl-count').textContent.includes(' of ')"
                )
                page.evaluate(_SEARCH_JS)
                page.keyboard.press(QUERY[-1])
                page.wait_for_function("() => window.__wlSearchMs !== undefined")
                searches.append(float(page.evaluate("window.__wlSearchMs")))
                context.close()
        finally:
            browser.close()
    return {
        "first": statistics.median(firsts),
        "heap": heap,
        "search": statistics.median(searches),
    }


def _row(name: str, value: float, unit: str, goal: float, ratio: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {"line": "V", "name": name, "unit": unit}
    row["ratio" if ratio else "wayline"] = round(value, 3 if ratio else 1)
    row["goal"] = f"<= {goal:g}{'x' if ratio else ' ' + unit}"
    row["passed"] = value <= goal
    return row


def run(sizes: tuple[int, int], runs: int, keep: Path | None) -> list[dict[str, Any]]:
    """Render both pages, measure the large one in Chromium; the measured/goal rows."""
    directory = keep or Path(tempfile.mkdtemp(prefix="wayline-bench-viewer-"))
    directory.mkdir(parents=True, exist_ok=True)
    per_step: dict[int, float] = {}
    pages: dict[int, Path] = {}
    rows: list[dict[str, Any]] = []
    small, large = sizes
    for size in sizes:
        source = directory / f"bench-{size}.json"
        source.write_text(json.dumps(trajectory(size)))
        began = time.perf_counter()
        html = render_page(load_trajectory(source))
        seconds = time.perf_counter() - began
        pages[size] = directory / f"bench-{size}.html"
        pages[size].write_text(html, encoding="utf-8")
        per_step[size] = len(html.encode("utf-8")) / size
        print(
            f"viewer page {size:>7,} steps: {len(html.encode()):>12,} bytes, "
            f"{per_step[size]:.1f} bytes/step (load + render in Python {seconds:.1f} s)",
            file=sys.stderr,
        )
    problem = _browser_problem()
    if problem is None:
        got = measure_browser(pages[large], runs)
        rows.append(_row(f"first screen at {large:,} steps", got["first"], "ms", GOALS["first"]))
        rows.append(_row(f"JS heap at {large:,} steps", got["heap"], "MB", GOALS["heap"]))
        rows.append(
            _row(f"search keystroke to first hit, {large:,} steps", got["search"], "ms",
                 GOALS["search"])
        )  # fmt: skip
    else:
        print(f"viewer: browser lines skipped: {problem}", file=sys.stderr)
    rows.append(_row("page bytes per step (realistic steps)", per_step[large], "B", GOALS["bytes"]))
    rows.append(
        _row(f"bytes per step, {large:,} vs {small:,}", per_step[large] / per_step[small], "x",
             GOALS["ratio"], ratio=True)
    )  # fmt: skip
    return rows


def main() -> None:
    """Command line: the two sizes, loads per measurement, a directory to keep the pages in."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000", help="small,large")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON line")
    args = parser.parse_args()
    small, large = (int(s) for s in args.sizes.split(","))
    rows = run((small, large), args.runs, args.keep)
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        value = f"{row['ratio']}x" if "ratio" in row else f"{row['wayline']} {row['unit']}"
        verdict = "pass" if row["passed"] else "MISS"
        print(f"viewer {row['name']}: {value} measured / {row['goal']} goal  {verdict}")


if __name__ == "__main__":
    main()
