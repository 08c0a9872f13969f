"""``wayline replay``, ``wayline diff`` and ``wayline export sft``: trajectories as tests and data.

Each reads ATIF trajectories, or ATOF event files converted in memory. Exit codes: replay 0
reproduced, 1 diverged, 2 bad input; diff 0 same, 1 different, 2 bad input; export 0 written,
1 nothing to export, 2 bad input (see :mod:`wayline.cli.errors`).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from wayline.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, fail, warn
from wayline.cli.export_cmd import otlp
from wayline.host.config import ConfigError
from wayline.trajectory.load import TrajectoryError


@click.command()
@click.argument("trajectory", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--tools",
    type=click.Choice(["recorded", "live"]),
    default="recorded",
    show_default=True,
    help="recorded: results come from the recording (no side effects); live: tools run.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the new trajectory (default: ./<name>.replay.json).",
)
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Working directory of the replayed tools (default: the current one).",
)
@click.option("--plugin", "plugins", multiple=True, help="Also enable this plugin (by key).")
@click.option(
    "--agent",
    "agent_spec",
    metavar="MODULE:FUNCTION",
    help="Replay the wayline.Agent this function builds (MODULE is imported from the current "
    "directory) instead of one built from config.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def replay(
    trajectory: Path,
    tools: str,
    output: Path | None,
    cwd: Path | None,
    plugins: tuple[str, ...],
    agent_spec: str | None,
    as_json: bool,
) -> None:
    """Re-run a recorded session with today's runtime, plugins and middleware.

    The model's answers come from the recording; the run's new trajectory is compared with
    it. With --agent, the agent is yours: its function tools, middleware, hooks and plugins.
    Exit 0: reproduced; 1: diverged (the first divergence is printed); 2: bad input.
    """
    from wayline.trajectory.replay import ReplayAgentError
    from wayline.trajectory.replay import replay as run_replay

    factory = _agent_factory(agent_spec) if agent_spec is not None else None
    if factory is not None and plugins:
        fail(
            "--plugin enables plugins of the agent built from config; with --agent, give your "
            "agent its plugins"
        )
    out = output or Path.cwd() / f"{trajectory.name.removesuffix('.json')}.replay.json"
    try:
        report = run_replay(
            trajectory, tools=tools, cwd=cwd, plugins=plugins, output=out, agent=factory
        )
    except (TrajectoryError, ConfigError) as exc:
        fail(str(exc))
    except ReplayAgentError as exc:
        fail(f"--agent {agent_spec}: {exc}")
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)
    except (RecursionError, ValueError) as exc:  # what the recording holds, not the runtime
        fail(f"{trajectory}: cannot replay: {type(exc).__name__}: {exc}")
    except OSError as exc:
        fail(f"{type(exc).__name__}: {exc}", EXIT_FAILED)
    except Exception as exc:  # a plugin's failure while loading or running: one line, no trace
        fail(f"the replay failed: {type(exc).__name__}: {exc}", EXIT_FAILED)
    from wayline.trajectory.compare import redacted

    report.differences = redacted(report.differences)  # shown redacted, as diff shows them
    for note in report.notes:
        click.echo(f"note: {note}", err=True)  # diagnostics: stderr
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(report.describe())
    click.echo(f"new trajectory: {report.output}", err=True)
    sys.exit(0 if report.reproduced else 1)


def _agent_factory(spec: str) -> Any:
    """The function ``--agent MODULE:FUNCTION`` names, imported from the current directory;
    exit 2 with one line when it cannot be."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        fail(f"--agent {spec}: give MODULE:FUNCTION, such as my_agent:make_agent")
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as exc:  # whatever importing the user's module raised: one line
        fail(f"--agent {spec}: cannot import {module_name}: {type(exc).__name__}: {exc}")
    for part in name.split("."):
        if not hasattr(found, part):
            fail(f"--agent {spec}: {module_name} has no {name!r}")
        found = getattr(found, part)
    if not callable(found):
        fail(
            f"--agent {spec}: {name} is a {type(found).__name__}, not a function that returns "
            "a wayline.Agent"
        )
    return found


def _load(path: Path) -> Any:
    from wayline.trajectory.load import load_trajectory

    try:
        return load_trajectory(path)
    except TrajectoryError as exc:
        fail(str(exc))


