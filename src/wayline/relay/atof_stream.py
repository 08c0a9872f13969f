"""ATOF stream sink: every event POSTed as NDJSON to an HTTP(S) endpoint, off the caller's thread.

``AtofExporterConfig(sink_type="stream", url=..., transport=...)`` (Relay 0.10.4's fields):
``transport="http_post"`` sends one POST per event (``Content-Type: application/x-ndjson``,
any 2xx is success), as Relay does; ``"ndjson"`` sends the events queued at that moment in
one POST, one line each (fewer requests for a busy agent). ``"websocket"`` is not supported
here and is refused when the exporter is built. ``headers`` are sent as given;
``header_env`` maps a header to an environment variable that must be set and non-blank; a
header may not be in both. ``field_name_policy="replace_dots"`` rewrites every key's dots to
underscores, recursively (a key that then collides gets ``_2``, ``_3``…).

The subscriber callback only queues the line (an OBSERVER: it never blocks on the network
and never raises). One daemon thread per exporter sends; when the queue holds
``MAX_QUEUE`` lines the newest is dropped and counted; a failed POST is counted and the
first failure logged. ``force_flush(timeout_s)`` waits (bounded) until what was queued is
sent or has failed; ``shutdown`` flushes (bounded) and stops the thread.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import threading
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from wayline.contract.credentials import shown_url
from wayline.relay.atof import AtofExporter, AtofExporterConfig
from wayline.relay.events import Event

__all__ = ["MAX_QUEUE", "AtofStreamExporter", "replace_dots"]

_log = logging.getLogger("wayline.relay.atof")

MAX_QUEUE = 10_000
TRANSPORTS = ("http_post", "ndjson")
POLICIES = ("preserve", "replace_dots")


def replace_dots(value: Any) -> Any:
    """``value`` with dots in every mapping key turned into underscores (collisions: ``_2``…)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            new = str(key).replace(".", "_")
            candidate, n = new, 2
            while candidate in out:
                candidate, n = f"{new}_{n}", n + 1
            out[candidate] = replace_dots(item)
        return out
    if isinstance(value, list):
        return [replace_dots(item) for item in value]
    return value


def check_headers(given: dict[str, str], header_env: dict[str, str]) -> dict[str, str]:
    """The request headers of a stream sink (``ValueError`` naming a bad ``header_env``)."""
    headers = {"Content-Type": "application/x-ndjson", **given}
    for header, variable in header_env.items():
        if header in given:
            raise ValueError(f"ATOF stream sink: header {header!r} is in headers and header_env")
        value = os.environ.get(variable, "")
        if not value.strip():
            raise ValueError(
                f"ATOF stream sink: header_env {header!r}: environment variable {variable!r} "
                "is not set or blank"
            )
        headers[header] = value
    return headers


class AtofStreamExporter(AtofExporter):
    """An ATOF sink that POSTs events to ``config.url`` (see the module docstring)."""

    def __init__(self, config: AtofExporterConfig, *, buffered: bool = False) -> None:
        del buffered  # lines are always queued: the network is never on the caller's thread
        url = urlsplit(config.url or "")
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(
                "ATOF stream sink: url must be http(s)://host/..., got "
                f"{shown_url(config.url or '')!r}"
            )
        if config.transport not in TRANSPORTS:
            raise ValueError(
                f"ATOF stream sink: transport must be one of {', '.join(TRANSPORTS)}, "
                f"got {config.transport!r}"
            )
        if config.field_name_policy not in POLICIES:
            raise ValueError(
                f"ATOF stream sink: field_name_policy must be one of {', '.join(POLICIES)}, "
                f"got {config.field_name_policy!r}"
            )
        if not (isinstance(config.timeout_millis, int) and config.timeout_millis > 0):
            raise ValueError("ATOF stream sink: timeout_millis must be a positive integer")
        self._url = config.url
        self._target = url.path or "/"
        if url.query:
            self._target += "?" + url.query
        self._https = url.scheme == "https"
        self._host, self._port = url.hostname, url.port
        self._timeout = config.timeout_millis / 1000.0
        self._headers = check_headers(config.headers, config.header_env)
        self._per_event = config.transport == "http_post"
        self._replace_dots = config.field_name_policy == "replace_dots"
        self._names: set[str] = set()
        self._queue: deque[bytes] = deque()
        self._cond = threading.Condition()
        self._queued = self._settled = 0
        self._closed = False
        self.sent = self.failed = self.dropped = 0
        self._conn: http.client.HTTPConnection | None = None
        self._thread = threading.Thread(target=self._run, name="wayline-atof-stream", daemon=True)
        self._thread.start()

    @property
    def path(self) -> str:
        """The endpoint URL."""
        return self._url

    @property
    def closed(self) -> bool:
        """True once :meth:`shutdown` ran."""
        return self._closed

    def export(self, event: Event) -> None:
        """Queue ``event``'s ATOF line for sending (dropped and counted when the queue is full)."""
        line = event.atof_line()
        if self._replace_dots:
            text = json.dumps(replace_dots(json.loads(line)), separators=(",", ":"))
            line = text.encode() + b"\n"
        with self._cond:
            if self._closed or len(self._queue) >= MAX_QUEUE:
                self.dropped += 1
                return
            self._queue.append(line)
            self._queued += 1
            self._cond.notify_all()

    def force_flush(self, timeout_s: float = 5.0) -> bool:  # type: ignore[override]
        """Wait (bounded) until every line queued so far was sent or failed; True if so."""
        with self._cond:
            target = self._queued
            return self._cond.wait_for(lambda: self._settled >= target, max(timeout_s, 0.0))

    def shutdown(self) -> None:
        """Unsubscribe, send what is queued (bounded by the timeout) and stop the thread."""
        for name in list(self._names):
            self.deregister(name)
        self.force_flush(self._timeout * 2)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(self._timeout * 2)

    def stats(self) -> dict[str, int]:
        """``sent``, ``failed``, ``dropped`` lines and ``queued`` now."""
        with self._cond:
            return {
                "sent": self.sent,
                "failed": self.failed,
                "dropped": self.dropped,
                "queued": len(self._queue),
            }

    # -- the sending thread ---------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    break
                count = 1 if self._per_event else len(self._queue)
                batch = [self._queue.popleft() for _ in range(count)]
            ok = self._post(b"".join(batch))
            with self._cond:
                self._settled += len(batch)
                if ok:
                    self.sent += len(batch)
                else:
                    self.failed += len(batch)
                self._cond.notify_all()
        if self._conn is not None:
            self._conn.close()

    def _post(self, body: bytes) -> bool:
        for attempt in (1, 2):  # a kept-alive connection the server closed: reconnect once
            try:
                if self._conn is None:
                    cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
                    self._conn = cls(self._host or "", self._port, timeout=self._timeout)
                self._conn.request("POST", self._target, body=body, headers=self._headers)
                response = self._conn.getresponse()
                response.read()
                if 200 <= response.status < 300:
                    return True
                self._fail(f"HTTP {response.status} {response.reason}")
                return False
            except (OSError, http.client.HTTPException) as exc:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                if attempt == 2:
                    self._fail(repr(exc))
        return False

    def _fail(self, reason: str) -> None:
        if self.failed == 0:
            _log.warning(
                "ATOF stream sink %s: sending failed (%s); further failures are counted, "
                "not logged",
                shown_url(self._url),  # no userinfo or query value in a log line
                reason,
            )
