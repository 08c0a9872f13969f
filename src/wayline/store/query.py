"""Questions to the index: sessions by filter, text search, totals by a key.

Every function returns plain rows (dicts of JSON values), so the command line prints them as
tables or JSON and a web app can return them as they are. The filters parse from strings
(:meth:`SessionFilter.parse`: command-line values or URL query parameters alike) and name
the parameter that is wrong.

A session recorded in several files (its ATOF events and its ATIF file, or two copies) is one
row: a running session from its events, otherwise from its ATIF file.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from wayline.store.extract import STATUSES

__all__ = [
    "GROUPS",
    "FilterError",
    "SessionFilter",
    "count_sessions",
    "iso",
    "list_sessions",
    "parse_time",
    "percentile",
    "search",
    "session_row",
    "snippet",
    "stats",
    "visible",
]

GROUPS = ("model", "day", "tool", "status")
"""What ``stats`` groups by."""

SNIPPET_BEFORE = 40
SNIPPET_AFTER = 80
_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}

Row = dict[str, Any]


class FilterError(ValueError):
    """A filter value that cannot be used; ``str()`` names the parameter."""


def parse_time(value: str, name: str = "time", *, now: datetime | None = None) -> int:
    """Epoch nanoseconds of ``value``: ISO 8601 (a date, or a date and time; no offset means
    UTC), or a duration ago (``90s``, ``30m``, ``12h``, ``7d``, ``2w``)."""
    text = value.strip()
    relative = _RELATIVE.match(text)
    if relative:
        seconds = float(relative.group(1)) * _UNITS[relative.group(2).lower()]
        at = (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        return round(at.timestamp() * 1e6) * 1000
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise FilterError(
            f"{name}: {value!r} is not a time (2026-11-28, 2026-11-28T09:30, or 30m, 12h, 7d ago)"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return round(parsed.timestamp() * 1e6) * 1000


@dataclass(frozen=True)
class SessionFilter:
    """Which sessions a question is about; every field None/False means all of them.

    ``model`` and ``tool`` match a name exactly, or as a glob with ``*`` and ``?``; a session
    matches a model it used anywhere, and a tool it called at least once.
    """

    status: str | None = None
    model: str | None = None
    tool: str | None = None
    since_ns: int | None = None
    until_ns: int | None = None
    min_cost: float | None = None
    errors: bool = False

    @classmethod
    def parse(cls, params: Mapping[str, Any], *, now: datetime | None = None) -> SessionFilter:
        """From strings (``status``, ``model``, ``tool``, ``since``, ``until``, ``min_cost``,
        ``errors``), as the command line and a URL query give them; :class:`FilterError`
        names the parameter that is wrong. Empty and None values are left out."""

        def text(key: str) -> str | None:
            value = params.get(key)
            if value is None or value == "":
                return None
            return str(value)

        status = text("status")
        if status is not None and status not in STATUSES:
            raise FilterError(f"status: {status!r} is not one of {', '.join(STATUSES)}")
        since, until = text("since"), text("until")
        cost = text("min_cost")
        min_cost: float | None = None
        if cost is not None:
            try:
                min_cost = float(cost)
            except ValueError:
                raise FilterError(f"min_cost: {cost!r} is not a number of USD") from None
            if not math.isfinite(min_cost) or min_cost < 0:
                raise FilterError(f"min_cost: {cost!r} must be a number of USD, 0 or more")
        errors = params.get("errors")
        if isinstance(errors, str):
            if errors.lower() not in ("", "0", "1", "true", "false", "yes", "no"):
                raise FilterError(f"errors: {errors!r} is not true or false")
            errors = errors.lower() in ("1", "true", "yes")
        return cls(
            status=status,
            model=text("model"),
            tool=text("tool"),
            since_ns=parse_time(since, "since", now=now) if since is not None else None,
            until_ns=parse_time(until, "until", now=now) if until is not None else None,
            min_cost=min_cost,
            errors=bool(errors),
        )

    def where(self) -> tuple[list[str], list[Any]]:
        """SQL conditions on ``sessions s`` and their arguments."""
        clauses: list[str] = []
        args: list[Any] = []
        if self.status is not None:
            clauses.append("s.status = ?")
            args.append(self.status)
        if self.model is not None:
            clauses.append(
                "EXISTS (SELECT 1 FROM session_models m WHERE m.session = s.id AND m.model "
                + ("GLOB ?)" if _glob(self.model) else "= ?)")
            )
            args.append(self.model)
        if self.tool is not None:
            clauses.append(
                "EXISTS (SELECT 1 FROM session_tools t WHERE t.session = s.id AND t.name "
                + ("GLOB ?)" if _glob(self.tool) else "= ?)")
            )
            args.append(self.tool)
        if self.since_ns is not None:
            clauses.append("s.started_ns >= ?")
            args.append(self.since_ns)
        if self.until_ns is not None:
            clauses.append("s.started_ns < ?")
            args.append(self.until_ns)
        if self.min_cost is not None:
            clauses.append("s.cost_usd >= ?")
            args.append(self.min_cost)
        if self.errors:
            clauses.append("s.errors > 0")
        return clauses, args


def _glob(value: str) -> bool:
    return any(c in value for c in "*?[")


def visible(scope: bool) -> str:
    """The condition that keeps one row per session (see the module doc); ``scope``: only
    copies in the files of the temporary ``scope`` table compete."""
    inside = " AND o.file_id IN (SELECT id FROM temp.scope)" if scope else ""
    own = " AND s.file_id IN (SELECT id FROM temp.scope)" if scope else ""
    return (
        "NOT EXISTS (SELECT 1 FROM sessions o WHERE o.session_id = s.session_id AND "
        f"(o.pref < s.pref OR (o.pref = s.pref AND o.id < s.id)){inside}){own}"
    )


def iso(ns: int | None) -> str | None:
    """Epoch nanoseconds as ISO 8601 UTC with milliseconds (``2026-11-28T09:30:00.000Z``)."""
    if ns is None:
        return None
    at = datetime.fromtimestamp(ns / 1e9, UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


_COLUMNS = (
    "s.id, s.session_id, s.agent, s.model, s.started_ns, s.duration_ms, s.status, s.steps,"
    " s.tool_calls, s.input_tokens, s.output_tokens, s.cached_tokens, s.cost_usd, s.errors,"
    " f.path, s.parent_id, s.models, s.children"
)


def _row(raw: Sequence[Any], tools: dict[int, dict[str, int]]) -> Row:
    return {
        "session_id": raw[1],
        "agent": raw[2],
        "model": raw[3],
        "started_at": iso(raw[4]),
        "duration_ms": raw[5],
        "status": raw[6],
        "steps": raw[7],
        "tool_calls": raw[8],
        "input_tokens": raw[9],
        "output_tokens": raw[10],
        "cached_tokens": raw[11],
        "cost_usd": raw[12],
        "errors": raw[13],
        "path": raw[14],
        "parent_id": raw[15],
        "models": json.loads(raw[16]),
        "children": json.loads(raw[17]),
        "tools": tools.get(raw[0], {}),
    }


def _tools_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = conn.execute(
            "SELECT session, name, calls FROM session_tools WHERE session IN "
            f"({','.join('?' * len(chunk))}) ORDER BY session, name",
            chunk,
        )
        for session, name, calls in rows:
            out.setdefault(session, {})[name] = calls
    return out


def list_sessions(
    conn: sqlite3.Connection,
    where: SessionFilter | None = None,
    *,
    limit: int | None = 50,
    scoped: bool = False,
) -> list[Row]:
    """Sessions matching ``where``, newest first (those with no time last); ``limit`` None
    or 0: all of them. Row fields: ``session_id``, ``agent``, ``model``, ``started_at``,
    ``duration_ms``, ``status``, ``steps``, ``tool_calls``, ``input_tokens``,
    ``output_tokens``, ``cost_usd``, ``errors``, ``path``, and ``cached_tokens``,
    ``parent_id``, ``children``, ``models``, ``tools`` (name → calls)."""
    clauses, args = (where or SessionFilter()).where()
    clauses.append(visible(scoped))
    sql = (
        f"SELECT {_COLUMNS} FROM sessions s JOIN files f ON f.id = s.file_id "
        f"WHERE {' AND '.join(clauses)} "
        "ORDER BY s.started_ns IS NULL, s.started_ns DESC, s.session_id"
    )
    if limit:
        sql += " LIMIT ?"
        args.append(limit)
    rows = conn.execute(sql, args).fetchall()
    tools = _tools_of(conn, [r[0] for r in rows])
    return [_row(r, tools) for r in rows]


def count_sessions(conn: sqlite3.Connection, *, scoped: bool = False) -> int:
    """How many sessions there are (each once, however many files hold it)."""
    row = conn.execute(f"SELECT count(*) FROM sessions s WHERE {visible(scoped)}").fetchone()
    return int(row[0])


def session_row(conn: sqlite3.Connection, session_id: str, *, scoped: bool = False) -> Row | None:
    """The row of one session, by its id or a prefix of it that only it has.

    Raises :class:`FilterError` when the prefix fits several sessions. The row also has
    ``_file``, ``_root`` and ``_position`` (where its trajectory is, for reading its steps).
    """
    sql = (
        f"SELECT {_COLUMNS}, s.root, s.position FROM sessions s JOIN files f ON f.id = s.file_id "
        f"WHERE {{}} AND {visible(scoped)} ORDER BY s.session_id LIMIT 6"
    )
    rows = conn.execute(sql.format("s.session_id = ?"), (session_id,)).fetchall()
    if not rows:
        escaped = session_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = conn.execute(
            sql.format("s.session_id LIKE ? ESCAPE '\\'"), (escaped + "%",)
        ).fetchall()
        if len(rows) > 1:
            shown = ", ".join(r[1] for r in rows[:5])
            raise FilterError(f"{session_id!r} starts several session ids: {shown}")
    if not rows:
        return None
    raw = rows[0]
    row = _row(raw, _tools_of(conn, [raw[0]]))
    row.update(_file=raw[14], _root=raw[18], _position=raw[19])
    return row


# -- search --------------------------------------------------------------------------------------


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def snippet(text: str, query: str) -> str:
    """The text around the first occurrence of ``query`` (any case), the match in «»."""
    found = re.search(re.escape(query), text, re.IGNORECASE)
    if found is None:
        return " ".join(text[: SNIPPET_BEFORE + SNIPPET_AFTER].split())
    start, end = found.span()
    before = text[max(0, start - SNIPPET_BEFORE) : start]
    after = text[end : end + SNIPPET_AFTER]
    lead = "…" if start > SNIPPET_BEFORE else ""
    tail = "…" if end + SNIPPET_AFTER < len(text) else ""
    shown = f"{lead}{before}«{text[start:end]}»{after}{tail}"
    return " ".join(shown.split())


def search(
    conn: sqlite3.Connection,
    text: str,
    *,
    limit: int | None = 20,
    scoped: bool = False,
    trigram: bool = True,
) -> list[Row]:
    """Steps whose text holds ``text`` (any case, any script), most recently indexed first.

    Rows: ``session_id``, ``step`` (the number the viewer shows), ``field`` (``user``,
    ``agent``, ``reasoning``, ``args:<tool>``, ``result:<tool>``), ``snippet`` (the match in
    «»), ``path``. Text of three characters or more is looked up in the trigram index; shorter
    text (two Chinese characters, say) is found by reading the text (slower).
    """
    query = text.strip()
    if not query:
        raise FilterError("search text: empty")
    args: list[Any]
    if trigram and len(query) >= 3:
        match, args = "step_text MATCH ?", [_phrase(query)]
    else:
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        match, args = "x.text LIKE ? ESCAPE '\\'", [f"%{escaped}%"]
    sql = (
        "SELECT s.session_id, x.step, x.field, x.text, f.path FROM step_text x "
        "JOIN sessions s ON s.id = x.session JOIN files f ON f.id = s.file_id "
        f"WHERE {match} AND {visible(scoped)} ORDER BY x.rowid DESC"
    )
    if limit:
        sql += " LIMIT ?"
        args.append(limit)
    return [
        {
            "session_id": sid,
            "step": step,
            "field": field,
            "snippet": snippet(body, query),
            "path": path,
        }
        for sid, step, field, body, path in conn.execute(sql, args)
    ]


# -- stats ---------------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float | None:
    """The nearest-rank ``p``-th percentile of sorted ``values`` (None when empty)."""
    if not values:
        return None
    rank = max(1, math.ceil(p / 100 * len(values)))
    return values[rank - 1]


def stats(
    conn: sqlite3.Connection,
    by: str = "model",
    where: SessionFilter | None = None,
    *,
    scoped: bool = False,
) -> list[Row]:
    """Totals per ``by`` (``model``, ``day``, ``tool`` or ``status``).

    Rows: ``key``, ``sessions``, ``steps``, ``input_tokens``, ``output_tokens``, ``cost_usd``
    (the known costs; None when none is known), ``errors``, ``p50_ms`` and ``p95_ms`` (session
    durations, nearest rank). ``model`` is each session's main model, ``day`` the UTC date it
    started, so those rows add up to the totals. ``tool`` rows count every session that called
    the tool (a session counts under each tool it called), plus ``calls``; their ``errors``
    are the tool's failed calls.
    """
    if by not in GROUPS:
        raise FilterError(f"by: {by!r} is not one of {', '.join(GROUPS)}")
    clauses, args = (where or SessionFilter()).where()
    clauses.append(visible(scoped))
    condition = " AND ".join(clauses)
    if by == "tool":
        source = "sessions s JOIN session_tools t ON t.session = s.id"
        key, errors, extra = "t.name", "SUM(t.errors)", ", SUM(t.calls)"
    else:
        source = "sessions s"
        key = {"model": "s.model", "day": "s.day", "status": "s.status"}[by]
        errors, extra = "SUM(s.errors)", ""
    rows = conn.execute(
        f"SELECT {key}, COUNT(*), SUM(s.steps), SUM(s.input_tokens), SUM(s.output_tokens),"
        f" SUM(s.cost_usd), {errors}{extra} FROM {source} WHERE {condition} GROUP BY {key}",
        args,
    ).fetchall()
    durations: dict[Any, list[float]] = {}
    for group, duration in conn.execute(
        f"SELECT {key}, s.duration_ms FROM {source} WHERE {condition} "
        "AND s.duration_ms IS NOT NULL ORDER BY s.duration_ms",
        args,
    ):
        durations.setdefault(group, []).append(duration)
    out: list[Row] = []
    for raw in rows:
        times = durations.get(raw[0], [])
        row: Row = {
            "key": raw[0],
            "sessions": raw[1],
            "steps": raw[2] or 0,
            "input_tokens": raw[3] or 0,
            "output_tokens": raw[4] or 0,
            "cost_usd": raw[5],
            "errors": raw[6] or 0,
            "p50_ms": percentile(times, 50),
            "p95_ms": percentile(times, 95),
        }
        if by == "tool":
            row["calls"] = raw[7] or 0
        out.append(row)
    if by == "day":
        out.sort(key=lambda r: (r["key"] is None, r["key"] or ""))
    else:
        out.sort(key=lambda r: (-r["sessions"], r["key"] is None, str(r["key"])))
    return out
