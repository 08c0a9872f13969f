"""`wayline export otlp` redacts what it reads, whoever wrote the file: a trajectory from
another producer with secrets in its messages, arguments and results sends none of them."""

from __future__ import annotations

import json
from pathlib import Path

from export_support import OtlpSink
from test_export_cli import run

from wayline.testing.secrets import SECRET_SAMPLES

ATIF = Path(__file__).resolve().parents[1] / "data" / "hermes_relay.atif.json"
SAMPLES = {s.name: s for s in SECRET_SAMPLES}
LETTERS = "CfTDKSBAzacQzLfHqWxE"  # letters only: hidden by its key's name, not by its shape


def test_a_foreign_trajectory_is_sent_without_its_secrets(tmp_path: Path, sink: OtlpSink) -> None:
    """Every request body the backend receives (spans and metrics, protobuf) is free of the
    planted secrets, and the spans were sent."""
    document = json.loads(ATIF.read_text(encoding="utf-8"))
    document["agent"]["name"] = "someone-else"
    steps = document["steps"]
    steps[0]["message"] += f" My key is {SAMPLES['openai_project'].secret}."
    call = steps[1]["tool_calls"][0]
    call["arguments"] = {**call["arguments"], "api_key": LETTERS}
    content = f"alpha_content\nGITHUB_TOKEN={SAMPLES['github_classic'].secret}\n"
    steps[1]["observation"] = {"results": [{"source_call_id": "call_alpha", "content": content}]}
    source = tmp_path / "foreign.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    needles = [SAMPLES["openai_project"].needle, SAMPLES["github_classic"].needle, LETTERS]
    assert all(n.encode() in source.read_bytes() for n in needles)
    proc = run(str(source), "--endpoint", sink.url, home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert sink.spans()
    sent = b"".join(body for _, _, body in sink.requests)
    assert [n for n in needles if n.encode() in sent] == []
    assert b"<redacted>" in sent
