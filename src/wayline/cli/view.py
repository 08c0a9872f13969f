"""``wayline view FILE... [-o PAGE.html] [--open] [--tree]``: look at any trajectory.

Exit codes: 0 ok, 2 unreadable or invalid input (one line naming the file and the field; never a
traceback). Validation warnings are printed to stderr and shown on the page.
"""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path
from typing import NoReturn

import click

EXIT_INVALID = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"wayline view: {message}", err=True)
    sys.exit(EXIT_INVALID)


def _default_output(files: tuple[Path, ...]) -> Path:
    first = files[0]
    if len(files) == 1 and not first.is_dir():
        return first.with_name(first.name.rsplit(".", 1)[0] + ".html")
    base = first if first.is_dir() else first.parent
    return base / "trajectories.html"


@click.command(name="view")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML page to write [default: next to the input, FILE.html or trajectories.html].",
)
@click.option("--open", "open_page", is_flag=True, help="Open the page in the default browser.")
@click.option("--tree", is_flag=True, help="Print the structure as a tree instead of a page.")
@click.option("--title", default=None, help="Page title [default: the session id].")
def view(
    files: tuple[Path, ...], output: Path | None, open_page: bool, tree: bool, title: str | None
) -> None:
    """Show ATIF (.json) or ATOF (.jsonl) trajectories as one self-contained HTML page.

    Several files or a directory give one page with a picker. Works offline and from file://.
    """
    from wayline.viewer import ViewerInputError, load_trajectories, trajectory_tree, write_page

    try:
        trajectories = load_trajectories(files)
    except ViewerInputError as exc:
        _fail(str(exc))
    except Exception as exc:  # a bug must still not show the user a traceback
        _fail(f"{', '.join(map(str, files))}: cannot load: {type(exc).__name__}: {exc}")
    seen: set[str] = set()
    for trajectory in trajectories:
        for line in trajectory.warnings:
            if line not in seen:
                seen.add(line)
                click.echo(f"warning: {line}", err=True)
    if tree:
        from rich.console import Console

        console = Console()
        for trajectory in trajectories:
            console.print(trajectory_tree(trajectory))
        return
    target = output if output is not None else _default_output(files)
    try:
        path = write_page(trajectories, target, title)
    except OSError as exc:
        _fail(f"{target}: cannot write: {exc.strerror or exc}")
    click.echo(str(path))
    if open_page:
        webbrowser.open(path.resolve().as_uri())
