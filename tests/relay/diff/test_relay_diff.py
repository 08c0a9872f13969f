"""Differential harness: the same scenarios on wayline.relay and on nemo-relay 0.10.4.

Each scenario (``relay_diff_scenarios.py``) runs in-process on ``wayline.relay`` and, in one
batched subprocess, on ``nemo_relay`` in ``.venv-relay``; their event signatures (kinds,
names, parentage, categories, data/profile/metadata keys and pinned values, with ids
normalized) and recorded values must be equal. Scenarios listed in ``KNOWN_DIFFERENCES``
document where wayline differs on purpose; they are checked to still differ.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import relay_diff_runner
from relay_diff_base import SCENARIOS

from wayline import relay

KNOWN_DIFFERENCES: dict[str, str] = {}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_relay(name: str, relay_signatures: dict[str, Any]) -> None:
    """The scenario's events and values on wayline.relay equal nemo-relay 0.10.4's."""
    ours = relay_diff_runner.run_scenario(relay, name)
    theirs = relay_signatures[name]
    if name in KNOWN_DIFFERENCES:
        assert ours != theirs, f"{name} now matches Relay; drop it from KNOWN_DIFFERENCES"
        return
    assert ours["values"] == theirs["values"]
    assert ours["events"] == theirs["events"]
