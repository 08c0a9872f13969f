"""Tool-call dispatch: middleware, hooks, approvals, parallel batches, cancellation.

Per call: parse args → ``tool_request`` middleware → ``pre_tool_call`` (a block
stops here) → ``tool_execution`` middleware around [approval → handler], run
exactly once → ``post_tool_call`` → ``transform_tool_result``. Consecutive calls
to parallel-safe tools run concurrently on a bounded pool: all their
``pre_tool_call`` hooks fire first, in call order, and results return in call
order. Every handler runs on a pool thread while the caller waits, so Ctrl-C in
the caller can set the cancel event and still collect a ``cancelled`` outcome.

On cancel the caller stops waiting: tools that watch ``ctx.cancel`` (the built-in ones,
``async def`` function tools, which are cancelled on their loop) get a short grace to end
themselves; a sync tool still running after it is abandoned to finish on its thread, its
call reported ``cancelled`` now and its late result dropped. Each call reports
``post_tool_call`` exactly once, whoever ends it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wayline.contract.ids import RunContext, new_tool_call_id
from wayline.host.bus import describe_exception
from wayline.host.manager import PluginManager
from wayline.host.tools import ToolEntry
from wayline.runtime.approvals import Approver
from wayline.runtime.cancel import TurnInterrupted, on_cancel
from wayline.runtime.provider import ToolCall
from wayline.runtime.tools.base import ToolCallContext, ToolCancelled, tool_error

AgentTool = Callable[[dict[str, Any], RunContext, str], str]

#: Seconds a cancelled batch waits for tools that stop themselves before abandoning them
#: (well inside the half second a cancelled turn takes to return).
CANCEL_GRACE = 0.25


@dataclass(slots=True)
class Call:
    """One tool call on its way through the pipeline."""

    index: int
    name: str
    tool_call_id: str
    raw_arguments: str
    args: dict[str, Any] = field(default_factory=dict)
    original_args: dict[str, Any] = field(default_factory=dict)
    parse_error: str | None = None
    entry: ToolEntry | None = None
    trace: list[Any] = field(default_factory=list)
    result: str = ""
    status: str = "ok"
    error_type: str | None = None
    error_message: str | None = None
    duration_ms: int = 0
    done: bool = False
    claimed: bool = False  # post_tool_call has been (or is being) reported


#: Arguments nested deeper than this end the call with an error the model reads: every
#: consumer after the parser (middleware copies, pydantic, sanitizing, exporters) recurses.
MAX_ARGUMENT_DEPTH = 100


def _too_deep(value: Any) -> bool:
    """True when ``value`` (parsed JSON) nests lists/objects deeper than the bound."""
    level: list[Any] = [value]
    for _ in range(MAX_ARGUMENT_DEPTH):
        nested: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                nested.extend(v for v in item.values() if isinstance(v, dict | list))
            elif isinstance(item, list):
                nested.extend(v for v in item if isinstance(v, dict | list))
        if not nested:
            return False
        level = nested
    return True


def _fresh(value: Any) -> Any:
    """A copy of parsed JSON's dicts and lists (its other values cannot change)."""
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item) for item in value]
    return value


def _status_of(result: str) -> tuple[str, str | None, str | None]:
    if not result.startswith("{"):
        return "ok", None, None
    try:
        data = json.loads(result)
    except ValueError:
        return "ok", None, None
    if not isinstance(data, dict):
        return "ok", None, None
    if data.get("status") == "timeout":
        return "timeout", "tool_timeout", str(data.get("error") or "timed out")
    if data.get("status") == "blocked":
        return "blocked", "approval_denied", str(data.get("error") or "blocked")
    if data.get("error"):
        return "error", "tool_error", str(data["error"])
    return "ok", None, None