@click.command()
@click.argument("old", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("new", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the differences as JSON.")
@click.option("--html", "as_html", is_flag=True, help="Print a self-contained HTML page.")
@click.option("--strict", is_flag=True, help="Also compare ids, timestamps, durations, usage.")
def diff(old: Path, new: Path, as_json: bool, as_html: bool, strict: bool) -> None:
    """Compare two trajectories step by step. Exit 0: same; 1: different; 2: trouble."""
    from wayline.trajectory.compare import CompareOptions, compare, redacted

    if as_json and as_html:
        fail("choose one of --json and --html")
    a, b = _load(old), _load(new)
    try:
        differences = compare(a, b, CompareOptions(strict=strict))
    except (RecursionError, ValueError, TypeError) as exc:  # a value no trajectory holds
        fail(f"{old}, {new}: cannot compare: {type(exc).__name__}: {exc}")
    differences = redacted(differences)  # compared as read, shown redacted
    if as_json:
        rows = [d.to_json() for d in differences]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
    elif as_html:
        from wayline.trajectory.html import render_diff_html

        click.echo(render_diff_html(str(old), str(new), differences, strict), nl=False)
    elif differences:
        for d in differences:
            click.echo(d.describe())
        count = len(differences)
        click.echo(f"{count} difference{'s' if count != 1 else ''}")
    else:
        click.echo("same")
    if not (as_json or as_html):
        from wayline.trajectory.cost import cost_line

        line = cost_line(a, b)  # metrics are volatile: the runs' costs are told apart
        if line is not None:
            click.echo(line)
    sys.exit(1 if differences else 0)


@click.group()
def export() -> None:
    """Export trajectories to other formats."""


export.add_command(otlp)  # wayline export otlp (cli/export_cmd.py; OpenTelemetry loads lazily)


def _gather(paths: tuple[Path, ...]) -> list[tuple[str, Any]]:
    """Every trajectory named. A file must be one; a directory is searched recursively, its
    ``*.json`` and ``*.jsonl`` files that are not trajectories (a session transcript, OTel
    spans) are skipped with a warning, and a session found twice (its ATIF file and its ATOF
    events) is taken once, from the ATIF file."""
    from wayline.trajectory.load import load_trajectories

    out: list[tuple[str, Any]] = []
    for path in paths:
        if not path.is_dir():
            try:
                out.extend((str(path), t) for t in load_trajectories(path))
            except TrajectoryError as exc:
                fail(str(exc))
            continue
        found = [p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()]
        seen: dict[str, str] = {}
        for file in sorted(found, key=lambda p: (p.suffix != ".json", p)):
            try:
                loaded = load_trajectories(file)
            except TrajectoryError as exc:
                warn(f"skipped {exc}")
                continue
            for trajectory in loaded:
                session = str(trajectory.get("session_id") or "")
                if session and session in seen:
                    note = f"{file}: session {session} already read from {seen[session]}"
                    click.echo(f"note: {note}", err=True)
                    continue
                seen.setdefault(session, str(file))
                out.append((str(file), trajectory))
    return out


def _builtin_tools() -> dict[str, dict[str, Any]]:
    from wayline.host.tools import ToolRegistry
    from wayline.runtime.delegation import register_delegation_tool
    from wayline.runtime.tools import register_builtin_tools

    registry = ToolRegistry()
    register_builtin_tools(registry)
    register_delegation_tool(registry)
    known: dict[str, dict[str, Any]] = {}
    for name in registry.names():
        entry = registry.get(name)
        if entry is not None:
            known[name] = entry.definition()["function"]
    return known


@export.command("sft")
@click.argument("trajectories", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--only-completed", is_flag=True, help="Only trajectories that reached an answer.")
@click.option("--include-subagents", is_flag=True, help="One more sample per subagent.")
def sft(
    trajectories: tuple[Path, ...], output: Path, only_completed: bool, include_subagents: bool
) -> None:
    """Write OpenAI chat fine-tuning samples (JSONL), one per agent trajectory.

    TRAJECTORIES are ATIF or ATOF files; a directory means every ``*.json`` and ``*.jsonl`` file
    under it, and those that are not trajectories are skipped with a warning.
    """
    from wayline.trajectory.sft import export_samples

    loaded = _gather(trajectories)
    try:
        result = export_samples(
            loaded,
            only_completed=only_completed,
            include_subagents=include_subagents,
            known_tools=_builtin_tools(),
        )
    except (RecursionError, ValueError, TypeError) as exc:  # a value no trajectory holds
        fail(f"cannot export: {type(exc).__name__}: {exc}")
    for reason in result.skipped:
        click.echo(f"skipped: {reason}", err=True)
    if not result.samples:
        fail("nothing to export", EXIT_FAILED)
    try:
        from wayline.contract.private import open_private

        with open_private(output, "w", encoding="utf-8") as fh:  # 0600 when new
            for sample in result.samples:
                fh.write(json.dumps(sample, ensure_ascii=False) + "\n")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    count = len(result.samples)
    click.echo(f"wrote {count} sample{'s' if count != 1 else ''} to {output}", err=True)
