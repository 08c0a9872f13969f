"""A scripted OpenAI-compatible model server on loopback, for tests, the demo and replay.

Stdlib only (``http.server``). It answers from a :mod:`wayline.testing.script`::

    with ScriptedServer({"default": {"content": "hi"}}) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x")
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        assert srv.requests[0].body["messages"][0]["content"] == "q"

Endpoints: ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions`` (JSON, or
SSE with ``stream: true``; a final usage chunk with ``stream_options.include_usage``) and
``GET /_wayline/requests`` (the request log as JSON). Anything else gets a JSON 404, and a
request the server cannot parse gets a JSON 400; no request can stop the server.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import select
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

from wayline.testing import _wire
from wayline.testing._script_parse import FaultSpec, ResponseSpec
from wayline.testing.script import RequestView, Script, ScriptSource, Selection, load_script

__all__ = ["LISTEN_BACKLOG", "RecordedRequest", "ScriptedServer"]

_logger = logging.getLogger(__name__)

_MAX_BODY = 32 * 1024 * 1024
#: The listen backlog: connections the kernel queues before the server accepts them.
LISTEN_BACKLOG = 1024
_MALFORMED = b'{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": ['


@dataclass(frozen=True)
class RecordedRequest:
    """One chat request the server received, and how it was answered."""

    index: int
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]
    time: float
    rule: str | None  # the answering rule's name; None when ``default`` answered
    turn: int
    conversation: str  # a digest of the system prompt and the first user message
    fault: str | None  # e.g. "status:500", "reset"; None when the normal answer went out
    stream: bool

    def to_json(self) -> dict[str, Any]:
        """Return this record as a JSON-ready dict (the shape of ``/_wayline/requests``)."""
        return asdict(self)


class ScriptedServer:
    """An OpenAI-compatible chat server answering from a script; a context manager.

    ``on_request`` is an observer called on the handler thread for each recorded chat request;
    it fails open (an exception is logged and ignored) and it should not block.
    """

    def __init__(
        self,
        script: ScriptSource,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        on_request: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        self.script: Script = load_script(script)
        self.host = host
        self._port = port
        self._on_request = on_request
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._log: list[RecordedRequest] = []
        self._counters: dict[tuple[int, int, str], int] = {}
        self._ids = itertools.count(1)
        self._conns: set[socket.socket] = set()
        self._gone: list[int] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        """Bind and serve on a daemon thread; return self. Port 0 picks a free port."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer((self.host, self._port), self)
        self._httpd = httpd
        self._port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-server-{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and wake sleeping handlers; idempotent."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # idle keep-alive handlers block in recv until their socket closes
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (the requested one before :meth:`start`)."""
        return self._port

    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:8123``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url``, e.g. ``http://127.0.0.1:8123/v1``."""
        return f"{self.url}/v1"

    # -- request log -------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every chat request received so far, in arrival order."""
        with self._lock:
            return list(self._log)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least ``n`` chat requests arrived; raise ``TimeoutError`` otherwise."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._log) >= n, timeout):
                raise TimeoutError(f"expected {n} chat requests, got {len(self._log)}")
            return list(self._log)

    def wait_for_disconnect(self, index: int, timeout: float = 5.0) -> None:
        """Block until the client of request ``index`` closed its connection while its answer
        was delayed (``delay``/``hang``); raise ``TimeoutError`` otherwise."""
        with self._changed:
            if not self._changed.wait_for(lambda: index in self._gone, timeout):
                raise TimeoutError(f"the client of request {index} did not disconnect")

    def clear(self) -> None:
        """Forget the request log and reset every fault counter."""
        with self._lock:
            self._log.clear()
            self._counters.clear()

    # -- used by the handler -----------------------------------------------------------------

    def _track(self, conn: socket.socket, open_: bool) -> None:
        with self._lock:
            if open_:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _answer(self, view: RequestView) -> tuple[Selection, FaultSpec | None, str]:
        """Choose the response, decide whether its fault applies, and allocate an id."""
        selection = self.script.select(view)
        fault = selection.response.fault
        key = selection.fault_key(view.conversation)
        with self._lock:
            cid = f"chatcmpl-scripted-{next(self._ids)}"
            if fault is not None and key is not None:
                seen = self._counters.get(key, 0)
                self._counters[key] = seen + 1
                if fault.times is not None and seen >= fault.times:
                    fault = None
        return selection, fault, cid

    def _record(self, entry_args: dict[str, Any]) -> RecordedRequest:
        with self._changed:
            entry = RecordedRequest(index=len(self._log), **entry_args)
            self._log.append(entry)
            self._changed.notify_all()
        if self._on_request is not None:
            try:
                self._on_request(entry)
            except Exception as exc:
                _logger.warning("scripted server: on_request observer failed (ignored): %r", exc)
        return entry

    def _sleep(self, seconds: float, conn: socket.socket | None = None, index: int = -1) -> bool:
        """Sleep unless the server stops or the client of ``conn`` goes away first; return
        True when the answer should not be sent (either happened)."""
        if seconds <= 0 or conn is None:
            return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._stopping.wait(min(left, 0.02)):
                return True
            if _closed_by_peer(conn):
                with self._changed:
                    self._gone.append(index)
                    self._changed.notify_all()
                return True
        return self._stopping.is_set()


@dataclass(frozen=True)
class _Reply:
    """The normal answer to one request, rendered on demand as JSON or as SSE events."""

    spec: ResponseSpec
    view: RequestView
    model: str
    cid: str
    chunk_chars: int
    include_usage: bool

    def completion(self) -> dict[str, Any]:
        return _wire.completion(self.spec, self.view, self.model, self.cid)

    def events(self) -> list[str]:
        chunks = _wire.stream_chunks(
            self.spec,
            self.view,
            self.model,
            self.cid,
            chunk_chars=self.chunk_chars,
            include_usage=self.include_usage,
        )
        return [json.dumps(c) for c in chunks] + ["[DONE]"]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    # socketserver's default backlog of 5 refuses (or drops the SYNs of) most of a burst of
    # simultaneous connects, such as many agents starting at once; the kernel caps this at
    # its own limit (net.core.somaxconn on Linux).
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], owner: ScriptedServer) -> None:
        self.owner = owner
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN, which can stall on a bad resolver.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        _logger.debug("scripted server: error while handling %s", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    _started = False

    def log_message(self, format: str, *args: Any) -> None:
        _logger.debug("scripted server: " + format, *args)

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without NODELAY, Nagle plus the
        # client's delayed ACK adds ~40 ms to every response on loopback.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        try:
            with contextlib.suppress(OSError):
                super().finish()
        finally:
            self.server.owner._track(self.connection, False)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Protocol-level errors (bad request line, oversized headers) get JSON too.
        self.close_connection = True
        with contextlib.suppress(OSError):
            self._send_json(code, _wire.error_body(code, message or self.responses[code][0]))

    # -- plumbing ----------------------------------------------------------------------------

    def _dispatch(self) -> None:
        self._started = False
        try:
            self._route()
        except OSError:  # the client went away; nothing left to answer
            self.close_connection = True
        except Exception as exc:
            # Logged without a traceback: a CLI user sees one line, a debug log the details.
            _logger.warning("scripted server: handler failed: %r", exc)
            _logger.debug("scripted server: handler failure", exc_info=True)
            self.close_connection = True
            if not self._started:
                with contextlib.suppress(OSError):
                    self._send_json(500, _wire.error_body(500, "scripted server internal error"))

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        ctype: str,
        headers: Iterable[tuple[str, str]] = (),
        *,
        cut: bool = False,
    ) -> None:
        """Send a complete response; ``cut`` announces all of ``data`` but sends only half."""
        self._started = True
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data[: len(data) // 2] if cut else data)

    def _send_json(self, status: int, obj: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        self._send_bytes(status, json.dumps(obj).encode(), "application/json", headers)

    def _read_body(self) -> bytes | None:
        """Read the request body (Content-Length already checked); None when there is none."""
        length = self.headers.get("Content-Length")
        if length is None:
            if self.headers.get("Transfer-Encoding"):
                self.close_connection = True  # an unread chunked body would poison keep-alive
            return None
        return self.rfile.read(int(length))

    def _route(self) -> None:
        path = urlsplit(self.path).path
        owner = self.server.owner
        length = self.headers.get("Content-Length", "0")
        if not length.isdigit() or int(length) > _MAX_BODY:
            self.close_connection = True
            self._send_json(400, _wire.error_body(400, "invalid or oversized Content-Length"))
            return
        raw = self._read_body()
        if path == "/v1/chat/completions":
            if self.command != "POST":
                self._send_json(405, _wire.error_body(405, "use POST"), [("Allow", "POST")])
            else:
                self._chat(raw)
        elif path == "/v1/models" and self.command == "GET":
            data = [self._model_object(m) for m in owner.script.models]
            self._send_json(200, {"object": "list", "data": data})
        elif path.startswith("/v1/models/") and self.command == "GET":
            model_id = unquote(path[len("/v1/models/") :])
            if model_id in owner.script.models:
                self._send_json(200, self._model_object(model_id))
            else:
                self._send_json(404, _wire.error_body(404, f"model {model_id!r} not found"))
        elif path == "/_wayline/requests" and self.command == "GET":
            self._send_json(200, {"requests": [r.to_json() for r in owner.requests]})
        else:
            message = f"no route for {self.command} {path}"
            self._send_json(404, _wire.error_body(404, message))

    @staticmethod
    def _model_object(model_id: str) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": _wire.CREATED, "owned_by": "wayline"}

    # -- chat --------------------------------------------------------------------------------

    def _chat(self, raw: bytes | None) -> None:
        owner = self.server.owner
        if raw is None:
            self.close_connection = True
            self._send_json(411, _wire.error_body(411, "Content-Length required"))
            return
        try:
            body = json.loads(raw)
            view = RequestView.from_body(body)
        except (ValueError, UnicodeDecodeError) as exc:
            self._send_json(400, _wire.error_body(400, f"bad request body: {exc}"))
            return
        selection, fault, cid = owner._answer(view)
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        model = view.model if view.model in owner.script.models else owner.script.model
        entry = owner._record(
            {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
                "time": time.time(),
                "rule": selection.rule,
                "turn": selection.turn,
                "conversation": view.conversation,
                "fault": fault.kind if fault is not None else None,
                "stream": stream,
            }
        )
        reply = _Reply(
            selection.response, view, model, cid, owner.script.chunk_chars, include_usage
        )
        delay = reply.spec.delay + (fault.hang if fault is not None else 0.0)
        if owner._sleep(delay, self.connection, entry.index):
            self.close_connection = True
            return
        if fault is not None and self._apply_fault(fault, reply, stream):
            return
        if stream:
            self._stream(reply.events())
        else:
            self._send_json(200, reply.completion())

    def _apply_fault(self, fault: FaultSpec, reply: _Reply, stream: bool) -> bool:
        """Send the faulty answer; return False when the fault was only a hang."""
        if fault.status is not None:
            headers = []
            if fault.retry_after is not None:
                headers.append(("Retry-After", f"{fault.retry_after:g}"))
            if isinstance(fault.body, str):
                self._send_bytes(fault.status, fault.body.encode(), "text/plain", headers)
            else:
                message = f"scripted fault: HTTP {fault.status}"
                body = fault.body or _wire.error_body(fault.status, message)
                self._send_json(fault.status, body, headers)
        elif fault.reset:
            # Linger 0 makes close() send a TCP reset instead of a clean FIN where possible.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
        elif fault.malformed:
            if stream:
                self._stream([_MALFORMED.decode(), "[DONE]"])
            else:
                self._send_bytes(200, _MALFORMED, "application/json")
        elif fault.empty_choices:
            empty = reply.completion()
            empty["choices"] = []
            if stream:
                empty["object"] = "chat.completion.chunk"
                self._stream([json.dumps(empty), "[DONE]"])
            else:
                self._send_json(200, empty)
        elif fault.cut_stream_after is not None:
            self.close_connection = True
            if stream:
                self._stream(reply.events()[: fault.cut_stream_after], complete=False)
            else:
                data = json.dumps(reply.completion()).encode()
                self._send_bytes(200, data, "application/json", cut=True)
        else:
            return False
        return True

    def _stream(self, events: list[str], complete: bool = True) -> None:
        """Send SSE ``data:`` events with chunked encoding; ``complete=False`` ends abruptly."""
        self._started = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            payload = f"data: {event}\n\n".encode()
            self.wfile.write(b"%X\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
        if complete:
            self.wfile.write(b"0\r\n\r\n")
        else:  # no terminating chunk: the client sees an incomplete chunked body
            self.close_connection = True


def _closed_by_peer(conn: socket.socket) -> bool:
    """True when the client closed (or reset) the connection: readable with nothing to read."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True
