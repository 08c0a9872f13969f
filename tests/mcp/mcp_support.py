"""Sessions for ``wayline mcp``'s tests: recorded for real, and one scaled to 10,000 steps.

Two sessions are recorded by ``wayline.Agent`` with the relay plugin against the scripted
model server on 127.0.0.1 (``record``):

- ``template``: four user turns; ``question 1`` (a ``lookup`` call, then an answer: 3 steps),
  ``question 2 twice`` (two ``lookup`` calls: 4 steps), ``ship it`` (a ``deploy`` call that
  fails: the tool raises) and ``question 3``;
- ``variant``: ``question 1``, ``question 2 twice``, then ``question 9 zebra-quartz-7731``
  (the planted token) and ``fetch the log`` (``read_log`` returns a 12,000-character log).

``scale`` then makes a 10,000-step session from the template's recording the way bench line I
(``bench/sessions.py``) makes its sessions: its recorded steps repeated, renumbered and moved
in time, under a new session id, with ``final_metrics`` summed again. Only the one- and
two-lookup turns repeat; the failing ``ship it`` turn appears once, at :data:`FAILED_AT`, so
the session holds exactly one failed tool call.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import wayline
from wayline.testing import ScriptedServer

MODEL = "gpt-4o-mini"
TOKEN = "zebra-quartz-7731"
DEPLOY_ARGS = {"target": "prod-eu-7", "ticket": "CHG-4821"}
BIG_ID = "scaled-10000"
BIG_STEPS = 10_000
FAILED_AT = 7_001
"""The step number of the scaled session's failing ``deploy`` turn's user step."""
LOG_LINES = 300

JsonDict = dict[str, Any]


def lookup(query: str) -> str:
    """Look a topic up in the team wiki."""
    return f"Wiki results for {query}: the runbook, section 4.2."


def deploy(target: str, ticket: str) -> str:
    """Deploy the current build to a target."""
    raise RuntimeError(f"deploy to {target} refused: change window closed ({ticket})")


def log_text() -> str:
    """The 12,000-character log ``read_log`` returns (numbered lines of 40 characters)."""
    return "".join(f"line {n:04d}: deploy step finished okay.\n" for n in range(LOG_LINES))


def read_log(name: str) -> str:
    """Read a log file."""
    return log_text()


def _turn(match: str, *calls: JsonDict, answer: str) -> JsonDict:
    turns: list[JsonDict] = [{"tool_calls": [call]} for call in calls]
    return {
        "scope": "user_turn",
        "match": {"last_user_contains": match},
        "turns": [*turns, {"content": answer}],
    }


SCRIPT: JsonDict = {
    "model": [MODEL],
    "default": {"content": "ok"},
    "rules": [
        _turn(
            "twice",
            {"name": "lookup", "arguments": {"query": "deploy pipeline"}},
            {"name": "lookup", "arguments": {"query": "rollback"}},
            answer="Both pages say the platform team owns it.",
        ),
        _turn(
            "question",
            {"name": "lookup", "arguments": {"query": "deploy pipeline"}},
            answer="The platform team owns the deploy pipeline.",
        ),
        _turn("ship it", {"name": "deploy", "arguments": DEPLOY_ARGS}, answer="The deploy failed."),
        _turn(
            "fetch the log",
            {"name": "read_log", "arguments": {"name": "deploy.log"}},
            answer="The log shows every step finished.",
        ),
    ],
}

TEMPLATE_TURNS = ["question 1", "question 2 twice", "ship it", "question 3"]
VARIANT_TURNS = ["question 1", "question 2 twice", f"question 9 {TOKEN}", "fetch the log"]


@dataclass(frozen=True)
class Recorded:
    """The folder the MCP server reads, and what the tests look for in it."""

    folder: Path
    home: Path
    template: str
    variant: str
    failed_step: int  # the scaled session's step whose deploy call failed


def wayline_env(home: Path) -> dict[str, str]:
    """A ``wayline`` subprocess's environment: this home, no model or wayline variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OPENAI_"))}
    env["WAYLINE_HOME"] = str(home)
    return env


def mcp_command(*args: str | Path) -> list[str]:
    """``python -m wayline mcp ARGS`` with this interpreter."""
    return [sys.executable, "-m", "wayline", "mcp", *map(str, args)]


def _session(server: ScriptedServer, home: Path, turns: list[str]) -> str:
    with wayline.Agent(
        model=MODEL,
        base_url=server.base_url,
        tools=[lookup, deploy, read_log],
        home=home,
        plugins=["observability/relay"],
        yolo=True,
    ) as agent:
        for text in turns:
            assert agent.run(text).completed, text
        return agent.session_id


