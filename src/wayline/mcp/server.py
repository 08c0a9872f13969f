"""The MCP server of ``wayline mcp``: six read-only tools on the official ``mcp`` SDK.

The tools' parameters are typed here (the SDK makes their JSON schemas from the annotations)
and described for the agent that calls them; the answers are :class:`SessionTools`'. Over
stdio (the default: the client starts ``wayline mcp`` and speaks on its stdin and stdout) or
streamable HTTP on 127.0.0.1 (:func:`run_http`). The SDK runs each call on a worker thread.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from wayline.mcp.tools import LIMITS, Refused, SessionTools

__all__ = ["INSTRUCTIONS", "TOOL_NAMES", "build_server", "run_http", "run_stdio"]

TOOL_NAMES = ("list_sessions", "search", "get_session", "get_step", "diff_sessions", "stats")

INSTRUCTIONS = (
    "Read-only access to recorded agent sessions (wayline's ATIF/ATOF recordings and ATIF "
    "from other tools), through a search index. Start with list_sessions (filters: status, "
    "model, tool, time, cost, errors) or search (full text). get_session gives a session's "
    "totals, the numbers of its failed steps, and one line per step, a page at a time; "
    "get_step shows one step whole (arguments, results, the request sent), with long fields "
    "cut where it says how to read on. diff_sessions compares two sessions; stats totals "
    "tokens, cost and errors by model, day, tool or status. Every answer is bounded and ends "
    "with the call that gets the next page when there is more. Secrets are redacted."
)

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

Status = Literal["completed", "failed", "interrupted", "max_turns", "running"]
SessionId = Annotated[
    str,
    Field(description="A session id as list_sessions or search give it, or a prefix only it has."),
]
StatusFilter = Annotated[
    Status | None,
    Field(
        description="Only sessions that ended so: completed, failed (a model call failed), "
        "interrupted (cancelled), max_turns (stopped at the turn limit), running."
    ),
]
ModelFilter = Annotated[
    str | None, Field(description="Only sessions that used this model: exact, or a glob (gpt-4o*).")
]
ToolFilter = Annotated[
    str | None, Field(description="Only sessions that called this tool: exact, or a glob.")
]
Since = Annotated[
    str | None,
    Field(
        description="Only sessions started at or after: ISO 8601 (2026-11-28, "
        "2026-11-28T09:30; UTC unless it says) or a time ago (30m, 12h, 7d, 2w)."
    ),
]
Until = Annotated[str | None, Field(description="Only sessions started before (as since).")]
MinCost = Annotated[
    float | None, Field(ge=0, description="Only sessions that cost at least this many USD.")
]
Errors = Annotated[
    bool, Field(description="Only sessions with a failed model call or a failed tool call.")
]


def _answer(call: Callable[[], str]) -> str:
    """A tool's answer; a question it refuses is the tool's error (``is_error``), its message
    naming the parameter."""
    try:
        return call()
    except Refused as exc:
        raise ToolError(str(exc)) from None


def build_server(tools: SessionTools) -> MCPServer:
    """The MCP server whose six tools ask ``tools``."""
    from importlib.metadata import version

    server: MCPServer = MCPServer(
        "wayline",
        instructions=INSTRUCTIONS,
        version=version("wayline"),
        log_level="WARNING",
    )

    def list_sessions(
        status: StatusFilter = None,
        model: ModelFilter = None,
        tool: ToolFilter = None,
        since: Since = None,
        until: Until = None,
        min_cost: MinCost = None,
        errors: Errors = False,
        limit: Annotated[
            int, Field(ge=1, le=LIMITS["sessions"], description="Sessions per page.")
        ] = 20,
        offset: Annotated[int, Field(ge=0, description="Sessions to skip (paging).")] = 0,
    ) -> str:
        filters = {
            "status": status,
            "model": model,
            "tool": tool,
            "since": since,
            "until": until,
            "min_cost": min_cost,
            "errors": errors,
        }
        return _answer(lambda: tools.list_sessions(filters, limit, offset))

    def search(
        text: Annotated[
            str,
            Field(description="Text to find, any case, any script (3+ characters is fastest)."),
        ],
        limit: Annotated[
            int, Field(ge=1, le=LIMITS["search"], description="Matches per page.")
        ] = 20,
        offset: Annotated[int, Field(ge=0, description="Matches to skip (paging).")] = 0,
    ) -> str:
        return _answer(lambda: tools.search(text, limit, offset))

    def get_session(
        session_id: SessionId,
        offset: Annotated[int, Field(ge=0, description="Step lines to skip (paging).")] = 0,
        limit: Annotated[
            int, Field(ge=1, le=LIMITS["steps"], description="Step lines per page.")
        ] = 100,
        only: Annotated[
            Literal["all", "failed"],
            Field(description="failed: only the failed or cancelled steps."),
        ] = "all",
        cursor: Annotated[
            str | None,
            Field(
                description="The cursor a previous page gave: the next page (overrides "
                "offset, limit and only)."
            ),
        ] = None,
    ) -> str:
        return _answer(lambda: tools.get_session(session_id, offset, limit, only, cursor))

    def get_step(
        session_id: SessionId,
        step: Annotated[int, Field(description="The step's number, as get_session shows it.")],
        path: Annotated[
            str | None,
            Field(
                description="Show only this part of the step, e.g. tool_calls[0].arguments, "
                "observation.results[0].content (the cut notes name them)."
            ),
        ] = None,
        offset: Annotated[
            int,
            Field(
                ge=0,
                description="With path: the first character (a text) or item (a list) "
                "to show; a cut note gives it.",
            ),
        ] = 0,
        max_chars: Annotated[
            int,
            Field(ge=1, le=LIMITS["chars"], description="The most characters of one text shown."),
        ] = 4_000,
    ) -> str:
        return _answer(lambda: tools.get_step(session_id, step, path, offset, max_chars))

    def diff_sessions(
        old_session: Annotated[str, Field(description="The session compared from (its id).")],
        new_session: Annotated[str, Field(description="The session compared to (its id).")],
        offset: Annotated[int, Field(ge=0, description="Differences to skip (paging).")] = 0,
        limit: Annotated[
            int, Field(ge=1, le=LIMITS["diff"], description="Differences per page.")
        ] = 40,
        strict: Annotated[
            bool, Field(description="Also compare ids, timestamps, durations and usage.")
        ] = False,
    ) -> str:
        return _answer(lambda: tools.diff_sessions(old_session, new_session, offset, limit, strict))

    def stats(
        by: Annotated[
            Literal["model", "day", "tool", "status"],
            Field(
                description="Group by each session's main model, UTC start day, each tool "
                "it called, or status."
            ),
        ] = "model",
        status: StatusFilter = None,
        model: ModelFilter = None,
        tool: ToolFilter = None,
        since: Since = None,
        until: Until = None,
        min_cost: MinCost = None,
        errors: Errors = False,
    ) -> str:
        filters = {
            "status": status,
            "model": model,
            "tool": tool,
            "since": since,
            "until": until,
            "min_cost": min_cost,
            "errors": errors,
        }
        return _answer(lambda: tools.stats(by, filters))

    descriptions: dict[str, tuple[Callable[..., str], str]] = {
        "list_sessions": (
            list_sessions,
            "List recorded agent sessions, newest first, one JSON object per line: id, status, "
            "start, duration, agent, model, steps, tool calls, errors, tools (name → calls), "
            "tokens, cost. Filter by status, model, tool, time window, minimum cost, or "
            "errors=true for sessions with a failed model or tool call.",
        ),
        "search": (
            search,
            "Full-text search over every step of every session: user and agent messages, "
            "reasoning, tool arguments (field args:<tool>) and tool results (result:<tool>). "
            "One line per match: session | step | field | snippet. Then get_step(session_id, "
            "step) shows the step.",
        ),
        "get_session": (
            get_session,
            "A compact summary of one session: its totals, the numbers of ALL its failed or "
            "cancelled steps (in the header, so there is no need to read every page), then one "
            "line per step: number | kind (user/agent/system) | status | took | cost | tools "
            "(✗ failed) | the first characters of its text (or the tool calls' arguments). "
            "Paged (100 lines by default); each page ends with the call for the next. "
            "only='failed' lists just the failed steps.",
        ),
        "get_step": (
            get_step,
            "One step whole as JSON, redacted: message, reasoning, tool calls with their "
            "arguments, tool results, metrics, then extra (the request sent, ids). Long texts "
            "and lists are cut where the answer says how to read on: pass path (e.g. "
            "tool_calls[0].arguments or observation.results[0].content) and offset.",
        ),
        "diff_sessions": (
            diff_sessions,
            "Compare two sessions step by step (steps aligned by content, so one extra step is "
            "one difference): the first divergence with its old and new values, then one line "
            "per difference (where | kind | path | old → new), paged.",
        ),
        "stats": (
            stats,
            "Totals grouped by model, day, tool or status: sessions, steps, tokens, cost, "
            "errors, p50/p95 session duration (and calls, by tool), over the sessions the "
            "filters keep.",
        ),
    }
    for name in TOOL_NAMES:
        function, description = descriptions[name]
        server.add_tool(
            function,
            name=name,
            description=description,
            annotations=_READ_ONLY,
            structured_output=False,
        )
    return server


def run_stdio(server: MCPServer) -> None:
    """Serve on stdin and stdout until the client closes stdin."""
    anyio.run(server.run_stdio_async)


def run_http(server: MCPServer, port: int, on_ready: Callable[[str], Any]) -> None:
    """Serve streamable HTTP on 127.0.0.1:``port`` (0: a free one) until SIGINT or SIGTERM;
    ``on_ready`` gets the endpoint's URL once the socket listens."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    on_ready(url)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
