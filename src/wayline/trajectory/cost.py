"""The cost of a whole recorded run, and the line ``wayline diff`` prints about two of them.

A run's cost is the sum of ``final_metrics.total_cost_usd`` over its trajectory and every
embedded subagent trajectory (each trajectory's totals count only its own steps). A run none
of whose trajectories carries a cost has an unknown cost (None), never $0.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["cost_line", "run_cost"]


def _trajectories(traj: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield traj
    for sub in traj.get("subagent_trajectories") or ():
        if isinstance(sub, Mapping):
            yield from _trajectories(sub)


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def run_cost(traj: Mapping[str, Any]) -> float | None:
    """USD cost of a run (its embedded subagents included), or None when nothing is priced."""
    costs: list[float] = []
    for sub in _trajectories(traj):
        totals = sub.get("final_metrics")
        cost = _number(totals.get("total_cost_usd")) if isinstance(totals, Mapping) else None
        if cost is not None:
            costs.append(cost)
    return sum(costs) if costs else None


def _usd(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.6f}"


def cost_line(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """``cost: $0.032450 -> $0.041000 (+26.3%)``, or None when neither run carries a cost."""
    a, b = run_cost(old), run_cost(new)
    if a is None and b is None:
        return None
    line = f"cost: {_usd(a)} -> {_usd(b)}"
    if a is not None and b is not None:
        change = b - a
        line += f" ({'+' if change >= 0 else '-'}${abs(change):.6f}"
        if a > 0:
            line += f", {change / a * 100:+.1f}%"
        line += ")"
    return line
