"""The README's command-line tour runs as printed on a fresh clone, and leaves nothing behind.

What `make demo` leaves in a fresh clone is a `.venv`; here the clone's `.venv/bin` is this
suite's own virtualenv (so no second install), and the tour's `--port 8765` becomes a free port
so parallel runs do not collide. Nothing else of the printed text changes. The tour runs in its
own session, so a process it leaves behind (the model server it starts) is found and reported.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from .blocks import DOC_PORT, ROOT, VENV_BIN, free_port, parse_blocks, sandbox_env

TOUR_START = "source .venv/bin/activate"


def _tour() -> str:
    """The README's tour block, exactly as printed."""
    blocks = [b for b in parse_blocks(ROOT / "README.md") if b.first_line.startswith(TOUR_START)]
    assert len(blocks) == 1, "README.md must have one tour block starting with " + TOUR_START
    assert blocks[0].lang == "bash"
    return blocks[0].text


def _session_members(sid: int) -> list[int]:
    """The ids of the processes still alive in session ``sid``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # fields[3]: the session id
            found.append(int(entry.name))
    return found


def _fresh_clone(tmp_path: Path) -> Path:
    """A `git clone` of this repository, with `.venv/bin` as `make demo` would leave it."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    (clone / ".venv").mkdir()
    (clone / ".venv" / "bin").symlink_to(VENV_BIN)
    return clone


def test_readme_tour_runs_as_printed_on_a_fresh_clone(tmp_path: Path) -> None:
    """The tour exits 0 under `bash -euo pipefail`, stops its model server, and writes nothing
    into the checkout (its files go to the temporary directory it makes)."""
    clone = _fresh_clone(tmp_path)
    script = _tour().replace(DOC_PORT, str(free_port()))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**sandbox_env(tmp_path), "TMPDIR": str(temp)}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != str(VENV_BIN))
    log_out, log_err = tmp_path / "tour.out", tmp_path / "tour.err"
    # Files, not pipes: a server left running would hold a pipe open and hide behind a hang.
    with log_out.open("w") as stdout, log_err.open("w") as stderr:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=clone,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=240)
        finally:
            left = _session_members(proc.pid)
            for pid in left:
                os.kill(pid, signal.SIGKILL)
    out, err = log_out.read_text(), log_err.read_text()
    report = f"--- stdout ---\n{out[-3000:]}\n--- stderr ---\n{err[-3000:]}"
    assert proc.returncode == 0, report
    assert left == [], f"the tour left processes running: {left}\n{report}"
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert [line for line in status if line != "!! .venv/"] == [], status
    assert "Those are the files in the working directory." in out  # the scripted model answered
    assert "\nsame\n" in out  # the replay reproduced the recording
    written = list(temp.glob("*/trajectories.html"))
    assert len(written) == 1 and written[0].stat().st_size > 0
