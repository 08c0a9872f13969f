"""The payload sanitizer: conversion, bounds and markers, size limit, env var, purity."""

from __future__ import annotations

import copy
import datetime as dt
import enum
import json
import logging
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import httpx
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wayline.redaction.sanitize import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_PAYLOAD_MAX_CHARS,
    MIN_PAYLOAD_MAX_CHARS,
    PAYLOAD_MAX_CHARS_ENV,
    REDACTED,
    payload_max_chars,
    sanitize,
    sanitize_headers,
    to_jsonable,
)
from wayline.testing.secrets import HARMLESS_STRINGS, SECRET_SAMPLES


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


# --------------------------------------------------------------------------- conversion


class Model(pydantic.BaseModel):
    """A provider-style response object."""

    id: str
    when: dt.datetime
    tags: set[str] = set()


class DumpOnly:
    """Duck-typed model_dump, like SDK objects that are not pydantic."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self._payload = payload

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {"mode": mode, **self._payload}


class BrokenDump:
    """model_dump raises: the sanitizer must fall back instead of failing."""

    def __init__(self) -> None:
        self.visible = 1

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        raise RuntimeError("boom")


@dataclass
class Point:
    """A plain dataclass payload."""

    x: int
    label: str
    children: list[Any] = field(default_factory=list)


class Plain:
    """An object exposing public and private attributes."""

    def __init__(self) -> None:
        self.name = "plain"
        self.items = (1, 2)
        self._hidden = "secret internal state"


class Slotted:
    """No __dict__: falls back to str()."""

    __slots__ = ("v",)

    def __init__(self) -> None:
        self.v = 1

    def __str__(self) -> str:
        return "Slotted(v=1)"


class Unprintable:
    """str() raises."""

    __slots__ = ()

    def __str__(self) -> str:
        raise ValueError("no")


class Color(enum.Enum):
    """A plain enum."""

    RED = "red"


def test_pydantic_models_are_dumped_in_json_mode() -> None:
    """A pydantic model becomes its model_dump(mode="json"): datetimes are ISO strings."""
    m = Model(id="r1", when=dt.datetime(2026, 1, 2, 3, 4, 5), tags={"a"})
    assert to_jsonable(m) == {"id": "r1", "when": "2026-01-02T03:04:05", "tags": ["a"]}


def test_duck_typed_model_dump_gets_mode_json() -> None:
    """Any object with model_dump is asked for mode="json"."""
    assert to_jsonable(DumpOnly({"a": (1, 2)})) == {"mode": "json", "a": [1, 2]}


def test_failing_model_dump_falls_back_to_public_attributes() -> None:
    """A model_dump that raises does not fail the sanitizer."""
    assert to_jsonable(BrokenDump()) == {"visible": 1}


def test_dataclass_namespace_and_public_dict() -> None:
    """Dataclasses, SimpleNamespace and objects with public __dict__ become dicts."""
    assert to_jsonable(Point(1, "p")) == {"x": 1, "label": "p", "children": []}
    assert to_jsonable(SimpleNamespace(a=1, b=[2])) == {"a": 1, "b": [2]}
    assert to_jsonable(Plain()) == {"name": "plain", "items": [1, 2]}


def test_other_objects_become_bounded_strings() -> None:
    """Objects without a dict form use str(); a failing str() yields a marker."""
    assert to_jsonable(Slotted()) == "Slotted(v=1)"
    assert to_jsonable(Unprintable()) == "<Unprintable unprintable>"
    assert to_jsonable(Slotted(), max_string=4) == "Slot...[truncated 8 chars]"
    assert to_jsonable(len) == "<built-in function len>"


def test_scalars_bytes_collections_and_keys() -> None:
    """bytes, tuples, sets, non-str keys, enums, dates, exceptions get JSON shapes."""
    out = to_jsonable(
        {
            "b": b"abc",
            "ba": bytearray(b"ab"),
            "t": (1, "x"),
            "s": frozenset({3}),
            1: "int key",
            None: "none key",
            (1, 2): "tuple key",
            b"raw": "bytes key",
            "e": Color.RED,
            "d": dt.date(2026, 11, 21),
            "err": ValueError("bad input"),
        }
    )
    assert out == {
        "b": "<3 bytes>",
        "ba": "<2 bytes>",
        "t": [1, "x"],
        "s": [3],
        "1": "int key",
        "None": "none key",
        "(1, 2)": "tuple key",
        "raw": "bytes key",
        "e": "red",
        "d": "2026-11-21",
        "err": {"type": "ValueError", "message": "bad input"},
    }


def test_non_finite_floats_become_strings() -> None:
    """nan and ±inf become strings so json.dumps(allow_nan=False) succeeds."""
    out = sanitize({"a": float("nan"), "b": float("inf"), "c": [float("-inf"), 1.5]})
    assert out == {"a": "nan", "b": "inf", "c": ["-inf", 1.5]}
    _dumps(out)


def test_huge_ints_that_json_cannot_print_become_markers() -> None:
    """An int beyond Python's digit limit is replaced instead of breaking json.dumps."""
    huge = 1 << 100_000
    out = sanitize({"n": huge, "ok": 1 << 70})
    assert out == {"n": "<int 100001 bits>", "ok": 1 << 70}


