"""``wayline import`` of real Inspect AI logs: a tiny task run by the pinned ``inspect-ai`` in
its own virtualenv (``.venv-inspect/``, gitignored) against Inspect's offline
``mockllm/model``, in both log formats; the import is compared with what Inspect's own reader
(``inspect_ai.log.read_eval_log``) returns."""

from __future__ import annotations

import fcntl
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import calls, check_valid, results, run_import, steps, written
from side_venv import make_venv, pip_install

pytestmark = pytest.mark.integration

INSPECT_VERSION = "0.3.285"
REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-inspect"
SECRET = "sk-proj-Zq8vN3xR7tK2mW9pL4sB6yH1cF5gJ0dA"

TASK = """
import sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import tool


@tool
def add():
    async def execute(x: int, y: int):
        \"\"\"Add two numbers.

        Args:
            x: First number.
            y: Second number.
        \"\"\"
        return x + y

    return execute


outputs = []
for i in range(2):
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "add", {"x": 1, "y": i},
                                             tool_call_id=f"call_{i}"))
    outputs.append(ModelOutput.from_content("mockllm/model", f"The answer is {1 + i}."))
for n, output in enumerate(outputs):  # usage given: the mock would count tokens online
    output.usage = ModelUsage(input_tokens=100 + n, output_tokens=10 + n,
                              total_tokens=110 + 2 * n, input_tokens_cache_read=n)
task = Task(
    name="adder",
    dataset=[Sample(input="What is 1 + 0?", target="1", id="s1"),
             Sample(input="What is 1 + 1? my key is " + sys.argv[3], target="2", id="s2")],
    solver=[system_message("You add numbers."), use_tools(add()), generate()],
    scorer=includes(),
)
(log,) = eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
              log_dir=sys.argv[1], log_format=sys.argv[2], display="none", max_samples=1)
print(log.location)
"""

READ = """
import json, sys
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
out = {"task": log.eval.task, "model": log.eval.model, "samples": []}
for s in log.samples:
    out["samples"].append({
        "id": s.id, "epoch": s.epoch,
        "roles": [m.role for m in s.messages],
        "calls": [[c.id, c.function, c.arguments] for m in s.messages if m.role == "assistant"
                  for c in (m.tool_calls or [])],
        "results": [[m.tool_call_id, m.text] for m in s.messages if m.role == "tool"],
        "usage": {k: v.model_dump(exclude_none=True) for k, v in s.model_usage.items()},
        "scores": {k: v.value for k, v in (s.scores or {}).items()},
    })
print(json.dumps(out))
"""


def _python() -> Path:
    stamp = VENV / ".wayline-inspect.json"
    with open(REPO / ".venv-inspect.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if json.loads(stamp.read_text()).get("version") == INSPECT_VERSION:
                return VENV / "bin" / "python"
        except (OSError, ValueError):
            pass
        python = make_venv(VENV)
        pip_install(python, f"inspect-ai=={INSPECT_VERSION}")
        stamp.write_text(json.dumps({"version": INSPECT_VERSION}))
        return python


def _run(python: Path, code: str, *args: str, cwd: Path) -> str:
    proc = subprocess.run(
        [str(python), "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any]]]:
    """One real log per format, with what Inspect's reader says it holds."""
    python = _python()
    work = tmp_path_factory.mktemp("inspect")
    out: dict[str, tuple[Path, dict[str, Any]]] = {}
    for fmt in ("eval", "json"):
        location = Path(_run(python, TASK, str(work / "logs"), fmt, SECRET, cwd=work))
        out[fmt] = (location, json.loads(_run(python, READ, str(location), cwd=work)))
    return out


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_each_sample_is_one_trajectory_equal_to_inspects_reading(
    logs: dict[str, tuple[Path, dict[str, Any]]], fmt: str, home: Path
) -> None:
    """Per sample: messages by role, tool calls (id, function, arguments), results, usage and
    scores equal what read_eval_log returns; task and model are kept; the files validate."""
    location, expected = logs[fmt]
    documents = written(run_import(location, home=home))
    assert len(documents) == len(expected["samples"])
    by_sample = {d["extra"]["inspect"]["sample_id"]: d for d in documents}
    for sample in expected["samples"]:
        document = by_sample[sample["id"]]
        check_valid(document)
        roles = [{"agent": "assistant"}.get(s["source"], s["source"]) for s in steps(document)]
        assert roles == [r for r in sample["roles"] if r != "tool"]
        assert [list(c) for c in calls(document)] == sample["calls"]
        assert [list(r) for r in results(document)] == sample["results"]
        (usage,) = sample["usage"].values()
        final = document["final_metrics"]
        assert final["total_prompt_tokens"] == usage["input_tokens"]
        assert final["total_completion_tokens"] == usage["output_tokens"]
        assert final["total_cached_tokens"] == usage["input_tokens_cache_read"]
        inspect = document["extra"]["inspect"]
        assert {k: v["value"] for k, v in inspect["scores"].items()} == sample["scores"]
        assert (inspect["task"], inspect["model"]) == (expected["task"], expected["model"])
        assert SECRET not in json.dumps(document)


def test_reimport_of_a_log_replaces_its_samples(
    logs: dict[str, tuple[Path, dict[str, Any]]], home: Path
) -> None:
    """Importing the same .eval log twice leaves one file per sample."""
    location, expected = logs["eval"]
    first = run_import(location, home=home)
    second = run_import(location, home=home)
    assert first.stdout == second.stdout
    assert len(list((home / "imported").iterdir())) == len(expected["samples"])


def test_log_that_is_no_inspect_log_is_an_error(tmp_path: Path, home: Path) -> None:
    """A zip without header.json given as an Inspect log: exit 2, one error line naming it."""
    import zipfile

    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("other.json", "{}")
    proc = run_import(broken, home=home)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {broken}: header.json: missing: not an Inspect .eval log"
    ]
