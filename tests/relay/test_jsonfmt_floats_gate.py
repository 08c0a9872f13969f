"""Relay's small-float spelling is applied exactly when a small float is present."""

from __future__ import annotations

from wayline.relay.jsonfmt import dumps, fix_relay_floats


def test_hyphenated_text_and_uuids_are_left_alone() -> None:
    """Text full of "e-" (UUIDs, words) but no small float is Python's text unchanged."""
    value = {"id": "01a1ffde-13f1-7072-849a-c73ef75928c1", "s": "one-to-one, re-run", "x": 1.5}
    text = dumps(value)
    assert text == (
        '{"id":"01a1ffde-13f1-7072-849a-c73ef75928c1","s":"one-to-one, re-run","x":1.5}'
    )


def test_small_floats_next_to_uuids_get_relay_spelling() -> None:
    """A small float is rewritten even when strings around it also contain "e-"."""
    value = {"id": "0fe-7e-1", "a": 1.5e-06, "b": 2e-05, "c": "1e-06 in text"}
    assert dumps(value) == '{"a":1.5e-6,"b":0.00002,"c":"1e-06 in text","id":"0fe-7e-1"}'
    assert fix_relay_floats('{"v":[1e-07,"2e-07"]}') == '{"v":[1e-7,"2e-07"]}'


def test_gate_ignores_float_shapes_inside_ids_but_not_spaced_values() -> None:
    """The precheck skips the rewrite for ids like "…5e-71…" and still catches small floats
    after ": " / ", " separators (fix_relay_floats is public) and as a whole text."""
    from wayline.relay.jsonfmt import _needs_fix

    assert not _needs_fix('{"id":"0195e-71aa-4e-12","run":"9e-10x"}')
    assert _needs_fix('{"a": 1e-05}') and _needs_fix("[0, 2.5e-07 ]") and _needs_fix("1e-100")
    assert fix_relay_floats('{"a": 1e-05, "b": [2e-07 ]}') == '{"a": 0.00001, "b": [2e-7 ]}'


def test_exponent_prefilter_never_hides_a_small_float() -> None:
    """The cheap "digit, e-, two digits" precheck passes every text the float regex matches
    (UUID-laden metadata stays fast), including a float at the very start or end."""
    from wayline.relay.jsonfmt import _exponent_shape, _needs_fix

    uuids = '"task":"89031b70-f30d-42ae-b0bd-79e1d48fc0a8"'
    assert not _exponent_shape(uuids) and not _needs_fix("{" + uuids + "}")
    for text in ("1e-100", "[3e-07]", '{"a":' + uuids + ',"b":5e-10}', '{"b":5e-10,' + uuids):
        assert _exponent_shape(text) and _needs_fix(text)
    assert dumps({"m": "89031b70-f30d-42ae-b0bd", "v": 5e-10}) == (
        '{"m":"89031b70-f30d-42ae-b0bd","v":5e-10}'
    )
