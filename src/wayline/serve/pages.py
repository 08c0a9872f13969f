"""The HTML pages: the session list (filters, search, charts), one session (live), the viewer
page of a session, and the diff of two.

The list and session pages are drawn by their inline script from the JSON API, with every
value as text; a Content-Security-Policy admits only that script and stylesheet (by hash) and
requests to this server. A session's viewer page is ``wayline view``'s own page (its own
policy, no network at all), and a diff is ``wayline diff --html``'s page (no script).
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from wayline.serve.api import (
    FILTERS,
    BadParam,
    Outside,
    bad_param,
    hub_of,
    list_params,
    roots_of,
    session_detail,
)
from wayline.serve.assets import CSS, LIST_JS, SESSION_JS
from wayline.serve.charts import charts_html
from wayline.serve.files import (
    Roots,
    diff_document,
    event_trajectories,
    redacted,
    step_anchor,
    viewer_trajectories,
)
from wayline.store import STATUSES, SessionFilter, SessionSource, SessionStore, StoreError

__all__ = ["diff_page", "list_page", "session_page", "view_page"]

Row = dict[str, Any]


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _policy(script: str) -> str:
    return (
        f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(CSS)}; "
        "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )


_LIST_POLICY = _policy(LIST_JS)
_SESSION_POLICY = _policy(SESSION_JS)
# `wayline diff --html`'s page has a stylesheet and no script.
_DIFF_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _page(title: str, body: str, script: str, policy: str, status: int = 200) -> HTMLResponse:
    text = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="wayline serve">\n'
        f"<title>{_e(title)} — wayline serve</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        '<header class="top"><h1><a href="/">wayline sessions</a></h1></header>\n'
        f"{body}\n<script>{script}</script>\n</body>\n</html>\n"
    )
    return HTMLResponse(text, status_code=status, headers={"Content-Security-Policy": policy})


def _error_page(status: int, message: str) -> HTMLResponse:
    body = f'<main><p class="note err" id="note">error: {_e(message)}</p></main>'
    return _page("error", body, "", _policy(""), status)


def _field(name: str, label: str, value: str, kind: str = "text", hint: str = "") -> str:
    return (
        f'<label>{_e(label)}<input name="{name}" type="{kind}" value="{_e(value)}" '
        f'placeholder="{_e(hint)}"></label>'
    )


def _filters_form(params: Mapping[str, str]) -> str:
    options = ['<option value="">any</option>'] + [
        f'<option value="{s}"{" selected" if params.get("status") == s else ""}>{s}</option>'
        for s in STATUSES
    ]
    errors = " checked" if params.get("errors", "") not in ("", "0", "false", "no") else ""
    return (
        '<form class="filters" method="get" action="/">'
        + _field("q", "text in a step", params.get("q", ""), "search", "any script, any case")
        + f'<label>status<select name="status">{"".join(options)}</select></label>'
        + _field("model", "model", params.get("model", ""), hint="gpt-4o*")
        + _field("tool", "tool", params.get("tool", ""), hint="terminal")
        + _field("since", "since", params.get("since", ""), hint="7d, 2026-11-28")
        + _field("until", "until", params.get("until", ""), hint="2026-11-29T09:30")
        + _field("min_cost", "min cost (USD)", params.get("min_cost", ""), hint="0.01")
        + f'<label class="check"><input name="errors" type="checkbox" value="1"{errors}>'
        "with errors</label>"
        + _field("limit", "rows", params.get("limit", ""), "number", "50 (0: all)")
        + '<button type="submit">Apply</button><a class="button plain" href="/">Clear</a></form>'
    )


_LIST_HEAD = (
    "<tr><th></th><th>session</th><th>agent</th><th>model</th><th>started (UTC)</th><th>took</th>"
    "<th>status</th><th>steps</th><th>tools</th><th>in</th><th>out</th><th>cost</th>"
    "<th>errors</th><th></th></tr>"
)


def _charts(store: SessionStore, where: SessionFilter) -> str:
    return charts_html(
        store.stats("day", where), store.stats("model", where), store.stats("tool", where)
    )


async def list_page(request: Request) -> Response:
    """``GET /``: the list with its filters and search, and the charts (drawn here, as SVG)."""
    params = {k: v for k, v in request.query_params.items() if k in (*FILTERS, "limit", "q")}
    problem = ""
    charts = ""
    try:
        where, _text, _limit = list_params(params)
    except BadParam as exc:
        problem = f'<p class="note err">error: {_e(exc)}</p>'
    else:
        charts = await hub_of(request).ask(
            lambda store: _charts(store, where), keep=("charts", where)
        )
    body = (
        '<main id="list">'
        + _filters_form(params)
        + problem
        + '<div class="toolbar"><button id="diff" type="button" disabled>Diff</button>'
        '<span id="note" class="note">loading…</span></div>'
        f'<table class="rows" id="sessions"><thead>{_LIST_HEAD}</thead><tbody id="rows"></tbody>'
        '</table><section id="hits" hidden><h2>Steps holding the text</h2>'
        '<table class="rows"><thead><tr><th>session</th><th>step</th><th>field</th>'
        '<th>snippet</th></tr></thead><tbody id="hit-rows"></tbody></table></section>'
        + charts
        + "</main>"
    )
    return _page("sessions", body, LIST_JS, _LIST_POLICY)


async def _lookup(request: Request, session_id: str) -> Row | None:
    """The session's ``{"session", "steps"}`` or None; :class:`BadParam` (field ``id``) for an
    ambiguous prefix or a file that cannot be read now."""
    roots = roots_of(request)
    return await hub_of(request).ask(lambda store: session_detail(store, session_id, roots))


async def _found(request: Request, session_id: str) -> Row | Response:
    """The session's ``{"session", "steps"}``, or the response that says why not."""
    try:
        found = await _lookup(request, session_id)
    except BadParam as exc:
        return bad_param(exc)
    except Outside as exc:
        return _error_page(403, str(exc).partition(": ")[2])
    if found is None:
        return _error_page(404, f"{session_id}: no such session in scope")
    return found


