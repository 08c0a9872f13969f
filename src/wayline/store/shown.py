"""How a session's figures read in text: durations and costs, the same in every output that
prints rows (``wayline sessions``, ``wayline mcp``)."""

from __future__ import annotations

__all__ = ["duration_text", "usd_text"]


def duration_text(ms: float | None) -> str:
    """``850ms``, ``12.5s``, ``3m07s``, ``2h05m``; ``-`` when unknown."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f}ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def usd_text(value: float | None) -> str:
    """``$0.0123``, or six decimals under a cent (``$0.000027``); ``-`` when unknown."""
    if value is None:
        return "-"
    return f"${value:.4f}" if value >= 0.01 or value == 0 else f"${value:.6f}"
