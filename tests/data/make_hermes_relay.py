"""Regenerate ``hermes_relay.atif.json`` and ``hermes_relay.atof.jsonl`` from a real Hermes run.

Not run by the test suite: the files it writes are committed test data. Run it from the repo
root with wayline's own venv (it needs ``.venv-bench/``, which ``bench/env.py`` creates with
hermes-agent 0.19.0 and nemo-relay 0.10.4)::

    .venv/bin/python tests/data/make_hermes_relay.py

What it does:

1. Starts wayline's scripted OpenAI-compatible server (``wayline.testing.server``) on loopback
   with :data:`SCRIPT`: the parent reads ``alpha.txt`` and ``beta.txt`` in one parallel batch,
   then delegates one task (the child reads ``gamma.txt`` and answers), then answers.
2. Makes a fresh ``HERMES_HOME`` whose ``config.yaml`` points Hermes' ``custom`` provider at
   that server, and runs ``hermes plugins enable observability/nemo_relay``: Hermes' BUNDLED
   NeMo Relay plugin (not wayline's), in observer mode (no plugins.toml).
3. Runs ``hermes -z QUERY --provider custom -m scripted-model --toolsets file,delegation
   --accept-hooks --yolo`` in a temp workdir holding the three files, with
   ``HERMES_NEMO_RELAY_ATOF_ENABLED=1`` and ``HERMES_NEMO_RELAY_ATIF_ENABLED=1`` (see
   :func:`relay_env`). ``-z`` (one-shot) rather than ``chat --query``: under ``chat`` Hermes
   runs the delegated child in the background and exits before it ends, so the child's
   trajectory would be cut off; ``-z`` runs it synchronously.
4. Copies the root ATIF file (the child is embedded under ``subagent_trajectories``) and the
   ATOF stream here.

Normalized (and nothing else): every absolute path of the run's temp directory is replaced with
``/tmp/hermes-relay`` (so the workdir reads ``/tmp/hermes-relay/work``), in both files, by plain
string replacement of the JSON text (JSON escapes no ``/``, so that is exact). Session ids,
uuids, timestamps and Hermes' own tool result text are kept as Hermes and Relay wrote them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from wayline.testing.server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
VENV = ROOT / ".venv-bench"
MODEL = "scripted-model"
PLACEHOLDER = "/tmp/hermes-relay"
QUERY = "Read alpha.txt and beta.txt, then delegate reading gamma.txt, then summarize."
CHILD_GOAL = "Read gamma.txt and report its first line."
TIMEOUT_S = 300
_DROP_ENV = ("HERMES_", "WAYLINE_", "PYTEST_", "OPENAI_", "OPENROUTER_", "ANTHROPIC_")


def _call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "id": call_id, "arguments": arguments}


SCRIPT: dict[str, Any] = {
    "model": MODEL,
    "rules": [
        {
            "name": "child",
            "match": {"first_user_contains": "Read gamma.txt"},
            "turns": [
                {"tool_calls": [_call("read_file", "call_gamma", path="gamma.txt")]},
                {"content": "gamma.txt starts with: gamma_content"},
            ],
        },
        {
            "name": "parent",
            "match": {"first_user_contains": "Read alpha.txt and beta.txt"},
            "turns": [
                {
                    "content": "Reading both files at once.",
                    "tool_calls": [
                        _call("read_file", "call_alpha", path="alpha.txt"),
                        _call("read_file", "call_beta", path="beta.txt"),
                    ],
                },
                {
                    "tool_calls": [
                        _call("delegate_task", "call_delegate", goal=CHILD_GOAL, toolsets=["file"])
                    ]
                },
                {
                    "content": "alpha.txt holds alpha_content, beta.txt holds beta_content, "
                    "and the subagent reports gamma_content."
                },
            ],
        },
    ],
}


def relay_env(out: Path) -> dict[str, str]:
    """The bundled plugin's exporter settings (``HERMES_NEMO_RELAY_*``), writing under ``out``."""
    return {
        "HERMES_NEMO_RELAY_ATOF_ENABLED": "1",
        "HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
        "HERMES_NEMO_RELAY_ATOF_FILENAME": "events.jsonl",
        "HERMES_NEMO_RELAY_ATOF_MODE": "overwrite",
        "HERMES_NEMO_RELAY_ATIF_ENABLED": "1",
        "HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        "HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE": "trajectory-{session_id}.json",
        "HERMES_NEMO_RELAY_ATIF_MODEL_NAME": MODEL,
    }


def _env(tmp: Path, home: Path) -> dict[str, str]:
    # No provider keys or pytest/wayline settings of the caller leak into Hermes.
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_ENV)}
    env.pop("VIRTUAL_ENV", None)
    env.update(HOME=str(tmp), NO_COLOR="1", HERMES_HOME=str(home))
    return env


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> str:
    proc = subprocess.run(
        cmd,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"`{' '.join(cmd)}` exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def generate(tmp: Path) -> tuple[str, str]:
    """Run Hermes once under ``tmp``; return (ATIF text, ATOF text) as written."""
    hermes = VENV / "bin" / "hermes"
    if not hermes.exists():
        sys.exit(f"{hermes} missing: run `.venv/bin/python -c 'import bench.env as e; e.ensure()'`")
    home, work, out = tmp / "hermes-home", tmp / "work", tmp / "out"
    home.mkdir()
    work.mkdir()
    (work / "alpha.txt").write_text("alpha_content\n")
    (work / "beta.txt").write_text("beta_content\n")
    (work / "gamma.txt").write_text("gamma_content\n")
    with ScriptedServer(SCRIPT) as server:
        (home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  default: {MODEL}\n  base_url: {server.base_url}\n"
            "  api_key: placeholder\n"
            # tirith is an optional scanner binary; absent, Hermes prints a warning.
            "security:\n  tirith_enabled: false\n"
        )
        env = _env(tmp, home)
        _run([str(hermes), "plugins", "enable", "observability/nemo_relay"], env, tmp)
        argv = ["-z", QUERY, "--provider", "custom", "-m", MODEL]
        argv += ["--toolsets", "file,delegation", "--accept-hooks", "--yolo"]
        answer = _run([str(hermes), *argv], {**env, **relay_env(out)}, work)
        print(f"hermes answered: {answer.strip()!r}; {len(server.requests)} model requests")
    (atif,) = sorted((out / "atif").glob("trajectory-*.json"))
    return atif.read_text(), (out / "atof" / "events.jsonl").read_text()


def normalize(text: str, tmp: Path) -> str:
    """Replace the run's temp directory (resolved and as given) with :data:`PLACEHOLDER`."""
    for prefix in sorted({str(tmp.resolve()), str(tmp)}, key=len, reverse=True):
        text = text.replace(prefix, PLACEHOLDER)
    return text


def main() -> None:
    """Generate, normalize, check the files parse, and write them next to this script."""
    tmp = Path(tempfile.mkdtemp(prefix="hermes-relay-"))
    try:
        atif, atof = generate(tmp)
        atif, atof = normalize(atif, tmp), normalize(atof, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    json.loads(atif)
    events = [json.loads(line) for line in atof.splitlines() if line.strip()]
    (HERE / "hermes_relay.atif.json").write_text(atif)
    (HERE / "hermes_relay.atof.jsonl").write_text(atof)
    print(f"wrote hermes_relay.atif.json and hermes_relay.atof.jsonl ({len(events)} events)")


if __name__ == "__main__":
    main()
