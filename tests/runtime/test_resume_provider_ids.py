"""Identifiers are structure: a session recorded with Bedrock, OpenAI, Anthropic, Gemini and
Mistral tool-call ids is resumed by ``wayline chat --resume`` with every id sent back as the
model gave it, in the tool calls, the tool results and the text that mentions them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from chat_cli_support import make_home  # type: ignore[import-not-found]

from wayline.testing.fixtures import ScriptedServerFactory

WAYLINE = [sys.executable, "-m", "wayline"]

IDS = {
    "bedrock": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
    "openai": "call_Xa3kQ9vLm2RtY7pWz4NbC8dE",
    "anthropic": "toolu_01A9bXk3mQ7vRt2LpY8wZn4c",
    "gemini": "function-call-14829375610293847561",
    "mistral": "D681PevKs",
}


def _script() -> dict[str, Any]:
    calls = [
        {"id": ident, "name": "read_file", "arguments": {"path": "notes.txt"}}
        for ident in IDS.values()
    ]
    mentioned = ", ".join(IDS.values())
    return {
        "rules": [
            {
                "match": {"first_user_contains": "read the notes"},
                "turns": [
                    {"tool_calls": calls},
                    {"content": f"read them with {mentioned}"},
                    {"content": "resumed"},
                ],
            }
        ]
    }


def _chat(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WAYLINE, "chat", *args],  # not -Q: the session id is on stderr
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=cwd,
    )


def test_resume_sends_every_provider_id_back_unchanged(
    scripted_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """Record, then resume through the CLI: the resumed request carries the five ids in the
    assistant's tool calls, in the tool results and in the answer's text, unchanged."""
    srv = scripted_server(_script())
    home, env = make_home(tmp_path, srv.base_url)
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    first = _chat(env, tmp_path, "-q", "read the notes")
    assert first.returncode == 0, first.stderr
    session = first.stderr.split("session_id: ")[1].split()[0]
    stored = (home / "sessions" / f"{session}.jsonl").read_text(encoding="utf-8")
    for ident in IDS.values():
        assert json.dumps(ident) in stored, ident
    second = _chat(env, tmp_path, "-q", "again", "--resume", session)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "resumed\n"
    sent = srv.requests[-1].body["messages"]
    calls = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert calls == list(IDS.values())
    assert results == list(IDS.values())
    answer = next(m["content"] for m in sent if m["role"] == "assistant" and m.get("content"))
    assert answer == f"read them with {', '.join(IDS.values())}"
