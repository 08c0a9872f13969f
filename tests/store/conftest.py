"""Store fixtures: one home recorded for real per test session (read-only for the tests)."""

from __future__ import annotations

import pytest
from store_support import Recorded, record


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Six sessions recorded by wayline.Agent and ``wayline chat`` (see store_support).

    Tests must not change its files: one that deletes or rewrites copies the home first, and
    each test keeps its index elsewhere (``index=``)."""
    base = tmp_path_factory.mktemp("store")
    home = base / "home"
    work = base / "work"
    work.mkdir()
    return record(home, work)
