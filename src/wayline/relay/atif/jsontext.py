"""ATIF file text: ``json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)``.

Every write encodes the document as it is now: no step texts are kept from one write to the
next, so a file can never show a step as it was before it changed.
"""

from __future__ import annotations

import json
from typing import Any

from wayline.relay.atif.model import PathFor, TrajectoryNode, render_trajectory

__all__ = ["dumps_indented", "trajectory_text"]


def dumps_indented(value: Any) -> str:
    """``value`` as sorted, 2-space-indented JSON text (non-ASCII kept as is)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def trajectory_text(node: TrajectoryNode, path_for: PathFor | None = None) -> str:
    """The ATIF file text of ``node`` (``path_for`` as in ``render_trajectory``)."""
    return dumps_indented(render_trajectory(node, path_for))
