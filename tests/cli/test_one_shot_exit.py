"""A one-shot ``wayline chat -q`` leaves its exit-time collections out (``gc.freeze``), and
still writes every record completely: nothing of its plugins waits for the interpreter's
garbage collection at exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from wayline.testing.fixtures import ScriptedServerFactory


def test_a_one_shot_with_both_plugins_writes_complete_records(
    scripted_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """Transcript, ATOF, ATIF, spans and metrics of a one-shot are whole, parseable files."""
    srv = scripted_server({"default": {"content": "done"}})
    home = tmp_path / "home"
    home.mkdir()
    spans = home / "otel" / "spans.jsonl"
    (home / "config.yaml").write_text(
        'approvals:\n  mode: "off"\nplugins:\n'
        "  enabled: [observability/relay, observability/otel]\n"
        f"  entries:\n    observability/otel:\n      exporter: file\n      file: {spans}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OPENAI_"))}
    env["WAYLINE_HOME"] = str(home)
    flags = ["--base-url", srv.base_url, "-m", "scripted-model", "--workdir", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "chat", "-q", "hi", "-Q", *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    (transcript,) = (home / "sessions").glob("*.jsonl")
    rows = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert any("done" in json.dumps(row) for row in rows)
    (atof,) = (home / "relay" / "atof").glob("*.jsonl")
    events = [json.loads(line) for line in atof.read_text().splitlines()]
    assert len(events) >= 4
    (atif,) = (home / "relay" / "atif").glob("*.json")
    assert json.loads(atif.read_text())["steps"]
    names = [json.loads(line)["name"] for line in spans.read_text().splitlines()]
    assert any(name.startswith("api.") for name in names)
    metrics = spans.with_name("spans.metrics.jsonl").read_text().splitlines()
    assert metrics and all(json.loads(line)["resource_metrics"] for line in metrics)
