"""``wayline.Agent``: a conversation with a model, its tools and plugins, in a few lines."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from wayline.api.build import AgentSpec, build_agent
from wayline.api.functions import Tool, as_tool
from wayline.contract.hooks import MIDDLEWARE_KINDS, VALID_HOOKS
from wayline.runtime.loop import TurnResult

__all__ = ["Agent"]

F = TypeVar("F", bound=Callable[..., Any])
_OWNER = "<agent>"


class Agent:
    """One session with a model: run turns, add observer hooks and middleware, then close.

    ``model``, ``base_url`` and ``api_key`` override ``config.yaml`` and the environment
    (``WAYLINE_BASE_URL``, ``WAYLINE_API_KEY``), as the ``wayline chat`` flags do. ``tools``
    are plain typed functions (or :class:`~wayline.api.functions.Tool`); they are all the
    model is offered unless ``toolsets`` names built-in or plugin toolsets to add (say
    ``toolsets=["file"]``; ``terminal``, ``file`` and ``delegation`` are built in). Unlike
    ``wayline chat``, the agent never falls back to the configured ``agent.toolsets``: a
    program gets no shell it did not ask for. An unknown toolset name raises ``ValueError``.
    ``plugins`` are modules or objects with
    ``register(ctx)``, loaded like plugin directories, or names of installed plugins to enable
    for this agent. ``home`` is the ``$WAYLINE_HOME`` to read config and plugins from and to
    store transcripts in. ``settings``: ``provider``, ``max_retries``, ``timeout``,
    ``stream``, ``max_turns``, ``approval_mode``, ``yolo``, ``system_prompt``,
    ``max_tokens``, and ``cwd`` (the tools' working directory).

    Closing the agent (``close()`` or the end of a ``with`` block) finalizes the session:
    ``on_session_finalize`` fires and exporters write their files. One turn runs at a time.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        tools: Iterable[Callable[..., Any] | Tool] = (),
        toolsets: Iterable[str] | None = None,
        plugins: Iterable[object] = (),
        home: str | os.PathLike[str] | None = None,
        **settings: Any,
    ) -> None:
        cwd = settings.pop("cwd", None)
        plugin_list = list(plugins)
        self._tools = tuple(as_tool(t) for t in tools)
        spec = AgentSpec(
            home=Path(home).expanduser() if home is not None else None,
            model=model,
            base_url=base_url,
            api_key=api_key,
            settings=settings,
            toolsets=_toolset_names(toolsets),
            tools=self._tools,
            plugins=tuple(p for p in plugin_list if not isinstance(p, str)),
            plugin_names=tuple(p for p in plugin_list if isinstance(p, str)),
            owner=_OWNER,
            platform="python",
            cwd=Path(cwd) if cwd is not None else None,
        )
        self._runtime, self._loop = build_agent(spec)
        self._turn = threading.Lock()
        self._closed = False

    # -- registration -------------------------------------------------------------------
    def on(self, hook_name: str, fn: F) -> F:
        """Subscribe observer ``fn`` to ``hook_name``; returns ``fn``.

        Observer contract (the same as a plugin's ``ctx.register_hook``): ``fn`` gets the
        payload as keyword arguments (accept ``**kwargs``), runs on the thread that fired the
        hook (tool and subagent threads too), and fails open: an ``Exception`` it raises is
        logged once and skipped. Four hooks use its return value (``pre_llm_call``,
        ``pre_tool_call``, ``transform_tool_result``, ``transform_llm_output``); see
        docs/hooks.md. Raises ``ValueError`` for a name that is not a hook.
        """
        if hook_name not in VALID_HOOKS:
            raise ValueError(f"unknown hook {hook_name!r}; hooks: {', '.join(sorted(VALID_HOOKS))}")
        self._runtime.manager.hooks.register(hook_name, fn, _OWNER)
        return fn

    def use(self, middleware_kind: str, fn: F) -> F:
        """Add control callback ``fn`` to the ``middleware_kind`` chain; returns ``fn``.

        Middleware contract (the same as a plugin's ``ctx.register_middleware``): request
        middleware (``llm_request``, ``tool_request``) is chained in registration order and
        returns ``None`` or ``{"request"|"args": new, "source", "reason"}``; execution
        middleware (``llm_execution``, ``tool_execution``) wraps ``next_call`` and fails open
        around it but never hides a downstream error. It may block; it runs on the calling
        thread. See docs/middleware.md. Raises ``ValueError`` for an unknown kind.
        """
        if middleware_kind not in MIDDLEWARE_KINDS:
            raise ValueError(
                f"unknown middleware kind {middleware_kind!r}; kinds: "
                f"{', '.join(sorted(MIDDLEWARE_KINDS))}"
            )
        self._runtime.manager.middleware.register(middleware_kind, fn, _OWNER)
        return fn

    # -- turns --------------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        """The session's id (also the transcript's name under ``$WAYLINE_HOME/sessions``)."""
        return self._loop.session_id

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A copy of the conversation so far (system, user, assistant and tool messages)."""
        return list(self._loop.messages)

    def run(self, text: str) -> TurnResult:
        """Run one user turn to its end and return how it ended.

        Model and tool failures do not raise: they end the turn (``completed`` False,
        ``reason`` ``api_error``/``max_turns``/``error``). Raises ``RuntimeError`` when the
        agent is closed or another turn is running.
        Ctrl-C (``KeyboardInterrupt``) cancels the turn as :meth:`arun`'s cancellation
        does, and then propagates.
        """
        self._loop.cancel.clear()
        return self._run(text)

    def _run(self, text: str) -> TurnResult:
        if self._closed:
            raise RuntimeError("this agent is closed")
        if not self._turn.acquire(blocking=False):
            raise RuntimeError("a turn is already running on this agent")
        try:
            return self._loop.run_turn(text)
        finally:
            self._turn.release()

    async def arun(self, text: str) -> TurnResult:
        """:meth:`run` without blocking the event loop; async tools run on this loop.

        The turn runs on a thread of its own (not the loop's default executor), so any
        number of agents awaited at once run their turns side by side.

        Cancelling the awaiting task (``task.cancel()``, ``asyncio.wait_for``) cancels the
        turn: the model request in flight is closed, ``async def`` tools are cancelled,
        built-in tools stop, and a sync tool still running is abandoned to finish on its
        thread. The turn ends for the observers (``on_session_end`` with ``interrupted``)
        before ``CancelledError`` propagates, within a fraction of a second.
        """
        loop = asyncio.get_running_loop()
        for function_tool in self._tools:
            if function_tool.is_async:
                function_tool.bind_loop(loop)
        # Cleared here, not on the worker: a cancel that comes before the worker starts
        # must still stop the turn.
        self._loop.cancel.clear()
        # A thread of its own, not the loop's default executor: that pool is bounded
        # (min(32, cores + 4) workers), so many agents awaited at once would take turns.
        worker: asyncio.Future[TurnResult] = loop.create_future()

        def deliver(setter: Callable[[Any], object], value: Any) -> None:
            def settle() -> None:
                if not worker.done():
                    setter(value)

            try:
                loop.call_soon_threadsafe(settle)
            except RuntimeError:  # the loop closed without waiting: nobody awaits the turn
                pass

        def turn() -> None:
            try:
                result = self._run(text)
            except BaseException as exc:  # handed to the awaiting task
                deliver(worker.set_exception, exc)
            else:
                deliver(worker.set_result, result)

        threading.Thread(target=turn, name="wayline-turn", daemon=True).start()
        try:
            return await asyncio.shield(worker)
        except asyncio.CancelledError:
            self._loop.cancel.set()
            await asyncio.wait([worker])
            raise
        finally:
            for function_tool in self._tools:
                if function_tool.is_async:
                    function_tool.bind_loop(None)

    # -- lifetime -----------------------------------------------------------------------
    def plugin(self, key: str) -> Any:
        """The instance plugin ``key`` holds for this agent (its exporters, queues and files).

        The bundled ``observability/relay`` and ``observability/otel`` have one per agent, with
        ``drain()``/``force_flush()`` and ``stats()``; ``KeyError`` when the plugin is not
        loaded, registered no instance, or the agent is closed.
        """
        found = self._runtime.manager.instance(key)
        if found is None:
            raise KeyError(f"no open instance of plugin {key!r} on this agent")
        return found

    def close(self) -> None:
        """Finalize the session (``on_session_finalize``), then close the plugins' instances:
        their threads, files and subscriptions are released and their records complete.
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._loop.finalize("shutdown")
        finally:
            self._runtime.manager.close_instances()

    def __enter__(self) -> Agent:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _toolset_names(toolsets: Iterable[str] | None) -> tuple[str, ...]:
    """The ``toolsets=`` keyword as names; ``None`` (the default) offers no toolset."""
    if toolsets is None:
        return ()
    if isinstance(toolsets, str):
        raise TypeError(f"toolsets must be a list of names, got the string {toolsets!r}")
    return tuple(toolsets)
