"""Charts as inline SVG, drawn on the server from ``stats`` rows (no script, no library).

Every label is escaped text; colours come from the page's stylesheet by class (the page's
Content-Security-Policy admits no inline ``style``). Each bar carries a ``<title>`` with its
exact figure, which the browser shows as a tooltip.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Series", "bars", "charts_html", "columns", "fmt_count", "fmt_ms", "fmt_usd"]

Row = dict[str, Any]
MAX_DAYS = 90
"""Columns in a chart over time: the latest days."""


@dataclass(frozen=True)
class Series:
    """One kind of bar: its name (the legend), its CSS class and a value per label."""

    name: str
    css: str
    values: Sequence[float | None]


def fmt_usd(value: float) -> str:
    """Dollars, with more places for small sums."""
    return f"${value:,.2f}" if value >= 1 or value == 0 else f"${value:.4f}"


def fmt_count(value: float) -> str:
    """A count, shortened past thousands."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1_000:.0f}k"
    return f"{value:,.0f}"


def fmt_ms(value: float) -> str:
    """A duration in milliseconds, in the unit that reads best."""
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 60_000:
        return f"{value / 1000:.1f} s"
    return f"{value / 60_000:.1f} min"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _frame(title: str, body: str, legend: Sequence[Series], width: int, height: int) -> str:
    keys = "".join(
        f'<span class="key"><i class="sw {_e(s.css)}"></i>{_e(s.name)}</span>' for s in legend
    )
    return (
        f'<figure class="chart"><figcaption>{_e(title)}{keys}</figcaption>'
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(title)}">{body}</svg></figure>'
    )


def columns(
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    fmt: Callable[[float], str],
    *,
    stacked: bool = True,
    width: int = 420,
    height: int = 170,
) -> str:
    """Vertical bars, one group per label (days): stacked, or side by side."""
    left, bottom, top = 52, 22, 8
    plot_w, plot_h = width - left - 6, height - bottom - top
    totals = [
        sum(s.values[i] or 0 for s in series) if stacked else max(s.values[i] or 0 for s in series)
        for i in range(len(labels))
    ]
    peak = max(totals, default=0) or 1
    parts = [
        f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{width - 6}" '
        f'y2="{top + plot_h}"/>',
        f'<text class="tick" x="{left - 4}" y="{top + 8}" text-anchor="end">{_e(fmt(peak))}</text>',
        f'<text class="tick" x="{left - 4}" y="{top + plot_h}" text-anchor="end">0</text>',
    ]
    if not labels:
        parts.append(f'<text class="tick" x="{left + 8}" y="{top + plot_h / 2}">no data</text>')
    band = plot_w / max(1, len(labels))
    step = max(1, round(len(labels) / 6))
    for i, label in enumerate(labels):
        x0 = left + i * band
        base: float = top + plot_h
        lanes = 1 if stacked else len(series)
        lane_w = max(1.0, (band - 2) / lanes)
        for k, s in enumerate(series):
            value = s.values[i] or 0
            h = plot_h * value / peak
            x = x0 + 1 + (0 if stacked else k * lane_w)
            y = base - h
            parts.append(
                f'<rect class="{_e(s.css)}" x="{x:.1f}" y="{y:.1f}" width="{lane_w:.1f}" '
                f'height="{h:.1f}"><title>{_e(label)} {_e(s.name)}: {_e(fmt(value))}</title></rect>'
            )
            if stacked:
                base = y
        if i % step == 0 or i == len(labels) - 1:
            parts.append(
                f'<text class="tick" x="{x0 + band / 2:.1f}" y="{height - 6}" '
                f'text-anchor="middle">{_e(label[5:] if len(label) == 10 else label)}</text>'
            )
    return _frame(title, "".join(parts), series if len(series) > 1 else (), width, height)