def _readable(request: Request, row: Row) -> Path | Response:
    roots: Roots = request.app.state.roots
    path = Path(row["path"])
    if not roots.holds(path):
        return _error_page(403, f"{row['session_id']}: its file is outside the served paths")
    return path


async def session_page(request: Request) -> Response:
    """``GET /sessions/{id}``: the session's summary and steps, live while it runs."""
    found = await _found(request, request.path_params["session_id"])
    if isinstance(found, Response):
        return found
    session_id = found["session"]["session_id"]
    # A delegated child is drawn inside its parent's page: open it at the child's first step.
    view = f"/sessions/{quote(session_id, safe='')}/view"
    if found["session"]["parent_id"]:
        view += "?step=1"
    body = (
        f'<main id="session" data-session="{_e(session_id)}">'
        f'<h2>Session <code>{_e(session_id)}</code> <span id="status"></span></h2>'
        f'<div class="toolbar"><a class="button" id="open-view" '
        f'href="{_e(view)}">Open in the viewer</a>'
        '<a class="button plain" href="/">All sessions</a></div>'
        '<dl id="cards" class="cards"></dl><h2 id="count">0 steps</h2>'
        '<table class="rows"><thead><tr><th>#</th><th>source</th><th>at</th><th>model</th>'
        "<th>in</th><th>out</th><th>tools</th><th>text</th></tr></thead>"
        '<tbody id="steps"></tbody></table></main>'
    )
    return _page(session_id, body, SESSION_JS, _SESSION_POLICY)


