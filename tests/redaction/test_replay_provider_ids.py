"""A session whose tool calls carry realistic provider ids keeps them in its ATIF and replays.

Before issue 29 most OpenAI ``call_…`` and Anthropic ``toolu_…`` ids were taken for random
tokens and redacted, which orphaned the ATIF's observations and made ``wayline replay``
diverge. The real CLI records a session against the scripted server, then replays it.
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

from wayline.testing.server import ScriptedServer

_RNG = random.Random(2029)
_B62 = string.ascii_letters + string.digits
OPENAI_ID = "call_" + "".join(_RNG.choice(_B62) for _ in range(24))
ANTHROPIC_ID = "toolu_01" + "".join(_RNG.choice(_B62) for _ in range(22))
SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": {},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "read_file", "id": OPENAI_ID, "arguments": {"path": "a.txt"}},
                        {"name": "terminal", "id": ANTHROPIC_ID, "arguments": {"command": "ls"}},
                    ]
                },
                {"content": "done."},
            ],
        }
    ]
}


def _cli(
    *args: str, home: Path, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wayline", *args],
        env={**os.environ, "WAYLINE_HOME": str(home), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_provider_ids_survive_in_the_atif_and_replay_exits_0(tmp_path: Path) -> None:
    """Both ids reach the ATIF's tool calls and observations unchanged; replay exits 0."""
    home, work, atif_dir = tmp_path / "home", tmp_path / "work", tmp_path / "atif"
    home.mkdir()
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    env = {
        "WAYLINE_RELAY_ATOF_ENABLED": "0",
        "WAYLINE_RELAY_ATIF_ENABLED": "1",
        "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(atif_dir),
        "WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "session-{session_id}.json",
    }
    with ScriptedServer(SCRIPT) as server:
        (home / "config.yaml").write_text(
            "model:\n  provider: custom\n  default: scripted-model\n"
            f"  base_url: {server.base_url}\n"
            "plugins:\n  enabled:\n    - observability/relay\n"
        )
        chat = _cli(
            "chat", "-q", "Do it", "-t", "terminal,file", "--yolo", "-Q",
            home=home, cwd=work, env=env,
        )  # fmt: skip
        assert chat.returncode == 0, chat.stderr
    (trajectory,) = atif_dir.glob("session-*.json")
    atif = json.loads(trajectory.read_text(encoding="utf-8"))
    calls = [c["tool_call_id"] for s in atif["steps"] for c in s.get("tool_calls") or []]
    assert calls == [OPENAI_ID, ANTHROPIC_ID]
    assert json.dumps(atif).count(OPENAI_ID) >= 2  # the call and its observation
    replay = _cli("replay", str(trajectory), "-o", str(tmp_path / "new.json"), home=home,
                  cwd=work, env={})  # fmt: skip
    assert replay.returncode == 0, replay.stdout + replay.stderr
