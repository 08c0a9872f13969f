"""Viewer fixtures: trajectories written by real wayline runs, and one headless Chromium per module.

Browser tests drive Debian's ``/usr/bin/chromium`` through playwright's Python package (nothing
downloads a browser). Without chromium or playwright they skip, except under ``CI=true`` where
they fail: CI must run them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_support import INJECTION_SCRIPT, PAYLOADS

from wayline.testing.server import ScriptedServer


def _wayline(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wayline", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``wayline demo --keep DIR`` run for real (scripted model, delegation, parallel reads)."""
    out = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    proc = _wayline(["demo", "--keep", str(out)], env, out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "page:" in proc.stdout, proc.stdout[-2000:]
    return out


@pytest.fixture(scope="session")
def injection_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ``wayline chat`` session whose file, answer and denied approval carry payloads."""
    base = tmp_path_factory.mktemp("inject")
    home, work = base / "home", base / "work"
    home.mkdir()
    work.mkdir()
    (work / "payload.txt").write_text("\n".join(PAYLOADS) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env.pop("OPENAI_API_KEY", None)
    env.update(
        WAYLINE_HOME=str(home),
        WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY=str(base / "atof"),
        WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY=str(base / "atif"),
    )
    with ScriptedServer(INJECTION_SCRIPT) as server:
        (home / "config.yaml").write_text(
            "model:\n  provider: custom\n  default: scripted-model\n"
            f"  base_url: {server.base_url}\n"
            "plugins:\n  enabled: [observability/relay]\n"
        )
        # No --yolo and no terminal: the dangerous command's approval is denied.
        proc = _wayline(["chat", "-q", "read the payload", "-Q", "--workdir", str(work)], env, base)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return base


@pytest.fixture(scope="session")
def rewrite_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real session (``rewrite_session.py``) whose middleware rewrote a call: ATIF and ATOF."""
    base = tmp_path_factory.mktemp("rewrite")
    (base / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env.update(
        WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY=str(base / "atof"),
        WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY=str(base / "atif"),
    )
    script = Path(__file__).with_name("rewrite_session.py")
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
    return base


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    """Open an HTML file from file:// and wait until all its data is drawn or appended;
    collects page errors. ``width`` sets the viewport width (CSS pixels)."""
    contexts: list[Any] = []
    errors: list[str] = []

    def load(path: Path, fragment: str = "", width: int = 1280) -> Any:
        context = browser.new_context(viewport={"width": width, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(path.resolve().as_uri() + fragment)
        page.wait_for_selector("html[data-ready='1']", timeout=15_000)
        page.wait_for_function("() => window.__wlLoaded === 1", timeout=30_000)
        page.errors = errors
        return page

    yield load
    for context in contexts:
        context.close()
    assert not errors, errors
