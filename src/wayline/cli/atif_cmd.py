"""``wayline atif …`` and ``wayline atof …``: convert and validate trajectory files.

Exit codes: 0 ok, 1 the files were read and have problems (printed one per line on stdout,
the command's answer), 2 input that cannot be used: unreadable, not JSON, too deeply nested, or
the other format (an ATOF file given to ``atif validate``, an ATIF file to ``atof validate`` or
``atif convert``). Errors are one ``error:`` line on stderr naming the file; never a traceback.
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
from wayline.trajectory.load import TrajectoryError, looks_like_atof, parse_json, sniff_kind

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


def _readable(path: Path) -> str | None:
    """``None`` if ``path`` can be opened for reading, else the reason."""
    try:
        with path.open("rb"):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


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
    reason = _readable(events)
    if reason is not None:
        fail(f"{events}: cannot read: {reason}", EXIT_UNREADABLE)
    if sniff_kind(events) == "atif":
        fail(f"{events}: {_IS_ATIF}; there is nothing to convert", EXIT_UNREADABLE)
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
    """The JSON document of an ATIF file; :class:`TrajectoryError` when it cannot be one."""
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TrajectoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TrajectoryError(f"not UTF-8 text (byte {exc.start})", source=source) from None
    if not text.strip():
        raise TrajectoryError("the file is empty", source=source)
    if looks_like_atof(path, text):
        raise TrajectoryError(_IS_ATOF, source=source)
    return parse_json(text, source)


@click.group(name="atof")
def atof() -> None:
    """ATOF event files (Relay's JSONL event stream)."""


@atof.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def atof_validate(files: tuple[Path, ...]) -> None:
    """Validate ATOF JSONL files against the ATOF 0.1 rules; one line per problem."""
    from wayline.relay.atof import validate_atof

    code = 0
    for path in files:
        reason = _readable(path)
        if reason is not None:
            say_error(f"{path}: cannot read: {reason}")
            code = EXIT_UNREADABLE
            continue
        if sniff_kind(path) == "atif":
            say_error(f"{path}: {_IS_ATIF}")
            code = EXIT_UNREADABLE
            continue
        try:
            problems = validate_atof(path)
        except OSError as exc:
            say_error(f"{path}: cannot read: {exc.strerror or exc}")
            code = EXIT_UNREADABLE
            continue
        for problem in problems:
            click.echo(problem if problem.startswith(str(path)) else f"{path}: {problem}")
        if problems:
            code = max(code, EXIT_INVALID)
        else:
            click.echo(f"{path}: ok")
    sys.exit(code)
