"""A self-contained HTML page of a trajectory diff (every value escaped, no scripts)."""

from __future__ import annotations

import html
import json
from typing import Any

from wayline.trajectory.compare import Difference, is_absent

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font:12px/1.35 ui-monospace,monospace}
.old{background:#fdecec}.new{background:#e9f7ec}.same{color:#2a7a2a}
"""


def _value(value: Any) -> str:
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    return html.escape(text)


def render_diff_html(
    old_name: str, new_name: str, differences: list[Difference], strict: bool
) -> str:
    """The whole page: a title naming both files, then one table row per difference."""
    title = f"wayline diff: {old_name} → {new_name}"
    mode = "strict (every field)" if strict else "ignoring ids, timestamps, durations and usage"
    rows = []
    for d in differences:
        old = "(absent)" if is_absent(d.old) else _value(d.old)
        new = "(absent)" if is_absent(d.new) else _value(d.new)
        rows.append(
            "<tr>"
            f"<td>{html.escape(d.location())}</td><td>{html.escape(d.kind)}</td>"
            f"<td><code>{html.escape(d.path)}</code></td>"
            f"<td class=old><pre>{old}</pre></td><td class=new><pre>{new}</pre></td>"
            "</tr>"
        )
    body = (
        "<table><tr><th>where</th><th>kind</th><th>path</th><th>old</th><th>new</th></tr>"
        + "".join(rows)
        + "</table>"
        if rows
        else "<p class=same>The trajectories are the same.</p>"
    )
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{len(differences)} difference"
        f"{'s' if len(differences) != 1 else ''}; {html.escape(mode)}.</p>{body}</body></html>\n"
    )
