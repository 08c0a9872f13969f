"""Side virtualenvs the tests install reference packages into (Hermes, nemo-relay, the lowest
OpenTelemetry release): never the project's ``.venv``.

Install failures fail the test with pip's output. The one exception is a machine with no
route to the package index at all: then the test skips, saying so, because nothing about
wayline can be learned there.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

INSTALL_TIMEOUT_S = 1200


def index_host() -> tuple[str, int]:
    """The package index's host and port (``PIP_INDEX_URL``, else PyPI)."""
    url = urlsplit(os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple")
    return url.hostname or "pypi.org", url.port or (80 if url.scheme == "http" else 443)


def index_reachable() -> bool:
    """Whether a TCP connection to the package index opens within 5 s."""
    try:
        with socket.create_connection(index_host(), timeout=5):
            return True
    except OSError:
        return False


def make_venv(venv: Path) -> Path:
    """A fresh virtualenv at ``venv`` (anything there is removed first); its python."""
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
    return venv / "bin" / "python"


def pip_install(python: Path, *args: str, timeout_s: float = INSTALL_TIMEOUT_S) -> None:
    """``python -m pip install -q ARGS``: fail with pip's output, or skip without an index."""
    cmd = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(cmd)}` did not finish in {timeout_s:.0f} s", pytrace=False)
    if proc.returncode == 0:
        return
    if not index_reachable():
        host, port = index_host()
        pytest.skip(f"no network route to the package index {host}:{port}; cannot install {args}")
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
    pytest.fail(
        f"`{' '.join(cmd)}` failed with exit code {proc.returncode}:\n{tail}", pytrace=False
    )
