"""Make the real Codex CLI rollouts in ``data/codex/real/`` (run by hand, not by pytest).

Installs the Codex CLI from npm (``@openai/codex``, Apache-2.0, the version pinned below) into a
scratch folder and runs ``codex exec`` against a loopback model server that answers the
Responses API from a fixed script, with token usage on every response. The parent agent runs a
shell command, spawns a subagent (Codex's ``multi_agent_v1.spawn_agent``), waits for it and
answers; the subagent answers in one response. Codex writes both rollouts itself (the parent's
and the spawned thread's, its ``source`` naming the parent); they are copied here unchanged.

    .venv/bin/python tests/importers/make_codex_rollouts.py [SCRATCH]

The script (what the model "says") is ours; every line of the rollouts is Codex's own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CODEX_VERSION = "0.169.0"
OUT = Path(__file__).parent / "data" / "codex" / "real"
PROMPT = "Check that the workspace is writable, then ask a helper agent for the word 'ready'."
CHILD_TASK = "Reply with the single word: ready"

# Usage per response, distinct so that a test can tell which response each count belongs to.
USAGE = {
    "parent-1": (2100, 0, 60, 24),
    "parent-2": (2300, 2048, 40, 8),
    "parent-3": (2450, 2048, 30, 0),
    "parent-4": (2600, 2304, 20, 0),
    "child-1": (1500, 0, 12, 4),
}


def _usage(key: str) -> dict[str, Any]:
    inp, cached, out, reasoning = USAGE[key]
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": inp + out,
    }


def _answer(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The scripted response (its usage key and output items) for one request."""
    items = body.get("input") or []
    outputs = [item for item in items if item.get("type") == "function_call_output"]
    last = outputs[-1] if outputs else {}  # later user messages (notifications) don't count
    asked = [
        part.get("text")
        for item in items
        if item.get("type") == "message" and item.get("role") == "user"
        for part in item.get("content") or []
    ]
    if CHILD_TASK in asked:  # the spawned agent's thread: its task is its user message
        return "child-1", [_message("child-msg-1", "ready")]
    if not outputs:
        return "parent-1", [
            {
                "type": "reasoning",
                "id": "rs-parent-1",
                "summary": [{"type": "summary_text", "text": "**Checking the workspace first**"}],
            },
            _message("msg-parent-1", "I'll check the workspace, then ask a helper."),
            _call(
                "call-exec-1", "exec_command", {"cmd": "echo writable > probe.txt && cat probe.txt"}
            ),
        ]
    if last.get("call_id") == "call-exec-1":
        return "parent-2", [
            _call("call-spawn-1", "spawn_agent", {"message": CHILD_TASK}, "multi_agent_v1"),
        ]
    if last.get("call_id") == "call-spawn-1":
        output = last.get("output")
        text = output if isinstance(output, str) else json.dumps(output)
        try:
            agent = json.loads(text).get("agent_id") or json.loads(text).get("id")
        except (ValueError, AttributeError):
            agent = text
        return "parent-3", [
            _call("call-wait-1", "wait_agent", {"targets": [agent]}, "multi_agent_v1"),
        ]
    return "parent-4", [
        _message("msg-parent-2", "The workspace is writable and the helper said: ready.")
    ]


def _message(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "content": [{"type": "output_text", "text": text}],
    }


def _call(
    call_id: str, name: str, arguments: dict[str, Any], namespace: str = ""
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "id": f"fc-{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }
    if namespace:
        item["namespace"] = namespace
    return item


class _Handler(BaseHTTPRequestHandler):
    log: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
        self.log.append(body)
        if not self.path.endswith("/responses"):
            self.send_response(404)
            self.end_headers()
            return
        key, output = _answer(body)
        response_id = f"resp-{key}"
        events = [{"type": "response.created", "response": {"id": response_id}}]
        events += [{"type": "response.output_item.done", "item": item} for item in output]
        events.append(
            {
                "type": "response.completed",
                "response": {"id": response_id, "usage": _usage(key)},
            }
        )
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main(scratch: Path) -> None:
    """Install Codex, run the scripted session, copy the rollouts it wrote into ``OUT``."""
    codex = scratch / "node_modules" / ".bin" / "codex"
    if not codex.exists():
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(scratch),
                f"@openai/codex@{CODEX_VERSION}",
            ],
            check=True,
        )
    home = scratch / "codex-home"
    work = scratch / "work"
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    home.mkdir()
    work.mkdir()
    _Handler.log = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    provider = {
        "model_provider": "mock",
        "model_providers.mock.name": '"mock"',
        "model_providers.mock.base_url": f'"http://127.0.0.1:{port}/v1"',
        "model_providers.mock.wire_api": '"responses"',
        "model_providers.mock.request_max_retries": "0",
        "model_providers.mock.stream_max_retries": "0",
    }
    args = [str(codex), "exec", "--skip-git-repo-check", "-C", str(work), "-m", "gpt-5-codex"]
    args += ["--dangerously-bypass-approvals-and-sandbox"]
    for key, value in provider.items():
        args += ["-c", f"{key}={value}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    env["CODEX_HOME"] = str(home)
    try:
        proc = subprocess.run(
            [*args, PROMPT], env=env, capture_output=True, text=True, timeout=300, check=False
        )
    finally:
        server.shutdown()
        (scratch / "requests.json").write_text(json.dumps(_Handler.log, indent=1))
    print(proc.stdout)
    print(proc.stderr, file=sys.stderr)
    rollouts = sorted((home / "sessions").rglob("rollout-*.jsonl"))
    if proc.returncode != 0 or len(rollouts) != 2:
        raise SystemExit(f"codex exited {proc.returncode} and wrote {len(rollouts)} rollouts")
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for rollout in rollouts:
        shutil.copyfile(rollout, OUT / rollout.name)
        print(OUT / rollout.name)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="codex-")))
