"""Dangerous-command approval: detection, the approval hooks, the TTY prompt.

Approval judges the arguments the tool is about to run with — after
``tool_request`` middleware and inside the ``tool_execution`` chain, just before
the handler — so no middleware can change a command after it was approved.
Observer return values never approve or veto: the approval hooks are
observe-only; ``pre_tool_call`` blocking is the plugin's veto.
"""

from __future__ import annotations

import json
import select
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from wayline.contract.ids import RunContext
from wayline.contract.private import PrivatePaths
from wayline.host.bus import HookBus
from wayline.runtime.danger import DangerMatch, describe, detect_dangerous

Mode = Literal["manual", "yolo", "deny"]
_CHOICES = {
    "o": "once",
    "once": "once",
    "s": "session",
    "session": "session",
    "a": "always",
    "always": "always",
    "d": "deny",
    "deny": "deny",
    "n": "deny",
}


@dataclass(slots=True)
class Decision:
    """What became of one approval check."""

    approved: bool
    choice: str | None
    matches: list[DangerMatch]

    def blocked_result(self, command: str) -> str:
        """The tool result returned to the model when the command was not approved."""
        why = "timed out waiting for approval" if self.choice == "timeout" else "denied"
        return json.dumps(
            {
                "output": "",
                "exit_code": -1,
                "error": f"BLOCKED: command {why} ({describe(self.matches)}). Do not retry it.",
                "status": "blocked",
                "pattern_keys": [m.key for m in self.matches],
            }
        )


@dataclass
class Approver:
    """Decides on dangerous commands; one per top-level session (children share it)."""

    hooks: HookBus
    mode: Mode = "manual"
    timeout: float = 60.0
    always_file: Path | None = None
    stream_in: TextIO | None = None
    stream_out: TextIO | None = None
    ask: Callable[[str, float], str | None] | None = None
    session_approved: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _always(self) -> set[str]:
        if self.always_file is None or not self.always_file.exists():
            return set()
        try:
            data = json.loads(self.always_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        return {str(k) for k in data} if isinstance(data, list) else set()

    def _remember_always(self, keys: list[str]) -> None:
        if self.always_file is None:
            return
        merged = sorted(self._always() | set(keys))
        tmp = self.always_file.with_suffix(".tmp")
        private = PrivatePaths()  # the list is config: 0600 in a 0700 directory
        private.directory(tmp.parent)
        with private.open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(merged))
        private.replace(tmp, self.always_file)

    def check(self, command: str, ctx: RunContext, tool_call_id: str) -> Decision:
        """Approve or refuse ``command``; fires the approval hooks when a human is asked."""
        matches = detect_dangerous(command)
        if not matches:
            return Decision(True, None, matches)
        keys = [m.key for m in matches]
        if self.mode == "yolo":
            return Decision(True, "yolo", matches)
        if set(keys) <= (self.session_approved | self._always()):
            return Decision(True, "session", matches)
        payload: dict[str, Any] = {
            "command": command,
            "description": describe(matches),
            "pattern_key": keys[0],
            "pattern_keys": keys,
            "session_key": ctx.session_id,
            "surface": "cli",
            "turn_id": ctx.turn_id,
            "tool_call_id": tool_call_id,
            "session_id": ctx.session_id,
        }
        # One prompt at a time: parallel tools or children must not interleave questions.
        with self._lock:
            if self.hooks.has_hook("pre_approval_request"):
                self.hooks.invoke_hook("pre_approval_request", **payload)
            choice = self._ask(command, matches)
            if choice in ("session", "always"):
                self.session_approved.update(keys)
            if choice == "always":
                self._remember_always(keys)
            if self.hooks.has_hook("post_approval_response"):
                self.hooks.invoke_hook("post_approval_response", **payload, choice=choice)
        return Decision(choice in ("once", "session", "always"), choice, matches)

    def _ask(self, command: str, matches: list[DangerMatch]) -> str:
        if self.mode == "deny":
            return "deny"
        question = (
            f"\n⚠ dangerous command ({describe(matches)}):\n    {command}\n"
            f"allow? [o]nce / [s]ession / [a]lways / [d]eny (timeout {self.timeout:g}s): "
        )
        if self.ask is not None:
            answer = self.ask(question, self.timeout)
        else:
            answer = self._tty_ask(question)
        if answer is None:
            return "timeout"
        return _CHOICES.get(answer.strip().lower(), "deny")

    def _tty_ask(self, question: str) -> str | None:
        stream_in = self.stream_in or sys.stdin
        stream_out = self.stream_out or sys.stderr
        try:
            interactive = stream_in.isatty()
        except (ValueError, OSError):
            interactive = False
        if not interactive:
            return "deny"  # nobody can answer: refuse rather than hang
        stream_out.write(question)
        stream_out.flush()
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                stream_out.write("\n(no answer: timed out)\n")
                stream_out.flush()
                return None
            ready, _, _ = select.select([stream_in], [], [], min(left, 0.2))
            if ready:
                line = stream_in.readline()
                return line if line else "deny"
