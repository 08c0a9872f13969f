"""Fixtures for wayline.relay tests: event capture, ATOF files, a fresh scope stack per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from wayline import relay
from wayline.relay._scopes import stack_ops as relay_scope
from wayline.relay._scopes import stacks as relay_stacks


@pytest.fixture(autouse=True)
def fresh_scope_stack() -> Iterator[None]:
    """Run each test on a new implicit root so a failed test cannot leak open scopes."""
    token = relay_scope._top.set(None)
    stack_token = relay_stacks._stack.set(None)
    yield
    relay_stacks._stack.reset(stack_token)
    relay_scope._top.reset(token)


@pytest.fixture
def captured() -> Iterator[list[relay.Event]]:
    """Every event emitted while the test runs, in delivery order."""
    events: list[relay.Event] = []
    relay.subscribers.register("test-capture", events.append)
    yield events
    relay.subscribers.deregister("test-capture")


@pytest.fixture
def atof_exporter(tmp_path: Path) -> Iterator[relay.AtofExporter]:
    """A registered ATOF file exporter writing ``tmp_path/events.jsonl`` (overwrite mode)."""
    config = relay.AtofExporterConfig()
    config.output_directory = str(tmp_path)
    config.filename = "events.jsonl"
    config.mode = relay.AtofExporterMode.Overwrite
    exporter = relay.AtofExporter(config)
    exporter.register("test-atof")
    yield exporter
    exporter.shutdown()
