"""`wayline.trajectory.load`: ATIF or ATOF in, bounded JSON, and telling the two formats apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wayline.trajectory.load import (
    MAX_DEPTH,
    TrajectoryError,
    load_trajectories,
    load_trajectory,
    parse_json,
    sniff_kind,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def test_nesting_is_bounded_at_max_depth() -> None:
    """JSON nested exactly MAX_DEPTH deep parses; one level more is a one-line error."""
    deepest = parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x.json")
    for _ in range(MAX_DEPTH - 1):
        (deepest,) = deepest
    assert deepest == []
    too_deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(
        TrajectoryError, match=rf"^x\.json: JSON nested too deeply \(over {MAX_DEPTH}"
    ):
        parse_json(too_deep, "x.json")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"n": ' + "9" * 5000 + "}", "more digits than Python converts"),
        ('{"n": NaN}', "NaN is not a JSON number"),
        ('{"n": 1e400}', "out of range"),
        ("[" * 20_000, "nested too deeply"),
    ],
    ids=["huge integer", "NaN", "1e400", "unclosed depth"],
)
def test_values_no_trajectory_holds_are_refused(text: str, says: str) -> None:
    """Huge integers, NaN, infinities and runaway nesting are TrajectoryErrors saying which."""
    with pytest.raises(TrajectoryError) as caught:
        parse_json(text, "x.json")
    assert says in str(caught.value)


def test_atof_events_load_as_their_trajectory() -> None:
    """The Hermes ATOF events load as one trajectory with the session of the ATIF recording."""
    (from_atof,) = load_trajectories(DATA / "hermes_relay.atof.jsonl")
    recorded = load_trajectory(DATA / "hermes_relay.atif.json")
    assert from_atof["session_id"] == recorded["session_id"]
    assert [s["source"] for s in from_atof["steps"]] == [s["source"] for s in recorded["steps"]]


def test_sniff_tells_atif_from_atof(tmp_path: Path) -> None:
    """Indented and one-line ATIF (longer than the 64 KiB head), ATOF and other files."""
    document = json.loads((DATA / "hermes_relay.atif.json").read_text(encoding="utf-8"))
    document["extra"] = {"padding": "x" * 70_000}
    cases = {
        "indented.json": (json.dumps(document, indent=2), "atif"),
        "compact.json": (json.dumps(document), "atif"),
        "events.jsonl": ((DATA / "hermes_relay.atof.jsonl").read_text(encoding="utf-8"), "atof"),
        "transcript.jsonl": ('{"role": "user", "content": "hi"}\n', None),
        "binary.bin": ("\x00\x01", None),
    }
    for name, (text, kind) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert sniff_kind(tmp_path / name) == kind, name
