"""ATOF stream sinks: events POSTed as NDJSON to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from wayline import relay
from wayline.relay.atof_stream import AtofStreamExporter, replace_dots


class Collector(ThreadingHTTPServer):
    """Records every POST (path, headers, body); answers ``status``."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        self.status = 200

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/ingest?x=1"


class _Handler(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.posts.append((self.path, dict(self.headers), body))
        self.send_response(self.server.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _stream(url: str, **fields: Any) -> AtofStreamExporter:
    exporter = relay.AtofExporter(relay.AtofExporterConfig(sink_type="stream", url=url, **fields))
    assert isinstance(exporter, AtofStreamExporter)
    return exporter


def test_http_post_sends_each_event_as_the_file_sink_writes_it(
    collector: Collector, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One POST per event, NDJSON content type, configured and env headers; each body is the
    very line the file sink writes for that event."""
    monkeypatch.setenv("TEST_ATOF_TOKEN", "s3cr3t")
    stream = _stream(
        collector.url, headers={"X-Team": "obs"}, header_env={"Authorization": "TEST_ATOF_TOKEN"}
    )
    stream.register("test.stream")
    file = relay.AtofExporter(relay.AtofExporterConfig(output_directory=tmp_path, filename="f"))
    file.register("test.file")
    try:
        relay.scope.event("first", data={"a.b": 1})
        handle = relay.scope.push("work", "function")
        relay.scope.pop(handle)
        assert stream.force_flush(10.0)
    finally:
        stream.shutdown()
        file.shutdown()
    lines = (tmp_path / "f").read_bytes().splitlines(keepends=True)
    assert [body for _, _, body in collector.posts] == lines and len(lines) == 3
    path, headers, _ = collector.posts[0]
    assert path == "/ingest?x=1"
    assert headers["Content-Type"] == "application/x-ndjson"
    assert headers["X-Team"] == "obs" and headers["Authorization"] == "s3cr3t"
    assert stream.stats() == {"sent": 3, "failed": 0, "dropped": 0, "queued": 0}


def test_ndjson_transport_batches_lines_and_replace_dots_renames_keys(
    collector: Collector,
) -> None:
    """``ndjson`` sends what is queued in one POST (every line arrives once, in order);
    ``replace_dots`` turns dots in keys into underscores, collisions numbered."""
    stream = _stream(collector.url, transport="ndjson", field_name_policy="replace_dots")
    stream.register("test.stream")
    try:
        for i in range(50):
            relay.scope.event(f"mark-{i}", data={"a.b": i, "a_b": "taken"})
        assert stream.force_flush(10.0)
    finally:
        stream.shutdown()
    lines = [json.loads(line) for _, _, body in collector.posts for line in body.splitlines()]
    assert [line["name"] for line in lines] == [f"mark-{i}" for i in range(50)]
    assert lines[7]["data"] == {"a_b": 7, "a_b_2": "taken"}
    assert len(collector.posts) < 50
    assert replace_dots({"x.y": [{"p.q": 1}], "x_y": 2}) == {"x_y": [{"p_q": 1}], "x_y_2": 2}


def test_failures_are_counted_and_logged_once_and_never_reach_the_caller(
    collector: Collector, caplog: pytest.LogCaptureFixture
) -> None:
    """A 500 from the endpoint, then an endpoint that is gone: the events are counted as
    failed, one warning is logged, and emitting never raised."""
    collector.status = 500
    stream = _stream(collector.url, timeout_millis=500)
    stream.register("test.stream")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    gone = _stream(f"http://127.0.0.1:{dead_port}/", timeout_millis=500)
    gone.register("test.gone")
    try:
        with caplog.at_level(logging.WARNING, logger="wayline.relay.atof"):
            for i in range(3):
                relay.scope.event(f"m{i}")
            assert stream.force_flush(10.0) and gone.force_flush(10.0)
    finally:
        stream.shutdown()
        gone.shutdown()
    assert stream.stats()["failed"] == 3 and gone.stats()["failed"] == 3
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    assert any("HTTP 500" in w for w in warnings)
    assert any(f":{dead_port}/" in w for w in warnings)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"url": "http://127.0.0.1:9/", "transport": "websocket"}, "transport must be one of"),
        ({"url": "ftp://example.com/x"}, "url must be http"),
        ({"url": "http://h/", "field_name_policy": "camel"}, "field_name_policy must be"),
        ({"url": "http://h/", "timeout_millis": 0}, "timeout_millis"),
        (
            {"url": "http://h/", "headers": {"A": "1"}, "header_env": {"A": "HOME"}},
            "in headers and header_env",
        ),
        ({"url": "http://h/", "header_env": {"A": "WAYLINE_TEST_UNSET_VAR"}}, "is not set"),
    ],
)
def test_bad_stream_settings_are_refused_naming_the_field(
    fields: dict[str, Any], message: str
) -> None:
    """Each invalid stream setting fails when the exporter is built, with the field named."""
    with pytest.raises(ValueError, match=message):
        relay.AtofExporter(relay.AtofExporterConfig(sink_type="stream", **fields))


def test_a_plugins_toml_stream_sink_gets_what_the_file_sink_gets(
    collector: Collector, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``observability/relay`` with a plugins.toml holding a file sink and a stream sink:
    after a session (observers on the hook thread), the endpoint has received every
    line of the ATOF file, in order; closing the relay instance sends what is queued."""
    from wayline.runtime import build_runtime
    from wayline.testing.server import ScriptedServer

    for key in list(__import__("os").environ):
        if key.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_")):
            monkeypatch.delenv(key)
    toml = tmp_path / "plugins.toml"
    toml.write_text(
        'version = 1\n[[components]]\nkind = "observability"\n'
        "[components.config.atof]\nenabled = true\n"
        '[[components.config.atof.sinks]]\ntype = "file"\noutput_directory = "atof"\n'
        'filename = "events.jsonl"\n'
        f'[[components.config.atof.sinks]]\ntype = "stream"\nurl = "{collector.url}"\n'
        'transport = "ndjson"\n'
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        'approvals:\n  mode: "off"\nplugins:\n  enabled: [observability/relay]\n'
    )
    monkeypatch.setenv("WAYLINE_HOME", str(home))
    monkeypatch.setenv("WAYLINE_RELAY_PLUGINS_TOML", str(toml))
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_ENABLED", "0")
    script = {"model": "m", "rules": [{"match": {}, "respond": {"content": "hello"}}]}
    with ScriptedServer(script) as server:
        runtime = build_runtime(home, base_url=server.base_url, model="m")
        try:
            agent = runtime.agent(cwd=tmp_path)
            assert agent.run_turn("hi").completed
            agent.finalize()
        finally:
            runtime.manager.close_instances()  # the relay's close sends what is queued
    lines = (tmp_path / "atof" / "events.jsonl").read_bytes().splitlines(keepends=True)
    received = [line for _, _, body in collector.posts for line in body.splitlines(True)]
    assert received == lines and len(lines) >= 4


@pytest.mark.parametrize(
    ("sink", "message"),
    [
        ('type = "stream"\nurl = "ws://h/"', r"atof.sinks\[0\].url: url must be an http"),
        ('type = "stream"\nurl = "http://h/"\ntransport = "grpc"', "transport: must be one of"),
        ('type = "kafka"', r"atof.sinks\[0\]: type must be file or stream"),
    ],
)
def test_bad_stream_sinks_in_plugins_toml_name_file_line_and_field(
    tmp_path: Path, sink: str, message: str
) -> None:
    """A bad stream sink fails the plugins.toml with its path, line and field."""
    from wayline.relay.plugin import PluginsTomlError, load_plugins_toml

    toml = tmp_path / "plugins.toml"
    toml.write_text(
        'version = 1\n[[components]]\nkind = "observability"\n'
        "[components.config.atof]\nenabled = true\n"
        f"[[components.config.atof.sinks]]\n{sink}\n"
    )
    with pytest.raises(PluginsTomlError, match=message) as caught:
        load_plugins_toml(toml)
    assert str(caught.value).startswith(f"{toml}:")
