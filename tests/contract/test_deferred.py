"""Deferred sanitized fields: the value is exactly ``sanitize(raw)``, computed once, and a
Deferred pickles as its raw value (unresolved) or as its value (resolved)."""

from __future__ import annotations

import pickle
from typing import Any

from wayline.contract.deferred import Deferred, Memos, has_deferred, resolve_payload
from wayline.contract.sanitize import SanitizeMemo, sanitize

SECRET = "sk-" + "a1B2c3D4e5" * 4


def _request(n: int) -> dict[str, Any]:
    messages = [{"role": "user", "content": f"message {i} key {SECRET}"} for i in range(n)]
    return {"method": "POST", "body": {"model": "m", "messages": messages, "api_key": "x"}}


def test_a_deferred_value_is_the_sanitized_raw_value_computed_once() -> None:
    """``value()`` equals ``sanitize(raw)`` (secrets and credential keys redacted) and is
    computed once: a second call returns the very same object."""
    raw = _request(5)
    deferred = Deferred(raw, 3, SanitizeMemo(3))
    value = deferred.value()
    assert value == sanitize(raw)
    assert SECRET not in repr(value) and value["body"]["api_key"] != "x"
    assert deferred.value() is value
    assert Deferred(raw, 3).value(Memos()) == value  # with a resolver's memos: the same


def test_a_deferred_value_pickles_as_its_raw_value_or_its_result() -> None:
    """Unresolved, a Deferred travels as its raw value and memo depth (not the owner's memo);
    resolved, as its sanitized value only."""
    raw = _request(3)
    copy = pickle.loads(pickle.dumps(Deferred(raw, 3, SanitizeMemo(3))))
    assert type(copy) is Deferred and copy.raw == raw and copy.memo_depth == 3
    assert copy.memo is None
    resolved = Deferred(raw)
    resolved.value()
    assert pickle.loads(pickle.dumps(resolved)) == sanitize(raw)


def test_resolve_payload_replaces_deferred_values_in_place() -> None:
    """Every Deferred value of a payload is replaced by its value in the same dict; other
    values are untouched."""
    raw = _request(2)
    payload = {"session_id": "s", "request": Deferred(raw, 3), "n": 1}
    assert has_deferred(payload)
    same = resolve_payload(payload, Memos())
    assert same is payload and not has_deferred(payload)
    assert payload == {"session_id": "s", "request": sanitize(raw), "n": 1}


def test_a_resolver_memo_reuses_a_growing_conversation() -> None:
    """Resolving one growing conversation after another with the same memos gives what a
    fresh sanitize gives, call after call (the memo only saves work)."""
    memos = Memos()
    messages: list[dict[str, Any]] = []
    for i in range(30):
        messages = [*messages, {"role": "user", "content": f"turn {i} {SECRET}"}]
        raw = {"method": "POST", "body": {"messages": messages}}
        assert Deferred(raw, 3).value(memos) == sanitize(raw)
