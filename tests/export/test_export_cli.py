"""`wayline export otlp` on the command line, against a loopback OTLP/HTTP receiver."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from export_support import OtlpSink, json_spans


def run(
    *args: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real CLI with a clean OTEL_* environment plus ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WAYLINE_"))}
    return subprocess.run(
        [sys.executable, "-m", "wayline", "export", "otlp", *args],
        env={**base, "WAYLINE_HOME": str(home), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_endpoint_is_a_base_url_and_headers_are_sent(
    recorded: dict[str, Path], sink: OtlpSink
) -> None:
    """--endpoint gets /v1/traces and /v1/metrics appended; --header goes with each request;
    every span of the session arrives, its protobuf decoding to the live span names."""
    proc = run(
        str(recorded["atof"]),
        "--endpoint",
        sink.url,
        "--header",
        "x-team=blue",
        home=recorded["home"],
    )
    assert proc.returncode == 0, proc.stderr
    paths = sorted({path for path, _, _ in sink.requests})
    assert paths == ["/v1/metrics", "/v1/traces"]
    assert all(headers.get("x-team") == "blue" for _, headers, _ in sink.requests)
    live = json_spans(recorded["live"].read_text().splitlines())
    assert sorted(s.name for s in sink.spans()) == sorted(s["name"] for s in live)
    assert json.loads(proc.stdout) == {
        "files": 1,
        "hooks": json.loads(proc.stdout)["hooks"],
        "spans_exported": len(live),
        "endpoint": f"{sink.url}/v1/traces",
    }


def test_standard_variables_apply_without_flags(recorded: dict[str, Path], sink: OtlpSink) -> None:
    """With no flag, OTEL_EXPORTER_OTLP_ENDPOINT/HEADERS and OTEL_METRICS_EXPORTER apply."""
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": sink.url,
        "OTEL_EXPORTER_OTLP_HEADERS": "x-from-env=1",
        "OTEL_METRICS_EXPORTER": "none",
    }
    proc = run(str(recorded["atif"]), home=recorded["home"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert {path for path, _, _ in sink.requests} == {"/v1/traces"}
    assert all(headers.get("x-from-env") == "1" for _, headers, _ in sink.requests)
    assert sink.spans()


def test_many_files_and_the_same_ids_twice(
    recorded: dict[str, Path], sink: OtlpSink, tmp_path: Path
) -> None:
    """A directory of files is exported file by file; exporting it again sends the very same
    trace and span ids (so a backend keyed by id stores each span once)."""
    folder = tmp_path / "records"
    folder.mkdir()
    shutil.copy(recorded["atof"], folder / "session.atof.jsonl")
    shutil.copy(recorded["atif"], folder / "session.atif.json")
    (folder / "notes.json").write_text('{"not": "a trajectory"}')
    for _ in range(2):
        proc = run(str(folder), "--endpoint", sink.url, "--no-metrics", home=recorded["home"])
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["files"] == 2
    spans = sink.spans()
    ids = [(s.trace_id, s.span_id) for s in spans]
    assert len(ids) == 2 * len(set(ids))


def test_unreachable_endpoint_fails_with_one_line(recorded: dict[str, Path]) -> None:
    """A refused endpoint: exit 1 and an error naming it, no traceback."""
    proc = run(
        str(recorded["atof"]),
        "--endpoint",
        "http://127.0.0.1:9",
        "--no-metrics",
        home=recorded["home"],
        env={"OTEL_BSP_EXPORT_TIMEOUT": "2000"},
    )
    assert proc.returncode == 1
    assert "error:" in proc.stderr and "127.0.0.1:9/v1/traces" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_input_exits_2(tmp_path: Path) -> None:
    """A missing file, a file that is neither ATIF nor ATOF, a bad --header: exit 2."""
    other = tmp_path / "x.json"
    other.write_text("[1, 2]\n")
    assert run(str(tmp_path / "missing.json"), home=tmp_path).returncode == 2
    plain = tmp_path / "plain.txt"
    plain.write_text("hello\n")
    bad = run(str(plain), home=tmp_path)
    assert bad.returncode == 2 and "plain.txt: not JSON" in bad.stderr
    header = run(str(plain), "--header", "novalue", home=tmp_path)
    assert header.returncode == 2 and "expected KEY=VALUE" in header.stderr
    not_atif = run(str(other), home=tmp_path)
    assert not_atif.returncode == 2 and "Traceback" not in not_atif.stderr
