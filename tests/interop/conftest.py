"""The Hermes Agent 0.19.0 virtualenv the interop tests run (``.venv-hermes/`` at the repo root).

Created once per session with ``python -m venv``, ``pip install hermes-agent==0.19.0`` and
``pip install -e <repo>[otel]`` (editable: Hermes runs the working tree's plugins). A marker file
records what was installed; a later session reuses the venv when the marker matches, and only
re-installs wayline when ``pyproject.toml`` changed (entry points live in its metadata).
``WAYLINE_HERMES_VENV`` overrides the location (a CI cache, say).

Install failures fail the tests with pip's output. The one exception is a machine with no route
to the package index at all: then the tests skip, saying so, because nothing about wayline can
be learned there.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from side_venv import make_venv, pip_install

# Show diffs for the fingerprint comparisons made inside the helper module.
pytest.register_assert_rewrite("interop_support")

HERMES_VERSION = "0.19.0"
ROOT = Path(__file__).resolve().parents[2]
MARKER = ".wayline-interop.json"
INSTALL_TIMEOUT_S = 1200


def _venv_dir() -> Path:
    return Path(os.environ.get("WAYLINE_HERMES_VENV") or ROOT / ".venv-hermes")


def _pyproject_hash() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]


def _read_marker(venv: Path) -> dict[str, str]:
    try:
        data = json.loads((venv / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _create(venv: Path) -> dict[str, str]:
    """Build (or finish) the venv; returns the marker it wrote."""
    marker = _read_marker(venv)
    python = venv / "bin" / "python"
    started = time.monotonic()
    if marker.get("hermes_agent") != HERMES_VERSION or not (venv / "bin" / "hermes").exists():
        make_venv(venv)
        pip_install(python, f"hermes-agent=={HERMES_VERSION}")
        marker = {"hermes_agent": HERMES_VERSION}
        (venv / MARKER).write_text(json.dumps(marker))
    if marker.get("wayline") != str(ROOT) or marker.get("pyproject") != _pyproject_hash():
        pip_install(python, "-e", f"{ROOT}[otel]")
        marker = {**marker, "wayline": str(ROOT), "pyproject": _pyproject_hash()}
        marker["seconds"] = f"{time.monotonic() - started:.1f}"
        (venv / MARKER).write_text(json.dumps(marker))
    return marker


@pytest.fixture(scope="session")
def hermes_venv() -> Iterator[Path]:
    """The Hermes virtualenv's root (created or reused); ``bin/hermes`` is its CLI."""
    venv = _venv_dir()
    lock_name = hashlib.sha256(str(venv).encode()).hexdigest()[:12]
    lock_path = Path(tempfile.gettempdir()) / f"wayline-hermes-venv-{lock_name}.lock"
    with open(lock_path, "w") as lock:
        # Two pytest runs sharing a checkout must not build the same venv at once.
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            _create(venv)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    yield venv
