"""The JSON API and its Server-Sent Events streams.

- ``GET /api/sessions``: the rows of ``wayline sessions list --json``; query parameters are the
  list's filters (``status``, ``model``, ``tool``, ``since``, ``until``, ``min_cost``,
  ``errors``, ``limit``) plus ``q``, text one of the session's steps holds.
- ``GET /api/sessions/{id}``: ``{"session": row, "steps": [...]}`` (``sessions show --json``).
- ``GET /api/search?q=&limit=``: the rows of ``sessions search --json``.
- ``GET /api/stats?by=``: the rows of ``sessions stats --json``, with the list's filters.
- ``GET /api/sessions/{id}/events``: the session as it changes (SSE): ``session`` (its row),
  ``steps`` (steps new or changed since the last event, by ``step``), ``reset`` (forget the
  steps: the file was rewritten with fewer), ``gone``.
- ``GET /api/live``: ``change`` each time the index changed (SSE), for pages that list.

A bad parameter is HTTP 400 with ``{"error": "...", "field": NAME}``; an unknown session 404.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from wayline.serve.files import Roots
from wayline.serve.hub import Hub
from wayline.store import GROUPS, FilterError, SessionFilter, SessionStore, StoreError

__all__ = [
    "FILTERS",
    "BadParam",
    "Outside",
    "api_live",
    "api_search",
    "api_session",
    "api_session_events",
    "api_sessions",
    "api_stats",
    "bad_param",
    "hub_of",
    "list_params",
    "outside",
    "roots_of",
    "session_detail",
]

FILTERS = ("status", "model", "tool", "since", "until", "min_cost", "errors")
"""The list's filters, as query parameters (``SessionFilter.parse`` reads them)."""
SEARCH_CAP = 10_000
"""Matches read to find the sessions holding ``q`` (the most recently indexed first)."""
KEEPALIVE_SECONDS = 15.0
"""A comment line this often keeps an idle stream open through proxies and tells a gone
client from an idle one."""

Row = dict[str, Any]


class BadParam(ValueError):
    """A query parameter that cannot be used: ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def hub_of(request: Request) -> Hub:
    """The app's hub (set when the app is made)."""
    hub: Hub = request.app.state.hub
    return hub


def bad_param(exc: BadParam) -> JSONResponse:
    """HTTP 400 naming the parameter."""
    return JSONResponse({"error": str(exc), "field": exc.field}, status_code=400)


