"""Fixtures for `wayline export otlp`: one live-recorded session for the module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from export_support import OtlpSink, record


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A delegating session recorded as ATOF, ATIF and live OTel spans."""
    return record(tmp_path_factory.mktemp("recorded"))


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    """A loopback OTLP/HTTP receiver."""
    server = OtlpSink()
    yield server
    server.close()
