"""Replaying a recorded trajectory with the current runtime, plugins and middleware.

The agent replayed is built from a wayline home's config and plugins (the CLI's default), or
is the caller's own :class:`wayline.Agent`, given as an instance or built by a factory, with
its function tools, toolsets, middleware, observers and plugins. Either way its model calls
go through an httpx transport that answers from the recording
(:mod:`wayline.trajectory.transport`): no server, no environment variable. Tools either
answer from the recorded observations (``tools="recorded"``: no side effects; with a config
agent, tool names the runtime lacks work too) or really run (``tools="live"``).
``delegate_task`` calls whose subagents are embedded always re-run, so the child agents
replay from their own recorded steps.

A recorded cancellation is reproduced where it happened: the turn's cancel is set (as
Ctrl-C or a cancelled ``arun`` sets it) at the interrupted model call, at the cancelled tool
call, or before the model call of a turn that has no agent step.

The run writes ATIF through an ``observability/relay`` instance of its own into a temporary
directory, and the new trajectory is compared with the recording. Tool results a recording
lost are first recovered from its model requests (:mod:`wayline.trajectory.recover`); the
report's notes say which.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wayline.contract.private import open_private
from wayline.trajectory.compare import CompareOptions, Difference, compare
from wayline.trajectory.load import JsonDict, TrajectoryError, load_trajectory
from wayline.trajectory.plan import ReplayPlan, build_plan
from wayline.trajectory.recover import recover_results

if TYPE_CHECKING:
    from wayline.api.agent import Agent
    from wayline.host.manager import PluginManager
    from wayline.runtime.loop import TurnLoop

TOOL_MODES = ("recorded", "live")
RELAY_PLUGIN = "observability/relay"
REPLAY_BASE_URL = "http://wayline-replay.invalid/v1"
"""The base URL a replayed agent is given: its requests never leave the process, and the
reserved ``.invalid`` name could not be reached if one did."""
REPLAY_API_KEY = "wayline-replay"
_ATIF_WAIT_S = 30.0
_SIBLING_WAIT_S = 5.0


class ReplayAgentError(ValueError):
    """The agent given to a replay cannot be replayed: not a ``wayline.Agent``, a factory that
    raised, or an agent that has already run a turn or is closed."""


@dataclass
class ReplayReport:
    """The outcome of a replay: differences from the recording (empty: reproduced) and notes.

    ``notes`` say what was replayed only in part (a foreign delegation served from its
    recorded result, copied-context steps left out, a turn with no agent step replayed as
    cancelled before its model call…).
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
    """Innermost ``tool_execution`` middleware: serves recorded results, reproduces recorded
    cancellations, and records the arguments each tool really received (after every
    plugin's and the agent's rewrite).

    Middleware (control callback), on the tool's worker thread; it blocks only while a
    cancelled call waits for the calls of its step that finished before it (until their
    ``post_tool_call``, which :meth:`finished` observes). It never fails open on its own;
    downstream errors of a live tool propagate unchanged.
    """

    def __init__(
        self, plan: ReplayPlan, mode: str, runnable: set[str], cancel: Callable[[], object]
    ) -> None:
        self.plan = plan
        self.mode = mode
        self.runnable = runnable
        self.cancel = cancel
        self.effective: dict[tuple[str, str], Any] = {}
        self._served: set[tuple[str, str]] = set()
        self._lock = threading.Condition()

    def __call__(self, **kw: Any) -> Any:
        """Serve the recorded result, run the tool, or cancel the turn, for one call."""
        name, call_id = str(kw.get("tool_name")), str(kw.get("tool_call_id"))
        session = str(kw.get("session_id"))
        with self._lock:
            self.effective[(session, call_id)] = copy.deepcopy(kw.get("args"))
            recorded = self.plan.take(call_id, name)
        if recorded is not None and recorded.cancelled:
            # Calls of the step that finished before the cancel end first, as they did then.
            with self._lock:
                self._lock.wait_for(
                    lambda: all((session, s) in self._served for s in recorded.siblings),
                    timeout=_SIBLING_WAIT_S,
                )
            self.cancel()
            # The tool itself sees the cancel (it stops before it starts), as in any cancelled
            # turn: the outer middleware get the same downstream error as then.
            return kw["next_call"](kw.get("args"))
        return self._answer(kw, name, recorded)

    def finished(self, **kw: Any) -> None:
        """``post_tool_call`` observer: the call has ended (and is reported). Runs on the
        tool's worker thread, never blocks, never raises."""
        with self._lock:
            self._served.add((str(kw.get("session_id")), str(kw.get("tool_call_id"))))
            self._lock.notify_all()

    def _answer(self, kw: Mapping[str, Any], name: str, recorded: Any) -> Any:
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


