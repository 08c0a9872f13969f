"""``wayline view FILE... [-o PAGE.html] [--open] [--tree]``: look at any trajectory.

Exit codes: 0 ok, 2 unreadable or invalid input (one ``error:`` line naming the file and the
field; never a traceback). A file named on the command line must be a trajectory; in a directory,
files that are not (a session transcript, OpenTelemetry spans) are skipped with one warning line
each. Validation warnings are printed to stderr and shown on the page.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wayline.cli.errors import fail, warn

if TYPE_CHECKING:
    from wayline.viewer import Trajectory


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
    from wayline.viewer import trajectory_tree, write_page

    trajectories = _load(files)
    seen: set[str] = set()
    for trajectory in trajectories:
        for line in trajectory.warnings:
            if line not in seen:
                seen.add(line)
                warn(line)
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
        fail(f"{target}: cannot write: {exc.strerror or exc}")
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:  # hostile values
        from wayline.trajectory.load import json_problem

        fail(f"{', '.join(map(str, files))}: cannot draw: {json_problem(exc)}")
    click.echo(str(path))
    if open_page:
        webbrowser.open(path.resolve().as_uri())


def _load(files: tuple[Path, ...]) -> list[Trajectory]:
    """The trajectories of the files and directories named; exits 2 when there is none."""
    from wayline.trajectory.load import json_problem
    from wayline.viewer import ViewerInputError, expand_paths, load_trajectory

    loaded: list[Trajectory] = []
    for entry in files:
        try:
            paths = expand_paths([entry])
        except ViewerInputError as exc:
            fail(str(exc))
        for path in paths:
            try:
                loaded.extend(load_trajectory(path))
            except ViewerInputError as exc:
                if not entry.is_dir():
                    fail(str(exc))
                warn(f"skipped {exc}")
            except (RecursionError, ValueError, TypeError, OverflowError) as exc:
                reason = f"{path}: cannot load: {json_problem(exc)}"
                if not entry.is_dir():
                    fail(reason)
                warn(f"skipped {reason}")
    if not loaded:
        fail(f"{', '.join(map(str, files))}: no trajectory found")
    return loaded
