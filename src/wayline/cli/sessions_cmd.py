"""``wayline sessions``: list, search and total every recorded session, through the index.

Each command first brings the index up to date with the files (only what changed), then asks
it. Tables are for people; ``--json`` prints the same rows for scripts. Exit codes: 0 answered
(an empty answer included), 2 bad input (a flag value, a path that does not exist, an unknown
session id, an index that cannot be created), one ``error:`` line each.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from wayline.cli.errors import fail, warn
from wayline.store.shown import duration_text, usd_text

__all__ = ["sessions"]

PATHS_HELP = "[default: the recordings of $WAYLINE_HOME]"
STATUS_CHOICES = ("completed", "failed", "interrupted", "max_turns", "running")
GROUP_CHOICES = ("model", "day", "tool", "status")
_FLAGS = {"min_cost": "--min-cost", "since": "--since", "until": "--until", "status": "--status"}

paths_argument = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
index_option = click.option(
    "--index",
    "index",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The index file [default: $WAYLINE_HOME/index.sqlite, or index.sqlite in the folder "
    "holding the PATHs].",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")


@click.group(name="sessions")
def sessions() -> None:
    """Every recorded session (ATOF and ATIF files), listed, searched and totalled.

    PATHs are folders (searched recursively for .json and .jsonl files) or files; without
    them, the recordings of $WAYLINE_HOME (relay/atof, relay/atif and imported). The index is
    a cache over the files, updated on each command by size and mtime: deleting it loses
    nothing.
    """


def check_paths(paths: tuple[Path, ...]) -> None:
    """End the command with one error line when a PATH does not exist."""
    for path in paths:
        if not path.exists():
            fail(f"{path}: no such file or directory")


@contextmanager
def opened_store(
    paths: tuple[Path, ...], index: Path | None, *, rebuild: bool = False
) -> Iterator[Any]:
    """The command's store, up to date (its warnings told); bad paths and an unusable index
    end the command. Shared by ``sessions``, ``mcp`` and ``serve``."""
    from wayline.host.config import wayline_home
    from wayline.store import IndexUnavailable, SessionStore

    check_paths(paths)
    try:
        store = SessionStore.open(list(paths), wayline_home(), index=index)
    except IndexUnavailable as exc:
        fail(str(exc))
    try:
        report = store.rebuild() if rebuild else store.update()
        for line in report.warnings:
            warn(line)
        yield store
    except IndexUnavailable as exc:
        fail(str(exc))
    finally:
        store.close()


def _filter_error(message: str) -> str:
    name, _, rest = message.partition(":")
    return f"{_FLAGS.get(name, name)}:{rest}"


def _console() -> Any:
    from rich.console import Console

    return Console(width=shutil.get_terminal_size((160, 40)).columns, highlight=False)


def _json(rows: Any) -> None:
    click.echo(json.dumps(rows, indent=2, ensure_ascii=False))


# -- formatting ----------------------------------------------------------------------------------


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _when(value: str | None) -> str:
    return "-" if value is None else value.replace("T", " ")[:19]


# -- list ----------------------------------------------------------------------------------------


@sessions.command("list")
@paths_argument
@click.option("--status", type=click.Choice(STATUS_CHOICES), help="Only sessions with this status.")
@click.option("--model", help="Only sessions that used this model (exact, or a glob with * ?).")
@click.option("--tool", "tool", help="Only sessions that called this tool (exact, or a glob).")
@click.option("--since", help="Started at or after T: 2026-11-28, 2026-11-28T09:30 (UTC), 12h, 7d.")
@click.option("--until", help="Started before T (as --since).")
@click.option("--min-cost", "min_cost", help="Only sessions that cost at least USD.")
@click.option("--errors", is_flag=True, help="Only sessions with a failed model or tool call.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Rows to show, newest first (0: all).",
)
@json_option
@index_option
def list_cmd(
    paths: tuple[Path, ...],
    status: str | None,
    model: str | None,
    tool: str | None,
    since: str | None,
    until: str | None,
    min_cost: str | None,
    errors: bool,
    limit: int,
    as_json: bool,
    index: Path | None,
) -> None:
    """List sessions, newest first, with their status, steps, tools, tokens and cost."""
    from wayline.store import FilterError, SessionFilter

    params = {
        "status": status,
        "model": model,
        "tool": tool,
        "since": since,
        "until": until,
        "min_cost": min_cost,
        "errors": errors,
    }
    try:
        where = SessionFilter.parse(params)
    except FilterError as exc:
        fail(_filter_error(str(exc)))
    with opened_store(paths, index) as store:
        rows = store.sessions(where, limit=limit or None)
    if as_json:
        _json(rows)
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    columns = ("session", "agent", "model", "started (UTC)", "took", "status", "steps")
    for name in (*columns, "tools", "in", "out", "cost", "errors"):
        numeric = name in ("took", "steps", "in", "out", "cost", "errors")
        table.add_column(name, justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        tools = ", ".join(f"{name}×{n}" if n > 1 else name for name, n in row["tools"].items())
        table.add_row(
            ("└ " if row["parent_id"] else "") + row["session_id"],
            row["agent"] or "-",
            row["model"] or "-",
            _when(row["started_at"]),
            duration_text(row["duration_ms"]),
            row["status"],
            _count(row["steps"]),
            tools or "-",
            _count(row["input_tokens"]),
            _count(row["output_tokens"]),
            usd_text(row["cost_usd"]),
            _count(row["errors"]) if row["errors"] else "",
        )
    _console().print(table)
    if not rows:
        click.echo("no sessions", err=True)


# -- search --------------------------------------------------------------------------------------


@sessions.command("search")
@click.argument("text")
@paths_argument
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Matches to show, most recently indexed first (0: all).",
)
@json_option
@index_option
def search_cmd(
    text: str, paths: tuple[Path, ...], limit: int, as_json: bool, index: Path | None
) -> None:
    """Find TEXT (any case, any script) in messages, reasoning, tool arguments and results."""
    from wayline.store import FilterError

    if not text.strip():
        fail("TEXT: empty; give the text to find")
    with opened_store(paths, index) as store:
        try:
            rows = store.search(text, limit=limit or None)
        except FilterError as exc:
            fail(str(exc))
    if as_json:
        _json(rows)
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for name in ("session", "step", "field", "snippet"):
        table.add_column(name, justify="right" if name == "step" else "left", overflow="fold")
    for row in rows:
        shown = escape(row["snippet"]).replace("«", "[bold]").replace("»", "[/bold]")
        table.add_row(row["session_id"], str(row["step"]), row["field"], shown)
    _console().print(table)
    if not rows:
        click.echo("no matches", err=True)


# -- stats ---------------------------------------------------------------------------------------


@sessions.command("stats")
@paths_argument
@click.option(
    "--by",
    type=click.Choice(GROUP_CHOICES),
    default="model",
    show_default=True,
    help="Group by the session's model, its UTC start day, each tool it called, or status.",
)
@json_option
@index_option
def stats_cmd(paths: tuple[Path, ...], by: str, as_json: bool, index: Path | None) -> None:
    """Totals per model, day, tool or status: sessions, tokens, cost, errors, p50/p95 time."""
    with opened_store(paths, index) as store:
        rows = store.stats(by)
    if as_json:
        _json(rows)
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_footer=by != "tool" and bool(rows))
    names = ["key", "sessions", "steps", "in", "out", "cost", "errors", "p50", "p95"]
    if by == "tool":
        names.insert(2, "calls")
    totals = _totals(rows)
    for name in names:
        table.add_column(
            by if name == "key" else name,
            footer=totals.get(name, ""),
            justify="left" if name == "key" else "right",
            overflow="fold",
        )
    for row in rows:
        cells = [
            "-" if row["key"] is None else str(row["key"]),
            _count(row["sessions"]),
            _count(row["steps"]),
            _count(row["input_tokens"]),
            _count(row["output_tokens"]),
            usd_text(row["cost_usd"]),
            _count(row["errors"]),
            duration_text(row["p50_ms"]),
            duration_text(row["p95_ms"]),
        ]
        if by == "tool":
            cells.insert(2, _count(row["calls"]))
        table.add_row(*cells)
    _console().print(table)
    if not rows:
        click.echo("no sessions", err=True)


def _totals(rows: list[dict[str, Any]]) -> dict[str, str]:
    costs = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    return {
        "key": "total",
        "sessions": _count(sum(r["sessions"] for r in rows)),
        "steps": _count(sum(r["steps"] for r in rows)),
        "in": _count(sum(r["input_tokens"] for r in rows)),
        "out": _count(sum(r["output_tokens"] for r in rows)),
        "cost": usd_text(sum(costs)) if costs else "-",
        "errors": _count(sum(r["errors"] for r in rows)),
    }


# -- show ----------------------------------------------------------------------------------------


@sessions.command("show")
@click.argument("session_id", metavar="ID")
@paths_argument
@json_option
@index_option
def show_cmd(session_id: str, paths: tuple[Path, ...], as_json: bool, index: Path | None) -> None:
    """One session: its summary, then one line per step (ID or a prefix only it has)."""
    from wayline.store import StoreError

    with opened_store(paths, index) as store:
        try:
            found = store.session(session_id)
        except StoreError as exc:
            fail(str(exc))
    if found is None:
        fail(f"{session_id}: no such session (wayline sessions list shows them)")
    if as_json:
        _json(found)
        return
    row, steps = found["session"], found["steps"]
    console = _console()
    tools = ", ".join(f"{name}×{n}" for name, n in row["tools"].items()) or "-"
    summary = [
        ("session", row["session_id"]),
        ("agent", row["agent"] or "-"),
        ("model", ", ".join(row["models"]) or "-"),
        ("started", _when(row["started_at"]) + " UTC" if row["started_at"] else "-"),
        ("took", duration_text(row["duration_ms"])),
        ("status", row["status"]),
        ("steps", _count(row["steps"])),
        ("tools", tools),
        (
            "tokens",
            f"{_count(row['input_tokens'])} in, {_count(row['output_tokens'])} out, "
            f"{_count(row['cached_tokens'])} cached",
        ),
        ("cost", usd_text(row["cost_usd"])),
        ("errors", _count(row["errors"])),
        ("parent", row["parent_id"] or "-"),
        ("children", ", ".join(row["children"]) or "-"),
        ("file", row["path"]),
    ]
    from rich.markup import escape
    from rich.table import Table

    for name, value in summary:
        console.print(f"[bold]{name:>9}[/bold]  {escape(str(value))}")
    table = Table(box=None, pad_edge=False)
    for name in ("#", "source", "at", "model", "in", "out", "tools", "text"):
        numeric = name in ("#", "at", "in", "out")
        table.add_column(name, justify="right" if numeric else "left", overflow="fold")
    for step in steps:
        called = ", ".join(
            t["name"] + (" ✗" if t["error"] else "") + (" (cancelled)" if t["cancelled"] else "")
            for t in step["tools"]
        )
        text = step["text"]
        if step["outcome"]:
            text = f"[{step['outcome']}] {text}"
        table.add_row(
            str(step["step"]),
            str(step["source"]),
            duration_text(step["at_ms"]),
            step["model"] or "",
            _count(step["input_tokens"]) if step["input_tokens"] is not None else "",
            _count(step["output_tokens"]) if step["output_tokens"] is not None else "",
            escape(called),
            escape(text),
        )
    console.print()
    console.print(table)


# -- index ---------------------------------------------------------------------------------------


@sessions.command("index")
@paths_argument
@click.option("--rebuild", is_flag=True, help="Delete the index and build it again from the files.")
@index_option
def index_cmd(paths: tuple[Path, ...], rebuild: bool, index: Path | None) -> None:
    """Bring the index up to date now (every other command does it first too)."""
    with opened_store(paths, index, rebuild=rebuild) as store:
        report = store.last_update
        assert report is not None
        if store.search_mode != "trigram":
            import sqlite3

            warn(
                f"SQLite {sqlite3.sqlite_version} has no trigram tokenizer (3.34 or later): "
                "search reads the text of every step"
            )
        click.echo(
            f"{store.index}: {report.files:,} files in scope, {report.indexed:,} read, "
            f"{report.removed:,} gone; {store.count():,} sessions ({report.seconds:.2f} s)"
        )