def _source(
    store: SessionStore, asked: str, roots: Roots, *, events: bool
) -> tuple[Row, SessionSource, list[dict[str, Any]] | None] | None:
    """The session's row, where its trajectory is and, with ``events``, its ATOF root's events
    (None for an ATIF file); None when there is none. :class:`BadParam` (``id``) for an
    ambiguous prefix, :class:`Outside` for a file not served. On the store's thread."""
    try:
        found = store.source(asked)
    except StoreError as exc:
        raise BadParam("id", str(exc)) from None
    if found is None:
        return None
    row, source = found
    if not roots.holds(source.path):
        raise Outside(f"id: {row['session_id']}: its file is outside the served paths")
    if not events or not source.root:
        return row, source, None
    try:
        return row, source, store.root_events(source)
    except StoreError as exc:
        raise _Unreadable(str(exc)) from None


class _Unreadable(LookupError):
    """A session's events that cannot be read now (its file changed meanwhile)."""


def _step_param(request: Request) -> int | None:
    text = request.query_params.get("step")
    if text is None:
        return None
    if not text.isdigit() or int(text) < 1:
        raise BadParam("step", f"{text!r} is not a step number (1 or more)")
    return int(text)


async def view_page(request: Request) -> Response:
    """``GET /sessions/{id}/view``: ``wayline view``'s page of the session (deep links:
    ``#step-N``, ``#step-1-N`` in a sub-agent, as the viewer has them).

    ``?step=N`` answers with a redirect to that page at the session's own step N, wherever
    the page shows it (a delegated child is drawn inside its parent: ``#step-1-N``). A session
    from an ATOF file (a running one, say) is drawn from its own events only, read where the
    index says they are; an ATIF file is read whole."""
    from wayline.viewer import ViewerInputError, render_page

    asked = request.path_params["session_id"]
    roots = roots_of(request)
    try:
        step = _step_param(request)
        found = await hub_of(request).ask(
            lambda store: _source(store, asked, roots, events=step is None)
        )
    except BadParam as exc:
        return bad_param(exc)
    except Outside as exc:
        return _error_page(403, str(exc).partition(": ")[2])
    except _Unreadable as exc:
        return _error_page(409, f"cannot draw now: {exc}")
    if found is None:
        return _error_page(404, f"{asked}: no such session in scope")
    row, source, events = found
    session_id = row["session_id"]
    if step is not None:
        target = f"/sessions/{quote(session_id, safe='')}/view#{step_anchor(source.where, step)}"
        return RedirectResponse(target, status_code=303)

    def render() -> str:
        if events is None:
            return render_page(viewer_trajectories(source.path, session_id))
        return render_page(event_trajectories(source.path, events, source.document))

    try:
        page = await run_in_threadpool(render)
    except (ViewerInputError, OSError, ValueError, IndexError) as exc:
        return _error_page(409, f"{source.path}: cannot draw now: {exc}")
    return HTMLResponse(page)


async def diff_page(request: Request) -> Response:
    """``GET /diff?a=ID&b=ID``: ``wayline diff --html`` of two sessions' trajectories."""
    from wayline.trajectory.compare import CompareOptions, compare
    from wayline.trajectory.html import render_diff_html

    picked: dict[str, tuple[str, Path]] = {}
    for key in ("a", "b"):
        asked = request.query_params.get(key, "").strip()
        if not asked:
            return bad_param(BadParam(key, "empty; give a session id"))
        try:
            found = await _lookup(request, asked)
        except (BadParam, Outside) as exc:
            return bad_param(BadParam(key, str(exc).partition(": ")[2]))
        if found is None:
            return bad_param(BadParam(key, f"{asked!r} is no session in scope"))
        path = _readable(request, found["session"])
        if isinstance(path, Response):
            return path
        picked[key] = (found["session"]["session_id"], path)

    def render() -> str:
        (a_id, a_path), (b_id, b_path) = picked["a"], picked["b"]
        old, new = diff_document(a_path, a_id), diff_document(b_path, b_id)
        differences = redacted(compare(old, new, CompareOptions()))
        return render_diff_html(f"session {a_id}", f"session {b_id}", differences, False)

    try:
        page = await run_in_threadpool(render)
    except (LookupError, OSError, ValueError, RecursionError, TypeError) as exc:
        return _error_page(409, f"cannot compare now: {exc}")
    return HTMLResponse(page, headers={"Content-Security-Policy": _DIFF_POLICY})
