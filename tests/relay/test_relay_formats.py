"""Relay's JSON text rules (floats, escaping, key order), timestamps and UUIDv7 ids."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta, timezone

import pytest

from wayline.relay._scopes.uuid7 import uuid7, uuid7_at
from wayline.relay.events import MarkEvent
from wayline.relay.jsonfmt import dumps
from wayline.relay.timefmt import datetime_to_ns, format_ns, parse_timestamp_ns


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e-5, "0.00001"),
        (1.5e-5, "0.000015"),
        (9.99e-5, "0.0000999"),
        (-1e-5, "-0.00001"),
        (1e-6, "1e-6"),
        (1.5e-6, "1.5e-6"),
        (1.23456e-7, "1.23456e-7"),
        (-2.5e-7, "-2.5e-7"),
        (1e-10, "1e-10"),
        (5e-324, "5e-324"),
        (0.0001, "0.0001"),
        (0.5, "0.5"),
        (100.0, "100.0"),
        (-0.0, "-0.0"),
        (1e16, "1e+16"),
        (1e21, "1e+21"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (float("-inf"), "null"),
    ],
)
def test_float_text_matches_relay(value: float, text: str) -> None:
    """Floats print like Python repr except Relay's small-exponent and non-finite rules."""
    assert dumps({"x": value}) == '{"x":' + text + "}"
    assert dumps([value]) == "[" + text + "]"


def test_float_lookalikes_inside_strings_are_untouched() -> None:
    """Only number tokens are rewritten: strings that look like floats keep their text."""
    payload = {"s": "1e-05 NaN Infinity re-run", "n": 1e-05, 'k"e-1': [2e-06]}
    assert dumps(payload) == '{"k\\"e-1":[2e-6],"n":0.00001,"s":"1e-05 NaN Infinity re-run"}'


def test_keys_sorted_at_every_level_with_compact_separators() -> None:
    """Keys sort by code point at every nesting level; no spaces anywhere."""
    payload = {"b": {"z": 1, "a": [{"y": 2, "B": 3}]}, "a": None, "Z": True, "é": False}
    assert dumps(payload) == '{"Z":true,"a":null,"b":{"a":[{"B":3,"y":2}],"z":1},"é":false}'


def test_strings_are_raw_utf8_with_minimal_escapes() -> None:
    """Non-ASCII, DEL and U+2028 stay raw; quotes, backslash and controls are escaped."""
    text = 'héllo 😀 \u2028 \x7f "q" \\ \t\n\r\b\f \x01\x1f'
    assert dumps(text) == '"héllo 😀 \u2028 \x7f \\"q\\" \\\\ \\t\\n\\r\\b\\f \\u0001\\u001f"'


def test_lone_surrogate_becomes_a_valid_json_escape() -> None:
    """A lone surrogate cannot be UTF-8; the line carries it as a \\u escape and stays valid."""
    event = MarkEvent("u", None, None, 0, "bad\ud800name", None, None, None, None, None)
    line = event.atof_line()
    assert b"bad\\ud800name" in line
    assert json.loads(line)["name"] == "bad\ud800name"


def test_non_json_values_fall_back_to_text() -> None:
    """Sets, bytes and arbitrary objects do not break an observer: they serialize as text."""

    class Thing:
        def __str__(self) -> str:
            return "thing!"

    assert dumps({"b": b"hi", "s": {2, 1}, "o": Thing()}) == '{"b":"hi","o":"thing!","s":[1,2]}'


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "1970-01-01T00:00:00+00:00"),
        (1_767_225_600_000_000_000, "2026-01-01T00:00:00+00:00"),
        (1_767_225_600_123_000_000, "2026-01-01T00:00:00.123+00:00"),
        (1_767_225_600_123_456_000, "2026-01-01T00:00:00.123456+00:00"),
        (1_767_225_600_000_001_000, "2026-01-01T00:00:00.000001+00:00"),
        (1_767_225_600_123_456_789, "2026-01-01T00:00:00.123456789+00:00"),
        (1_767_225_600_000_000_001, "2026-01-01T00:00:00.000000001+00:00"),
        (1_795_293_778_929_059_505, "2026-11-21T20:42:58.929059505+00:00"),
    ],
)
def test_timestamp_text_uses_autosi_digits(ns: int, text: str) -> None:
    """Fractions use 0, 3, 6 or 9 digits (the fewest exact) and the suffix is +00:00."""
    assert format_ns(ns) == text
    assert parse_timestamp_ns(text) == ns


def test_datetime_inputs_are_converted_to_utc_nanoseconds() -> None:
    """Aware datetimes in any zone convert to UTC; µs precision is kept exactly."""
    plus_two = timezone(timedelta(hours=2))
    local = datetime(2026, 1, 1, 2, 0, 0, 123456, tzinfo=plus_two)
    assert datetime_to_ns(local) == 1_767_225_600_123_456_000
    assert format_ns(datetime_to_ns(local)) == "2026-01-01T00:00:00.123456+00:00"
    before_epoch = datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert format_ns(datetime_to_ns(before_epoch)) == "1969-12-31T23:59:59.500+00:00"


@pytest.mark.parametrize("bad", ["2026-01-01T00:00:00Z", 1767225600])
def test_non_datetime_timestamps_are_type_errors(bad: object) -> None:
    """Like Relay, a timestamp that is not a datetime is a TypeError naming datetime.datetime."""
    with pytest.raises(TypeError, match=r"datetime\.datetime"):
        datetime_to_ns(bad)


def test_naive_datetimes_are_value_errors() -> None:
    """Like Relay, a naive datetime is a ValueError asking for a timezone-aware one."""
    with pytest.raises(ValueError, match="timezone-aware"):
        datetime_to_ns(datetime(2026, 1, 1))


def test_timestamp_parsing_accepts_offsets_z_and_integer_micros() -> None:
    """ATOF timestamps may be RFC 3339 with Z or an offset, or integer epoch microseconds."""
    assert parse_timestamp_ns("2026-01-01T01:00:00+01:00") == 1_767_225_600_000_000_000
    assert parse_timestamp_ns("2026-01-01T00:00:00.5Z") == 1_767_225_600_500_000_000
    assert parse_timestamp_ns(1_767_225_600_000_001) == 1_767_225_600_000_001_000
    for bad in ("2026-01-01T00:00:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", -1, 1.5):
        with pytest.raises(ValueError):
            parse_timestamp_ns(bad)


def test_uuid7_layout_and_order() -> None:
    """Ids are lowercase hyphenated v7 with the RFC variant, carry the ms and sort by creation."""
    ns = 1_795_293_778_929_059_505
    first, second = uuid7_at(ns), uuid7_at(ns)
    for value in (first, second):
        assert len(value) == 36 and value == value.lower()
        assert value[14] == "7" and value[19] in "89ab"
        assert int(value[:8] + value[9:13], 16) == ns // 1_000_000
    assert first < second
    assert uuid7() > first


def test_uuid7_is_unique_across_threads() -> None:
    """Concurrent generation never repeats an id."""
    results: list[list[str]] = [[] for _ in range(4)]

    def work(out: list[str]) -> None:
        out.extend(uuid7() for _ in range(5000))

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    flat = [u for out in results for u in out]
    assert len(set(flat)) == len(flat) == 20000
