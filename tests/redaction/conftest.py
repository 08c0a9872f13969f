"""Shared set-up of the redaction tests."""

from __future__ import annotations

import random

import pytest


@pytest.fixture(autouse=True)
def _own_random_bodies(request: pytest.FixtureRequest) -> None:
    """A module's seeded ``_RNG`` restarts from the test's own id before each test, so the
    random bodies a test draws do not depend on which tests ran before it."""
    rng = getattr(request.module, "_RNG", None)
    if isinstance(rng, random.Random):
        rng.seed(request.node.nodeid)
