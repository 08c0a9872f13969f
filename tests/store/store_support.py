"""Recordings made for real for the store's tests: one wayline home, six sessions, two models.

Each session runs through ``wayline.Agent`` (or ``wayline chat`` in a subprocess) against the
scripted model server on 127.0.0.1, with the relay plugin writing ATOF and ATIF into the home:

- ``tools``: gpt-4o-mini calls ``add`` and ``boom`` (which fails) in one step, then answers in
  Chinese and Japanese; the user wrote Arabic;
- ``delegate``: gpt-4o delegates a task; the child calls ``add`` and answers in Arabic;
- ``failed``: an unpriced model whose server answers 500 (no retries);
- ``max_turns``: the model calls ``add`` forever and the turn stops at two model calls;
- ``cancelled``: the model hangs and the turn is cancelled;
- ``chat``: ``wayline chat -q`` runs the ``terminal`` tool (``echo scratch removed``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import wayline
from wayline.testing import ScriptedServer

PRICED = "gpt-4o-mini"
PRICED_TOO = "gpt-4o"
UNPRICED = "local-llm"
HANG = 60.0

SCRIPT: dict[str, Any] = {
    "model": [PRICED, PRICED_TOO, UNPRICED],
    "default": {"content": "ok"},
    "rules": [
        {
            "match": {"first_user_contains": "sum these"},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "add", "arguments": {"a": 1, "b": 2}},
                        {"name": "boom", "arguments": {"why": "kaput-marker"}},
                    ]
                },
                {"content": "3 — 答案是三。ありがとうございました"},
            ],
        },
        {
            "match": {"first_user_contains": "child task"},
            "turns": [
                {"tool_calls": [{"name": "add", "arguments": {"a": 5, "b": 5}}]},
                {"content": "child done مرحبا بالعالم"},
            ],
        },
        {
            "match": {"first_user_contains": "delegate please"},
            "turns": [
                {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "child task"}}]},
                {"content": "delegated and done"},
            ],
        },
        {
            "match": {"first_user_contains": "fail please"},
            "respond": {"content": "x", "fault": {"status": 500}},
        },
        {
            "match": {"first_user_contains": "loop please"},
            "respond": {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]},
        },
        {"match": {"first_user_contains": "slow please"}, "respond": {"delay": HANG}},
        {
            "match": {"first_user_contains": "clean up"},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "terminal", "arguments": {"command": "echo scratch removed"}}
                    ]
                },
                {"content": "Cleaned up the scratch folder."},
            ],
        },
    ],
}


def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


def boom(why: str) -> str:
    """A tool that always fails."""
    raise RuntimeError(f"no luck: {why}")


@dataclass(frozen=True)
class Recorded:
    """The home the sessions were recorded into, and each scenario's session id."""

    home: Path
    ids: dict[str, str]

    @property
    def atif_files(self) -> list[Path]:
        """The ATIF files the relay plugin wrote."""
        return sorted((self.home / "relay" / "atif").glob("*.json"))

    @property
    def atof_files(self) -> list[Path]:
        """The ATOF files the relay plugin wrote."""
        return sorted((self.home / "relay" / "atof").glob("*.jsonl"))