class _Recorder:
    """The replay's own ``observability/relay`` instance, loaded into the replayed agent as
    an in-process plugin: it writes the new ATIF (subagents embedded, no ATOF) into the
    replay's directory, whatever the environment and the agent's own plugins say."""

    KEY = "wayline-replay/recorder"

    def __init__(self, directory: Path, agent_info: Mapping[str, Any]) -> None:
        from wayline.plugins.observability.relay import RelayPlugin
        from wayline.plugins.observability.relay.settings import RelaySettings, wayline_version
        from wayline.relay.plugin import AtifSettings

        name, version = agent_info.get("name"), agent_info.get("version")
        atif = AtifSettings(
            str(directory),
            "replay-{session_id}.json",
            name if isinstance(name, str) and name else "wayline",
            version if isinstance(version, str) and version else wayline_version(),
            "unknown",
            "embedded",
        )
        self.directory = directory
        self.plugin = RelayPlugin(RelaySettings(atof=None, atif=atif, toml=None))

    def register(self, ctx: Any) -> None:
        """Plugin entry point: the instance closes with the agent; its hooks observe it."""
        ctx.register_instance(self.plugin)
        for hook, callback in self.plugin.hooks().items():
            ctx.register_hook(hook, callback)

    def attach(self, manager: PluginManager) -> None:
        """Load into ``manager``; a failure is the replay's, not the recording's."""
        try:
            manager.add_plugin(self, key=self.KEY)
        except Exception as exc:
            raise TrajectoryError(
                f"replay needs the {RELAY_PLUGIN} plugin to write ATIF: {exc}"
            ) from exc

    def read(self, session_id: str) -> JsonDict:
        """The new trajectory, once written (bounded wait)."""
        return _read_atif(self.directory / f"replay-{session_id}.json")


def replay(
    path: str | os.PathLike[str],
    *,
    tools: str = "recorded",
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    plugins: tuple[str, ...] = (),
    output: str | os.PathLike[str] | None = None,
    agent: Agent | Callable[..., Agent] | None = None,
) -> ReplayReport:
    """Replay the trajectory at ``path``; return the report (raises ``TrajectoryError``).

    Without ``agent`` the agent is built from ``home`` (its config and plugins; default:
    ``WAYLINE_HOME``) with ``plugins`` enabled too, and offered the recording's tools.
    ``agent`` is a fresh ``wayline.Agent`` (no turn run yet; the replay runs its session and
    closes it) or a factory that returns one, called with those of these keywords it
    declares (all of them when it takes ``**kwargs``): ``home`` (the ``home`` given, else
    ``WAYLINE_HOME``), and a ``base_url`` and ``api_key`` that only satisfy the agent's
    config (its requests are answered in process). ``cwd``: the tools' working directory
    (default: the agent's, else the current one). ``output`` receives the new trajectory.
    Raises ``ConfigError`` for a bad home and :class:`ReplayAgentError` for an agent that
    cannot be replayed.
    """
    if tools not in TOOL_MODES:
        raise ValueError(f"tools must be 'recorded' or 'live', got {tools!r}")
    if agent is not None and plugins:
        raise ValueError(
            "plugins= enables plugins of the agent built from config; give your agent its "
            "plugins (Agent(plugins=[...]))"
        )
    source = Path(path)
    recorded, recovered = recover_results(load_trajectory(source))
    plan = build_plan(recorded, str(source))
    info = recorded.get("agent") if isinstance(recorded.get("agent"), Mapping) else {}
    assert isinstance(info, Mapping)
    with tempfile.TemporaryDirectory(prefix="wayline-replay-") as tmp:
        recorder = _Recorder(Path(tmp), info)
        work = Path(cwd) if cwd is not None else None
        if agent is None:
            new, served = _from_config(plan, tools, work, home, plugins, recorder)
        else:
            new, served = _from_agent(plan, tools, work, _agent(agent, home), recorder)
        options = CompareOptions(
            replay=True,
            effective_args=served.effective,
            skip_children=frozenset(plan.skip_children),
        )
        differences = compare(_answered(recorded), _answered(new), options)
        report = ReplayReport(source, tools, differences, [*recovered, *plan.notes])
        report.new = new
        if output is not None:
            out = Path(output)
            with open_private(out, "w", encoding="utf-8") as fh:  # 0600 when new
                fh.write(json.dumps(new, indent=2, ensure_ascii=False) + "\n")
            report.output = out
    return report


