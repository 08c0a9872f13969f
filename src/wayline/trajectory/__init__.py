"""Trajectories as test fixtures and training data: replay, diff and SFT export of ATIF.

``replay`` re-runs a recorded session (model answers from the recording, tools recorded or
live), with an agent built from config or the caller's own ``wayline.Agent``, and reports the
first divergence; ``compare`` diffs two trajectories step by step;
``export_samples`` turns trajectories into OpenAI chat fine-tuning samples. The CLI is
``wayline replay``, ``wayline diff`` and ``wayline export sft``; see ``docs/replay.md``.

Files may be ATIF or ATOF: ATOF is converted in memory with ``relay``'s ATOF → ATIF mapping
(:func:`load_trajectories`). Imports point down: this package uses ``api``, ``runtime``,
``host``, ``relay`` and the ``observability/relay`` plugin (a replay records through it); only
``cli`` and ``testing.replay`` import it.
"""

from wayline.trajectory.compare import CompareOptions, Difference, compare
from wayline.trajectory.load import TrajectoryError, load_trajectories, load_trajectory
from wayline.trajectory.replay import ReplayReport, replay
from wayline.trajectory.sft import export_samples, validate_sample

__all__ = [
    "CompareOptions",
    "Difference",
    "ReplayReport",
    "TrajectoryError",
    "compare",
    "export_samples",
    "load_trajectories",
    "load_trajectory",
    "replay",
    "validate_sample",
]