def _single(params: Mapping[str, list[str]], allowed: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, values in params.items():
        if key not in allowed:
            raise BadParam(key, f"unknown parameter (one of {', '.join(allowed)})")
        if len(values) > 1:
            raise BadParam(key, "given more than once")
        out[key] = values[0]
    return out


def _params(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    grouped: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        grouped.setdefault(key, []).append(value)
    return _single(grouped, allowed)


def _limit(params: Mapping[str, str], default: int) -> int | None:
    text = params.get("limit", "")
    if text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise BadParam("limit", f"{text!r} is not a whole number (0: all)") from None
    if value < 0:
        raise BadParam("limit", f"{text!r} must be 0 (all) or more")
    return value or None


def _filter(params: Mapping[str, str]) -> SessionFilter:
    try:
        return SessionFilter.parse({k: v for k, v in params.items() if k in FILTERS})
    except FilterError as exc:
        field, _, message = str(exc).partition(":")
        raise BadParam(field.strip(), message.strip()) from None


def list_params(params: Mapping[str, str]) -> tuple[SessionFilter, str, int | None]:
    """The list's filter, search text and limit from query parameters (:class:`BadParam`)."""
    return _filter(params), params.get("q", "").strip(), _limit(params, 50)


def roots_of(request: Request) -> Roots:
    """The files the app may read."""
    roots: Roots = request.app.state.roots
    return roots


def sessions_matching(
    store: SessionStore, where: SessionFilter, text: str, limit: int | None, roots: Roots
) -> list[Row]:
    """The list's rows: sessions matching ``where`` and, with ``text``, holding it in a step;
    a file outside the served paths (reached through a link) is left out."""
    if not text:
        rows = store.sessions(where, limit=limit)
    else:
        held = {hit["session_id"] for hit in store.search(text, limit=SEARCH_CAP)}
        rows = [row for row in store.sessions(where, limit=None) if row["session_id"] in held]
    rows = [row for row in rows if roots.holds(row["path"])]
    return rows[:limit] if limit else rows


async def api_sessions(request: Request) -> Response:
    """``GET /api/sessions``: the list, filtered (and searched with ``q``)."""
    try:
        where, text, limit = list_params(_params(request, (*FILTERS, "limit", "q")))
    except BadParam as exc:
        return bad_param(exc)
    roots = roots_of(request)
    rows = await hub_of(request).ask(
        lambda store: sessions_matching(store, where, text, limit, roots)
    )
    return JSONResponse(rows)


async def api_search(request: Request) -> Response:
    """``GET /api/search?q=TEXT[&limit=N]``: steps holding the text."""
    try:
        params = _params(request, ("q", "limit"))
        text = params.get("q", "").strip()
        if not text:
            raise BadParam("q", "empty; give the text to find")
        limit = _limit(params, 20)
    except BadParam as exc:
        return bad_param(exc)
    rows = await hub_of(request).ask(lambda store: store.search(text, limit=limit))
    roots = roots_of(request)
    return JSONResponse([row for row in rows if roots.holds(row["path"])])


async def api_stats(request: Request) -> Response:
    """``GET /api/stats?by=model|day|tool|status``: totals per key, with the list's filters."""
    try:
        params = _params(request, ("by", *FILTERS))
        by = params.get("by") or "model"
        if by not in GROUPS:
            raise BadParam("by", f"{by!r} is not one of {', '.join(GROUPS)}")
        where = _filter(params)
    except BadParam as exc:
        return bad_param(exc)
    rows = await hub_of(request).ask(
        lambda store: store.stats(by, where), keep=("stats", by, where)
    )
    return JSONResponse(rows)


class Outside(LookupError):
    """A session whose file lies outside the served paths (reached through a link)."""


def session_detail(store: SessionStore, session_id: str, roots: Roots) -> Row | None:
    """``{"session": row, "steps": [...]}``, or None; :class:`BadParam` for an ambiguous
    prefix or a file that cannot be read now, :class:`Outside` for a file not served."""
    try:
        found = store.session(session_id)
    except StoreError as exc:
        raise BadParam("id", str(exc)) from None
    if found is not None and not roots.holds(found["session"]["path"]):
        found_id = found["session"]["session_id"]
        raise Outside(f"id: {found_id}: its file is outside the served paths")
    return found


def outside(exc: Outside) -> JSONResponse:
    """HTTP 403 naming the session."""
    return JSONResponse({"error": str(exc), "field": "id"}, status_code=403)


def _not_found(session_id: str) -> JSONResponse:
    return JSONResponse(
        {"error": f"id: {session_id!r} is no session in scope", "field": "id"}, status_code=404
    )


async def api_session(request: Request) -> Response:
    """``GET /api/sessions/{id}``: one session's row and steps (an id or a unique prefix)."""
    session_id = request.path_params["session_id"]
    roots = roots_of(request)
    try:
        _params(request, ())
        found = await hub_of(request).ask(lambda store: session_detail(store, session_id, roots))
    except BadParam as exc:
        return bad_param(exc)
    except Outside as exc:
        return outside(exc)
    if found is None:
        return _not_found(session_id)
    return JSONResponse(found)


def _event(name: str, data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return f"event: {name}\ndata: {text}\n\n"


def _fingerprint(store: SessionStore, session_id: str) -> list[tuple[Any, ...]]:
    """What changes when a session's copy in the index changes (cheap: no file is read)."""
    rows = store.connection.execute(
        "SELECT s.id, s.status, s.steps, s.duration_ms, f.size, f.mtime_ns FROM sessions s "
        "JOIN files f ON f.id = s.file_id WHERE s.session_id = ? ORDER BY s.id",
        (session_id,),
    ).fetchall()
    return [tuple(row) for row in rows]


def _sse(stream: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def api_session_events(request: Request) -> Response:
    """``GET /api/sessions/{id}/events``: the session and its steps as they are written (SSE).

    The first events hold the session as it is; later ones what changed. The stream stays open
    after the session ends (a session may start another turn) until the client goes."""
    hub = hub_of(request)
    asked = request.path_params["session_id"]
    roots = roots_of(request)

    def opening(store: SessionStore) -> tuple[list[tuple[Any, ...]], Row | None]:
        found = session_detail(store, asked, roots)
        if found is None:
            return [], None
        return _fingerprint(store, found["session"]["session_id"]), found

    try:
        _params(request, ())
        # The detail and its fingerprint are read together, after the generation: a change
        # after it is looked at once the stream starts.
        generation_before = hub.generation
        opened, first = await hub.ask(opening)
    except BadParam as exc:
        return bad_param(exc)
    except Outside as exc:
        return outside(exc)
    if first is None:
        return _not_found(asked)
    session_id = first["session"]["session_id"]

    def detail(store: SessionStore) -> tuple[list[tuple[Any, ...]], Row | None]:
        try:
            return _fingerprint(store, session_id), session_detail(store, session_id, roots)
        except (BadParam, Outside):
            return [], None  # its file is being rewritten (or moved): the next change tells

    async def stream() -> AsyncIterator[str]:
        async with hub.listening():
            generation = generation_before
            seen = opened
            current: Row | None = first
            sent_row: Row | None = None
            sent_steps: list[Row] = []
            yield "retry: 1000\n\n"
            while True:
                if current is not None:
                    row, steps = current["session"], current["steps"]
                    if row != sent_row:
                        yield _event("session", row)
                        sent_row = row
                    if len(steps) < len(sent_steps):
                        yield _event("reset", {})
                        sent_steps = []
                    changed = [
                        step
                        for index, step in enumerate(steps)
                        if index >= len(sent_steps) or sent_steps[index] != step
                    ]
                    if changed:
                        yield _event("steps", changed)
                        sent_steps = steps
                elif sent_row is not None:
                    yield _event("gone", {"session_id": session_id})
                    sent_row, sent_steps = None, []
                now = await hub.wait_change(generation, KEEPALIVE_SECONDS)
                if now == generation:
                    yield ": keepalive\n\n"
                    continue
                generation = now
                marks = await hub.worker.call(lambda store: _fingerprint(store, session_id))
                if marks == seen:
                    continue
                seen, current = await hub.worker.call(detail)
                if current is None and seen:
                    seen = []  # unreadable now: read again at the next change

    return _sse(stream())


async def api_live(request: Request) -> Response:
    """``GET /api/live``: ``change`` (with the index's generation) each time it changed."""
    hub = hub_of(request)
    try:
        _params(request, ())
    except BadParam as exc:
        return bad_param(exc)

    async def stream() -> AsyncIterator[str]:
        async with hub.listening():
            generation = hub.generation
            yield "retry: 1000\n\n"
            yield _event("hello", {"generation": generation})
            while True:
                now = await hub.wait_change(generation, KEEPALIVE_SECONDS)
                if now == generation:
                    yield ": keepalive\n\n"
                    continue
                generation = now
                yield _event("change", {"generation": generation})

    return _sse(stream())
