"""Both observability plugins run in the agent's own process: a real `wayline chat` with
both enabled starts no child process (its tools start none here), and the observers run on
the one ``wayline-hooks`` thread."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from wayline.testing.server import ScriptedServer

# A plugin that, at every tool call's end, writes down this process's children and threads.
PROBE_INIT = """
import json, os, threading

def _children():
    pids = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as fh:
            pids += fh.read().split()
    return pids

def _probe(**kw):
    row = {"children": _children(), "threads": sorted(t.name for t in threading.enumerate())}
    with open(os.environ["PROBE_FILE"], "a") as fh:
        fh.write(json.dumps(row) + "\\n")

def register(ctx):
    ctx.register_hook("post_tool_call", _probe)
    ctx.register_hook("on_session_finalize", _probe)
"""

SCRIPT: dict[str, Any] = {
    "model": "scripted-model",
    "rules": [
        {
            "match": {"last_role": "user"},
            "respond": {
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": "a.txt"}},
                    {"name": "read_file", "arguments": {"path": "b.txt"}},
                ]
            },
        },
        {"match": {"last_role": "tool"}, "respond": {"content": "done"}},
    ],
}


def test_both_plugins_start_no_child_process(tmp_path: Path) -> None:
    """With relay and otel enabled the agent's process has no child while it works, and the
    hook thread exists; the session's files are written all the same."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("a.txt", "b.txt"):
        (work / name).write_text(f"{name} text\n")
    home = tmp_path / "home"
    probe = home / "plugins" / "probe"
    probe.mkdir(parents=True)
    (probe / "plugin.yaml").write_text("name: probe\nversion: 1\n")
    (probe / "__init__.py").write_text(PROBE_INIT)
    out = tmp_path / "out"
    with ScriptedServer(SCRIPT) as server:
        (home / "config.yaml").write_text(
            "model:\n  provider: custom\n  default: scripted-model\n"
            f"  base_url: {server.base_url}\n"
            'approvals:\n  mode: "off"\n'
            "plugins:\n  enabled: [observability/relay, observability/otel, probe]\n"
            "  entries:\n    observability/otel:\n      exporter: file\n"
            f"      file: {out / 'spans.jsonl'}\n"
        )
        env = {
            "PATH": "/usr/bin:/bin",
            "WAYLINE_HOME": str(home),
            "PROBE_FILE": str(tmp_path / "probe.jsonl"),
            "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        }
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "wayline",
                "chat",
                "-q",
                "read both",
                "-Q",
                "--workdir",
                str(work),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in (tmp_path / "probe.jsonl").read_text().splitlines()]
    assert len(rows) == 3  # two tool calls and the session's end
    assert all(row["children"] == [] for row in rows), rows
    assert all("wayline-hooks" in row["threads"] for row in rows)
    assert list((out / "atif").glob("*.json")) and (out / "spans.jsonl").read_text()
