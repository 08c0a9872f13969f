"""``replay(path)``: pin an agent's or a plugin's behaviour on a recorded trajectory, from pytest.

::

    import wayline
    from wayline.testing import replay

    def make_agent(**kw):
        agent = wayline.Agent(model="gpt-4o-mini", tools=[convert], **kw)
        agent.use("tool_request", to_euros)
        return agent

    def test_agent_keeps_the_recorded_session():
        report = replay("tests/data/session.json", agent=make_agent)
        assert report.reproduced, report.describe()

    def test_my_plugin_keeps_the_recorded_session():
        report = replay("tests/data/session.json", plugins=["src/my_plugin"])
        assert report.reproduced, report.describe()

The run is isolated: unless ``home`` is given it uses a fresh, empty wayline home, so the
developer's own config and plugins do not leak in. ``agent`` is your ``wayline.Agent``, or a
function that builds one (it gets that home, and a ``base_url`` and ``api_key`` that only
satisfy the agent's config, as keywords it declares). Without it, the agent is built from the
home, with ``plugins``: plugin directories (each with ``plugin.yaml`` and ``__init__.py``), or
keys of plugins the home already has. See ``docs/replay.md``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wayline.trajectory.compare import Difference
from wayline.trajectory.replay import ReplayAgentError, ReplayReport
from wayline.trajectory.replay import replay as _replay

if TYPE_CHECKING:
    from wayline.api.agent import Agent

__all__ = ["Difference", "ReplayAgentError", "ReplayReport", "replay"]


def replay(
    path: str | os.PathLike[str],
    *,
    agent: Agent | Callable[..., Agent] | None = None,
    plugins: Sequence[str | os.PathLike[str]] = (),
    tools: str = "recorded",
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    output: str | os.PathLike[str] | None = None,
) -> ReplayReport:
    """Replay ``path`` with ``agent`` (or a config agent with ``plugins``); return the report.

    ``agent``: a fresh ``wayline.Agent`` (the replay runs its session and closes it), or a
    function returning one, called with the keywords it declares among ``home``,
    ``base_url`` and ``api_key`` (all of them when it takes ``**kwargs``). ``tools``:
    ``"recorded"`` serves the recorded results (your middleware still runs), ``"live"`` runs
    your tools. ``report.reproduced`` is True when nothing diverged; ``report.first`` is the
    first :class:`Difference` (trajectory, step, tool call, kind, path, old and new values)
    and ``report.describe()`` says it in words. Raises ``TrajectoryError`` for a trajectory
    that cannot be replayed and :class:`ReplayAgentError` for an agent that cannot be.
    """
    if agent is not None and plugins:
        raise ValueError(
            "plugins= enables plugins of the agent built from config; give your agent its "
            "plugins (Agent(plugins=[...]))"
        )
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
        return _replay(
            path,
            tools=tools,
            cwd=cwd,
            home=base,
            plugins=tuple(keys),
            output=output,
            agent=agent,
        )
