"""``replay(path)``: pin a plugin's behaviour on a recorded trajectory, from pytest.

::

    from wayline.testing import replay

    def test_my_plugin_keeps_the_recorded_session():
        report = replay("tests/data/session.json", plugins=["src/my_plugin"])
        assert report.reproduced, report.describe()

The run is isolated: unless ``home`` is given it uses a fresh, empty wayline home, so the
developer's own config and plugins do not leak in. ``plugins`` are plugin directories (each
with ``plugin.yaml`` and ``__init__.py``), or keys of plugins the home already has.
See ``docs/replay.md``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from wayline.trajectory.compare import Difference
from wayline.trajectory.replay import ReplayReport
from wayline.trajectory.replay import replay as _replay

__all__ = ["Difference", "ReplayReport", "replay"]


def replay(
    path: str | os.PathLike[str],
    *,
    plugins: Sequence[str | os.PathLike[str]] = (),
    tools: str = "recorded",
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    output: str | os.PathLike[str] | None = None,
) -> ReplayReport:
    """Replay ``path`` with ``plugins`` enabled; return the divergence report.

    ``report.reproduced`` is True when nothing diverged; ``report.first`` is the first
    :class:`Difference` (trajectory, step, tool call, kind, path, old and new values) and
    ``report.describe()`` says it in words. Raises ``TrajectoryError`` for a trajectory that
    cannot be replayed.
    """
    with tempfile.TemporaryDirectory(prefix="wayline-replay-home-") as tmp:
        base = Path(home) if home is not None else Path(tmp) / "home"
        keys: list[str] = []
        for plugin in plugins:
            folder = Path(plugin)
            if not folder.is_dir():
                keys.append(str(plugin))
                continue
            if home is not None:
                raise ValueError(
                    f"{folder}: plugin directories need the isolated home; with home= give the "
                    "keys of plugins installed there"
                )
            shutil.copytree(folder, base / "plugins" / folder.name)
            keys.append(folder.name)
        base.mkdir(parents=True, exist_ok=True)
        return _replay(path, tools=tools, cwd=cwd, home=base, plugins=tuple(keys), output=output)
