"""Offline ATOF → ATIF conversion: a stream of event dicts in, trajectory files out.

Streaming: each root trajectory is written as soon as its scope ends and then dropped, so memory
follows open scopes and the steps of unfinished trajectories, never the file's event count
(unless ``include_events`` asks for the raw events in ``extra.observed_events``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wayline.contract.private import PrivatePaths
from wayline.relay.atif.builder import TrajectoryBuilder
from wayline.relay.atif.files import DEFAULT_FILENAME_TEMPLATE, SubagentMode, TrajectoryWriter
from wayline.relay.atif.model import AgentInfo, TrajectoryNode
from wayline.relay.atif.payloads import JsonDict


@dataclass(frozen=True)
class ConvertOptions:
    """How to name and describe the trajectories of a conversion.

    ``None`` fields come from the recording: the agent block a scope declares (wayline's
    plugin records one), else ``agent_name`` is the root scope's name, ``agent_version``
    ``"unknown"``, and ``model_name``/``tool_definitions`` the first model response / the
    tools offered in LLM requests.
    """

    agent_name: str | None = None
    agent_version: str | None = None
    model_name: str | None = None
    tool_definitions: list[JsonDict] | None = None
    subagents: SubagentMode = "embedded"
    filename_template: str = DEFAULT_FILENAME_TEMPLATE
    include_events: bool = False


@dataclass
class ConvertReport:
    """What a conversion did."""

    events: int = 0
    skipped_events: int = 0
    trajectories: int = 0
    empty_trajectories: int = 0
    written: list[Path] = field(default_factory=list)


def convert_events(
    events: Iterable[Mapping[str, Any]],
    out_dir: str | os.PathLike[str],
    options: ConvertOptions | None = None,
) -> ConvertReport:
    """Convert ATOF event dicts (file order) into ATIF files in ``out_dir`` (created if needed).

    Errors raised by ``events`` (e.g. a malformed line) propagate; files already written stay.
    """
    opts = options if options is not None else ConvertOptions()
    directory = Path(out_dir)
    # New files 0600 in new 0700 directories; the directory is the caller's, so what is
    # already there keeps its mode without a warning.
    writer = TrajectoryWriter(
        directory,
        filename_template=opts.filename_template,
        subagents=opts.subagents,
        private=PrivatePaths(warn=False),
    )
    writer.private.directory(directory)
    report = ConvertReport(written=writer.written)

    def complete(node: TrajectoryNode) -> None:
        report.trajectories += 1
        writer.write(node)

    info = AgentInfo(opts.agent_name, opts.agent_version, opts.model_name, opts.tool_definitions)
    builder = TrajectoryBuilder(info, on_complete=complete, include_events=opts.include_events)
    count = 0
    for event in events:
        count += 1
        builder.feed(event)
    builder.finish()
    report.events = count
    report.skipped_events = builder.skipped
    report.empty_trajectories = writer.dropped
    return report


def convert_file(
    path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    options: ConvertOptions | None = None,
) -> ConvertReport:
    """Convert an ATOF JSONL file (read streaming; a torn last line is skipped).

    Raises ``OSError`` when the file cannot be read and the reader's ``AtofFormatError`` on a
    malformed line before the last.
    """
    from wayline.relay.atof import iter_events

    return convert_events(iter_events(path), out_dir, options)
