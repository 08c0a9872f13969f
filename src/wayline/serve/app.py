"""The ASGI app of ``wayline serve`` (Starlette), and running it on uvicorn.

Security defaults: the server binds 127.0.0.1; a host that is not a loopback address needs
``allow_remote`` (:func:`check_host`). While it listens on loopback only, a request whose
``Host`` header is not a loopback name is refused (a web page elsewhere cannot reach it through
DNS rebinding). It reads only files under the paths it was given (a confined
:class:`~wayline.store.Scope`, and :class:`~wayline.serve.files.Roots` for each file it opens),
sends no request anywhere, and its pages load nothing from the network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from wayline.serve import api, pages
from wayline.serve.files import Roots
from wayline.serve.hub import FRESH_SECONDS, POLL_SECONDS, Hub, StoreWorker
from wayline.store import SessionStore, index_path, scope_of

__all__ = ["ServeConfig", "ServeError", "bind", "check_host", "create_app", "is_loopback", "run"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
log = logging.getLogger("wayline.serve")


class ServeError(ValueError):
    """A setting the server cannot start with (``str()`` is the reason, naming the option)."""


@dataclass(frozen=True)
class ServeConfig:
    """What ``wayline serve`` serves: the recordings under ``paths`` (the home's when none),
    indexed at ``index`` (default: as ``wayline sessions``), on ``host``:``port``; answers
    from an index at most ``fresh_seconds`` old, updated every ``poll_seconds`` while a live
    page listens."""

    paths: Sequence[Path] = ()
    home: Path = field(default_factory=Path.cwd)
    index: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8787
    allow_remote: bool = False
    poll_seconds: float = POLL_SECONDS
    fresh_seconds: float = FRESH_SECONDS

    @property
    def index_file(self) -> Path:
        """Where the index lives."""
        return self.index or index_path(list(self.paths), self.home)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> None:
    """:class:`ServeError` when ``host`` is not loopback and ``allow_remote`` is not set."""
    if not is_loopback(host) and not allow_remote:
        raise ServeError(
            f"--host {host}: not a loopback address; anyone who can reach it could read every "
            "session: add --allow-remote to serve it anyway"
        )


class _Guard:
    """Refuses a non-loopback ``Host`` header (when serving loopback only) and adds the
    headers every answer carries."""

    def __init__(self, app: ASGIApp, *, loopback_only: bool) -> None:
        self.app = app
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.loopback_only:
            host = dict(scope.get("headers") or ()).get(b"host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if not is_loopback(name):
                response = PlainTextResponse(
                    f"error: Host {host!r} is not this machine (wayline serve listens on loopback)",
                    status_code=421,
                )
                await response(scope, receive, send)
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or ())
                names = {name.lower() for name, _ in headers}
                for name, value in (
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"cache-control", b"no-store"),
                ):
                    if name not in names:
                        headers.append((name, value))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _not_found(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": f"{request.url.path}: {detail}", "field": None}, status)
    return PlainTextResponse(f"error: {request.url.path}: {detail}", status_code=status)


def create_app(config: ServeConfig) -> ASGIApp:
    """The app serving ``config``'s sessions (its store opens on first use)."""
    # Confined: a file reached through a link leading out of the paths is in no answer (the
    # list, search, stats and charts, a session) and is not read.
    scope = replace(scope_of(list(config.paths), config.home), confined=True)
    index = config.index_file
    worker = StoreWorker(lambda: SessionStore(index, scope))
    hub = Hub(worker, poll_seconds=config.poll_seconds, fresh_seconds=config.fresh_seconds)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await hub.refresh()  # the first index is built before the port opens
        poll = asyncio.create_task(hub.run(), name="wayline-serve-poll")
        try:
            yield
        finally:
            poll.cancel()
            await asyncio.gather(poll, return_exceptions=True)
            await asyncio.to_thread(worker.close)

    routes = [
        Route("/", pages.list_page),
        Route("/sessions/{session_id}", pages.session_page),
        Route("/sessions/{session_id}/view", pages.view_page),
        Route("/diff", pages.diff_page),
        Route("/api/sessions", api.api_sessions),
        Route("/api/sessions/{session_id}", api.api_session),
        Route("/api/sessions/{session_id}/events", api.api_session_events),
        Route("/api/search", api.api_search),
        Route("/api/stats", api.api_stats),
        Route("/api/live", api.api_live),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _not_found},
    )
    app.state.hub = hub
    app.state.roots = Roots(scope)
    app.state.index = index
    return _Guard(app, loopback_only=not config.allow_remote and is_loopback(config.host))


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (``OSError`` when taken or not ours)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def run(config: ServeConfig, sock: socket.socket) -> None:
    """Serve ``config`` on the bound ``sock`` until interrupted (uvicorn, one process)."""
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config),
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=2,
            lifespan="on",
        )
    )
    server.run(sockets=[sock])
