"""Capture one hook stream from a real wayline session, for the P3-efficiency replays.

The session (scripted server in this process, zero latency, no plugins) has one turn of
twelve rounds of two parallel ``read_file`` calls, then a turn that runs ``terminal`` and
delegates one child (which reads two files); then it is finalized. A recording callback on
every hook the runtime emits stores ``(hook, payload, monotonic seconds)`` in arrival order.
The bus hands it the sanitized payload; values JSON cannot hold (an ``assistant_message``
object, say) are dropped, so the stream is plain data every arm can replay.

    .venv/bin/python -m bench.hookstream OUT.json

Writes ``{"hooks": [[name, payload, t], ...], "sessions": [...]}``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROUNDS = 12
READS = 2
FILE_TEXT = "READMARK alpha\nsecond line\nthird line\n"


def _reads(n: int) -> list[dict[str, Any]]:
    return [{"name": "read_file", "arguments": {"path": f"f{i % 4}.txt"}} for i in range(n)]


SCRIPT: dict[str, Any] = {
    "model": "bench-model",
    "rules": [
        {
            "match": {"first_user_contains": "CHILDTASK"},
            "turns": [{"tool_calls": _reads(2)}, {"content": "child done"}],
        },
        {
            "match": {"last_user_contains": "DELEGATE", "last_role": "user"},
            "respond": {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo T1"}}]},
        },
        {
            "match": {"last_user_contains": "DELEGATE", "last_contains": "T1"},
            "respond": {
                "tool_calls": [
                    {
                        "name": "delegate_task",
                        "arguments": {"goal": "CHILDTASK read two files", "toolsets": ["file"]},
                    }
                ]
            },
        },
        {"match": {"last_user_contains": "DELEGATE"}, "respond": {"content": "delegated"}},
        {
            "match": {"first_user_contains": "WORK"},
            "turns": [*({"tool_calls": _reads(READS)} for _ in range(ROUNDS)), {"content": "ok"}],
        },
    ],
}

_DROP = object()


def plain(value: Any) -> Any:
    """``value`` as JSON data; what JSON cannot hold becomes ``_DROP`` (left out by callers)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _DROP
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            kept = plain(item)
            if isinstance(key, str) and kept is not _DROP:
                out[key] = kept
        return out
    if isinstance(value, list | tuple):
        return [kept for kept in (plain(v) for v in value) if kept is not _DROP]
    return _DROP


class Recorder:
    """Every hook call as ``[name, payload, monotonic seconds]``, in arrival order."""

    def __init__(self) -> None:
        self.hooks: list[list[Any]] = []
        self._lock = threading.Lock()

    def callback(self, name: str) -> Any:
        """An observer for hook ``name`` that records a JSON-able copy of its payload."""

        def record(**payload: Any) -> None:
            data = plain(payload)
            with self._lock:  # parallel tool workers and the child's thread fire too
                self.hooks.append([name, data, time.monotonic()])

        return record


def capture(out: Path) -> dict[str, Any]:
    """Run the session, record its hooks, write them to ``out``; returns the document."""
    from wayline.contract import VALID_HOOKS
    from wayline.runtime import build_runtime
    from wayline.testing.server import ScriptedServer

    tmp = Path(tempfile.mkdtemp(prefix="wayline-bench-stream-"))
    work = tmp / "work"
    work.mkdir()
    for i in range(4):
        (work / f"f{i}.txt").write_text(FILE_TEXT)
    home = tmp / "home"
    home.mkdir()
    (home / "config.yaml").write_text('approvals:\n  mode: "off"\n')
    os.environ["WAYLINE_HOME"] = str(home)
    recorder = Recorder()
    with ScriptedServer(SCRIPT) as server:
        runtime = build_runtime(home, base_url=server.base_url, model="bench-model")
        for name in sorted(VALID_HOOKS):
            runtime.manager.hooks.register(name, recorder.callback(name), "rec")
        agent = runtime.agent(cwd=work)
        for prompt in ("WORK: read the files", "DELEGATE: run the command, then delegate"):
            result = agent.run_turn(prompt)
            if not result.completed:
                raise RuntimeError(f"capture turn failed: {result.reason} {result.text}")
        agent.finalize()
    sessions = sorted({str(p["session_id"]) for _, p, _ in recorder.hooks if p.get("session_id")})
    document = {"hooks": recorder.hooks, "sessions": sessions}
    out.write_text(json.dumps(document))
    return document


def main() -> None:
    """Capture to the path given on the command line and print a summary."""
    out = Path(sys.argv[1])
    document = capture(out)
    counts: dict[str, int] = {}
    for name, _, _ in document["hooks"]:
        counts[name] = counts.get(name, 0) + 1
    print(f"{len(document['hooks'])} hooks, {out.stat().st_size:,} bytes: {counts}")


if __name__ == "__main__":
    main()
