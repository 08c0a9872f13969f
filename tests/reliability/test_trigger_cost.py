"""Bounded and linear: 1 MB of each rule family's trigger text (every trigger word of the active
rules, followed by separators, quotes, escapes, an unclosed call, a PEM head, tokens with ``_``
and ``@``) and of known-value text (a value repeated, its prefix repeated, its base64 wrapped)
costs at most 1 s of CPU, and 1 MB costs about 20 times 50 KB. Figures, not assertions on time:
``make reliability`` measures the full megabyte of every trigger, ``make test`` a sample."""

from __future__ import annotations

from corpus import measure  # type: ignore[import-not-found]
from rel_support import full_scale, record, scaled  # type: ignore[import-not-found]


def test_trigger_text_cost_figure() -> None:
    """The worst CPU time per MB over every trigger and known-value text is recorded, and the
    growth from 50 KB to 1 MB of the worst one."""
    size = scaled(100_000, 1_000_000)
    step = scaled(7, 1)
    times = measure.time_triggers(size, step)
    per_mb = {name: seconds * 1_000_000 / size for name, seconds in times.items()}
    worst = max(per_mb, key=lambda name: per_mb[name])
    for name in sorted(per_mb, key=lambda n: -per_mb[n])[:10]:
        print(f"{name}: {per_mb[name] * 1000:.0f} ms CPU per MB")
    figure = record(
        "secrets_trigger_ms",
        f"1 MB of each trigger text, worst ({worst}), CPU ms",
        round(per_mb[worst] * 1000),
        "<=" if full_scale() else "report",
        1000,
    )
    text = measure.trigger_texts(1_000_000)[worst]
    small = measure.time_of(text[:50_000])
    big = measure.time_of(text)
    record(
        "secrets_trigger_growth",
        "1 MB / 50 KB time of the worst trigger text (linear: 20)",
        round(big / max(small, 1e-4)),
        "report",
    )
    assert len(times) > 20 and figure.value > 0
