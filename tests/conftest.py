"""Suite-wide fixtures: the shipped scripted-server fixture, and one headless Debian Chromium
per module for the browser tests (the viewer's and ``wayline serve``'s).

Browser tests drive ``/usr/bin/chromium`` (``WAYLINE_CHROMIUM`` to change it) through
playwright's Python package: nothing downloads a browser. Without chromium or playwright they
skip, except under ``CI=true`` where they fail: CI must run them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["wayline.testing.fixtures"]

CHROMIUM = os.environ.get("WAYLINE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(autouse=True, scope="session")
def _session_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user cache (parsed YAML, price lookups) is the test session's own, never the
    runner's ``~/.cache/wayline``; processes the tests start inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
        yield


def _browser_or_skip() -> Any:
    ci = os.environ.get("CI", "").lower() == "true"
    problem = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        problem = "the playwright Python package is not installed"
    if problem is None and not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        problem = f"chromium not found at {CHROMIUM} (apt-get install chromium)"
    if problem is not None:
        if ci:
            pytest.fail(f"browser tests must run under CI=true: {problem}")
        pytest.skip(problem)
    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Debian Chromium for the whole module (playwright drives it, never installs)."""
    sync_playwright = _browser_or_skip()
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
