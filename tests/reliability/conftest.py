"""Fixtures of the reliability suite: a clean environment, a home and a work directory.

Exporters belong to the runtime that loaded them: each test closes its runtimes' plugin
instances (``shutdown_exporters``/``outputs_problems``); one a failing test left open is
closed at the process exit by its plugin manager."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_STRAY = ("WAYLINE_API_KEY", "OPENAI_API_KEY", "WAYLINE_BASE_URL", "WAYLINE_HOME")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No stray model, relay or otel settings from the caller."""
    for var in list(os.environ):
        if var.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_", "WAYLINE_OTEL_", "OTEL_")):
            monkeypatch.delenv(var, raising=False)
    for var in _STRAY:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("WAYLINE_ENABLE_PROJECT_PLUGINS", raising=False)
    yield


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty WAYLINE_HOME (set in the environment too)."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("WAYLINE_HOME", str(h))
    return h


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A tool working directory with six small files and a scratch directory."""
    w = tmp_path / "work"
    w.mkdir()
    for name, text in zip(
        "abcdef", ("alpha", "beta", "gamma", "delta", "eps", "zeta"), strict=True
    ):
        (w / f"{name}.txt").write_text(f"{text}\n")
    (w / "scratch").mkdir()
    return w
