"""``wayline import PATH…``: other agents' sessions into ATIF files under the wayline home.

Exit codes: 0 every file imported; 2 a file that cannot be read as the format it is (one
``error:`` line per file naming the file, line and field; the other files are still imported,
and what was written before stays). stdout gets one line per file written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from wayline.cli.errors import EXIT_USAGE, say_error, warn

FORMAT_CHOICES = ("auto", "claude-code", "codex", "inspect", "otlp-json")


@click.command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the ATIF files go [default: $WAYLINE_HOME/imported].",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMAT_CHOICES),
    default="auto",
    show_default=True,
    help="The input format; auto tells it from each file's content.",
)
def import_(paths: tuple[Path, ...], output_dir: Path | None, fmt: str) -> None:
    """Import Claude Code sessions, Codex rollouts, Inspect logs or OTLP JSON as ATIF.

    Each PATH is a file or a folder (searched for .jsonl, .json and .eval files). One ATIF
    file is written per session, named after the source's session id: importing a file again
    replaces its sessions. `wayline sessions` and `wayline view` read them.
    """
    from wayline.host.config import wayline_home
    from wayline.importers import Batch, ImportFailure, detect_format, files_in, import_file

    directory = output_dir if output_dir is not None else wayline_home() / "imported"
    failed = False
    given: list[tuple[list[Path], bool]] = []
    for path in paths:
        if path.is_dir():
            given.append((files_in(path), False))
        elif path.exists():
            given.append(([path], True))
        else:
            say_error(f"{path}: no such file or directory")
            failed = True
    # the files imported together: a Codex parent rollout embeds its spawned agents' rollouts
    batch = Batch(tuple(file for candidates, _ in given for file in candidates))
    for candidates, named in given:
        for file in candidates:
            chosen = fmt
            try:
                if chosen == "auto":
                    chosen = detect_format(file)
            except ImportFailure as exc:
                if named:
                    say_error(str(exc))
                    failed = True
                else:
                    warn(f"{file}: skipped: not a session file of a known format")
                continue
            try:
                written = import_file(file, directory, chosen, batch)
            except ImportFailure as exc:
                say_error(str(exc))
                failed = True
                continue
            except OSError as exc:
                say_error(f"{file}: {exc.strerror or exc}")
                failed = True
                continue
            for target in written:
                click.echo(str(target))
    sys.exit(EXIT_USAGE if failed else 0)
