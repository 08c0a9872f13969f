"""MCP fixtures: the sessions recorded once per test session (read-only for the tests)."""

from __future__ import annotations

import pytest
from mcp_support import Recorded, record


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Two recorded sessions and one scaled to 10,000 steps (see mcp_support); tests must not
    change the folder's files."""
    return record(tmp_path_factory.mktemp("mcp"))
