"""A real ``wayline serve`` process on 127.0.0.1 and a small HTTP client for the tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

START_SECONDS = 60.0


def free_port() -> int:
    """A port nothing listens on now (the server binds it right after)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wayline_env(home: Path) -> dict[str, str]:
    """The environment of a ``wayline`` subprocess: this home, no model variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OPENAI_"))}
    env["WAYLINE_HOME"] = str(home)
    return env


@dataclass
class Reply:
    """One HTTP answer."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)

    @property
    def text(self) -> str:
        """The body as text."""
        return self.body.decode("utf-8")


class Served:
    """``wayline serve ARGS`` as a subprocess on a free port of 127.0.0.1."""

    def __init__(self, *args: str | Path, home: Path, cwd: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = cwd / f"serve-{self.port}.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "wayline",
                    "serve",
                    *map(str, args),
                    "--port",
                    str(self.port),
                ],
                env=wayline_env(home),
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if self.get("/api/live-check-unknown").status in (404, 200):
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"wayline serve did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        """``GET path`` (any status)."""
        request = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return Reply(answer.status, dict(answer.headers), answer.read())
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, dict(exc.headers), exc.read())

    def events(self, path: str, count: int, timeout: float = 30.0) -> Iterator[tuple[str, Any]]:
        """The first ``count`` Server-Sent Events of ``path`` as (name, data)."""
        with urllib.request.urlopen(self.base + path, timeout=timeout) as stream:
            name, seen = "message", 0
            for raw in stream:
                line = raw.decode("utf-8").rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    yield name, json.loads(line[6:])
                    seen += 1
                    if seen == count:
                        return

    def stop(self) -> None:
        """Stop the server (SIGINT, as Ctrl-C) and wait for it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
