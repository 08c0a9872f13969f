"""The agent loop: one user turn → model calls → tools → … → final text, with every hook.

Per turn: ``pre_llm_call`` (its context goes into the API copy of the user
message only) → API attempts → tool batches → … → ``transform_llm_output`` →
``post_llm_call`` → ``on_session_end``. Ids come from one :class:`RunContext`
per turn. The loop runs on the caller's thread; tools run on a pool.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wayline.contract.ids import (
    RunContext,
    api_request_id,
    new_session_id,
    new_task_id,
    new_turn_id,
)
from wayline.host.manager import PluginManager
from wayline.redaction import KnownValues, process_values
from wayline.redaction.sanitize import SanitizeMemo
from wayline.runtime.api_call import (
    REQUEST_MEMO_DEPTH,
    ContentSizes,
    ProviderError,
    TurnInterrupted,
    TurnView,
    call_llm,
)
from wayline.runtime.approvals import Approver
from wayline.runtime.cancel import CancelEvent
from wayline.runtime.dispatch import AgentTool, ToolDispatcher
from wayline.runtime.provider import NormalizedResponse, Provider
from wayline.runtime.sessions import SessionStore
from wayline.runtime.settings import AgentSettings
from wayline.runtime.tools.base import tool_error


@dataclass(slots=True)
class TurnResult:
    """How a turn ended.

    ``api_calls`` is the number of model calls this turn made (each call once, however many
    times it was retried), not a count over the session: the turn that answered with one
    call after an earlier turn of three says 1.
    """

    text: str
    completed: bool
    interrupted: bool = False
    reason: str = "completed"
    api_calls: int = 0
    tool_trace: list[dict[str, str]] | None = None


class TurnLoop:
    """The turn loop of one conversation (a session): model calls, tools and every hook.

    The public face is :class:`wayline.Agent`; this class is what it and ``wayline chat`` drive.
    """

    def __init__(
        self,
        manager: PluginManager,
        settings: AgentSettings,
        *,
        session_id: str | None = None,
        platform: str = "cli",
        cwd: Path | None = None,
        store: SessionStore | None = None,
        approver: Approver | None = None,
        cancel: threading.Event | None = None,
        parent: RunContext | None = None,
        subagent_id: str | None = None,
        depth: int = 0,
        provider: Provider | None = None,
        known: KnownValues | None = None,
    ) -> None:
        self.manager = manager
        # What rules redact in this session becomes a known value, masked in every output
        # for the rest of it; a delegated child shares its parent's.
        self.known = known if known is not None else KnownValues(process_values())
        self.settings = settings
        self.platform = platform
        self.cwd = cwd or Path.cwd()
        self.store = store
        self.cancel = cancel if cancel is not None else CancelEvent()
        self.parent = parent
        self.subagent_id = subagent_id
        self.depth = depth
        self._owns_provider = provider is None
        self.provider = provider or Provider(settings.provider)
        self.approver = approver or Approver(
            manager.hooks,
            mode=settings.approval_mode,  # type: ignore[arg-type]
            timeout=settings.approval_timeout,
        )
        self.session_id = session_id or new_session_id()
        self.task_id = subagent_id or new_task_id()
        self.messages: list[dict[str, Any]] = []
        self._payload_memo = SanitizeMemo(REQUEST_MEMO_DEPTH)
        self._content_sizes = ContentSizes()
        self.started = False
        self.api_calls = 0
        self.tool_trace: list[dict[str, str]] = []
        self._pool = ThreadPoolExecutor(
            max_workers=settings.max_tool_workers, thread_name_prefix=f"wayline-tools-{depth}"
        )
        self.tools = self._select_tools()
        self._tool_defs: list[dict[str, Any]] | None = None
        self.agent_tools: dict[str, AgentTool] = {}
        if "delegate_task" in self.tools:
            from wayline.runtime.delegation import make_delegate_tool

            self.agent_tools["delegate_task"] = make_delegate_tool(self)

    # -- setup --------------------------------------------------------------------------
    def _select_tools(self) -> dict[str, Any]:
        entries = self.manager.tools.select(self.settings.toolsets)
        if self.depth >= self.settings.delegation.max_spawn_depth:
            entries = [e for e in entries if e.name != "delegate_task"]
        return {e.name: e for e in entries}

    def _tool_definitions(self) -> list[dict[str, Any]]:
        # The same dicts every turn let the sanitize memo (keyed by identity) reuse the tools'
        # sanitized copies instead of re-walking every schema on each turn's first call.
        # Request middleware may edit them in place, so with any it gets fresh copies.
        if self._tool_defs is None or self.manager.middleware.has_middleware("llm_request"):
            self._tool_defs = [e.definition() for e in self.tools.values()]
        return self._tool_defs

    def resume(self, session_id: str) -> None:
        """Continue a stored session (no ``on_session_start``: it is not new)."""
        assert self.store is not None
        self.messages = self.store.load(session_id)
        self.session_id = session_id
        # A transcript created but never written (the process died first) starts afresh.
        self.started = bool(self.messages)

    def _record(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        if self.store is not None:
            self.store.append(self.session_id, message, self.known)

    def _start_session(self) -> None:
        self.started = True
        self._record({"role": "system", "content": self.settings.system_prompt})
        if self.manager.has_hook("on_session_start"):
            self.manager.invoke_hook(
                "on_session_start",
                session_id=self.session_id,
                model=self.settings.provider.model,
                platform=self.platform,
                **self._parent_fields(),
            )

    def _parent_fields(self) -> dict[str, Any]:
        if self.parent is None:
            return {}
        return {
            "parent_session_id": self.parent.session_id,
            "parent_turn_id": self.parent.turn_id,
            "subagent_id": self.subagent_id,
        }

    def context(self) -> RunContext:
        """A fresh per-turn context (new ``turn_id``)."""
        cfg = self.settings.provider
        return RunContext(
            session_id=self.session_id,
            task_id=self.task_id,
            turn_id=new_turn_id(self.session_id, self.task_id),
            platform=self.platform,
            model=cfg.model,
            provider=cfg.provider,
            base_url=cfg.base_url,
            parent_session_id=self.parent.session_id if self.parent else None,
            parent_turn_id=self.parent.turn_id if self.parent else None,
            parent_subagent_id=self.parent.subagent_id if self.parent else None,
            subagent_id=self.subagent_id,
        )

    # -- one turn -----------------------------------------------------------------------
    def run_turn(self, user_text: str) -> TurnResult:
        """Run one user turn to its end; never raises for model/tool failures."""
        if not self.started:
            self._start_session()
        ctx = self.context()
        self.api_calls = 0  # per turn: TurnResult.api_calls and the hooks' api_call_count
        hooks = self.manager.hooks
        history = [m for m in self.messages]
        is_first = not any(m.get("role") == "user" for m in history)
        self._record({"role": "user", "content": user_text})
        user_index = len(self.messages) - 1
        result = TurnResult(text="", completed=False)
        try:
            api_user = user_text
            if hooks.has_hook("pre_llm_call"):
                extra = hooks.pre_llm_context(
                    session_id=ctx.session_id,
                    task_id=ctx.task_id,
                    turn_id=ctx.turn_id,
                    user_message=user_text,
                    conversation_history=history,
                    is_first_turn=is_first,
                    model=ctx.model,
                    platform=ctx.platform,
                    sender_id="",
                )
                if extra:
                    api_user = f"{user_text}\n\n{extra}"
            result = self._loop(ctx, user_index, api_user, user_text)
        except BaseException as exc:
            # Ctrl-C, a cancelled turn, a plugin's KeyboardInterrupt/SystemExit/own
            # BaseException, or a bug: the turn still ends for the observers
            # (on_session_end), then anything but a plain cancellation goes on to the caller.
            if isinstance(exc, Exception) and not isinstance(exc, TurnInterrupted):
                result = TurnResult(
                    f"error: {type(exc).__name__}", False, False, "error", self.api_calls
                )
            else:
                self.cancel.set()
                result = TurnResult("(interrupted)", False, True, "interrupted", self.api_calls)
            self._end_turn(ctx, result)
            if not isinstance(exc, TurnInterrupted):
                raise
            return result
        self._end_turn(ctx, result)
        return result

    def _api_messages(self, user_index: int, api_user: str) -> list[dict[str, Any]]:
        messages = list(self.messages)
        if messages[user_index].get("content") != api_user:
            messages[user_index] = {**messages[user_index], "content": api_user}
        return messages

    def _loop(self, ctx: RunContext, user_index: int, api_user: str, user_text: str) -> TurnResult:
        tool_defs = self._tool_definitions()
        dispatcher = ToolDispatcher(
            self.manager,
            self.approver,
            self._pool,
            self.cancel,
            self.cwd,
            set(self.tools),
            self.agent_tools,
        )
        for _ in range(self.settings.max_turns):
            if self.cancel.is_set():
                raise TurnInterrupted("cancelled")
            self.api_calls += 1
            ctx = ctx.with_(
                api_call_count=self.api_calls,
                api_request_id=api_request_id(ctx.turn_id, self.api_calls),
            )
            request = self.provider.build_request(
                self._api_messages(user_index, api_user), tool_defs
            )
            view = TurnView(
                user_text, self.messages[:user_index], self._payload_memo, self._content_sizes
            )
            try:
                response = call_llm(
                    self.manager, self.provider, request, ctx, view, self.cancel, len(tool_defs)
                )
            except ProviderError as exc:
                return TurnResult(_provider_failure(exc), False, False, "api_error", self.api_calls)
            self._record(_assistant_message(response))
            if not response.tool_calls:
                return TurnResult(response.content or "", True, False, "completed", self.api_calls)
            self._run_tools(dispatcher, response, ctx)
        text = (
            f"(stopped: reached the maximum of {self.settings.max_turns} model calls for this turn)"
        )
        return TurnResult(text, False, False, "max_turns", self.api_calls)

    def _run_tools(
        self, dispatcher: ToolDispatcher, response: NormalizedResponse, ctx: RunContext
    ) -> None:
        # Every call has its id already (``normalize`` gives one to a call sent without), and
        # nothing here changes the response: the hooks that saw it keep reading it.
        try:
            calls = dispatcher.run(response.tool_calls, ctx)
        except BaseException:
            answered = {m.get("tool_call_id") for m in self.messages if m.get("role") == "tool"}
            for tc in response.tool_calls:
                if tc.id not in answered:
                    self._record(_tool_message(tc.id, tc.name, tool_error("cancelled")))
            raise
        for call in calls:
            self.tool_trace.append({"tool": call.name, "status": call.status})
            self._record(_tool_message(call.tool_call_id, call.name, call.result))

    def _end_turn(self, ctx: RunContext, result: TurnResult) -> None:
        hooks = self.manager.hooks
        if result.completed and result.text and not result.interrupted:
            if hooks.has_hook("transform_llm_output"):
                replaced = hooks.transform_llm_output(
                    response_text=result.text,
                    session_id=ctx.session_id,
                    model=ctx.model,
                    platform=ctx.platform,
                    turn_id=ctx.turn_id,
                    task_id=ctx.task_id,
                )
                if replaced is not None:
                    result.text = replaced
            if hooks.has_hook("post_llm_call"):
                hooks.invoke_hook(
                    "post_llm_call",
                    session_id=ctx.session_id,
                    task_id=ctx.task_id,
                    turn_id=ctx.turn_id,
                    user_message=next(
                        (m["content"] for m in reversed(self.messages) if m.get("role") == "user"),
                        "",
                    ),
                    assistant_response=result.text,
                    conversation_history=list(self.messages),
                    model=ctx.model,
                    platform=ctx.platform,
                )
        if hooks.has_hook("on_session_end"):
            hooks.invoke_hook(
                "on_session_end",
                session_id=ctx.session_id,
                task_id=ctx.task_id,
                turn_id=ctx.turn_id,
                completed=result.completed,
                interrupted=result.interrupted,
                model=ctx.model,
                platform=ctx.platform,
                reason=result.reason,
            )

    # -- session boundaries -------------------------------------------------------------
    def finalize(self, reason: str = "shutdown") -> None:
        """The session identity ends: ``on_session_finalize``; tool workers stop."""
        if self.started and self.manager.has_hook("on_session_finalize"):
            self.manager.invoke_hook(
                "on_session_finalize",
                session_id=self.session_id,
                platform=self.platform,
                reason=reason,
            )
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self.store is not None:
            self.store.close(self.session_id)
        if self._owns_provider:
            self.provider.close()

    def reset(self) -> str:
        """``/new``: finalize the old identity, start a new one; returns the new id."""
        old = self.session_id
        self.finalize("session_boundary")
        self._pool = ThreadPoolExecutor(
            max_workers=self.settings.max_tool_workers, thread_name_prefix="wayline-tools-0"
        )
        self.session_id = new_session_id()
        self.messages = []
        self._payload_memo = SanitizeMemo(REQUEST_MEMO_DEPTH)
        self._content_sizes = ContentSizes()
        self.started = False
        if self.manager.has_hook("on_session_reset"):
            self.manager.invoke_hook(
                "on_session_reset",
                session_id=self.session_id,
                old_session_id=old,
                new_session_id=self.session_id,
                platform=self.platform,
                reason="new_session",
            )
        return self.session_id


def _provider_failure(exc: ProviderError) -> str:
    """The turn's final text when the provider call failed for good: what, where, how often."""
    from wayline.redaction.sanitize import redact_bounded

    status = f", HTTP {exc.status_code}" if exc.status_code else ""
    tries = f"{exc.attempts} attempt{'s' if exc.attempts != 1 else ''}"
    where = redact_bounded(str(exc.base_url), 2000) if exc.base_url else "the endpoint"
    return (
        f"error: the model provider failed after {tries} ({exc.reason}{status}) calling "
        f"{where}: {redact_bounded(str(exc), 2000)}{_v1_hint(exc)}"
    )


def _v1_hint(exc: ProviderError) -> str:
    """A 404 from a base URL whose path has no ``/v1``: the usual mistake, said once."""
    if exc.status_code != 404 or not exc.base_url:
        return ""
    from urllib.parse import urlsplit

    path = urlsplit(exc.base_url).path.rstrip("/")
    if "/v1" in path:
        return ""
    return (
        "; hint: the base URL's path has no /v1, under which OpenAI-compatible servers"
        " usually serve: try adding /v1 to --base-url or model.base_url"
    )


def _assistant_message(response: NormalizedResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {
                "id": tc.id,
                "type": "function",
                "function": {"name": tc.name, "arguments": tc.arguments},
            }
            for tc in response.tool_calls
        ]
    return message


def _tool_message(tool_call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": tool_call_id, "name": name, "content": content}
