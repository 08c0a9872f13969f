"""End to end: `wayline export otlp` sends a recorded session to two real backends that
start from PyPI on this machine, Arize Phoenix and MLflow's tracking server, both on
127.0.0.1 in their own virtualenvs; the spans are read back from each, and a second export of
the same file stores nothing new (the ids derive from the session).

Phoenix: ``.venv-phoenix/`` (tests/plugins/otel/phoenix_env.py). MLflow: ``.venv-mlflow/``
(mlflow_env.py; about 4 minutes to install on first use, then reused).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from export_support import json_spans, record
from mlflow_env import MlflowServer
from mlflow_env import ensure_venv as ensure_mlflow
from mlflow_env import start as start_mlflow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "otel"))
from phoenix_env import Phoenix, PhoenixUnavailable
from phoenix_env import ensure_venv as ensure_phoenix
from phoenix_env import start as start_phoenix

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

PROJECT = "wayline-export-e2e"


def export(
    *paths: Path, home: Path, args: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real `wayline export otlp` CLI."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WAYLINE_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "export", "otlp", *map(str, paths), *args],
        env={**base, "WAYLINE_HOME": str(home), "OTEL_SERVICE_NAME": PROJECT, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    print(f"$ wayline export otlp {' '.join(map(str, paths))} {' '.join(args)}")
    print(proc.stdout + proc.stderr)
    return proc


def poll(read: Callable[[], list[Any]], want: int, deadline_s: float = 60.0) -> list[Any]:
    """Read until ``want`` items are there (backends ingest asynchronously)."""
    end = time.monotonic() + deadline_s
    found: list[Any] = []
    while time.monotonic() < end:
        found = read()
        if len(found) >= want:
            return found
        time.sleep(0.5)
    return found


def barrier(
    tmp_path: Path,
    home: Path,
    args: list[str],
    stored: Callable[[], list[Any]],
    before: int,
) -> int:
    """Export a one-turn session of its own after everything else and wait until its spans
    are stored too: the backend has then ingested what was sent before it (one ingestion
    queue), so a duplicate sent earlier would be in ``stored()`` by now. Returns how many
    spans the barrier added. Waits on the backend's state, not on a clock."""
    name = f"barrier-{len(list(tmp_path.glob('barrier-*.json')))}"
    path = tmp_path / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": "ATIF-v1.7",
                "session_id": name,
                "agent": {"name": "barrier", "version": "1", "model_name": "gpt-4o"},
                "steps": [
                    {
                        "step_id": 1,
                        "source": "user",
                        "message": "ping",
                        "timestamp": "2026-11-28T12:00:00Z",
                    },
                    {
                        "step_id": 2,
                        "source": "agent",
                        "message": "pong",
                        "model_name": "gpt-4o",
                        "timestamp": "2026-11-28T12:00:01Z",
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    sent = export(path, home=home, args=args)
    assert sent.returncode == 0, sent.stderr
    added = int(json.loads(sent.stdout)["spans_exported"])
    assert added > 0
    assert len(poll(stored, before + added)) >= before + added
    return added


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    """Phoenix on loopback (installed into .venv-phoenix/ on first use)."""
    try:
        python, _ = ensure_phoenix(log=tmp_path_factory.mktemp("phoenix-pip") / "pip.log")
    except PhoenixUnavailable as exc:
        pytest.skip(f"Arize Phoenix could not be installed into its own virtualenv: {exc}")
    server = start_phoenix(python, tmp_path_factory.mktemp("phoenix"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def mlflow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """MLflow's tracking server on loopback (installed into .venv-mlflow/ on first use)."""
    server = start_mlflow(ensure_mlflow(), tmp_path_factory.mktemp("mlflow"))
    try:
        yield server
    finally:
        server.stop()


def live_spans(recorded: dict[str, Path]) -> list[dict[str, Any]]:
    """What the live plugin exported for the session."""
    return json_spans(recorded["live"].read_text().splitlines())


def test_phoenix_stores_the_exported_session_once(
    phoenix: Phoenix, recorded: dict[str, Path], tmp_path: Path
) -> None:
    """Phoenix stores the session's spans with the live tree and cost; exporting the same
    ATOF again, over HTTP and then over gRPC, adds no span."""

    def stored() -> list[dict[str, Any]]:
        path = f"/v1/projects/{urllib.parse.quote(PROJECT)}/spans?limit=500"
        try:
            body = phoenix.get_json(path)
        except OSError:
            return []  # the project is created by the first span
        return list(body.get("data") or []) if isinstance(body, dict) else []

    live = live_spans(recorded)
    args = ["--endpoint", phoenix.base_url, "--no-metrics"]
    first = export(recorded["atof"], home=recorded["home"], args=args)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["spans_exported"] == len(live)
    spans = poll(stored, len(live))
    assert sorted(s["name"] for s in spans) == sorted(s["name"] for s in live)
    assert len({s["context"]["trace_id"] for s in spans}) == 1  # the child nests in the parent
    costs = [s["attributes"].get("llm.cost.total") for s in spans if s["name"] == "api.gpt-4o"]
    assert costs and all(isinstance(c, float) and c > 0 for c in costs)
    again = export(recorded["atof"], home=recorded["home"], args=args)
    assert again.returncode == 0, again.stderr
    grpc = f"http://127.0.0.1:{phoenix.grpc_port}"
    over_grpc = export(
        recorded["atof"],
        home=recorded["home"],
        args=["--endpoint", grpc, "--protocol", "grpc", "--no-metrics"],
    )
    assert over_grpc.returncode == 0, over_grpc.stderr
    assert json.loads(over_grpc.stdout)["spans_exported"] == len(live)
    added = barrier(tmp_path, recorded["home"], args, stored, len(live))
    assert len(stored()) == len(live) + added  # no duplicate landed before the barrier


def test_phoenix_stores_live_atof_and_atif_of_a_session_once(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    """A session sent live by the otel plugin, then exported from its ATOF and from its ATIF,
    is one trace in Phoenix with each span once: the three give every span the same ids."""
    project = "wayline-live-and-exports"

    def stored() -> list[dict[str, Any]]:
        path = f"/v1/projects/{urllib.parse.quote(project)}/spans?limit=500"
        try:
            body = phoenix.get_json(path)
        except OSError:
            return []
        return list(body.get("data") or []) if isinstance(body, dict) else []

    live_env = {
        "WAYLINE_OTEL_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.base_url,
        "OTEL_SERVICE_NAME": project,
        "OTEL_METRICS_EXPORTER": "none",
    }
    recorded = record(tmp_path, live_env)
    live = poll(stored, 10)
    assert len(live) >= 10  # the live plugin's spans are in before the exports are sent
    args = ["--endpoint", phoenix.base_url, "--no-metrics"]
    env = {"OTEL_SERVICE_NAME": project}
    from_atof = export(recorded["atof"], home=recorded["home"], args=args, env=env)
    assert from_atof.returncode == 0, from_atof.stderr
    count = json.loads(from_atof.stdout)["spans_exported"]
    assert count >= 10
    from_atif = export(recorded["atif"], home=recorded["home"], args=args, env=env)
    assert from_atif.returncode == 0, from_atif.stderr
    assert json.loads(from_atif.stdout)["spans_exported"] == count
    spans = poll(stored, count)
    assert len(spans) == count  # live + ATOF + ATIF: each span stored once
    assert len({s["context"]["trace_id"] for s in spans}) == 1  # one turn, one trace


def test_mlflow_stores_the_exported_session_once(
    mlflow: MlflowServer, recorded: dict[str, Path], tmp_path: Path
) -> None:
    """MLflow files the spans under the experiment named by the header, parents intact;
    exporting the same ATOF file twice adds no span."""
    experiment = str(
        mlflow.post("/api/2.0/mlflow/experiments/create", {"name": PROJECT})["experiment_id"]
    )
    live = live_spans(recorded)
    args = [
        "--endpoint",
        mlflow.url,
        "--header",
        f"x-mlflow-experiment-id={experiment}",
        "--no-metrics",
    ]
    first = export(recorded["atof"], home=recorded["home"], args=args)
    assert first.returncode == 0, first.stderr
    spans = poll(lambda: mlflow.spans(experiment), len(live))
    assert sorted(s["name"] for s in spans) == sorted(s["name"] for s in live)
    by_id = {s["span_id"]: s for s in spans}
    roots = [s for s in spans if s["parent_id"] is None]
    assert [r["name"] for r in roots] == ["agent"]
    assert all(s["parent_id"] in by_id for s in spans if s["parent_id"] is not None)
    again = export(recorded["atof"], home=recorded["home"], args=args)
    assert again.returncode == 0, again.stderr
    added = barrier(tmp_path, recorded["home"], args, lambda: mlflow.spans(experiment), len(live))
    assert len(mlflow.spans(experiment)) == len(live) + added  # no duplicate before it
