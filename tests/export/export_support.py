"""A session recorded live by both observability plugins, and span views to compare exports.

The session delegates once and runs tools in parallel, on the scripted server, with the relay
plugin writing ATOF and ATIF and the otel plugin writing its spans as JSON lines: the live
plugin's output is the reference every export is compared with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from wayline.testing.server import ScriptedServer

WAYLINE_CHAT = [sys.executable, "-m", "wayline", "chat", "-q", "Do the job"]
GOAL = "Read both files alpha and beta"
SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": {"first_user_contains": GOAL},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "read_file", "id": "call_ca", "arguments": {"path": "alpha.txt"}},
                        {"name": "read_file", "id": "call_cb", "arguments": {"path": "beta.txt"}},
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
                            "arguments": {"goal": GOAL, "toolsets": ["file"]},
                        }
                    ],
                    "usage": {
                        "prompt_tokens": 4000,
                        "cached_tokens": 3000,
                        "completion_tokens": 50,
                    },
                },
                {
                    "tool_calls": [
                        {
                            "name": "terminal",
                            "id": "call_t1",
                            "arguments": {"command": "printf one"},
                        },
                        {"name": "read_file", "id": "call_r1", "arguments": {"path": "alpha.txt"}},
                    ]
                },
                {"content": "all done."},
            ],
        },
    ]
}


def record(root: Path, live_env: dict[str, str] | None = None) -> dict[str, Path]:
    """Run `wayline chat` with both plugins on; the ATOF, ATIF and live span files.

    ``live_env``: the otel plugin's settings instead of the span file (say, OTLP to a backend).
    """
    home, work = root / "home", root / "work"
    home.mkdir(parents=True)
    work.mkdir()
    (work / "alpha.txt").write_text("alpha_function\n")
    (work / "beta.txt").write_text("beta_function\n")
    with ScriptedServer(SCRIPT) as server:
        (home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  default: gpt-4o\n  base_url: {server.base_url}\n"
            "plugins:\n  enabled:\n    - observability/relay\n    - observability/otel\n"
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WAYLINE_"))},
            "WAYLINE_HOME": str(home),
            "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(root / "atof"),
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(root / "atif"),
            **(
                live_env
                or {"WAYLINE_OTEL_EXPORTER": "file", "WAYLINE_OTEL_FILE": str(root / "live.jsonl")}
            ),
        }
        proc = subprocess.run(
            [*WAYLINE_CHAT, "-t", "delegation,terminal,file", "--yolo", "-Q"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    (atof,) = (root / "atof").glob("*.jsonl")
    atifs = sorted((root / "atif").glob("*.json"))
    return {"home": home, "atof": atof, "atif": atifs[0], "live": root / "live.jsonl"}


def json_spans(lines: Iterable[str]) -> list[dict[str, Any]]:
    """Spans as the SDK's JSON (one per line)."""
    return [json.loads(line) for line in lines if line.strip()]


# What the ATOF record does not hold, so an export from it cannot carry: the provider's
# host and port (base_url), the runtime's token estimate, and a failed tool's exception
# class and message (the record keeps the result text and the status).
NOT_RECORDED = frozenset(
    {"server.address", "server.port", "llm.request.approx_input_tokens", "error.message"}
)


def _time_like(key: str) -> bool:
    return key.endswith("duration_ms")


def _value(value: Any) -> Any:
    """JSON text parsed (key order is the writer's, not the data's)."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _key(span: Mapping[str, Any]) -> str:
    attrs = span.get("attributes") or {}
    for name in (
        "gen_ai.tool.call.id",
        "hermes.api_request_id",
        "hermes.subagent.child_session_id",
    ):
        if attrs.get(name):
            return f"{span['name']}[{attrs[name]}]"
    return f"{span['name']}[{attrs.get('session.id', '')}]"


def tree(spans: list[dict[str, Any]], *, drop: frozenset[str] = NOT_RECORDED) -> dict[str, Any]:
    """Each span by its path of keys from the root: kind, status and normalized attributes.

    Ids and times are left out (a span is named by its path); time-like attributes go too.
    """
    by_id = {s["context"]["span_id"]: s for s in spans}
    out: dict[str, Any] = {}
    for span in spans:
        path = [_key(span)]
        parent = span.get("parent_id")
        while parent and parent in by_id:
            path.append(_key(by_id[parent]))
            parent = by_id[parent].get("parent_id")
        attrs = {
            k: _value(v)
            for k, v in (span.get("attributes") or {}).items()
            if k not in drop and not _time_like(k)
        }
        if span["name"].startswith("tool.") and attrs.get("error.type"):
            attrs.pop("error.type")  # the record has the status, not the exception class
        out[" / ".join(reversed(path))] = {
            "kind": span["kind"],
            "status": span["status"]["status_code"],
            "attributes": attrs,
        }
    return out


class OtlpSink:
    """A loopback OTLP/HTTP receiver that keeps every request (path, headers, body)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                sink.requests.append((self.path, dict(self.headers), self.rfile.read(size)))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def spans(self) -> list[Any]:
        """Every span the sink received (OTLP protobuf decoded)."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        found: list[Any] = []
        for path, _, body in self.requests:
            if path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                for rs in request.resource_spans:
                    for ss in rs.scope_spans:
                        found.extend(ss.spans)
        return found

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
