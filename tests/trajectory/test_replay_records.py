"""A replay runs the user's plugins, but what they record of it is not added to the user's
records: the home's ATOF and ATIF folders are as they were."""

from __future__ import annotations

from pathlib import Path

from traj_support import record_session, run_cli


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_replay_leaves_the_homes_records_alone(tmp_path: Path) -> None:
    """With observability/relay enabled in the home, `wayline replay` writes its new
    trajectory where -o says and nothing under the home's relay/ folder."""
    rec = record_session(tmp_path)
    home = rec["home"]
    relay = home / "relay"
    before = _files(relay) if relay.exists() else {}
    out = tmp_path / "replayed.json"
    proc = run_cli("replay", rec["trajectory"], "-o", out, home=home, cwd=rec["work"])
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    after = _files(relay) if relay.exists() else {}
    assert after == before