class ToolDispatcher:
    """Runs the tool calls of one assistant message for one agent."""

    def __init__(
        self,
        manager: PluginManager,
        approver: Approver,
        pool: ThreadPoolExecutor,
        cancel: threading.Event,
        cwd: Path,
        allowed: set[str],
        agent_tools: dict[str, AgentTool] | None = None,
    ) -> None:
        self.manager = manager
        self.approver = approver
        self.pool = pool
        self.cancel = cancel
        self.cwd = cwd
        self.allowed = allowed
        self.agent_tools = agent_tools or {}
        self._claims = threading.Lock()

    # -- planning ---------------------------------------------------------------------
    def _parse(self, index: int, tc: ToolCall) -> Call:
        call = Call(index, tc.name, tc.id or new_tool_call_id(), tc.arguments)
        try:
            parsed = json.loads(tc.arguments) if tc.arguments.strip() else {}
        except ValueError as exc:  # a number of over 4,300 digits too
            call.parse_error = f"invalid JSON arguments for {tc.name!r}: {exc}"
            parsed = {}
        except RecursionError:
            parsed = None  # deeper than the decoder goes: refused below
        if parsed is None or _too_deep(parsed):
            call.parse_error = (
                f"arguments for {tc.name!r} are nested deeper than {MAX_ARGUMENT_DEPTH} levels"
            )
            parsed = {}
        elif not isinstance(parsed, dict):
            call.parse_error = f"arguments for {tc.name!r} must be a JSON object"
            parsed = {}
        call.args = parsed
        if tc.name in self.allowed:
            call.entry = self.manager.tools.get(tc.name)
        return call

    def _segments(self, calls: list[Call]) -> list[list[Call]]:
        segments: list[list[Call]] = []
        run: list[Call] = []
        for call in calls:
            if call.entry is not None and call.entry.parallel_safe and call.parse_error is None:
                run.append(call)
                continue
            if run:
                segments.extend([run] if len(run) > 1 else [[run[0]]])
                run = []
            segments.append([call])
        if run:
            segments.extend([run] if len(run) > 1 else [[run[0]]])
        return segments

    # -- running ------------------------------------------------------------------------
    def run(self, tool_calls: list[ToolCall], ctx: RunContext) -> list[Call]:
        """Run every call; returns them in call order with results filled in."""
        calls = [self._parse(i, tc) for i, tc in enumerate(tool_calls)]
        for segment in self._segments(calls):
            ready = [c for c in segment if self._prepare(c, ctx)]
            futures: list[Future[None]] = []
            try:
                for c in ready:
                    futures.append(self.pool.submit(self._execute, c, ctx))
                self._wait(futures)
            except BaseException:
                # Ctrl-C lands here on the caller's thread: ask every running tool to stop.
                self.cancel.set()
                self._settle(ready, futures, ctx)
                raise
            if self.cancel.is_set():
                self._settle(ready, futures, ctx)
                raise TurnInterrupted("tool execution cancelled")
            for fut in futures:
                fut.result()
        return calls

    def _wait(self, futures: list[Future[None]]) -> None:
        """Until every future is done or the turn is cancelled, whichever comes first."""
        pending = set(futures)
        if not pending:
            return
        woken: Future[None] = Future()

        # set_result, not cancel(): only a result wakes a wait() already under way.
        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        stop = on_cancel(self.cancel, wake)
        try:
            while pending and not woken.done():
                _, pending = wait_futures({*pending, woken}, return_when=FIRST_COMPLETED)
                pending.discard(woken)
        finally:
            stop()

    def _settle(self, calls: list[Call], futures: list[Future[None]], ctx: RunContext) -> None:
        """After a cancel: give running tools a grace to stop, then abandon the rest."""
        wait_futures(futures, timeout=CANCEL_GRACE)
        for i, call in enumerate(calls):
            fut = futures[i] if i < len(futures) else None  # None: interrupted before submit
            if fut is not None and fut.done():
                continue
            if fut is not None:
                fut.cancel()  # a call that never started will not start now
            if not self._claim(call):
                continue  # its worker is reporting it right now
            call.result = tool_error("cancelled: the user interrupted this tool call")
            call.status, call.error_type = "cancelled", "cancelled"
            call.error_message = "abandoned: still running when the turn was cancelled"
            self._report(call, ctx, transform=False)

    def _fields(self, call: Call, ctx: RunContext) -> dict[str, Any]:
        return ctx.tool_fields(call.name, call.tool_call_id)

    def _prepare(self, call: Call, ctx: RunContext) -> bool:
        """Request middleware and ``pre_tool_call``; False when the call ends here."""
        hooks = self.manager.hooks
        fields = self._fields(call, ctx)
        if call.parse_error is None and call.entry is not None:
            rr = self.manager.middleware.apply_request("tool_request", call.args, **fields)
            call.args, call.original_args, call.trace = rr.payload, rr.original, list(rr.trace)
        else:
            call.original_args = call.args
        if "pre_tool_call" in hooks.active:
            message = hooks.pre_tool_block(
                **fields, args=call.args, middleware_trace=list(call.trace)
            )
            if message is not None:
                call.result = json.dumps({"error": message})
                call.status, call.error_type, call.error_message = (
                    "blocked",
                    "plugin_block",
                    message,
                )
                self._finish(call, ctx, transform=False)
                return False
        return True

    def _execute(self, call: Call, ctx: RunContext) -> None:
        t0 = time.perf_counter()
        try:
            if self.cancel.is_set():
                raise ToolCancelled("cancelled before start")
            if call.parse_error is not None:
                call.result = tool_error(call.parse_error)
                call.status, call.error_type, call.error_message = (
                    "error",
                    "invalid_arguments",
                    call.parse_error,
                )
            elif call.entry is None:
                known = ", ".join(sorted(self.allowed)) or "(none)"
                message = f"unknown tool {call.name!r}; available tools: {known}"
                call.result = tool_error(message)
                call.status, call.error_type, call.error_message = "error", "unknown_tool", message
            else:
                call.result = self.manager.middleware.execute(
                    "tool_execution",
                    call.args,
                    lambda args: self._terminal(call, ctx, args),
                    original=call.original_args,
                    **self._fields(call, ctx),
                )
                if not isinstance(call.result, str):
                    call.result = json.dumps(call.result, default=str)
                call.status, call.error_type, call.error_message = _status_of(call.result)
        except (ToolCancelled, TurnInterrupted) as exc:
            call.result = tool_error("cancelled: the user interrupted this tool call")
            call.status, call.error_type, call.error_message = "cancelled", "cancelled", str(exc)
        except Exception as exc:
            message = f"{type(exc).__name__}: {describe_exception(exc)}"
            call.result = tool_error(message)
            call.status, call.error_type, call.error_message = "error", type(exc).__name__, message
        except BaseException as exc:
            # A plugin's KeyboardInterrupt/SystemExit on this worker stops the run; the call
            # still ends (cancelled) for the observers before the exception moves on.
            call.result = tool_error("cancelled: the run was stopped")
            call.status, call.error_type = "cancelled", type(exc).__name__
            call.error_message = "the run was stopped"
            call.duration_ms = int((time.perf_counter() - t0) * 1000)
            self._finish(call, ctx, transform=False)
            raise
        call.duration_ms = int((time.perf_counter() - t0) * 1000)
        self._finish(call, ctx, transform=True)

    def _terminal(self, call: Call, ctx: RunContext, args: Any) -> str:
        """The base of the ``tool_execution`` chain: approval, then the handler."""
        if self.cancel.is_set():
            raise ToolCancelled("cancelled")
        if not isinstance(args, dict):
            return tool_error(f"arguments for {call.name!r} must be an object")
        command = args.get("command")
        if call.name == "terminal" and isinstance(command, str):
            decision = self.approver.check(command, ctx, call.tool_call_id)
            if not decision.approved:
                return decision.blocked_result(command)
        agent_tool = self.agent_tools.get(call.name)
        if agent_tool is not None:
            return agent_tool(args, ctx, call.tool_call_id)
        assert call.entry is not None
        tool_ctx = ToolCallContext(
            session_id=ctx.session_id,
            task_id=ctx.task_id,
            turn_id=ctx.turn_id,
            tool_call_id=call.tool_call_id,
            cwd=self.cwd,
            cancel=self.cancel,
            transform_terminal_output=self._terminal_transform(ctx)
            if self.manager.hooks.has_hook("transform_terminal_output")
            else None,
        )
        # The handler gets its own copy: the hooks' payloads hold ``args``, and a handler
        # that changed them in place would change what the record says was called.
        return call.entry.handler(_fresh(args), ctx=tool_ctx)

    def _terminal_transform(self, ctx: RunContext) -> Callable[[str, str, int], str | None]:
        hooks = self.manager.hooks

        def transform(command: str, output: str, returncode: int) -> str | None:
            return hooks.transform_terminal_output(
                command=command,
                output=output,
                returncode=returncode,
                task_id=ctx.task_id,
                env_type="local",
            )

        return transform

    def _claim(self, call: Call) -> bool:
        """True once per call: the one who ends it (its worker, or the cancel) reports it."""
        with self._claims:
            if call.claimed:
                return False
            call.claimed = True
            return True

    def _finish(self, call: Call, ctx: RunContext, *, transform: bool) -> None:
        if self._claim(call):
            self._report(call, ctx, transform=transform)
        # else: abandoned on cancel and already reported; this late result is dropped

    def _report(self, call: Call, ctx: RunContext, *, transform: bool) -> None:
        hooks = self.manager.hooks
        fields = self._fields(call, ctx)
        outcome = {
            "args": call.args,
            "result": call.result,
            "duration_ms": call.duration_ms,
            "status": call.status,
            "error_type": call.error_type,
            "error_message": call.error_message,
        }
        if "post_tool_call" in hooks.active:
            hooks.invoke_hook(
                "post_tool_call", **fields, **outcome, middleware_trace=list(call.trace)
            )
        if transform and "transform_tool_result" in hooks.active:
            replaced = hooks.transform_tool_result(**fields, **outcome)
            if replaced is not None:
                call.result = replaced
        call.done = True
