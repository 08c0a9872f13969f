"""A plugin's ``BaseException`` stops the run, cleanly: end hooks fire, files are closed.

``KeyboardInterrupt``, ``SystemExit`` and a plugin's own ``BaseException`` subclass are raised
by the ``stopper`` plugin at one hook or middleware point: on the agent's thread, on a tool
worker thread, inside a delegated child. The exception reaches the caller (observers and
middleware never swallow it), ``on_session_end`` fires for the turn, ``finalize`` closes the
session, and the relay and otel outputs are complete and balanced. Through the CLI the
process exits non-zero with one line and no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rel_support import (
    HERE,
    Outputs,
    Probe,
    install_plugin,
    outputs_problems,
    pairing_problems,
    record,
    store_messages,
    write_config,
)

from wayline.runtime import build_runtime

STOPPER = HERE / "stopper_plugin"
SCRIPT = {
    "model": "scripted-model",
    "rules": [
        {
            "match": {"first_user_contains": "CHILD"},
            "turns": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                {"content": "child done"},
            ],
        },
        {
            "match": {},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "read_file", "arguments": {"path": "a.txt"}},
                        {"name": "read_file", "arguments": {"path": "b.txt"}},
                    ]
                },
                {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "CHILD go"}}]},
                {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo hi"}}]},
                {"content": "all done"},
            ],
        },
    ],
}
EXPECTED = {"keyboard": KeyboardInterrupt, "exit": SystemExit, "abort": BaseException}
# (point, raised inside a delegated child)
POINTS = [
    ("on_session_start", False),
    ("pre_llm_call", False),
    ("pre_api_request", False),
    ("post_api_request", True),
    ("pre_tool_call", False),
    ("post_tool_call", False),
    ("transform_tool_result", True),
    ("tool_request", False),
    ("tool_execution", False),
    ("llm_execution", True),
    ("subagent_start", False),
]
RESULTS: list[str] = []


def _home(tmp_path: Path, server: Any, point: str, kind: str, child: bool) -> tuple[Path, Outputs]:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    (work / "b.txt").write_text("beta\n")
    install_plugin(home, STOPPER, "stopper")
    out = Outputs(tmp_path / "out")
    write_config(
        home,
        server.base_url,
        out,
        plugins=("observability/relay", "observability/otel", "stopper"),
        entries={"stopper": {"point": point, "kind": kind, "child": child}},
        approvals={"mode": "deny"},
    )
    return home, out


@pytest.mark.parametrize("kind", sorted(EXPECTED))
@pytest.mark.parametrize(("point", "child"), POINTS)
def test_base_exception_stops_the_run_cleanly(
    point: str,
    child: bool,
    kind: str,
    tmp_path: Path,
    scripted_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The BaseException propagates; the turn ends, the session closes, outputs balance."""
    server = scripted_server(SCRIPT)
    home, out = _home(tmp_path, server, point, kind, child)
    for key, value in out.env().items():
        monkeypatch.setenv(key, value)
    runtime = build_runtime(home)
    assert runtime.manager.plugins["stopper"].loaded
    probe = Probe()
    probe.attach(runtime.manager.hooks)
    agent = runtime.agent(cwd=tmp_path / "work")
    problems: list[str] = []
    try:
        with pytest.raises(EXPECTED[kind]) as caught:
            agent.run_turn("go")
    finally:
        agent.finalize()
    if kind == "abort" and type(caught.value).__name__ != "PluginAbort":
        problems.append(f"raised {type(caught.value).__name__}, not the plugin's own")
    ends = [kw for kw in probe.of("on_session_end") if kw["session_id"] == agent.session_id]
    if point != "on_session_start" and (len(ends) != 1 or ends[0].get("interrupted") is not True):
        problems.append(f"on_session_end: {ends}")
    finals = probe.of("on_session_finalize")
    if not any(kw["session_id"] == agent.session_id for kw in finals):
        problems.append("the session was not finalized")
    if runtime.store._files:
        problems.append(f"transcripts left open: {list(runtime.store._files)}")
    for sid in probe.family(agent.session_id):
        problems += pairing_problems(store_messages(home, sid), f"store {sid}")
    problems += outputs_problems(out, runtime)
    RESULTS.append(f"{point}/{kind}/{'child' if child else 'parent'}: {len(problems)}")
    record(
        f"base_exception_{point}_{kind}",
        f"BaseException {kind} at {point}{' (child)' if child else ''}: deviations",
        len(problems),
    )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_cli_run_stopped_by_a_plugin_exits_cleanly(
    kind: str, tmp_path: Path, scripted_server: Any
) -> None:
    """Through ``wayline chat``: non-zero exit, one line naming it, no traceback, files complete."""
    server = scripted_server(SCRIPT)
    home, out = _home(tmp_path, server, "post_tool_call", kind, False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WAYLINE_")}
    env.update({"WAYLINE_HOME": str(home), **out.env()})
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "chat", "-q", "go", "-Q"],
        env=env,
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = {"keyboard": "interrupted", "exit": "requested exit", "abort": "stopped: PluginAbort"}
    assert proc.returncode == {"keyboard": 130, "exit": 3, "abort": 1}[kind], proc.stderr
    assert said[kind] in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    problems = outputs_problems(out)
    atif = sorted(out.atif.glob("*.json"))
    assert len(atif) == 1, atif
    assert not problems, problems