def wayline_env(home: Path) -> dict[str, str]:
    """The environment of a ``wayline`` subprocess: this home, no model variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OPENAI_"))}
    env["WAYLINE_HOME"] = str(home)
    return env


def run_wayline(*args: str | Path, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``wayline ARGS`` as a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "wayline", *map(str, args)],
        env=wayline_env(home),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _agent(server: ScriptedServer, home: Path, model: str, **settings: Any) -> wayline.Agent:
    return wayline.Agent(
        model=model,
        base_url=server.base_url,
        tools=[add, boom],
        toolsets=["delegation"],
        home=home,
        plugins=["observability/relay"],
        yolo=True,
        **settings,
    )


def _cancelled(server: ScriptedServer, home: Path) -> str:
    with _agent(server, home, PRICED) as agent:

        async def main() -> None:
            task = asyncio.create_task(agent.arun("slow please"))
            seen = len(server.requests)
            await asyncio.to_thread(server.wait_for_requests, seen + 1, 30)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

        asyncio.run(main())
        return agent.session_id


def record(home: Path, work: Path) -> Recorded:
    """Record the six sessions into ``home`` (``work``: the chat's working directory)."""
    ids: dict[str, str] = {}
    with ScriptedServer(SCRIPT) as server:
        with _agent(server, home, PRICED) as agent:
            assert agent.run("sum these please, مرحبا").completed
            ids["tools"] = agent.session_id
        with _agent(server, home, PRICED_TOO) as agent:
            assert agent.run("delegate please").completed
            ids["delegate"] = agent.session_id
        with _agent(server, home, UNPRICED, max_retries=0) as agent:
            assert agent.run("fail please").reason == "api_error"
            ids["failed"] = agent.session_id
        with _agent(server, home, PRICED, max_turns=2) as agent:
            assert agent.run("loop please").reason == "max_turns"
            ids["max_turns"] = agent.session_id
        ids["cancelled"] = _cancelled(server, home)
        enabled = run_wayline("plugins", "enable", "observability/relay", home=home, cwd=work)
        assert enabled.returncode == 0, enabled.stderr
        chat = run_wayline(
            "chat",
            "-q",
            "clean up the scratch folder",
            "--base-url",
            server.base_url,
            "-m",
            PRICED,
            "--yolo",
            home=home,
            cwd=work,
        )
        assert chat.returncode == 0, chat.stderr
    stems = {p.stem for p in (home / "relay" / "atif").glob("*.json")}
    chat_ids = [s for s in (_session_of(p) for p in stems) if s not in ids.values()]
    assert len(chat_ids) == 1, chat_ids
    ids["chat"] = chat_ids[0]
    child = _children(_atif(home, ids["delegate"]))
    assert len(child) == 1
    ids["child"] = child[0]
    return Recorded(home, ids)


def _session_of(stem: str) -> str:
    return stem.removeprefix("wayline-atif-")


def _atif(home: Path, session_id: str) -> dict[str, Any]:
    path = home / "relay" / "atif" / f"wayline-atif-{session_id}.json"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def _children(document: Mapping[str, Any]) -> list[str]:
    return [str(sub["session_id"]) for sub in document.get("subagent_trajectories") or ()]


def trajectories(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The document's trajectory and every embedded subagent's, at any depth."""
    yield document
    for sub in document.get("subagent_trajectories") or ():
        yield from trajectories(sub)


def harbor_trajectory(secret: str) -> dict[str, Any]:
    """A Harbor-shaped file (naive timestamps, text parts, cost metrics, no relay extras) whose
    tool result holds ``secret``."""
    return {
        "schema_version": "ATIF-v1.5",
        "session_id": "harbor-run-1",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "gpt-5"},
        "steps": [
            {"step_id": 1, "timestamp": "2025-10-14T20:08:40", "source": "system",
             "message": "You are an agent."},
            {"step_id": 2, "timestamp": "2025-10-14T20:08:41", "source": "user",
             "message": [{"type": "text", "text": "Show the deploy config."}]},
            {"step_id": 3, "timestamp": "2025-10-14T20:08:44.500", "source": "agent",
             "model_name": "gpt-5", "message": "Reading it.", "reasoning_content": "cat works",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "bash",
                             "arguments": {"cmd": "cat deploy.env"}}],
             "observation": {"results": [{"source_call_id": "c1",
                                          "content": f"REGION=eu-west-1\nAPI_TOKEN={secret}"}]},
             "metrics": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 50,
                         "cost_usd": 0.0125}},
            {"step_id": 4, "timestamp": "2025-10-14T20:08:46Z", "source": "agent",
             "message": "The region is eu-west-1.",
             "metrics": {"prompt_tokens": 130, "completion_tokens": 5, "cost_usd": 0.0025}},
        ],
        "final_metrics": {"total_prompt_tokens": 230, "total_completion_tokens": 25,
                          "total_cached_tokens": 50, "total_cost_usd": 0.015, "total_steps": 4},
    }  # fmt: skip
