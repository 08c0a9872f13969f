"""``wayline atif …`` and ``wayline atof …``: convert and validate trajectory files.

Exit codes: 0 ok, 1 the files were read and have problems (printed one per line on stdout,
the command's answer), 2 input that cannot be used: unreadable, not a regular file (a FIFO, a
device), empty, not UTF-8, not JSON, truncated, too deeply nested, or of another kind (an ATOF
file given to ``atif validate``, an ATIF file to ``atof validate`` or ``atif convert``,
OpenTelemetry spans or a transcript to either), said in one line from the file's first bytes.
Errors are one ``error:`` line on stderr naming the file; never a traceback.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import click

from wayline.cli.errors import EXIT_FAILED, EXIT_USAGE, fail, say_error, warn
from wayline.relay.atif.convert import ConvertOptions, convert_file
from wayline.relay.atif.files import DEFAULT_FILENAME_TEMPLATE, SUBAGENT_MODES, check_template
from wayline.relay.atif.validate import validate_trajectory
from wayline.relay.identify import Identified, InputFileError, identify
from wayline.trajectory.load import TrajectoryError, parse_json, read_text

EXIT_INVALID = EXIT_FAILED
EXIT_UNREADABLE = EXIT_USAGE
_IS_ATIF = (
    "an ATIF trajectory, not ATOF events: validate it with `wayline atif validate`, "
    "view it with `wayline view`"
)
_IS_ATOF = (
    "ATOF events, not an ATIF trajectory: check them with `wayline atof validate`, "
    "or convert them with `wayline atif convert`"
)


_IS_JSON = "a JSON document, not ATOF events (one JSON object per line)"


def _atof_problem(path: Path) -> str | None:
    """``None`` if ``path`` holds ATOF events (from its first bytes), else one line why not."""
    try:
        found = identify(path)
    except InputFileError as exc:
        return str(exc)
    if found.kind == "atof":
        return None
    if found.kind == "atif":
        return f"{path}: {_IS_ATIF}"
    if found.kind in ("json", "object"):
        return f"{path}: {_IS_JSON}"
    return f"{path}: {found.label}, not ATOF events"


def _atif_kind(path: Path) -> Identified:
    """What ``path`` holds; :class:`TrajectoryError` unless it may be an ATIF document."""
    try:
        found = identify(path)
    except InputFileError as exc:
        raise TrajectoryError(exc.message, source=str(path)) from None
    if found.kind == "atof":
        raise TrajectoryError(_IS_ATOF, source=str(path))
    if found.kind not in ("atif", "json", "object"):  # an object: validated, problems listed
        raise TrajectoryError(f"{found.label}, not an ATIF trajectory", source=str(path))
    return found


@click.group(name="atif")
def atif() -> None:
    """ATIF trajectories: convert ATOF event files, validate trajectory files."""


@atif.command("convert")
@click.argument("events", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Directory for the ATIF files (created if missing).",
)
@click.option("--agent-name", default=None, help="ATIF agent name [default: root scope name].")
@click.option(
    "--agent-version", default=None, help="ATIF agent version [default: as recorded, else unknown]."
)
@click.option("--model-name", default=None, help="Agent model [default: first model seen].")
@click.option(
    "--subagents",
    type=click.Choice(SUBAGENT_MODES),
    default="embedded",
    show_default=True,
    help="'all' also writes each sub-agent as a standalone file.",
)
@click.option(
    "--filename-template",
    default=DEFAULT_FILENAME_TEMPLATE,
    show_default=True,
    help="File name with {session_id} and/or {trajectory_id}.",
)
@click.option(
    "--observed-events",
    is_flag=True,
    help="Also embed the raw ATOF events in extra.observed_events (memory grows with events).",
)
def convert(
    events: Path,
    output_dir: Path,
    agent_name: str | None,
    agent_version: str | None,
    model_name: str | None,
    subagents: str,
    filename_template: str,
    observed_events: bool,
) -> None:
    """Convert an ATOF JSONL file (EVENTS) into ATIF v1.7 trajectory files, streaming."""
    from wayline.relay.atof import AtofFormatError, AtofTornLineWarning

    try:
        check_template(filename_template)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--filename-template") from None
    problem = _atof_problem(events)
    if problem is not None:
        atif_given = problem.endswith((_IS_ATIF, _IS_JSON))
        fail(problem + ("; there is nothing to convert" if atif_given else ""), EXIT_UNREADABLE)
    options = ConvertOptions(
        agent_name=agent_name,
        agent_version=agent_version,
        model_name=model_name,
        subagents="all" if subagents == "all" else "embedded",
        filename_template=filename_template,
        include_events=observed_events,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AtofTornLineWarning)
        try:
            report = convert_file(events, output_dir, options)
        except AtofFormatError as exc:
            fail(str(exc), EXIT_UNREADABLE)
        except OSError as exc:
            where = exc.filename if exc.filename is not None else events
            fail(f"{where}: {exc.strerror or exc}", EXIT_UNREADABLE)
        except (RecursionError, ValueError, TypeError, OverflowError) as exc:  # hostile values
            fail(f"{events}: cannot convert: {type(exc).__name__}: {exc}", EXIT_UNREADABLE)
    if not report.written:
        # One line: why nothing came out, with the first thing the reader noticed.
        seen = f" ({caught[0].message})" if caught else ""
        if report.events and report.events == report.skipped_events:  # lines, none an event
            fail(f"{events}: no ATOF events found, not an ATOF file{seen}", EXIT_USAGE)
        torn = [w for w in caught if issubclass(w.category, AtofTornLineWarning)]
        if torn:  # cut off before any trajectory was complete: truncated input
            line = str(torn[0].message).removeprefix(f"{events}:").split(":", 1)[0]
            fail(
                f"{events}: truncated: line {line} is incomplete, and no trajectory came before it"
            )
        fail(f"{events}: no trajectory with steps found in {report.events} events", EXIT_FAILED)
    for warning in caught:
        warn(str(warning.message))
    for path in report.written:
        click.echo(str(path))
    notes = [f"{report.events} events -> {len(report.written)} ATIF file(s) in {output_dir}"]
    if report.skipped_events:
        notes.append(f"{report.skipped_events} lines were not ATOF events and were skipped")
    if report.empty_trajectories:
        notes.append(f"{report.empty_trajectories} trajectories had no steps and were not written")
    click.echo(f"{events}: " + "; ".join(notes), err=True)


@atif.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--no-check-media",
    is_flag=True,
    help="Do not check that local image/audio files exist.",
)
def validate(files: tuple[Path, ...], no_check_media: bool) -> None:
    """Validate ATIF files with Harbor's rules; one line per problem with its JSON path."""
    code = 0
    for path in files:
        try:
            document = _read_atif(path)
        except TrajectoryError as exc:
            say_error(str(exc))
            code = EXIT_UNREADABLE
            continue
        base_dir = None if no_check_media else path.parent
        problems = validate_trajectory(document, base_dir=base_dir)
        for problem in problems:
            click.echo(f"{path}: {problem}")
        if problems:
            code = max(code, EXIT_INVALID)
        else:
            click.echo(f"{path}: ok")
    sys.exit(code)


