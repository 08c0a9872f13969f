"""``wayline mcp --http PORT``: streamable HTTP on 127.0.0.1, asked by the SDK's own client."""

from __future__ import annotations

import select
import signal
import subprocess
from collections.abc import Iterator

import anyio
import pytest
from mcp_support import BIG_ID, TOKEN, Recorded, mcp_command, wayline_env


@pytest.fixture
def http_server(recorded: Recorded) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``wayline mcp FOLDER --http 0`` running; its URL from its first line."""
    proc = subprocess.Popen(
        mcp_command(recorded.folder, "--http", "0"),
        env=wayline_env(recorded.home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        assert line.startswith("wayline mcp: streamable HTTP on http://127.0.0.1:"), line
        yield line.split(" on ", 1)[1].strip(), proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_streamable_http_serves_the_tools(http_server: tuple[str, subprocess.Popen[str]]) -> None:
    """Over streamable HTTP on 127.0.0.1 the SDK client lists the six tools, searches and
    pages a session; SIGTERM then ends the server with status 0."""
    from mcp.types import TextContent

    from mcp import Client

    url, proc = http_server
    assert url.endswith("/mcp")

    async def main() -> tuple[list[str], str, str]:
        async with Client(url) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            found = await client.call_tool("search", {"text": TOKEN})
            page = await client.call_tool("get_session", {"session_id": BIG_ID, "limit": 5})
            texts = [c.text for r in (found, page) for c in r.content if isinstance(c, TextContent)]
            return names, texts[0], texts[1]

    names, found, page = anyio.run(main)
    assert sorted(names) == sorted(
        ["list_sessions", "search", "get_session", "get_step", "diff_sessions", "stats"]
    )
    assert f"«{TOKEN}»" in found
    assert "steps 1–5 of 10,000" in page and "Next page" in page
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
