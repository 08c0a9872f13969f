"""Cost in what a real session records: ATIF step and final metrics, OTel spans and metrics.

Expected figures are worked out by hand from OpenAI's published gpt-4o prices: $2.50 per
million input tokens, $1.25 per million cached input tokens, $10.00 per million output tokens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wayline.relay.atif.validate import validate_trajectory
from wayline.testing.server import ScriptedServer

M = 1_000_000
IN, CACHED, OUT = 2.50, 1.25, 10.00

SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": {},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "read_file", "id": "call_a", "arguments": {"path": "a.txt"}}
                    ],
                    "usage": {
                        "prompt_tokens": 10000,
                        "cached_tokens": 8000,
                        "completion_tokens": 100,
                        "reasoning_tokens": 50,
                    },
                },
                {
                    "content": "done",
                    "usage": {
                        "prompt_tokens": 12000,
                        "cached_tokens": 11000,
                        "completion_tokens": 20,
                    },
                },
            ],
        }
    ]
}
FIRST = (2000 * IN + 8000 * CACHED + 100 * OUT) / M
SECOND = (1000 * IN + 11000 * CACHED + 20 * OUT) / M


def record(root: Path, model: str) -> dict[str, Path]:
    """Run `wayline chat` with the relay (ATIF) and otel (file) plugins on the scripted server."""
    home, work = root / "home", root / "work"
    home.mkdir(parents=True)
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    with ScriptedServer(SCRIPT) as server:
        (home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  default: {model}\n  base_url: {server.base_url}\n"
            "plugins:\n  enabled:\n    - observability/relay\n    - observability/otel\n"
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
            "WAYLINE_HOME": str(home),
            "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(root / "atof"),
            "WAYLINE_RELAY_ATIF_ENABLED": "1",
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(root / "atif"),
            "WAYLINE_OTEL_EXPORTER": "file",
            "WAYLINE_OTEL_FILE": str(root / "spans.jsonl"),
        }
        proc = subprocess.run(
            [sys.executable, "-m", "wayline", "chat", "-q", "read a.txt", "-t", "file", "-Q"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    (trajectory,) = (root / "atif").glob("*.json")
    (atof,) = (root / "atof").glob("*.jsonl")
    return {
        "atif": trajectory,
        "atof": atof,
        "spans": root / "spans.jsonl",
        "metrics": root / "spans.metrics.jsonl",
    }


@pytest.fixture(scope="module")
def priced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One recorded gpt-4o session with cached and reasoning tokens."""
    return record(tmp_path_factory.mktemp("priced"), "gpt-4o")


def test_atif_steps_and_totals_carry_the_cost(priced: dict[str, Path]) -> None:
    """Each agent step has metrics.cost_usd; final_metrics.total_cost_usd is their sum; the
    agent block names the price table and its date; the document stays valid ATIF."""
    document = json.loads(priced["atif"].read_text())
    costs = [s["metrics"]["cost_usd"] for s in document["steps"] if s.get("metrics")]
    assert costs == [pytest.approx(FIRST), pytest.approx(SECOND)]
    assert document["final_metrics"]["total_cost_usd"] == pytest.approx(FIRST + SECOND)
    pricing = document["agent"]["extra"]["pricing"]
    assert pricing == {"source": "genai-prices", "version": "0.2.3", "date": "2026-11-10"}
    assert validate_trajectory(document) == []


def test_otel_llm_spans_and_metrics_carry_the_cost(priced: dict[str, Path]) -> None:
    """Each api span has llm.cost.total and gen_ai.usage.cost; hermes.llm.cost sums them."""
    spans = [json.loads(line) for line in priced["spans"].read_text().splitlines()]
    api = sorted((s for s in spans if s["name"].startswith("api.")), key=lambda s: s["start_time"])
    assert [s["attributes"]["llm.cost.total"] for s in api] == [
        pytest.approx(FIRST),
        pytest.approx(SECOND),
    ]
    assert all(
        s["attributes"]["gen_ai.usage.cost"] == s["attributes"]["llm.cost.total"] for s in api
    )
    total = 0.0
    for line in priced["metrics"].read_text().splitlines():
        for rm in json.loads(line)["resource_metrics"]:
            for sm in rm["scope_metrics"]:
                for metric in sm["metrics"]:
                    if metric["name"] == "hermes.llm.cost":
                        assert metric["unit"] == "USD"
                        total = sum(p["value"] for p in metric["data"]["data_points"])
    assert total == pytest.approx(FIRST + SECOND)


def test_unknown_model_records_no_cost(tmp_path: Path) -> None:
    """A model the table does not know leaves cost out everywhere (never $0)."""
    paths = record(tmp_path, "local-llm-x")
    document = json.loads(paths["atif"].read_text())
    assert all("cost_usd" not in (s.get("metrics") or {}) for s in document["steps"])
    assert "total_cost_usd" not in document["final_metrics"]
    spans = [json.loads(line) for line in paths["spans"].read_text().splitlines()]
    assert spans and all("llm.cost.total" not in s["attributes"] for s in spans)


def test_converted_atof_carries_the_same_cost(priced: dict[str, Path], tmp_path: Path) -> None:
    """`wayline atif convert` of the session's ATOF gives the same step costs, total and
    price table as the plugin's own ATIF: the cost is in the record, not recomputed."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "wayline",
            "atif",
            "convert",
            str(priced["atof"]),
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (converted,) = tmp_path.glob("*.json")
    document = json.loads(converted.read_text())
    live = json.loads(priced["atif"].read_text())
    costs = [s["metrics"]["cost_usd"] for s in document["steps"] if s.get("metrics")]
    assert costs == [s["metrics"]["cost_usd"] for s in live["steps"] if s.get("metrics")]
    assert document["final_metrics"]["total_cost_usd"] == live["final_metrics"]["total_cost_usd"]
    assert document["agent"]["extra"]["pricing"] == live["agent"]["extra"]["pricing"]