def _read_atif(path: Path) -> object:
    """The JSON document of an ATIF file; :class:`TrajectoryError` when it cannot be one.

    The file's first bytes are looked at first, so a file of another kind is refused
    before it is read whole."""
    _atif_kind(path)
    return parse_json(read_text(path), str(path))


@click.group(name="atof")
def atof() -> None:
    """ATOF event files (Relay's JSONL event stream)."""


@atof.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def atof_validate(files: tuple[Path, ...]) -> None:
    """Validate ATOF JSONL files against the ATOF 0.1 rules; one line per problem."""
    from wayline.relay.atof_reader import TORN_LAST_LINE, iter_atof_problems

    code = 0
    for path in files:
        reason = _atof_problem(path)
        if reason is not None:
            say_error(reason)
            code = EXIT_UNREADABLE
            continue
        count = 0
        torn: str | None = None
        try:
            for problem in iter_atof_problems(path):  # printed as found: memory stays flat
                count += 1
                if TORN_LAST_LINE in problem:
                    torn = problem
                click.echo(problem if problem.startswith(str(path)) else f"{path}: {problem}")
        except OSError as exc:
            say_error(f"{path}: cannot read: {exc.strerror or exc}")
            code = EXIT_UNREADABLE
            continue
        if torn is not None:  # a file cut off mid-line is truncated input, not only invalid
            say_error(f"{path}: truncated: {torn.split(':', 1)[0]} is cut off mid-line")
            code = EXIT_UNREADABLE
        elif count:
            code = max(code, EXIT_INVALID)
        else:
            click.echo(f"{path}: ok")
    sys.exit(code)
