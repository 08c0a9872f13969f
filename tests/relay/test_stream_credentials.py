"""The ATOF stream sink never prints its URL's userinfo or query values: not when it refuses
the URL, not in the one warning it logs when sending fails."""

from __future__ import annotations

import logging
import socket

import pytest

from wayline import relay
from wayline.contract.credentials import shown_url
from wayline.relay.atof_stream import AtofStreamExporter

PASSWORD = "pw-Rt5yU8iO"
TOKEN = "tok-Qa2wS3eD"


def test_a_refused_url_is_named_without_credentials() -> None:
    """A non-HTTP URL is refused; the message shows its userinfo and query as <redacted>."""
    url = f"ftp://me:{PASSWORD}@collector.example/x?token={TOKEN}"
    with pytest.raises(ValueError, match="url must be http") as caught:
        relay.AtofExporter(relay.AtofExporterConfig(sink_type="stream", url=url))
    message = str(caught.value)
    assert PASSWORD not in message and TOKEN not in message
    assert "ftp://<redacted>@collector.example/x?token=<redacted>" in message


def test_a_failed_send_is_logged_without_credentials(caplog: pytest.LogCaptureFixture) -> None:
    """An endpoint that is gone: the warning names host, port and path, no credential."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://me:{PASSWORD}@127.0.0.1:{port}/ingest?token={TOKEN}"
    stream = relay.AtofExporter(
        relay.AtofExporterConfig(sink_type="stream", url=url, timeout_millis=500)
    )
    assert isinstance(stream, AtofStreamExporter)
    stream.register("test.credentials")
    try:
        with caplog.at_level(logging.WARNING, logger="wayline.relay.atof"):
            relay.scope.event("m")
            assert stream.force_flush(10.0)
    finally:
        stream.shutdown()
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert f"127.0.0.1:{port}/ingest?token=<redacted>" in warnings[0]
    assert PASSWORD not in warnings[0] and TOKEN not in warnings[0]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://otlp.example/v1/traces", "https://otlp.example/v1/traces"),
        (
            "https://a:b@h:4318/p?x=1&y&z=2#f",
            "https://<redacted>@h:4318/p?x=<redacted>&y&z=<redacted>",
        ),
        ("https://a%40b:p%23w@h/", "https://<redacted>@h/"),
        ("http://h:notaport/", "(a URL that cannot be parsed, 18 characters)"),
    ],
)
def test_shown_url_keeps_where_and_hides_credentials(url: str, shown: str) -> None:
    """shown_url keeps scheme, host, port, path and parameter names only."""
    assert shown_url(url) == shown
