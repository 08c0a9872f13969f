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
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

RELAY_VERSION = "0.10.4"
ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
MARKER = ".wayline-relay-diff.json"
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 300


def _venv_dir() -> Path:
    return Path(os.environ.get("WAYLINE_RELAY_VENV") or ROOT / ".venv-relay")


def _index_reachable() -> bool:
    url = urlsplit(os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple")
    host, port = url.hostname or "pypi.org", url.port or (80 if url.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except OSError:
        return False


def _create(venv: Path) -> None:
    try:
        marker = json.loads((venv / MARKER).read_text())
    except (OSError, ValueError):
        marker = {}
    if marker.get("nemo_relay") == RELAY_VERSION and (venv / "bin" / "python").exists():
        return
    python = venv / "bin" / "python"
    if not python.exists():
        shutil.rmtree(venv, ignore_errors=True)
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(venv)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if made.returncode != 0:
            pytest.fail(f"`python -m venv {venv}` failed:\n{made.stderr}", pytrace=False)
    cmd = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    cmd.append(f"nemo-relay=={RELAY_VERSION}")
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
    )
    if proc.returncode != 0:
        if not _index_reachable():
            pytest.skip("no network route to the package index; cannot install nemo-relay")
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        pytest.fail(f"`{' '.join(cmd)}` failed:\n{tail}", pytrace=False)
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