def bars(
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    fmt: Callable[[float], str],
    *,
    width: int = 420,
) -> str:
    """Horizontal stacked bars, one per label (models, tools), the figure at the end."""
    row_h, left, right = 20, 120, 70
    height = max(1, len(labels)) * row_h + 8
    totals = [sum(s.values[i] or 0 for s in series) for i in range(len(labels))]
    peak = max(totals, default=0) or 1
    parts: list[str] = []
    if not labels:
        parts.append('<text class="tick" x="8" y="16">no data</text>')
    for i, label in enumerate(labels):
        y = 4 + i * row_h
        shown = label if len(label) <= 18 else label[:17] + "…"
        parts.append(
            f'<text class="tick" x="{left - 6}" y="{y + 13}" text-anchor="end">'
            f"<title>{_e(label)}</title>{_e(shown)}</text>"
        )
        x = float(left)
        for s in series:
            value = s.values[i] or 0
            w = (width - left - right) * value / peak
            parts.append(
                f'<rect class="{_e(s.css)}" x="{x:.1f}" y="{y + 2}" width="{w:.1f}" '
                f'height="{row_h - 6}"><title>{_e(label)} {_e(s.name)}: {_e(fmt(value))}</title>'
                "</rect>"
            )
            x += w
        parts.append(f'<text class="tick" x="{x + 4:.1f}" y="{y + 13}">{_e(fmt(totals[i]))}</text>')
    return _frame(title, "".join(parts), series if len(series) > 1 else (), width, height)


def _key(row: Row) -> str:
    return "-" if row["key"] is None else str(row["key"])


def charts_html(by_day: list[Row], by_model: list[Row], by_tool: list[Row]) -> str:
    """The list page's charts: cost, tokens, latency and errors by day, by model and by tool."""
    days = [r for r in by_day if r["key"] is not None][-MAX_DAYS:]
    day = [str(r["key"]) for r in days]
    model = [_key(r) for r in by_model]
    tool = [_key(r) for r in by_tool]

    def values(rows: list[Row], field: str) -> list[float | None]:
        return [r.get(field) for r in rows]

    over_time = [
        columns("Cost per day", day, [Series("cost", "c1", values(days, "cost_usd"))], fmt_usd),
        columns(
            "Tokens per day",
            day,
            [
                Series("input", "c2", values(days, "input_tokens")),
                Series("output", "c3", values(days, "output_tokens")),
            ],
            fmt_count,
        ),
        columns(
            "Session duration per day",
            day,
            [
                Series("p50", "c4", values(days, "p50_ms")),
                Series("p95", "c5", values(days, "p95_ms")),
            ],
            fmt_ms,
            stacked=False,
        ),
        columns("Errors per day", day, [Series("errors", "c6", values(days, "errors"))], fmt_count),
    ]
    by_key = [
        bars("Cost by model", model, [Series("cost", "c1", values(by_model, "cost_usd"))], fmt_usd),
        bars(
            "Tokens by model",
            model,
            [
                Series("input", "c2", values(by_model, "input_tokens")),
                Series("output", "c3", values(by_model, "output_tokens")),
            ],
            fmt_count,
        ),
        bars(
            "p95 session duration by model",
            model,
            [Series("p95", "c5", values(by_model, "p95_ms"))],
            fmt_ms,
        ),
        bars(
            "Errors by model",
            model,
            [Series("errors", "c6", values(by_model, "errors"))],
            fmt_count,
        ),
        bars(
            "Tool calls by tool",
            tool,
            [
                Series(
                    "ok",
                    "c2",
                    [(r.get("calls") or 0) - (r.get("errors") or 0) for r in by_tool],
                ),
                Series("failed", "c6", values(by_tool, "errors")),
            ],
            fmt_count,
        ),
    ]
    return (
        '<section id="charts"><h2>Over time (UTC days)</h2><div class="charts">'
        + "".join(over_time)
        + '</div><h2>By model and tool</h2><div class="charts">'
        + "".join(by_key)
        + "</div></section>"
    )
