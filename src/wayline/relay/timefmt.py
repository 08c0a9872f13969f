"""Relay's timestamp text: chrono ``to_rfc3339()`` (AutoSi fraction, ``+00:00``), and its parsing.

Timestamps travel as integer nanoseconds since the Unix epoch and become text only when an
event is serialized.
"""

from __future__ import annotations

import calendar
import re
import time
from datetime import UTC, datetime

__all__ = [
    "datetime_to_ns",
    "format_ns",
    "parse_timestamp_ns",
]

_NS_PER_S = 1_000_000_000
_UTC_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Events arrive in bursts within one second, so the "YYYY-MM-DDTHH:MM:SS" part is formatted
# once per second and published as one tuple (a single reference swap: no lock needed).
_second_cache: tuple[int, str] = (-(2**63), "")


def format_ns(ns: int) -> str:
    """RFC 3339 in UTC with 0, 3, 6 or 9 fraction digits (the fewest that are exact)."""
    global _second_cache
    sec, frac = divmod(ns, _NS_PER_S)
    cache = _second_cache
    if cache[0] != sec:
        cache = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
        _second_cache = cache
    # Clock readings almost always need all 9 digits: test that case first.
    if frac % 1_000:
        return f"{cache[1]}.{frac:09d}+00:00"
    if frac == 0:
        return f"{cache[1]}+00:00"
    if frac % 1_000_000:
        return f"{cache[1]}.{frac // 1_000:06d}+00:00"
    return f"{cache[1]}.{frac // 1_000_000:03d}+00:00"


def datetime_to_ns(value: object) -> int:
    """Epoch nanoseconds of a timezone-aware ``datetime`` (other zones are converted to UTC).

    Like Relay, anything but a ``datetime`` is a ``TypeError`` and a naive datetime a
    ``ValueError``.
    """
    if not isinstance(value, datetime):
        raise TypeError(f"timestamp must be a datetime.datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timestamp must be a timezone-aware datetime, got a naive datetime")
    delta = value - _UTC_EPOCH
    return (delta.days * 86_400 + delta.seconds) * _NS_PER_S + delta.microseconds * 1_000


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})"
)


def parse_timestamp_ns(value: object) -> int:
    """Epoch nanoseconds of an ATOF timestamp: RFC 3339 text with an offset, or integer µs.

    Raises ``ValueError`` naming what is wrong.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected an RFC 3339 string or integer microseconds, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"integer microseconds must be >= 0, got {value}")
        return value * 1_000
    if not isinstance(value, str):
        raise ValueError(
            f"expected an RFC 3339 string or integer microseconds, got {type(value).__name__}"
        )
    m = _RFC3339.fullmatch(value)
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp with an offset: {value!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60):
        raise ValueError(f"timestamp field out of range: {value!r}")
    try:
        datetime(year, month, day)
    except ValueError as exc:
        raise ValueError(f"invalid date in timestamp {value!r}: {exc}") from None
    secs = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    frac_text = (m.group(7) or "")[:9]
    frac = int(frac_text.ljust(9, "0")) if frac_text else 0
    offset = m.group(8)
    if offset not in ("Z", "z"):
        sign = 1 if offset[0] == "+" else -1
        off_h, off_m = int(offset[1:3]), int(offset[4:6])
        if off_h > 23 or off_m > 59:
            raise ValueError(f"invalid UTC offset in timestamp {value!r}")
        secs -= sign * (off_h * 3600 + off_m * 60)
    return secs * _NS_PER_S + frac
