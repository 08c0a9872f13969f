"""Private by default: records are created 0600 in 0700 directories, whatever the umask;
existing wider modes are left alone and warned about once."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from .support import HERMES_ATIF, HERMES_ATOF

WIDE = "open to other users"


def mode(path: Path) -> int:
    """The permission bits of ``path``."""
    return stat.S_IMODE(path.stat().st_mode)


def wayline(
    *args: str | Path, home: Path, cwd: Path, umask: int = 0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real CLI with ``umask`` (0 by default: the modes must not come from it)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "wayline", *map(str, args)],
        env={**base, "WAYLINE_HOME": str(home), **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        umask=umask,
    )


def chat(home: Path, cwd: Path, url: str, *extra: str, umask: int = 0) -> Any:
    """One ``wayline chat`` turn against the scripted server at ``url``."""
    return wayline(
        "chat", "-q", "hi", "-Q", "--provider", "custom", "--base-url", url, "-m", "scripted-model",
        *extra, home=home, cwd=cwd, umask=umask,
    )  # fmt: skip


def only_transcript(home: Path) -> Path:
    """The one transcript the session store holds."""
    (transcript,) = (home / "sessions").glob("*.jsonl")
    return transcript


def test_a_new_home_and_its_transcripts_are_private_under_umask_zero(
    scripted_server: Any, tmp_path: Path
) -> None:
    """With umask 0, the home chat creates is 0700, sessions/ 0700, the transcript 0600."""
    srv = scripted_server({"default": {"content": "ok"}})
    home = tmp_path / "fresh" / "home"
    proc = chat(home, tmp_path, srv.base_url)
    assert proc.returncode == 0, proc.stderr
    transcript = only_transcript(home)
    assert transcript.read_text().strip()
    assert (mode(home), mode(home / "sessions"), mode(transcript)) == (0o700, 0o700, 0o600)
    assert WIDE not in proc.stderr


def test_recordings_of_the_relay_plugin_are_private_under_umask_zero(
    scripted_server: Any, tmp_path: Path
) -> None:
    """With umask 0, the ATOF and ATIF files are 0600 and the ATIF directory 0700; an ATOF
    file made 0644 meanwhile keeps its mode on the next run, which warns once naming it."""
    srv = scripted_server({"default": {"content": "ok"}})
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text("plugins:\n  enabled: [observability/relay]\n")
    proc = chat(home, tmp_path, srv.base_url)
    assert proc.returncode == 0, proc.stderr
    atof = list((home / "relay" / "atof").glob("*.jsonl"))
    atif = list((home / "relay" / "atif").glob("*.json"))
    assert len(atof) == 1 and atif
    assert {mode(p) for p in [*atof, *atif]} == {0o600}
    assert mode(home / "relay" / "atif") == 0o700
    assert WIDE not in proc.stderr
    atof[0].chmod(0o644)
    again = chat(home, tmp_path, srv.base_url)
    assert again.returncode == 0, again.stderr
    warned = [line for line in again.stderr.splitlines() if WIDE in line]
    assert len(warned) == 1 and str(atof[0]) in warned[0]
    assert mode(atof[0]) == 0o644


def test_existing_wider_modes_are_left_alone_and_warned_about_once(
    scripted_server: Any, tmp_path: Path
) -> None:
    """A sessions directory made 0755 and a transcript made 0644 by an older wayline keep
    their modes; one warning names each, however many messages are stored."""
    srv = scripted_server({"default": {"content": "ok"}})
    home = tmp_path / "home"
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    sessions.chmod(0o755)
    first = chat(home, tmp_path, srv.base_url, umask=0o022)
    assert first.returncode == 0, first.stderr
    transcript = only_transcript(home)
    assert mode(sessions) == 0o755 and mode(transcript) == 0o600
    warned = [line for line in first.stderr.splitlines() if WIDE in line]
    assert len(warned) == 1 and str(sessions) in warned[0] and "chmod 700" in warned[0]
    transcript.chmod(0o644)
    again = chat(home, tmp_path, srv.base_url, "--resume", transcript.stem, umask=0o022)
    assert again.returncode == 0, again.stderr
    assert mode(transcript) == 0o644 and len(transcript.read_text().splitlines()) > 2
    warned = [line for line in again.stderr.splitlines() if WIDE in line]
    assert len(warned) == 2 and any(str(transcript) in w and "chmod 600" in w for w in warned)


def test_pages_samples_and_conversions_are_created_private(tmp_path: Path) -> None:
    """view, export sft and atif convert create 0600 files in new 0700 directories under
    umask 0, and say nothing about the existing directory they were pointed at."""
    home = tmp_path / "home"
    page = tmp_path / "out" / "pages" / "page.html"
    samples = tmp_path / "out2" / "samples.jsonl"
    converted = tmp_path / "atif"
    for args in (
        ("view", HERMES_ATIF, "-o", page),
        ("export", "sft", HERMES_ATIF, "-o", samples),
        ("atif", "convert", HERMES_ATOF, "-o", converted),
    ):
        proc = wayline(*args, home=home, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert WIDE not in proc.stderr
    written = [page, samples, *converted.glob("*.json")]
    assert len(written) > 2 and {mode(p) for p in written} == {0o600}
    assert {mode(d) for d in (page.parent, page.parent.parent, samples.parent, converted)} == {
        0o700
    }


def test_a_file_the_user_made_keeps_its_mode_when_rewritten(tmp_path: Path) -> None:
    """A page that exists with 0644 is rewritten in place with its mode, without a warning."""
    page = tmp_path / "page.html"
    page.write_text("old")
    page.chmod(0o644)
    proc = wayline("view", HERMES_ATIF, "-o", page, home=tmp_path / "home", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert mode(page) == 0o644 and page.read_text() != "old"
    assert WIDE not in proc.stderr


APPROVE_ALWAYS = """
import sys
from pathlib import Path
from wayline.contract.ids import RunContext
from wayline.host.bus import HookBus
from wayline.runtime.approvals import Approver

approver = Approver(HookBus(), mode="manual", ask=lambda q, t: "a", always_file=Path(sys.argv[1]))
print(approver.check("rm -rf build", RunContext("s", "t"), "call_1").approved)
"""


def test_the_always_approved_list_is_private(tmp_path: Path) -> None:
    """Answering 'always' stores the approved patterns in a 0600 file in a new 0700
    directory, even under umask 0."""
    target = tmp_path / "state" / "approvals.json"
    proc = subprocess.run(
        [sys.executable, "-c", APPROVE_ALWAYS, str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        umask=0,
    )
    assert proc.stdout.strip() == "True", proc.stderr
    assert json.loads(target.read_text()) == ["recursive_delete"]
    assert (mode(target), mode(target.parent)) == (0o600, 0o700)


def test_otel_files_and_config_are_private_under_umask_zero(
    scripted_server: Any, tmp_path: Path
) -> None:
    """With umask 0, ``plugins enable`` writes config.yaml 0600, and the otel plugin's span
    and metric files are 0600 in a 0700 directory."""
    srv = scripted_server({"default": {"content": "ok"}})
    home = tmp_path / "home"
    enabled = wayline("plugins", "enable", "observability/otel", home=home, cwd=tmp_path)
    assert enabled.returncode == 0, enabled.stderr
    assert mode(home / "config.yaml") == 0o600
    done = chat(home, tmp_path, srv.base_url)
    assert done.returncode == 0, done.stderr
    otel = home / "otel"
    assert mode(otel) == 0o700
    assert {p.name: mode(p) for p in otel.iterdir()} == {
        "spans.jsonl": 0o600,
        "spans.metrics.jsonl": 0o600,
    }
