"""Serve fixtures: sessions recorded for real (tests/store's recording), a ``wayline serve``
process over a copy of them, and one headless Debian Chromium per module for the browser tests.

Browser tests drive ``/usr/bin/chromium`` through playwright's Python package (nothing
downloads a browser). Without chromium or playwright they skip, except under ``CI=true`` where
they fail: CI must run them.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "store"))

from serve_support import Served
from store_support import Recorded, record


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Seven sessions recorded by wayline.Agent and ``wayline chat`` (tests/store's
    store_support): tools and CJK text, a delegation and its child, a failure, max_turns, a
    cancelled turn, a chat that ran ``terminal``. Read-only: tests that change files copy it."""
    base = tmp_path_factory.mktemp("serve-record")
    work = base / "work"
    work.mkdir()
    return record(base / "home", work)


@pytest.fixture(scope="session")
def served(recorded: Recorded, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``wayline serve`` (no PATH: the home's recordings) over a copy of the recorded home."""
    base = tmp_path_factory.mktemp("served")
    home = base / "home"
    shutil.copytree(recorded.home, home)
    server = Served(home=home, cwd=base)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (1280x900); page errors and console errors fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    tab = context.new_page()
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield tab
    context.close()
    assert not errors, errors
