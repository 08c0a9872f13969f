"""Scalar values and sensitive keys in mappings and lists, and the fallback stage for a flat
value over the limit."""

from __future__ import annotations

from wayline.redaction.sanitize import REDACTED, TRUNCATED_ITEMS_KEY, sanitize


def test_scalars_in_mappings_and_lists_keep_their_values_and_marks() -> None:
    """None, bools, small and huge ints, floats and strings convert the same in a dict and in
    a list; sensitive keys hide all but None/bool; a huge int keeps its digits."""
    huge = 2**70
    value = {
        "n": None,
        "t": True,
        "f": False,
        "i": 7,
        "big": huge,
        "x": 1.5,
        "nan": float("nan"),
        "s": "plain",
        "api_key": "abc",
        "password": None,
        "token": False,
        "list": [None, True, 7, huge, 1.5, float("inf"), "plain", ("a", 1)],
        3: "int key",
    }
    assert sanitize(value) == {
        "n": None,
        "t": True,
        "f": False,
        "i": 7,
        "big": huge,
        "x": 1.5,
        "nan": "nan",
        "s": "plain",
        "api_key": REDACTED,
        "password": None,
        "token": False,
        "list": [None, True, 7, huge, 1.5, "inf", "plain", ["a", 1]],
        "3": "int key",
    }


def test_a_mapping_of_scalars_over_the_limit_falls_back_to_shorter_strings() -> None:
    """A flat mapping whose strings overflow the limit keeps every key with its string cut
    to 1 000 chars (the budget is checked per item on the inline path); a list likewise."""
    value = {f"k{i}": "v" * 1500 for i in range(45)}
    out = sanitize(value, max_chars=60_000)
    assert len(out) == 45 and TRUNCATED_ITEMS_KEY not in out
    assert out["k0"].startswith("v" * 1000) and out["k0"].endswith("[truncated 500 chars]")
    listed = sanitize([1, *(["w" * 1500] * 45)], max_chars=60_000)
    assert listed[0] == 1 and len(listed) == 46 and listed[-1].endswith("[truncated 500 chars]")
