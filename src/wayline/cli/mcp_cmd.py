"""``wayline mcp``: serve the session index to coding agents over the Model Context Protocol.

stdio by default (the client starts the command and speaks on its stdin and stdout, so
nothing else is ever printed on stdout), or streamable HTTP on 127.0.0.1 with ``--http PORT``.
Exit codes: 0 when the client closes the connection (or SIGINT/SIGTERM under ``--http``);
2 for bad input (a path that does not exist, an index that cannot be created, a port in use)
or the ``mcp`` extra missing, one ``error:`` line each.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType

import click

from wayline.cli.errors import fail
from wayline.cli.sessions_cmd import index_option, opened_store, paths_argument

__all__ = ["mcp"]

MISSING_SDK = "wayline mcp needs the MCP SDK: pip install 'wayline[mcp]'"


@click.command(name="mcp")
@paths_argument
@click.option(
    "--http",
    "port",
    type=click.IntRange(0, 65535),
    default=None,
    metavar="PORT",
    help="Serve streamable HTTP on 127.0.0.1:PORT (0: a free port; the URL is printed) "
    "instead of stdio.",
)
@index_option
def mcp(paths: tuple[Path, ...], port: int | None, index: Path | None) -> None:
    """Serve recorded sessions to coding agents over MCP (stdio, or HTTP on 127.0.0.1).

    PATHs are folders (searched recursively for .json and .jsonl files) or files; without
    them, the recordings of $WAYLINE_HOME. Read-only: the index (a cache over the files) is
    brought up to date on each tool call. docs/mcp.md shows the configuration for Claude
    Code, Codex and Cursor.
    """
    try:
        from wayline.mcp.server import build_server, run_http, run_stdio
    except ImportError:
        fail(MISSING_SDK)
    from wayline.host.config import wayline_home
    from wayline.mcp import SessionTools

    with opened_store(paths, index):
        pass  # the index made (or brought up to date) before the first call, its problems told now
    server = build_server(SessionTools(paths, wayline_home(), index=index))
    if port is None:
        run_stdio(server)
        return

    def ready(url: str) -> None:
        click.echo(f"wayline mcp: streamable HTTP on {url}")
        sys.stdout.flush()

    def stop(signum: int, frame: FrameType | None) -> None:
        # uvicorn stops on the signal, then raises it again with the handler it found: this
        # one, so SIGINT and SIGTERM end the command with status 0, as serve-model does.
        raise SystemExit(0)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_http(server, port, ready)
    except OSError as exc:
        fail(f"--http {port}: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
