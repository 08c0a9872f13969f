"""The nemo-relay 0.10.4 virtualenv the differential harness compares against (``.venv-relay/``).

Created once (``python -m venv`` + ``pip install nemo-relay==0.10.4``) and reused while its
marker file matches; a lock keeps two pytest runs from building it at once.
``WAYLINE_RELAY_VENV`` overrides the location. Install failures fail the tests with pip's
output; only a machine with no route to the package index at all skips them.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from side_venv import make_venv, pip_install

RELAY_VERSION = "0.10.4"
ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
MARKER = ".wayline-relay-diff.json"
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 300


def _venv_dir() -> Path:
    return Path(os.environ.get("WAYLINE_RELAY_VENV") or ROOT / ".venv-relay")


def _create(venv: Path) -> None:
    try:
        marker = json.loads((venv / MARKER).read_text())
    except (OSError, ValueError):
        marker = {}
    if marker.get("nemo_relay") == RELAY_VERSION and (venv / "bin" / "python").exists():
        return
    python = venv / "bin" / "python"
    if not python.exists():
        make_venv(venv)
    pip_install(python, f"nemo-relay=={RELAY_VERSION}", timeout_s=INSTALL_TIMEOUT_S)
    (venv / MARKER).write_text(json.dumps({"nemo_relay": RELAY_VERSION}))


@pytest.fixture(scope="session")
def relay_venv() -> Path:
    """The nemo-relay virtualenv's root (created or reused)."""
    venv = _venv_dir()
    lock_name = hashlib.sha256(str(venv).encode()).hexdigest()[:12]
    lock_path = Path(tempfile.gettempdir()) / f"wayline-relay-venv-{lock_name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            _create(venv)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return venv


@pytest.fixture(scope="session")
def relay_signatures(relay_venv: Path) -> dict[str, Any]:
    """Every scenario's signature on nemo-relay, from one subprocess run."""
    proc = subprocess.run(
        [str(relay_venv / "bin" / "python"), str(HERE / "relay_diff_runner.py"), "nemo_relay"],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"the nemo-relay scenario run failed:\n{proc.stderr[-4000:]}", pytrace=False)
    result: dict[str, Any] = json.loads(proc.stdout)
    return result
