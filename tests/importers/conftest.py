"""Shared helpers for the ``wayline import`` tests: run the command, read what it wrote, and
check every document with our validator, Harbor's ``atif`` models and NAT's models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import atif
import nat.atif
import pytest

from wayline.relay.atif.validate import validate_trajectory

DATA = Path(__file__).parent / "data"


def run_import(*args: str | Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``wayline import ARGS`` in a subprocess with ``WAYLINE_HOME=home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WAYLINE_")}
    env["WAYLINE_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "wayline", "import", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def written(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The documents the command said it wrote (one path per stdout line)."""
    assert proc.returncode == 0, proc.stderr
    return [json.loads(Path(line).read_text(encoding="utf-8")) for line in proc.stdout.split()]


def check_valid(document: dict[str, Any]) -> None:
    """Valid for `wayline atif validate`, Harbor's atif.Trajectory and nat.atif.Trajectory."""
    assert validate_trajectory(document) == []
    atif.Trajectory.model_validate(document)
    nat.atif.Trajectory.model_validate(document)


def trajectories(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The document and every embedded subagent, depth first."""
    yield document
    for child in document.get("subagent_trajectories") or []:
        yield from trajectories(child)


def steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of the document and its subagents."""
    return [step for t in trajectories(document) for step in t["steps"]]


def calls(document: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Every tool call as (id, name, arguments), subagents included."""
    return [
        (c["tool_call_id"], c["function_name"], c["arguments"])
        for s in steps(document)
        for c in s.get("tool_calls") or []
    ]


def calls_by_step(document: dict[str, Any]) -> list[list[tuple[str, str, Any]]]:
    """Each step's tool calls as (id, name, arguments), sorted: the order of calls a step ran
    in parallel, which spans without the model's output messages do not carry."""
    return [
        sorted(((c["tool_call_id"], c["function_name"], c["arguments"]) for c in calls), key=repr)
        for s in steps(document)
        if (calls := s.get("tool_calls"))
    ]


def results(document: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    """Every tool result as (call id, content), results whose call is absent included."""
    out: list[tuple[str | None, str | None]] = []
    for s in steps(document):
        for r in (s.get("observation") or {}).get("results") or []:
            if r.get("content") is not None:
                out.append((r.get("source_call_id"), r.get("content")))
        orphan = (s.get("extra") or {}).get("orphan_tool_result")
        if orphan is not None:
            out.append((orphan.get("source_call_id"), s["message"]))
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty wayline home."""
    path = tmp_path / "home"
    path.mkdir()
    return path
