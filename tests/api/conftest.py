"""Fixtures for the Python API tests: an empty WAYLINE_HOME and a clean model environment."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``$WAYLINE_HOME`` (also the environment's), with no model variables set."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("WAYLINE_HOME", str(h))
    for var in ("WAYLINE_API_KEY", "OPENAI_API_KEY", "WAYLINE_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("WAYLINE_ENABLE_PROJECT_PLUGINS", raising=False)
    return h
