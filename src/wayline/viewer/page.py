"""One self-contained HTML page for one or more trajectories.

The trajectories travel as JSON inside ``<script type="application/json">`` with ``<``, ``>``,
``&`` and U+2028/U+2029 escaped, so no trajectory text can close the element or become markup;
the page's script draws it with ``textContent`` only. A Content-Security-Policy admits exactly the
page's own script and stylesheet (by hash) and no network at all, so even an injected ``<script>``
or ``onerror=`` attribute could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Sequence
from typing import Any

from wayline.viewer.load import Trajectory
from wayline.viewer.model import build_view
from wayline.viewer.script import JS
from wayline.viewer.style import CSS

_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def embed_json(value: Any) -> str:
    """JSON text safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_ESCAPES)


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def page_data(trajectories: Sequence[Trajectory], title: str) -> dict[str, Any]:
    """The JSON object the page embeds: ``{"v": 1, "title": …, "items": [view, …]}``."""
    return {"v": 1, "title": title, "items": [build_view(t) for t in trajectories]}


def render_page(trajectories: Sequence[Trajectory], title: str | None = None) -> str:
    """The HTML page showing ``trajectories`` (several get a picker); needs no network.

    ``title`` defaults to the first trajectory's title. Raises ``ValueError`` if the list is empty.
    """
    if not trajectories:
        raise ValueError("render_page needs at least one trajectory")
    name = title if title is not None else trajectories[0].title
    if title is None and len(trajectories) > 1:
        name = f"{len(trajectories)} trajectories"
    data = embed_json(page_data(trajectories, name))
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
            "the data is embedded as JSON in the page source.</noscript></main>\n",
            f'<script type="application/json" id="wl-data">{data}</script>\n',
            f"<script>{JS}</script>\n</body>\n</html>\n",
        )
    )
