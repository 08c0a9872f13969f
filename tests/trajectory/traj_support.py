"""Recording a real session (parallel tools + delegation) with observability/relay's ATIF."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from wayline.testing.server import ScriptedServer

WAYLINE = [sys.executable, "-m", "wayline"]
DATA = Path(__file__).resolve().parents[1] / "relay" / "atif" / "data"
RELAY_PLUGIN_ATIF = DATA / "relay_plugin.atif.json"
RELAY_MANUAL_ATIF = DATA / "relay_manual.atif.json"

CHILD_GOAL = "Read both files alpha and beta"
SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": {"first_user_contains": CHILD_GOAL},
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "read_file",
                            "id": "call_alpha",
                            "arguments": {"path": "alpha.txt"},
                        },
                        {"name": "read_file", "id": "call_beta", "arguments": {"path": "beta.txt"}},
                    ]
                },
                {"content": "child read both"},
            ],
        },
        {
            "match": {},
            "turns": [
                {
                    "content": "delegating",
                    "tool_calls": [
                        {
                            "name": "delegate_task",
                            "id": "call_delegate",
                            "arguments": {"goal": CHILD_GOAL, "toolsets": ["file"]},
                        }
                    ],
                },
                {
                    "tool_calls": [
                        {
                            "name": "terminal",
                            "id": "call_t1",
                            "arguments": {"command": "printf one"},
                        },
                        {"name": "read_file", "id": "call_r1", "arguments": {"path": "alpha.txt"}},
                        {"name": "read_file", "id": "call_r2", "arguments": {"path": "beta.txt"}},
                    ]
                },
                {"content": "all done."},
            ],
        },
    ]
}

REWRITER = """
def _rewrite(**kw):
    args = dict(kw["args"])
    if kw.get("tool_name") == "read_file" and args.get("path") == "beta.txt":
        args["path"] = "alpha.txt"
        return {"args": args}
    return None

def register(ctx):
    ctx.register_middleware("tool_request", _rewrite)
"""


def write_rewriter(plugins_dir: Path) -> Path:
    """A plugin whose tool_request middleware turns read_file beta.txt into alpha.txt."""
    folder = plugins_dir / "rewriter"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.yaml").write_text("name: rewriter\nversion: 1\n")
    (folder / "__init__.py").write_text(REWRITER)
    return folder


def make_work(root: Path) -> Path:
    """The tools' working directory with the two files the session reads."""
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "alpha.txt").write_text("alpha_function\n")
    (work / "beta.txt").write_text("beta_function\n")
    return work


def record_session(root: Path) -> dict[str, Path]:
    """Run `wayline chat` against the scripted server with relay ATIF on; return the paths."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    work = make_work(root)
    atif_dir = root / "atif"
    with ScriptedServer(SCRIPT) as server:
        (home / "config.yaml").write_text(
            "model:\n  provider: custom\n  default: scripted-model\n"
            f"  base_url: {server.base_url}\n"
            "plugins:\n  enabled:\n    - observability/relay\n"
        )
        env = {
            **os.environ,
            "WAYLINE_HOME": str(home),
            "WAYLINE_RELAY_ATOF_ENABLED": "0",
            "WAYLINE_RELAY_ATIF_ENABLED": "1",
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(atif_dir),
            "WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "session-{session_id}.json",
        }
        proc = subprocess.run(
            [
                *WAYLINE,
                "chat",
                "-q",
                "Do the job",
                "-t",
                "delegation,terminal,file",
                "--yolo",
                "-Q",
            ],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    (trajectory,) = atif_dir.glob("session-*.json")
    return {"home": home, "work": work, "trajectory": trajectory}


def run_cli(*args: str | Path, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real `wayline` CLI with ``home`` as WAYLINE_HOME."""
    env = {**os.environ, "WAYLINE_HOME": str(home)}
    return subprocess.run(
        [*WAYLINE, *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def load(path: Path) -> Any:
    """Parse a JSON file."""
    return json.loads(path.read_text(encoding="utf-8"))
