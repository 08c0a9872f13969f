"""One real recorded session shared by the trajectory tests (recording costs a subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
from traj_support import record_session


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A session with parallel tools and a delegated child, recorded as ATIF."""
    return record_session(tmp_path_factory.mktemp("recorded"))