def _ns(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _blocks(steps: list[JsonDict]) -> list[list[JsonDict]]:
    """The steps cut at each user step: one block per turn."""
    blocks: list[list[JsonDict]] = []
    for step in steps:
        if step["source"] == "user" or not blocks:
            blocks.append([])
        blocks[-1].append(step)
    return blocks


def _copy(step: JsonDict, number: int, copy: int, offset: float) -> JsonDict:
    out = dict(step, step_id=number)
    out["timestamp"] = datetime.fromtimestamp(_ns(step["timestamp"]) + offset, UTC).isoformat()
    if step.get("tool_calls"):
        out["tool_calls"] = [
            dict(c, tool_call_id=f"{c['tool_call_id']}-{copy}") for c in step["tool_calls"]
        ]
    observation = step.get("observation")
    if observation:
        out["observation"] = {
            "results": [
                dict(r, source_call_id=f"{r['source_call_id']}-{copy}")
                for r in observation["results"]
            ]
        }
    extra = step.get("extra")
    if isinstance(extra, dict) and "invocation" in extra:
        extra = dict(extra)
        extra["invocation"] = _shifted(extra["invocation"], offset)
        if "tool_invocations" in extra:
            extra["tool_invocations"] = [_shifted(i, offset) for i in extra["tool_invocations"]]
        out["extra"] = extra
    return out


def _shifted(invocation: JsonDict, offset: float) -> JsonDict:
    out = dict(invocation)
    for key in ("start_timestamp", "end_timestamp"):
        if isinstance(out.get(key), float | int):
            out[key] = round(out[key] + offset, 3)
    return out


def scale(template: JsonDict) -> tuple[JsonDict, int]:
    """The 10,000-step session made from the template's recording (see the module doc), and
    the number of its step whose ``deploy`` call failed."""
    one, two, ship, three = _blocks(template["steps"])
    assert [len(one), len(two), len(ship), len(three)] == [3, 4, 3, 3]
    span = _ns(template["steps"][-1]["timestamp"]) - _ns(template["steps"][0]["timestamp"]) + 1
    # one four-step turn, then three-step turns, with ``ship`` once: exactly BIG_STEPS steps
    plan = [two] + [one if i % 2 else three for i in range((BIG_STEPS - 4 - 3) // 3)]
    plan.insert((FAILED_AT - 1 - 4) // 3 + 1, ship)
    steps: list[JsonDict] = []
    failed = 0
    for copy, block in enumerate(plan):
        if block is ship:
            failed = len(steps) + 2  # its agent step follows its user step
        for step in block:
            steps.append(_copy(step, len(steps) + 1, copy, copy * span))
    assert len(steps) == BIG_STEPS and steps[FAILED_AT - 1]["message"] == "ship it"
    totals: JsonDict = {"total_steps": len(steps)}
    metered = [s["metrics"] for s in steps if isinstance(s.get("metrics"), dict)]
    for key, total in (
        ("prompt_tokens", "total_prompt_tokens"),
        ("completion_tokens", "total_completion_tokens"),
        ("cost_usd", "total_cost_usd"),
    ):
        totals[total] = sum(m.get(key, 0) for m in metered)
    document = dict(template, session_id=BIG_ID, trajectory_id=BIG_ID, steps=steps)
    document["final_metrics"] = totals
    return document, failed


def record(base: Path) -> Recorded:
    """Record the two sessions into a home under ``base`` and write the folder the server
    reads: their ATIF files and the scaled session's."""
    home = base / "home"
    with ScriptedServer(SCRIPT) as server:
        template = _session(server, home, TEMPLATE_TURNS)
        variant = _session(server, home, VARIANT_TURNS)
    folder = base / "sessions"
    folder.mkdir()
    for sid in (template, variant):
        name = f"wayline-atif-{sid}.json"
        (folder / name).write_bytes((home / "relay" / "atif" / name).read_bytes())
    recorded = json.loads((folder / f"wayline-atif-{template}.json").read_text(encoding="utf-8"))
    big, failed = scale(recorded)
    (folder / f"wayline-atif-{BIG_ID}.json").write_text(
        json.dumps(big, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
    )
    return Recorded(folder, home, template, variant, failed)


# -- the SDK's client, over stdio -------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One tool call's result: its text and whether it is the tool's error."""

    text: str
    error: bool


async def _session_calls(
    server: Any, calls: list[tuple[str, JsonDict]]
) -> tuple[list[Any], list[Answer]]:
    from mcp.types import TextContent

    from mcp import ClientSession

    read, write = server
    async with ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        answers = []
        for name, args in calls:
            result = await session.call_tool(name, args)
            texts = [c.text for c in result.content if isinstance(c, TextContent)]
            assert len(texts) == len(result.content) == 1, result
            answers.append(Answer(texts[0], bool(result.is_error)))
        return tools, answers


def over_stdio(
    folder: Path, home: Path, calls: list[tuple[str, JsonDict]], *extra: str
) -> tuple[list[Any], list[Answer]]:
    """Start ``python -m wayline mcp FOLDER`` with the SDK's stdio client, list its tools and
    make ``calls`` in order on one connection."""
    import anyio
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = mcp_command(folder, *extra)
    params = StdioServerParameters(command=command[0], args=command[1:], env=wayline_env(home))

    async def main() -> tuple[list[Any], list[Answer]]:
        async with stdio_client(params) as server:
            return await _session_calls(server, calls)

    return anyio.run(main)