def test_cycles_terminate_with_a_marker() -> None:
    """Self-referencing lists, dicts and objects end in "<Type cycle>" markers."""
    lst: list[Any] = [1]
    lst.append(lst)
    d: dict[str, Any] = {"k": 1}
    d["self"] = d
    p = Point(1, "root")
    p.children.append(p)
    ns = SimpleNamespace(name="n")
    ns.me = ns
    assert to_jsonable(lst) == [1, "<list cycle>"]
    assert to_jsonable(d) == {"k": 1, "self": "<dict cycle>"}
    assert to_jsonable(p) == {"x": 1, "label": "root", "children": ["<Point cycle>"]}
    assert sanitize(ns) == {"name": "n", "me": "<SimpleNamespace cycle>"}


class Shifting(Mapping[str, int]):
    """A mapping that another thread resizes while it is being read."""

    def __getitem__(self, key: str) -> int:
        return 1

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("dictionary changed size during iteration")


class RaisingProperty:
    """Inspecting its __dict__ raises (a broken proxy object)."""

    def __init__(self) -> None:
        self.ok = 1

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        raise KeyError("gone")

    def __str__(self) -> str:
        return "RaisingProperty()"


def test_unreadable_containers_and_objects_degrade_to_markers() -> None:
    """A container failing mid-read or an object failing inspection never raises."""
    assert sanitize({"m": Shifting(), "o": RaisingProperty()}) == {
        "m": "<Shifting changed while read>",
        "o": "RaisingProperty()",
    }


def test_shared_references_are_not_cycles() -> None:
    """The same object twice side by side is expanded twice, not marked as a cycle."""
    shared = {"v": 1}
    assert to_jsonable([shared, shared]) == [{"v": 1}, {"v": 1}]


# --------------------------------------------------------------------------- bounds


