"""The scripted server's listen backlog holds a burst of simultaneous connections.

The server runs as ``wayline serve-model`` and is stopped (SIGSTOP) while the clients
connect, so nothing is accepted meanwhile: every connection that completes its handshake
does so because the kernel's accept queue (the backlog) had room for it. A backlog of 5
would leave all but a handful unconnected for as long as the server is stopped.
"""

from __future__ import annotations

import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wayline.testing.server import LISTEN_BACKLOG

WAYLINE = str(Path(sys.executable).with_name("wayline"))
CLIENTS = 200


def _somaxconn() -> int:
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return 0


pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        sys.platform != "linux" or _somaxconn() < CLIENTS,
        reason="needs Linux with net.core.somaxconn >= 200 (the kernel caps the backlog)",
    ),
]


def _serve(tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    script = tmp_path / "script.yaml"
    script.write_text('default: {content: "ok"}\n')
    proc = subprocess.Popen(
        [WAYLINE, "serve-model", "--script", str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    if not ready:
        proc.kill()
        pytest.fail("serve-model printed nothing")
    url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
    return proc, int(url.split(":")[2].split("/")[0])


def _connected_while_stopped(socks: list[socket.socket], deadline: float) -> int:
    """Wait (up to the deadline) until every handshake completed; return how many did."""
    poller = select.poll()
    by_fd = {s.fileno(): s for s in socks}
    for fd in by_fd:
        poller.register(fd, select.POLLOUT)
    done: set[int] = set()
    while len(done) < len(socks) and time.monotonic() < deadline:
        for fd, _event in poller.poll(100):
            if by_fd[fd].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                done.add(fd)
            poller.unregister(fd)
    return len(done)


def _served(sock: socket.socket) -> bytes:
    sock.setblocking(True)
    sock.settimeout(30)
    sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_two_hundred_simultaneous_connects_are_all_queued_and_served(tmp_path: Path) -> None:
    """200 connections opened at once while the server accepts nothing all complete their
    handshake (the backlog queues them, none is dropped), and each then gets its answer."""
    assert LISTEN_BACKLOG >= CLIENTS
    proc, port = _serve(tmp_path)
    socks: list[socket.socket] = []
    try:
        proc.send_signal(signal.SIGSTOP)
        for _ in range(CLIENTS):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            socks.append(sock)
        connected = _connected_while_stopped(socks, time.monotonic() + 20)
        proc.send_signal(signal.SIGCONT)
        assert connected == CLIENTS
        replies = [_served(sock) for sock in socks]
        assert all(r.startswith(b"HTTP/1.1 200") and b'"object": "list"' in r for r in replies)
    finally:
        proc.send_signal(signal.SIGCONT)
        for sock in socks:
            sock.close()
        proc.terminate()
        proc.wait(timeout=10)
