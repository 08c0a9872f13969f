"""Printing a bench module's rows when it runs on its own (``python -m bench.X``)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["print_rows"]


def print_rows(rows: list[dict[str, Any]], as_json: bool) -> None:
    """The rows as one JSON line (``--json``, what ``python -m bench`` reads), or one line
    each for people: the figure (the ratio where there is one), the goal, pass or MISS, and
    the detail below it."""
    if as_json:
        print(json.dumps(rows))
        return
    for row in rows:
        value = f"{row['ratio']}x" if "ratio" in row else f"{row['wayline']} {row['unit']}"
        verdict = "" if "passed" not in row else (" pass" if row["passed"] else " MISS")
        print(f"{row['name']}: {value} / goal {row.get('goal', '-')}{verdict}")
        if row.get("detail"):
            print(f"    {row['detail']}")
