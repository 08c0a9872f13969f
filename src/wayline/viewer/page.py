"""One self-contained HTML page for one or more trajectories.

The trajectories travel as JSON, deflate-compressed and base64-encoded, inside
``<script type="application/octet-stream">``: base64 has no character that could close the
element or become markup, and the page's script decompresses it with the browser's own
``DecompressionStream`` (no ``eval``, no network) and draws it with ``textContent`` only.
The first element holds everything but the steps after the first :data:`FIRST_STEPS`, which
follow the page script in chunks, so the first screen is drawn before the browser has even
parsed the rest of a large page. Compression keeps a 100,000-step page a few megabytes: deflate
turns the repeated keys, tool names and indentation of every step into a few bits each.
Timeline spans are stored as columns of integer microsecond deltas, which compress far better
than one object per span.

A Content-Security-Policy admits exactly the page's own script and stylesheet (by hash) and no
network at all, so even an injected ``<script>`` or ``onerror=`` attribute could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import zlib
from collections.abc import Sequence
from typing import Any

from wayline.viewer.load import Trajectory
from wayline.viewer.model import build_view
from wayline.viewer.script import JS
from wayline.viewer.style import CSS

PAGE_DATA_VERSION = 2
FIRST_STEPS = 200  # steps in the first data element: enough for the first screen
CHUNK_STEPS = 5000  # steps per later data element
_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}
_KINDS = ("llm", "tool", "approval", "subagent", "turn")
# span flag bits, read by the page script
_ERROR, _APPROX, _NO_END, _PARALLEL, _CANCELLED, _STOPPED = 1, 2, 4, 8, 16, 32
# a turn span's outcome as its flags (completed: none)
_OUTCOME_FLAGS = {"error": _ERROR, "cancelled": _CANCELLED, "max_turns": _STOPPED, "open": _APPROX}


def embed_json(value: Any) -> str:
    """JSON text safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_ESCAPES)


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _micros(ms: float) -> int:
    return round(ms * 1000)


def span_columns(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`build_view`'s span list as the page's columns (integer microseconds, deltas).

    ``k`` kind index into ``("llm", "tool", "approval", "subagent", "turn")``, ``n``/``p``
    indexes into the ``nt``/``pt`` tables of labels and sub-agent paths, ``s`` start minus the
    previous span's start, ``u`` duration, ``d`` depth, ``st`` step id, ``f`` flags (1 error,
    2 approximate, 4 no end recorded, 8 one of a step's parallel calls, 16 cancelled, 32 a turn
    stopped at its model-call limit; a turn's outcome is one of them, or none when completed).
    """
    names: dict[str, int] = {}
    paths: dict[str, int] = {}
    columns: dict[str, list[int]] = {key: [] for key in ("k", "n", "p", "s", "u", "d", "st", "f")}
    previous = 0
    for span in spans:
        start, end = _micros(span["s"]), _micros(span["e"])
        flags = (
            (_ERROR if span.get("er") else 0)
            | (_APPROX if span.get("ap") else 0)
            | (_NO_END if span.get("ne") else 0)
            | (_PARALLEL if span.get("g") is not None else 0)
            | (_CANCELLED if span.get("cn") else 0)
            | _OUTCOME_FLAGS.get(str(span.get("o")), 0)
        )
        columns["k"].append(_KINDS.index(span["k"]))
        columns["n"].append(names.setdefault(str(span["n"]), len(names)))
        columns["p"].append(paths.setdefault(str(span["p"]), len(paths)))
        columns["s"].append(start - previous)
        columns["u"].append(end - start)
        columns["d"].append(int(span["d"]))
        columns["st"].append(int(span.get("st") or 0))
        columns["f"].append(flags)
        previous = start
    return {**columns, "nt": list(names), "pt": list(paths)}


def page_data(trajectories: Sequence[Trajectory], title: str) -> dict[str, Any]:
    """The JSON object the page embeds: ``{"v": 2, "title": …, "items": [view, …]}``.

    Each view is :func:`build_view`'s, with ``spans`` replaced by ``sp`` (:func:`span_columns`).
    """
    items = []
    for trajectory in trajectories:
        view = build_view(trajectory)
        view["sp"] = span_columns(view.pop("spans"))
        items.append(view)
    return {"v": PAGE_DATA_VERSION, "title": title, "items": items}


def encode_data(value: Any) -> str:
    """``value`` as deflate-compressed (zlib format) JSON in base64: the page's data element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")


def decode_data(text: str) -> Any:
    """The inverse of :func:`encode_data` (tests and tools read a page's data with it)."""
    return json.loads(zlib.decompress(base64.b64decode(text)).decode("utf-8"))


def split_steps(data: dict[str, Any]) -> list[tuple[int, list[Any]]]:
    """Move each item's steps after the first :data:`FIRST_STEPS` into chunks (in place).

    Returns ``(item index, steps)`` chunks of :data:`CHUNK_STEPS`; each item gets ``more``, the
    number of its steps in chunks. The page draws its first screen from the first part alone and
    appends the chunks, which follow the page script in the file, while the user reads.
    """
    chunks: list[tuple[int, list[Any]]] = []
    for index, view in enumerate(data["items"]):
        rest = view["steps"][FIRST_STEPS:]
        view["steps"] = view["steps"][:FIRST_STEPS]
        view["more"] = len(rest)
        chunks.extend(
            (index, rest[at : at + CHUNK_STEPS]) for at in range(0, len(rest), CHUNK_STEPS)
        )
    return chunks


def _data_element(payload: Any, attributes: str) -> str:
    return (
        f'<script type="application/octet-stream" {attributes} data-encoding="deflate-base64">'
        f"{encode_data(payload)}</script>\n"
    )


def render_page(trajectories: Sequence[Trajectory], title: str | None = None) -> str:
    """The HTML page showing ``trajectories`` (several get a picker); needs no network.

    ``title`` defaults to the first trajectory's title. Raises ``ValueError`` if the list is empty.
    """
    if not trajectories:
        raise ValueError("render_page needs at least one trajectory")
    name = title if title is not None else trajectories[0].title
    if title is None and len(trajectories) > 1:
        name = f"{len(trajectories)} trajectories"
    data = page_data(trajectories, name)
    chunks = split_steps(data)
    policy = (
        "default-src 'none'; "
        f"script-src {_sha256(JS)}; "
        f"style-src {_sha256(CSS)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return "".join(
        (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            '<meta name="generator" content="wayline view">\n',
            f"<title>{html.escape(name)} — wayline view</title>\n",
            f"<style>{CSS}</style>\n</head>\n<body>\n",
            '<main id="wl-main"><noscript>This page needs JavaScript to draw the trajectory; '
            "the data is embedded in the page source as deflate-compressed JSON in base64."
            "</noscript></main>\n",
            _data_element(data, 'id="wl-data"'),
            f"<script>{JS}</script>\n",
            *(_data_element(steps, f'class="wl-more" data-item="{i}"') for i, steps in chunks),
            "</body>\n</html>\n",
        )
    )
