"""ATIF file text: ``json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.

Compact, as Relay's ``export_json`` and the Hermes plugin's files are: the standard library
encodes a document without indentation in C, several times faster than with ``indent``, and
a session's end waits for its file. Keys are sorted so that the same trajectory always gives
the same bytes.

Every write encodes the document as it is now: no step texts are kept from one write to the
next, so a file can never show a step as it was before it changed.
"""

from __future__ import annotations

import json
from typing import Any

from wayline.relay.atif.model import PathFor, TrajectoryNode, render_trajectory

__all__ = ["dumps_document", "trajectory_text"]


def dumps_document(value: Any) -> str:
    """``value`` as sorted, compact JSON text (non-ASCII kept as is)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def trajectory_text(node: TrajectoryNode, path_for: PathFor | None = None) -> str:
    """The ATIF file text of ``node`` (``path_for`` as in ``render_trajectory``)."""
    return dumps_document(render_trajectory(node, path_for))
