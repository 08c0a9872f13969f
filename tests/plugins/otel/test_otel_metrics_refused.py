"""A backend that takes spans but refuses metrics (Phoenix answers 405) is told once, at INFO."""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.testing import ScriptedServer


class SpansOnly:
    """A loopback OTLP/HTTP receiver: 200 for /v1/traces, 405 for everything else."""

    def __init__(self) -> None:
        self.paths: list[tuple[str, int]] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                code = 200 if self.path == "/v1/traces" else 405
                sink.paths.append((self.path, code))
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def test_refused_metrics_are_one_info_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Two turns, each flushed, whose metrics a backend refuses with 405 twice: spans are
    sent, and the refusal is one INFO record of the plugin, with no record of the SDK's metric
    exporter. The flushes are waited for (they return when done), not timed."""
    backend = SpansOnly()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", backend.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    for var in ("WAYLINE_API_KEY", "OPENAI_API_KEY", "WAYLINE_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    caplog.set_level(logging.INFO)
    try:
        with (
            ScriptedServer({"default": {"content": "ok"}}) as srv,
            wayline.Agent(
                model="m",
                base_url=srv.base_url,
                plugins=["observability/otel"],
                home=tmp_path / "home",
            ) as agent,
        ):
            for turn in ("hi", "again"):
                agent.run(turn)
                assert agent.plugin("observability/otel").force_flush(timeout_ms=60_000)
    finally:
        backend.close()
    assert ("/v1/traces", 200) in backend.paths
    assert backend.paths.count(("/v1/metrics", 405)) >= 2
    told = [r for r in caplog.records if "does not accept metrics" in r.getMessage()]
    assert [(r.name, r.levelno) for r in told] == [("wayline.plugins.otel", logging.INFO)]
    metric_errors = [r for r in caplog.records if "metric_exporter" in r.name]
    assert metric_errors == []
