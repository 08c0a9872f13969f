"""`wayline export otlp` never prints a credential: not a refused header's value, not an
endpoint's userinfo or query values, in its errors, its summary or the SDK's log lines; and
the signal path is joined before an endpoint's query string."""

from __future__ import annotations

import json
from pathlib import Path

from export_support import OtlpSink
from test_export_cli import run

from wayline.plugins.observability.otel.settings import load_settings, shown_url

TOKEN = "tok-Zq8rW2mN5vXy"
PASSWORD = "pw-Hk4sL9tQ"
HEADER_TOKEN = "sk-hdr-Jc7Vb3Nm6Qp1"
SECRETS = (TOKEN, PASSWORD, HEADER_TOKEN)


def leaked(*texts: str) -> list[str]:
    """The secrets that appear in any of ``texts``."""
    return [secret for secret in SECRETS if any(secret in text for text in texts)]


def test_a_refused_header_is_named_without_its_value(tmp_path: Path) -> None:
    """A --header that is not KEY=VALUE (a curl-style 'name: value', a bare token, a name
    that is no header name) exits 2 naming at most the header name."""
    atif = Path(__file__).resolve().parents[1] / "data" / "hermes_relay.atif.json"
    for value in (
        f"authorization: Bearer {HEADER_TOKEN}",
        f"Bearer {HEADER_TOKEN}",
        f"x-key:{HEADER_TOKEN}=1",
        f"={HEADER_TOKEN}",
    ):
        proc = run(str(atif), "--header", value, home=tmp_path)
        assert proc.returncode == 2 and "expected KEY=VALUE" in proc.stderr
        assert not leaked(proc.stdout, proc.stderr), proc.stderr
    named = run(str(atif), "--header", f"authorization: Bearer {HEADER_TOKEN}", home=tmp_path)
    assert "--header 'authorization'" in named.stderr


def test_a_refused_endpoint_is_shown_without_credentials(tmp_path: Path) -> None:
    """An endpoint that is no http(s) URL exits 2; its userinfo and query values are shown
    as <redacted>."""
    atif = Path(__file__).resolve().parents[1] / "data" / "hermes_relay.atif.json"
    endpoint = f"ftp://me:{PASSWORD}@collector.example/x?api_key={TOKEN}"
    proc = run(str(atif), "--endpoint", endpoint, home=tmp_path)
    assert proc.returncode == 2 and not leaked(proc.stdout, proc.stderr), proc.stderr
    assert "ftp://<redacted>@collector.example/x?api_key=<redacted>" in proc.stderr


def test_the_signal_path_goes_before_the_query(recorded: dict[str, Path], sink: OtlpSink) -> None:
    """--endpoint http://user:pw@host/base?api_key=K sends to /base/v1/traces?api_key=K and
    /base/v1/metrics?api_key=K; the summary names the endpoint without its credentials."""
    base = sink.url.replace("http://", f"http://me:{PASSWORD}@")
    proc = run(
        str(recorded["atof"]), "--endpoint", f"{base}/base?api_key={TOKEN}", home=recorded["home"]
    )
    assert proc.returncode == 0, proc.stderr
    paths = sorted({path for path, _, _ in sink.requests})
    assert paths == [f"/base/v1/metrics?api_key={TOKEN}", f"/base/v1/traces?api_key={TOKEN}"]
    summary = json.loads(proc.stdout)
    assert (
        summary["endpoint"] == f"http://<redacted>@{sink.url[7:]}/base/v1/traces?api_key=<redacted>"
    )
    assert not leaked(proc.stdout, proc.stderr)


def test_the_standard_variable_with_a_query_is_joined_the_same_way(
    recorded: dict[str, Path], sink: OtlpSink
) -> None:
    """OTEL_EXPORTER_OTLP_ENDPOINT with a query string gets the signal path before it too."""
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"{sink.url}/base?api_key={TOKEN}"}
    proc = run(str(recorded["atif"]), "--no-metrics", home=recorded["home"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert {path for path, _, _ in sink.requests} == {f"/base/v1/traces?api_key={TOKEN}"}
    assert not leaked(proc.stdout, proc.stderr)


def test_a_failed_export_names_no_credential(recorded: dict[str, Path]) -> None:
    """A refused endpoint with userinfo, a query secret, a header and a malformed header
    variable: exit 1, and neither the error, the summary nor the SDK's log lines (which
    quote the URL and the malformed header) hold any of them."""
    proc = run(
        str(recorded["atof"]),
        "--endpoint",
        f"http://me:{PASSWORD}@127.0.0.1:9/x?api_key={TOKEN}",
        "--header",
        f"authorization=Bearer {HEADER_TOKEN}",
        "--no-metrics",
        home=recorded["home"],
        env={
            "OTEL_BSP_EXPORT_TIMEOUT": "2000",
            "OTEL_EXPORTER_OTLP_HEADERS": f"x-ok=1,authorization: Bearer {HEADER_TOKEN}",
        },
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "Header format invalid" in proc.stderr  # the SDK's own line is there, scrubbed
    assert "error:" in proc.stderr and "127.0.0.1:9/x/v1/traces?api_key=<redacted>" in proc.stderr
    assert not leaked(proc.stdout, proc.stderr), proc.stderr


def test_shown_url_and_settings_repr_hold_no_credential() -> None:
    """shown_url keeps scheme, host, path and parameter names; the settings' repr leaves
    the endpoint and the headers out."""
    url = f"https://me:{PASSWORD}@otlp.example:4318/v1/traces?api_key={TOKEN}&flag#frag"
    assert (
        shown_url(url) == "https://<redacted>@otlp.example:4318/v1/traces?api_key=<redacted>&flag"
    )
    settings = load_settings(
        {"endpoint": url, "headers": {"authorization": f"Bearer {HEADER_TOKEN}"}}, env={}
    )
    assert not leaked(repr(settings))
    assert settings.traces_endpoint() == url  # already the traces URL: joined once
