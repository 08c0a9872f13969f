"""ATIF v1.7 trajectories from relay events: one mapping, a live exporter and an offline converter.

- :class:`AtifExporter` — nemo_relay-named live exporter (register, deregister, export,
  export_json).
- :func:`convert_file` / :func:`convert_events` — ATOF JSONL → ATIF files, streaming.
- :func:`validate_trajectory` / :func:`validate_atif_file` — Harbor's validator rules.
"""

from typing import TYPE_CHECKING

from wayline.lazy import lazy_names

if TYPE_CHECKING:
    from wayline.relay.atif.builder import TrajectoryBuilder
    from wayline.relay.atif.convert import (
        ConvertOptions,
        ConvertReport,
        convert_events,
        convert_file,
    )
    from wayline.relay.atif.exporter import AtifExporter
    from wayline.relay.atif.files import (
        DEFAULT_FILENAME_TEMPLATE,
        SubagentMode,
        TrajectoryWriter,
        write_json_atomic,
    )
    from wayline.relay.atif.model import (
        SCHEMA_VERSION,
        AgentInfo,
        TrajectoryNode,
        render_trajectory,
    )
    from wayline.relay.atif.validate import AtifProblem, validate_atif_file, validate_trajectory

__all__ = [
    "DEFAULT_FILENAME_TEMPLATE",
    "SCHEMA_VERSION",
    "AgentInfo",
    "AtifExporter",
    "AtifProblem",
    "ConvertOptions",
    "ConvertReport",
    "SubagentMode",
    "TrajectoryBuilder",
    "TrajectoryNode",
    "TrajectoryWriter",
    "convert_events",
    "convert_file",
    "render_trajectory",
    "validate_atif_file",
    "validate_trajectory",
    "write_json_atomic",
]

# Loaded on first use: the live exporter (what the relay plugin builds) needs neither the
# offline converter nor the validator, which ``atif convert`` and ``atif validate`` load.
_LAZY = {
    "TrajectoryBuilder": "wayline.relay.atif.builder",
    **dict.fromkeys(
        ("ConvertOptions", "ConvertReport", "convert_events", "convert_file"),
        "wayline.relay.atif.convert",
    ),
    "AtifExporter": "wayline.relay.atif.exporter",
    **dict.fromkeys(
        ("DEFAULT_FILENAME_TEMPLATE", "SubagentMode", "TrajectoryWriter", "write_json_atomic"),
        "wayline.relay.atif.files",
    ),
    **dict.fromkeys(
        ("SCHEMA_VERSION", "AgentInfo", "TrajectoryNode", "render_trajectory"),
        "wayline.relay.atif.model",
    ),
    **dict.fromkeys(
        ("AtifProblem", "validate_atif_file", "validate_trajectory"),
        "wayline.relay.atif.validate",
    ),
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
