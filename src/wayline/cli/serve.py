"""``wayline serve-model``: run the scripted OpenAI-compatible model server in the foreground."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

import click

from wayline.cli.errors import EXIT_FAILED, fail
from wayline.testing.script import ScriptError, load_script
from wayline.testing.server import RecordedRequest, ScriptedServer


def _describe(entry: RecordedRequest) -> str:
    rule = entry.rule if entry.rule is not None else "default"
    fault = f" fault={entry.fault}" if entry.fault else ""
    mode = "stream" if entry.stream else "json"
    return f"request #{entry.index} turn={entry.turn} rule={rule} {mode}{fault}"


@click.command("serve-model")
@click.option(
    "--script",
    "script_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=str),
    help="YAML or JSON script the model answers from.",
)
@click.option(
    "--port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="0 picks a free port.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("-v", "--verbose", is_flag=True, help="Print one line per chat request to stderr.")
def serve_model(script_path: str, port: int, host: str, verbose: bool) -> None:
    """Serve a scripted OpenAI-compatible model until SIGINT or SIGTERM."""
    try:
        script = load_script(script_path)
    except ScriptError as exc:
        fail(str(exc))
    except (RecursionError, ValueError) as exc:  # deep nesting, a huge integer
        from wayline.trajectory.load import json_problem

        fail(f"{script_path}: cannot read script: {json_problem(exc)}")

    def report(entry: RecordedRequest) -> None:
        click.echo(_describe(entry), err=True)

    server = ScriptedServer(script, host=host, port=port, on_request=report if verbose else None)
    try:
        server.start()
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_FAILED)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        click.echo(f"serving scripted model on {server.base_url}")
        sys.stdout.flush()
        # A bounded wait keeps the main thread responsive to signals on every platform.
        while not stop.wait(0.2):
            pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