def _nest(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def test_depth_limit_marker() -> None:
    """Containers deeper than max_depth become "<TypeName depth limit>"; scalars survive; the
    default bound (100) is only against hostile nesting: 32 levels come through whole."""
    assert to_jsonable(_nest(4), max_depth=2) == [[["<list depth limit>"]]]
    assert to_jsonable(_nest(3), max_depth=2) == [[["leaf"]]]
    assert to_jsonable({"a": {"b": {"c": {}}}}, max_depth=1) == {"a": {"b": "<dict depth limit>"}}
    assert sanitize(_nest(32)) == _nest(32)
    out = sanitize(_nest(150))
    for _ in range(DEFAULT_MAX_DEPTH + 1):
        out = out[0]
    assert out == "<list depth limit>"


def test_string_limit_marker() -> None:
    """Long strings keep max_string chars plus "...[truncated N chars]"."""
    assert to_jsonable("abcdefghij", max_string=4) == "abcd...[truncated 6 chars]"
    assert to_jsonable("abcd", max_string=4) == "abcd"
    assert sanitize("y" * 8_005) == "y" * 8_000 + "...[truncated 5 chars]"


def test_sequence_limit_markers() -> None:
    """Over max_sequence, dicts get "_truncated_items": N and lists a trailing marker."""
    assert to_jsonable(list(range(5)), max_sequence=3) == [0, 1, 2, {"_truncated_items": 2}]
    assert to_jsonable(set(range(5)), max_sequence=3)[-1] == {"_truncated_items": 2}
    d = {f"k{i}": i for i in range(5)}
    assert to_jsonable(d, max_sequence=3) == {"k0": 0, "k1": 1, "k2": 2, "_truncated_items": 2}
    big = sanitize(list(range(250)))
    assert big == list(range(250))  # structure is never cut while the text can shrink


def test_markers_are_stable_under_resanitizing() -> None:
    """Already-truncated strings, lists and dicts are not truncated again."""
    once = sanitize({"s": "z" * 9_000, "l": list(range(300)), "d": {str(i): i for i in range(300)}})
    assert sanitize(once) == once
    assert once["s"].endswith("...[truncated 1000 chars]")


# --------------------------------------------------------------------------- size limit


def test_first_stage_result_returned_when_it_fits() -> None:
    """Under the limit the stage-one result (8000-char strings) is returned unchanged."""
    payload = {"system": "s" * 5_000, "user": "hi"}
    assert sanitize(payload, max_chars=20_000) == payload


def test_second_stage_shrinks_strings_and_keeps_sequences() -> None:
    """Over the limit, strings drop to 1000 chars; every item of every sequence stays."""
    payload = {"messages": ["m" * 3_000 for _ in range(30)], "ids": list(range(120))}
    out = sanitize(payload, max_chars=50_000)
    assert out["messages"][0] == "m" * 1_000 + "...[truncated 2000 chars]"
    assert out["ids"] == list(range(120)) and len(out["messages"]) == 30
    assert len(_dumps(out)) <= 50_000


def test_sequences_are_cut_only_when_the_structure_alone_is_too_big() -> None:
    """Short strings, 300 items each: strings drop to 200 chars before any item goes; past
    that, sequences keep 50 items and an explicit marker, and the result is valid JSON."""
    fits = sanitize([{"c": "m" * 400} for _ in range(150)], max_chars=50_000)
    assert len(fits) == 150 and fits[0]["c"].startswith("m" * 200 + "...[truncated")
    cut = sanitize([{"c": "m" * 400} for _ in range(400)], max_chars=50_000)
    assert len(cut) == 51 and cut[-1] == {"_truncated_items": 350}
    assert json.loads(_dumps(cut)) == cut


def test_final_stage_wraps_a_preview_that_fits_exactly() -> None:
    """Still too big: a _truncated wrapper whose whole encoding is within the limit."""
    payload = {f"key{i}": "v" * 2_000 for i in range(200)}
    out = sanitize(payload, max_chars=5_000)
    assert set(out) == {"_truncated", "original_type", "preview"}
    assert out["_truncated"] is True and out["original_type"] == "dict"
    assert out["preview"].startswith('{"key0": "vvv')
    encoded = _dumps(out)
    assert 4_900 <= len(encoded) <= 5_000


@pytest.mark.parametrize("char", ['"', "\\", "é", "\n", "\u2028", "😀"])
def test_wrapper_accounts_for_json_escaping(char: str) -> None:
    """Preview text that expands when escaped still keeps the wrapper within the limit."""
    payload = [char * 900 for _ in range(200)]
    for limit in (1_000, 1_001, 4_321):
        out = sanitize(payload, max_chars=limit)
        assert out["_truncated"] is True
        assert len(_dumps(out)) <= limit


def test_preview_is_redacted() -> None:
    """Secrets never reach the wrapper preview."""
    sample = SECRET_SAMPLES[0]
    payload = [f"{sample.secret} " + "w" * 900 for _ in range(200)]
    out = sanitize(payload, max_chars=3_000)
    assert out["_truncated"] is True and sample.needle not in _dumps(out)
    assert REDACTED in out["preview"]


def test_max_chars_is_clamped_to_the_floor() -> None:
    """A max_chars below 1000 behaves like 1000."""
    payload = {"a": "x" * 950}
    assert sanitize(payload, max_chars=10) == payload
    assert sanitize({"a": "x" * 1_200}, max_chars=10)["a"].endswith("[truncated 1000 chars]")


def test_huge_payloads_stop_early() -> None:
    """A payload far over the limit (200^3 leaves) is wrapped without walking it all."""
    row = ["cell"] * 200
    table = [[row] * 200] * 200
    out = sanitize(table, max_chars=2_000)
    assert out["_truncated"] is True and len(_dumps(out)) <= 2_000


# --------------------------------------------------------------------------- env var


def test_env_var_default_valid_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset → 50000; an integer is used; values under the floor become 1000; every change
    to os.environ is seen at once (the limit is read through environ's own bytes dict)."""
    monkeypatch.delenv(PAYLOAD_MAX_CHARS_ENV, raising=False)
    assert payload_max_chars() == DEFAULT_PAYLOAD_MAX_CHARS == 50_000
    monkeypatch.setenv(PAYLOAD_MAX_CHARS_ENV, " 12345 ")
    assert payload_max_chars() == 12_345
    monkeypatch.setenv(PAYLOAD_MAX_CHARS_ENV, "10")
    assert payload_max_chars() == MIN_PAYLOAD_MAX_CHARS == 1_000
    monkeypatch.setenv(PAYLOAD_MAX_CHARS_ENV, "-5")
    assert payload_max_chars() == 1_000
    monkeypatch.delenv(PAYLOAD_MAX_CHARS_ENV)
    assert payload_max_chars() == DEFAULT_PAYLOAD_MAX_CHARS


def test_env_var_invalid_warns_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A non-integer value falls back to the default with one warning naming the variable."""
    monkeypatch.setenv(PAYLOAD_MAX_CHARS_ENV, "lots-and-lots")
    with caplog.at_level(logging.WARNING, logger="wayline.redaction.sanitize"):
        assert payload_max_chars() == DEFAULT_PAYLOAD_MAX_CHARS
        assert payload_max_chars() == DEFAULT_PAYLOAD_MAX_CHARS
    records = [r for r in caplog.records if PAYLOAD_MAX_CHARS_ENV in r.getMessage()]
    assert len(records) == 1 and "lots-and-lots" in records[0].getMessage()


def test_sanitize_uses_the_env_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without max_chars, sanitize applies WAYLINE_PAYLOAD_MAX_CHARS."""
    monkeypatch.setenv(PAYLOAD_MAX_CHARS_ENV, "1500")
    assert sanitize(["x" * 700, "y" * 700]) == ["x" * 700, "y" * 700]
    out = sanitize(["x" * 900, "y" * 900])
    assert out[0] == "x" * 200 + "...[truncated 700 chars]" and len(_dumps(out)) <= 1_500


# --------------------------------------------------------------------------- headers


def test_sanitize_headers_shapes() -> None:
    """Mappings, httpx.Headers and byte pairs become a redacted str dict."""
    assert sanitize_headers(None) == {}
    assert sanitize_headers({"Authorization": "Bearer abc", "Accept": "json"}) == {
        "Authorization": REDACTED,
        "Accept": "json",
    }
    raw = [(b"x-api-key", b"0123abcd"), (b"content-type", b"text/plain"), ("bad",)]
    assert sanitize_headers(raw) == {"x-api-key": REDACTED, "content-type": "text/plain"}
    headers = httpx.Headers([("Set-Cookie", "a=1"), ("Via", "p1"), ("Via", "p2")])
    assert sanitize_headers(headers) == {"set-cookie": REDACTED, "via": "p1, p2"}


def test_sanitize_headers_redacts_values_of_innocent_headers() -> None:
    """Secrets inside non-credential headers are text-redacted."""
    sample = next(s for s in SECRET_SAMPLES if s.name == "github_classic")
    out = sanitize_headers({"X-Debug": f"token was {sample.secret}"})
    assert out == {"X-Debug": f"token was {REDACTED}"}


# --------------------------------------------------------------------------- properties


@dataclass
class Box:
    """A dataclass leaf-holder for generated payloads."""

    value: Any


_KEYS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["api_key", "Authorization", "max_tokens", "password", "note", "token_count"]),
    st.integers(-5, 5),
    st.none(),
    st.tuples(st.integers(0, 3), st.integers(0, 3)),
)
_BIG_TEXT = st.builds(
    lambda chunk, n: chunk * n,
    st.sampled_from(["x", '"', "é", "\n", 'say "hi" ', "😀"]),
    st.integers(0, 6_000),
)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=40),
    st.binary(max_size=16),
    st.sampled_from([s.secret for s in SECRET_SAMPLES]),
    st.sampled_from(HARMLESS_STRINGS),
    _BIG_TEXT,
)
_PAYLOADS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.tuples(inner, inner),
        st.dictionaries(_KEYS, inner, max_size=6),
        st.frozensets(st.integers() | st.text(max_size=8), max_size=4),
        st.builds(lambda v: SimpleNamespace(payload=v), inner),
        st.builds(Box, inner),
        st.lists(st.sampled_from(["x" * 40, "--token", "abc"]), max_size=230),
    ),
    max_leaves=30,
)