def _agent(given: Agent | Callable[..., Agent], home: str | os.PathLike[str] | None) -> Agent:
    """The agent to replay: ``given`` itself, or what the factory ``given`` builds."""
    from wayline.api.agent import Agent
    from wayline.host.config import wayline_home

    if isinstance(given, Agent):
        return given
    if not callable(given):
        raise ReplayAgentError(
            f"agent must be a wayline.Agent or a function returning one, got {type(given).__name__}"
        )
    offered: dict[str, Any] = {
        "home": Path(home) if home is not None else wayline_home(),
        "base_url": REPLAY_BASE_URL,
        "api_key": REPLAY_API_KEY,
    }
    try:
        built = given(**_accepted(given, offered))
    except Exception as exc:
        raise ReplayAgentError(f"the agent factory raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(built, Agent):
        raise ReplayAgentError(
            f"the agent factory returned {type(built).__name__}, not a wayline.Agent"
        )
    return built


def _accepted(factory: Callable[..., Any], offered: dict[str, Any]) -> dict[str, Any]:
    """The keywords of ``offered`` that ``factory`` declares (all of them with ``**kw``)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: no keywords we can know
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return dict(offered)
    takes = {
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    return {k: v for k, v in offered.items() if k in takes}


def _from_config(
    plan: ReplayPlan,
    mode: str,
    cwd: Path | None,
    home: str | os.PathLike[str] | None,
    plugins: tuple[str, ...],
    recorder: _Recorder,
) -> tuple[JsonDict, _ReplayTools]:
    """Build the agent from ``home`` and offer it the recording's tools; replay it."""
    from wayline.runtime import build_runtime
    from wayline.runtime.cancel import CancelEvent
    from wayline.runtime.loop import TurnLoop
    from wayline.trajectory.transport import RecordedModel

    # The user's plugins run, but what they record of the replay is not the user's record:
    # it goes to a home of its own, dropped afterwards (the replay writes its own trajectory).
    records = tempfile.TemporaryDirectory(prefix="wayline-replay-")
    runtime = build_runtime(
        Path(home) if home is not None else None,
        extra_plugins=plugins,
        record_home=Path(records.name),
        base_url=REPLAY_BASE_URL,
        model=plan.model,
        api_key=REPLAY_API_KEY,
    )
    manager = runtime.manager
    try:
        recorder.attach(manager)
        registry = manager.tools
        runnable = {n for n in plan.tool_names if registry.get(n) is not None}
        cancel = CancelEvent()  # the loop's, made first: the transport and tools set it
        served = _ReplayTools(plan, mode, runnable, cancel.set)
        for name in sorted(plan.tool_names - runnable):
            schema = plan.definitions.get(name) or {
                "name": name,
                "description": "A recorded tool (served by replay).",
                "parameters": {"type": "object"},
            }
            registry.register(name, "replay", schema, served.stub(name), parallel_safe=True)
        # Registered last, so it is the innermost: every plugin's middleware wraps it.
        manager.middleware.register("tool_execution", served, "<replay>")
        manager.hooks.register("post_tool_call", served.finished, "<replay>")
        settings = runtime.settings
        depth = max(settings.delegation.max_spawn_depth, plan.delegation_depth)
        toolsets = tuple(sorted(set(plan.offered) | plan.tool_names))
        settings = settings.with_(
            provider=replace(settings.provider, transport=RecordedModel(plan, cancel.set)),
            toolsets=toolsets or settings.toolsets,
            max_turns=max(settings.max_turns, len(plan.root.responses) + 2),
            delegation=replace(settings.delegation, max_spawn_depth=depth),
        )
        # The loop owns (and closes) the provider its settings now route to the recording.
        loop = TurnLoop(manager, settings, cwd=cwd or Path.cwd(), store=None, cancel=cancel)
        session = _drive(loop, plan, lambda: loop.finalize("shutdown"))
    finally:
        manager.close_instances()
        records.cleanup()
    return recorder.read(session), served


def _from_agent(
    plan: ReplayPlan, mode: str, cwd: Path | None, agent: Agent, recorder: _Recorder
) -> tuple[JsonDict, _ReplayTools]:
    """Replay the caller's agent as it was built; the replay closes it."""
    from wayline.runtime.provider import Provider
    from wayline.trajectory.transport import RecordedModel

    # The agent's turn loop: the replay routes its model calls (and its children's, whose
    # settings derive from its own) to the recording, and reproduces recorded cancellations
    # through its cancel event, neither of which the public Agent offers.
    loop: TurnLoop = agent._loop
    if loop.started or agent._closed:
        raise ReplayAgentError(
            "the agent has already run a turn or is closed; give replay a fresh agent (or a "
            "function that builds one)"
        )
    provider: Provider | None = None
    try:
        manager = loop.manager
        recorder.attach(manager)
        registry = manager.tools
        runnable = {n for n in plan.tool_names if registry.get(n) is not None}
        served = _ReplayTools(plan, mode, runnable, loop.cancel.set)
        manager.middleware.register("tool_execution", served, "<replay>")  # the innermost
        manager.hooks.register("post_tool_call", served.finished, "<replay>")
        transport = RecordedModel(plan, loop.cancel.set)
        cfg = replace(loop.settings.provider, transport=transport)
        loop.settings = loop.settings.with_(provider=cfg)
        loop.provider = provider = Provider(cfg)
        if cwd is not None:
            loop.cwd = cwd
        session = _drive(loop, plan, agent.close)
    finally:
        agent.close()
        if provider is not None:
            provider.close()
    return recorder.read(session), served


def _drive(loop: TurnLoop, plan: ReplayPlan, close: Callable[[], object]) -> str:
    """Run the recorded user turns, each cancelled where the recording was, then ``close``
    the session (its ATIF is written); returns the session id."""
    try:
        for n, text in enumerate(plan.root.user_turns):
            loop.cancel.clear()
            if n in plan.root.unanswered:
                loop.cancel.set()  # the recorded turn ended before its model call
            loop.run_turn(text)
    finally:
        close()
    return loop.session_id


def _answered(traj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``traj`` without the user steps of top-level turns that ended before their model call
    (the next step is another user step, or none): a recorder may keep or drop such a step
    (wayline's records none), so it is not compared; the replay cancels those turns there."""
    steps = traj.get("steps")
    if not isinstance(steps, list):
        return traj
    kept = [s for s in steps if not isinstance(s, Mapping) or s.get("source") != "system"]
    lone = {
        id(step)
        for step, after in zip(kept, [*kept[1:], None], strict=True)
        if isinstance(step, Mapping)
        and step.get("source") == "user"
        and (after is None or (isinstance(after, Mapping) and after.get("source") == "user"))
    }
    if not lone:
        return traj
    return {**traj, "steps": [s for s in steps if id(s) not in lone]}


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


__all__ = [
    "TOOL_MODES",
    "ReplayAgentError",
    "ReplayReport",
    "replay",
]
