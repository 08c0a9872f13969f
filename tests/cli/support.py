"""Shared helpers of the command-line tests: run the real CLI in-process or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from wayline.cli.main import cli

DATA = Path(__file__).resolve().parents[1] / "data"
HERMES_ATIF = DATA / "hermes_relay.atif.json"
HERMES_ATOF = DATA / "hermes_relay.atof.jsonl"


def invoke(*args: str | Path, home: Path) -> Result:
    """Run ``wayline ARGS`` in-process (click's runner), stdout and stderr kept apart."""
    env = {"WAYLINE_HOME": str(home), "WAYLINE_DEBUG": None}
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, prog_name="wayline")


def run(*args: str | Path, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed ``wayline`` command as a real subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OPENAI_"))}
    env["WAYLINE_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "wayline", *map(str, args)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
