"""Our ATIF output and our validator agree with the third-party ``atif`` pydantic models (PyPI
``atif``): what we write passes them, and documents they refuse our validator refuses too,
naming the field.

Skipped until the ``atif`` package is installed as a test dependency.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from atif_events import Atof, hermes_delegation

from wayline.relay.atif import ConvertOptions, convert_events
from wayline.relay.atif.validate import validate_trajectory

atif = pytest.importorskip("atif")
if not hasattr(atif, "Trajectory"):
    # Without the real package, "atif" resolves to this test directory as a namespace package
    # (a regular package installed in site-packages always takes precedence over it).
    pytest.skip("the atif package is not installed", allow_module_level=True)


def _documents(events: list[dict[str, Any]], out: Path) -> list[Any]:
    report = convert_events(events, out, ConvertOptions(subagents="all", include_events=True))
    return [json.loads(path.read_text(encoding="utf-8")) for path in report.written]


def test_converted_trajectories_validate_with_atif_models(
    atof: Atof,
    manual_events: list[dict[str, Any]],
    plugin_events: list[dict[str, Any]],
    tmp_path: Path,
) -> None:
    """Every file the converter writes (roots and standalone sub-agents) passes atif.Trajectory."""
    hermes_delegation(atof)
    documents = [
        *_documents(manual_events, tmp_path / "manual"),
        *_documents(plugin_events, tmp_path / "plugin"),
        *_documents(atof.events, tmp_path / "hermes"),
    ]
    assert len(documents) == 5
    for document in documents:
        atif.Trajectory.model_validate(document)


def test_reference_samples_pass_both_validators(manual_atif: Any, plugin_atif: Any) -> None:
    """Relay's reference ATIF samples, which our exporter reproduces, pass atif.Trajectory and
    our own validator alike."""
    for sample in (manual_atif, plugin_atif):
        atif.Trajectory.model_validate(sample)
        assert validate_trajectory(sample) == []


BROKEN: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "no schema_version": (lambda d: d.pop("schema_version"), "$.schema_version"),
    "no agent": (lambda d: d.pop("agent"), "$.agent"),
    "steps not a list": (lambda d: d.__setitem__("steps", "none"), "$.steps"),
    "unknown source": (lambda d: d["steps"][0].__setitem__("source", "robot"), "$.steps[0].source"),
    "step_id as text": (
        lambda d: d["steps"][0].__setitem__("step_id", "one"),
        "$.steps[0].step_id",
    ),
    "message a number": (lambda d: d["steps"][0].__setitem__("message", 5), "$.steps[0].message"),
    "call without a name": (
        lambda d: d["steps"][1]["tool_calls"][0].pop("function_name"),
        "$.steps[1].tool_calls[0].function_name",
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_both_validators_refuse_the_same_broken_documents(plugin_atif: Any, name: str) -> None:
    """A reference sample broken one way: atif.Trajectory raises, and our validator reports a
    problem at exactly that field's JSON path."""
    mutate, path = BROKEN[name]
    broken = copy.deepcopy(plugin_atif)
    mutate(broken)
    with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
        atif.Trajectory.model_validate(broken)
    assert path in [problem.path for problem in validate_trajectory(broken)]
