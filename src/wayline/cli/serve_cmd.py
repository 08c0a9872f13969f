"""``wayline serve [PATH…]``: the local web app over every recorded session.

Exit codes: 0 stopped (Ctrl-C or SIGTERM, whenever it comes), 2 bad input (a path that does
not exist, a non-loopback host without ``--allow-remote``, a port that cannot be bound,
Starlette or uvicorn missing), one ``error:`` line each.
"""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path
from types import FrameType

import click

from wayline.cli.errors import fail, warn
from wayline.cli.sessions_cmd import check_paths, index_option, paths_argument

__all__ = ["serve"]


class _WarnLines(logging.Handler):
    """The server's warnings (files skipped, an update that failed) as ``warning:`` lines."""

    def emit(self, record: logging.LogRecord) -> None:
        warn(record.getMessage())


def _stop(signum: int, frame: FrameType | None) -> None:
    """SIGTERM before (or after) uvicorn's own handlers: stop as Ctrl-C does."""
    raise KeyboardInterrupt


@click.command(name="serve")
@paths_argument
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8787, show_default=True, help="The port."
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a --host that is not a loopback address (anyone who reaches it reads sessions).",
)
@index_option
def serve(
    paths: tuple[Path, ...], host: str, port: int, allow_remote: bool, index: Path | None
) -> None:
    """Browse, search, chart, diff and tail sessions live in a local web app.

    PATHs are folders or files of recordings, as for wayline sessions; without them, the
    recordings of $WAYLINE_HOME. Serves 127.0.0.1:8787 by default, only the files under the
    PATHs, and nothing from the network. Ctrl-C stops it.
    """
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        fail(f"wayline serve needs {exc.name}: pip install 'wayline[serve]'")
    from wayline.host.config import wayline_home
    from wayline.serve import ServeConfig, ServeError, bind, check_host, run
    from wayline.store import IndexUnavailable

    check_paths(paths)
    try:
        check_host(host, allow_remote)
    except ServeError as exc:
        fail(str(exc))
    if allow_remote:
        warn(f"serving {host}: anyone who can reach this address can read every session")
    config = ServeConfig(paths=paths, home=wayline_home(), index=index, host=host, port=port)
    try:
        sock = bind(host, port)
    except OSError as exc:
        fail(f"--host {host} --port {port}: cannot listen: {exc.strerror or exc}")
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    logger = logging.getLogger("wayline.serve")
    logger.addHandler(_WarnLines())
    logger.propagate = False
    # uvicorn handles SIGINT and SIGTERM while it serves, then raises them again: either one,
    # at any moment, ends the command as a stop (exit 0), not as an interruption.
    signal.signal(signal.SIGTERM, _stop)
    click.echo(f"indexing {config.index_file} …", err=True)
    click.echo(f"wayline serve: http://{shown}:{bound[1]}/  (Ctrl-C stops)")
    sys.stdout.flush()
    try:
        run(config, sock)
    except KeyboardInterrupt:
        pass
    except IndexUnavailable as exc:
        fail(str(exc))
    finally:
        sock.close()