def _same(a: Any, b: Any) -> bool:
    """Deep equality where nan equals nan (a deep copy of nan is not == to it)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, SimpleNamespace | Box):
        return _same(vars(a), vars(b))
    return bool(a == b)


_SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_SETTINGS
@given(payload=_PAYLOADS, limit=st.integers(1_000, 20_000))
def test_output_is_strict_json_within_the_limit(payload: Any, limit: int) -> None:
    """Any payload sanitizes to allow_nan=False JSON no longer than max_chars."""
    assert len(_dumps(sanitize(payload, max_chars=limit))) <= limit


@_SETTINGS
@given(payload=_PAYLOADS, limit=st.integers(1_000, 20_000))
def test_input_is_never_mutated(payload: Any, limit: int) -> None:
    """sanitize and to_jsonable leave the input exactly as a deep copy of it."""
    before = copy.deepcopy(payload)
    sanitize(payload, max_chars=limit)
    to_jsonable(payload, max_sequence=3, max_string=5, max_depth=1)
    assert _same(payload, before)


@_SETTINGS
@given(payload=_PAYLOADS, limit=st.integers(1_000, 20_000))
def test_sanitize_is_idempotent(payload: Any, limit: int) -> None:
    """Sanitizing a sanitized payload (same limit) changes nothing."""
    once = sanitize(payload, max_chars=limit)
    assert sanitize(once, max_chars=limit) == once


@_SETTINGS
@given(payload=_PAYLOADS)
def test_no_corpus_secret_survives_in_random_payloads(payload: Any) -> None:
    """Corpus secrets sprinkled anywhere in a random payload never reach the output."""
    encoded = _dumps(sanitize(payload, max_chars=20_000))
    for sample in SECRET_SAMPLES:
        assert sample.needle not in encoded
