"""``wayline import`` on folders and mixed input: formats told apart, files of no known format
skipped or refused, and the imported sessions listed by ``wayline sessions``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import DATA, run_import


def test_folder_of_mixed_formats_lands_in_the_home_and_in_sessions_list(
    tmp_path: Path, home: Path
) -> None:
    """A folder with Claude Code, Codex and OTLP files (and a file of no known format) imports every
    session into $WAYLINE_HOME/imported, warns once for the other file, and `wayline sessions
    list` shows the imported sessions."""
    folder = tmp_path / "in"
    shutil.copytree(DATA, folder)
    (folder / "notes.json").write_text(json.dumps({"hello": "world"}))
    proc = run_import(folder, home=home)
    assert proc.returncode == 0, proc.stderr
    written = {Path(line).name for line in proc.stdout.split()}
    # the real Codex subagent's rollout is embedded in its parent's; one session per OTLP file
    assert len(written) == 9
    assert {name.split("-")[1] for name in written} == {"claude", "codex", "otlp"}
    assert proc.stderr.strip().splitlines() == [
        f"warning: {folder / 'notes.json'}: skipped: not a session file of a known format"
    ]
    assert {p.name for p in (home / "imported").iterdir()} == written
    env = {k: v for k, v in os.environ.items() if not k.startswith("WAYLINE_")}
    env["WAYLINE_HOME"] = str(home)
    listed = subprocess.run(
        [sys.executable, "-m", "wayline", "sessions", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    ids = {row["session_id"] for row in json.loads(listed.stdout)}
    assert {"test-session-id", "11111111-1111-4111-8111-111111111111"} <= ids


def test_named_file_of_no_known_format_is_an_error(tmp_path: Path, home: Path) -> None:
    """A file named on the command line that is no known format: one error line, exit 2."""
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\n')
    proc = run_import(other, home=home)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {other}: format: not a Claude Code session")
