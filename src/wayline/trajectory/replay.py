"""Replaying a recorded trajectory with the current runtime, plugins and middleware.

The model's side is served from the recording by a :class:`~wayline.testing.server.
ScriptedServer`; tools either answer from the recorded observations (``tools="recorded"``,
no side effects, unknown tool names work too) or really run (``tools="live"``).
``delegate_task`` calls whose subagents are embedded always re-run, so the child agents
replay from their own recorded steps. The run writes ATIF through ``observability/relay``
into a temporary directory, and the new trajectory is compared with the recording.
Tool results a recording lost are first recovered from its model requests
(:mod:`wayline.trajectory.recover`); the report's notes say which.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wayline.trajectory.compare import CompareOptions, Difference, compare
from wayline.trajectory.load import JsonDict, TrajectoryError, load_trajectory
from wayline.trajectory.plan import ReplayPlan, build_plan
from wayline.trajectory.recover import recover_results

TOOL_MODES = ("recorded", "live")
RELAY_PLUGIN = "observability/relay"
_ATIF_WAIT_S = 30.0


@dataclass
class ReplayReport:
    """The outcome of a replay: differences from the recording (empty: reproduced) and notes.

    ``notes`` say what was replayed only in part (a foreign delegation served from its
    recorded result, copied-context steps left out…).
    """

    trajectory: Path
    tools: str
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    output: Path | None = None
    new: JsonDict | None = None

    @property
    def reproduced(self) -> bool:
        """True when the run reproduced the recording."""
        return not self.differences

    @property
    def first(self) -> Difference | None:
        """The first divergence in run order, if any."""
        return self.differences[0] if self.differences else None

    def describe(self) -> str:
        """A human summary: reproduced, or the first divergence with old and new values."""
        if self.first is None:
            return f"reproduced {self.trajectory} (tools: {self.tools})"
        more = len(self.differences) - 1
        tail = (
            f"\n({more} more difference{'s' if more != 1 else ''}; see `wayline diff`)"
            if more
            else ""
        )
        return f"diverged at {self.first.describe()}{tail}"

    def to_json(self) -> JsonDict:
        """The report as JSON data."""
        return {
            "trajectory": str(self.trajectory),
            "tools": self.tools,
            "reproduced": self.reproduced,
            "differences": [d.to_json() for d in self.differences],
            "notes": list(self.notes),
            "output": str(self.output) if self.output else None,
        }


class _ReplayTools:
    """Innermost ``tool_execution`` middleware: serves recorded results and records the
    arguments each tool really received (after every plugin's rewrite).

    Middleware (control callback): it never fails open on its own; downstream errors of a
    live tool propagate unchanged.
    """

    def __init__(self, plan: ReplayPlan, mode: str, runnable: set[str]) -> None:
        self.plan = plan
        self.mode = mode
        self.runnable = runnable
        self.effective: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def __call__(self, **kw: Any) -> Any:
        """Serve the recorded result, or run the tool, for one call."""
        name, call_id = str(kw.get("tool_name")), str(kw.get("tool_call_id"))
        with self._lock:
            self.effective[(str(kw.get("session_id")), call_id)] = copy.deepcopy(kw.get("args"))
            recorded = self.plan.take(call_id, name)
        if recorded is None:
            if self.mode == "live" and name in self.runnable:
                return kw["next_call"](kw.get("args"))
            # Recorded tools promise no side effects, even for a call the recording lacks.
            return json.dumps({"error": "replay: the recording has no such tool call"})
        if recorded.live or (self.mode == "live" and name in self.runnable):
            return kw["next_call"](kw.get("args"))
        if recorded.result is None:
            return json.dumps({"error": "replay: the recording has no result for this call"})
        return recorded.result

    def stub(self, name: str) -> Any:
        """The handler of a tool the runtime does not have: its recorded result."""

        def handler(args: dict[str, Any], **ctx: Any) -> str:
            del args, ctx  # the middleware above answers first; this runs only without it
            return json.dumps({"error": f"replay: no recorded result for {name!r}"})

        return handler


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def replay(
    path: str | os.PathLike[str],
    *,
    tools: str = "recorded",
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    plugins: tuple[str, ...] = (),
    output: str | os.PathLike[str] | None = None,
) -> ReplayReport:
    """Replay the trajectory at ``path``; return the report (raises ``TrajectoryError``).

    ``home`` is the wayline home whose config and plugins the run uses (default:
    ``WAYLINE_HOME``); ``plugins`` enables more plugins by key; ``output`` receives the new
    trajectory. Raises :class:`~wayline.host.config.ConfigError` for a bad home.
    """
    if tools not in TOOL_MODES:
        raise ValueError(f"tools must be 'recorded' or 'live', got {tools!r}")
    source = Path(path)
    recorded, recovered = recover_results(load_trajectory(source))
    plan = build_plan(recorded, str(source))
    with tempfile.TemporaryDirectory(prefix="wayline-replay-") as tmp:
        new, effective = _run(
            recorded, plan, tools, Path(cwd) if cwd else Path.cwd(), home, plugins, Path(tmp)
        )
        options = CompareOptions(
            replay=True, effective_args=effective, skip_children=frozenset(plan.skip_children)
        )
        differences = compare(recorded, new, options)
        report = ReplayReport(source, tools, differences, [*recovered, *plan.notes])
        report.new = new
        if output is not None:
            out = Path(output)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(new, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            report.output = out
    return report


def _run(
    recorded: Mapping[str, Any],
    plan: ReplayPlan,
    mode: str,
    cwd: Path,
    home: str | os.PathLike[str] | None,
    plugins: tuple[str, ...],
    tmp: Path,
) -> tuple[JsonDict, dict[tuple[str, str], Any]]:
    from wayline.runtime import build_runtime
    from wayline.runtime.loop import TurnLoop
    from wayline.runtime.provider import Provider
    from wayline.testing.server import ScriptedServer

    agent_info = recorded.get("agent") if isinstance(recorded.get("agent"), Mapping) else {}
    assert isinstance(agent_info, Mapping)
    env = {
        "WAYLINE_RELAY_ATIF_ENABLED": "1",
        "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(tmp),
        "WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "replay-{session_id}.json",
        "WAYLINE_RELAY_ATIF_SUBAGENT_EXPORT_MODE": "embedded",
        "WAYLINE_RELAY_ATOF_ENABLED": "0",
    }
    for key, var in (("name", "AGENT_NAME"), ("version", "AGENT_VERSION")):
        if isinstance(agent_info.get(key), str) and agent_info[key]:
            env[f"WAYLINE_RELAY_ATIF_{var}"] = agent_info[key]
    with ScriptedServer(plan.script()) as server, _environ(env):
        runtime = build_runtime(
            Path(home) if home is not None else None,
            extra_plugins=(RELAY_PLUGIN, *plugins),
            base_url=server.base_url,
            model=plan.model,
            api_key="wayline-replay",
        )
        relay = runtime.manager.plugins.get(RELAY_PLUGIN)
        if relay is None or not relay.loaded:
            reason = relay.error if relay is not None else "not found"
            raise TrajectoryError(f"replay needs the {RELAY_PLUGIN} plugin to write ATIF: {reason}")
        registry = runtime.manager.tools
        runnable = {n for n in plan.tool_names if registry.get(n) is not None}
        served = _ReplayTools(plan, mode, runnable)
        for name in sorted(plan.tool_names - runnable):
            schema = plan.definitions.get(name) or {
                "name": name,
                "description": "A recorded tool (served by replay).",
                "parameters": {"type": "object"},
            }
            registry.register(name, "replay", schema, served.stub(name), parallel_safe=True)
        # Registered last, so it is the innermost: every plugin's middleware wraps it.
        runtime.manager.middleware.register("tool_execution", served, "<replay>")
        settings = runtime.settings
        depth = max(settings.delegation.max_spawn_depth, plan.delegation_depth)
        toolsets = tuple(sorted(set(plan.offered) | plan.tool_names))
        settings = settings.with_(
            toolsets=toolsets or settings.toolsets,
            max_turns=max(settings.max_turns, len(plan.root.responses) + 2),
            delegation=replace(settings.delegation, max_spawn_depth=depth),
        )
        agent = TurnLoop(
            runtime.manager, settings, cwd=cwd, store=None, provider=Provider(settings.provider)
        )
        try:
            for text in plan.root.user_turns:
                agent.run_turn(text)
        finally:
            agent.finalize("shutdown")
        new = _read_atif(tmp / f"replay-{agent.session_id}.json")
    return new, served.effective


def _read_atif(path: Path) -> JsonDict:
    """The replay's ATIF file, once the relay plugin has written it (bounded wait)."""
    deadline = time.monotonic() + _ATIF_WAIT_S
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TrajectoryError(
            f"the replay wrote no readable ATIF: {exc}", source=str(path)
        ) from None
    if not isinstance(data, dict):
        raise TrajectoryError("the replay's ATIF is not an object", source=str(path))
    return data


__all__ = ["TOOL_MODES", "ReplayReport", "replay"]
