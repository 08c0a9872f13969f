"""`wayline replay` end to end: the real CLI replays recorded and foreign trajectories."""

from __future__ import annotations

import json
from pathlib import Path

from traj_support import RELAY_MANUAL_ATIF, RELAY_PLUGIN_ATIF, load, run_cli, write_rewriter

from wayline.relay.atif.validate import validate_trajectory


def test_recorded_session_replays_with_recorded_tools(
    recorded: dict[str, Path], tmp_path: Path
) -> None:
    """Parallel tools and a delegated child replay from the recording: exit 0, a valid ATIF out."""
    out = tmp_path / "new.json"
    proc = run_cli("replay", recorded["trajectory"], "-o", out, home=recorded["home"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("reproduced ")
    new = load(out)
    assert [str(p) for p in validate_trajectory(new)] == []
    old = load(recorded["trajectory"])
    assert new["session_id"] != old["session_id"]  # a new run, not a copy
    calls = [c["tool_call_id"] for s in new["steps"] for c in s.get("tool_calls") or []]
    assert calls == ["call_delegate", "call_t1", "call_r1", "call_r2"]
    (child,) = new["subagent_trajectories"]
    assert [s["message"] for s in child["steps"]][-1] == "child read both"


def test_recorded_tools_have_no_side_effects(recorded: dict[str, Path], tmp_path: Path) -> None:
    """With recorded tools the files are not read: an empty cwd still reproduces."""
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli(
        "replay",
        recorded["trajectory"],
        "--cwd",
        empty,
        "-o",
        tmp_path / "n.json",
        home=recorded["home"],
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_live_tools_rerun_and_catch_a_changed_file(
    recorded: dict[str, Path], tmp_path: Path
) -> None:
    """--tools live really runs the tools: same files reproduce, a changed file diverges."""
    work = recorded["work"]
    same = run_cli(
        "replay",
        recorded["trajectory"],
        "--tools",
        "live",
        "--cwd",
        work,
        "-o",
        tmp_path / "a.json",
        home=recorded["home"],
        cwd=tmp_path,
    )
    assert same.returncode == 0, same.stdout + same.stderr
    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "alpha.txt").write_text("alpha_function\n")
    (changed / "beta.txt").write_text("gamma\n")
    proc = run_cli(
        "replay",
        recorded["trajectory"],
        "--tools",
        "live",
        "--cwd",
        changed,
        "-o",
        tmp_path / "b.json",
        home=recorded["home"],
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]
    assert "tool call call_beta (read_file): result differs" in first
    assert "subagent 1" in first and "gamma" in proc.stdout


def test_argument_rewriting_plugin_diverges(recorded: dict[str, Path], tmp_path: Path) -> None:
    """A plugin rewriting a tool argument: exit 1, the report names the step and the argument."""
    write_rewriter(recorded["home"] / "plugins")
    proc = run_cli(
        "replay",
        recorded["trajectory"],
        "--plugin",
        "rewriter",
        "-o",
        tmp_path / "n.json",
        home=recorded["home"],
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        "diverged at step 2 of main › step 2 call_delegate › subagent 1, "
        "tool call call_beta (read_file): arguments differ at arguments.path"
    )
    assert lines[1:3] == ['  old: "beta.txt"', '  new: "alpha.txt"']


def test_replay_json_report(recorded: dict[str, Path], tmp_path: Path) -> None:
    """--json prints the whole report: every difference with trajectory, step, call, kind."""
    write_rewriter(recorded["home"] / "plugins")
    proc = run_cli(
        "replay",
        recorded["trajectory"],
        "--plugin",
        "rewriter",
        "--json",
        "-o",
        tmp_path / "n.json",
        home=recorded["home"],
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["reproduced"] is False
    assert [(d["step"], d["tool_call"], d["path"]) for d in report["differences"]] == [
        (2, "call_beta (read_file)", "arguments.path"),
        (3, "call_r2 (read_file)", "arguments.path"),
    ]


def test_hermes_relay_trajectory_replays(tmp_path: Path) -> None:
    """NeMo Relay's exporter output (Hermes) replays with recorded tools; the foreign
    delegation is served from its result and said in a note."""
    home = tmp_path / "home"
    proc = run_cli("replay", RELAY_PLUGIN_ATIF, "-o", tmp_path / "n.json", home=home, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "note: main: steps[1].tool_calls[0] (delegate call_sub) delegated through a tool"
        in proc.stderr
    )
    new = load(tmp_path / "n.json")
    step = next(s for s in new["steps"] if s.get("tool_calls"))
    assert step["tool_calls"][0]["function_name"] == "delegate"
    assert json.loads(step["observation"]["results"][0]["content"]) == {"answer": "sub answer"}


def test_relay_manual_trajectory_replays_unknown_tool(tmp_path: Path) -> None:
    """A tool wayline does not have (``add``) is served from the recording."""
    proc = run_cli(
        "replay", RELAY_MANUAL_ATIF, "-o", tmp_path / "n.json", home=tmp_path / "h", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new = load(tmp_path / "n.json")
    assert new["steps"][-1]["message"] == "The answer is 3."


def _unreplayable(tmp_path: Path, name: str, change: object) -> tuple[int, str]:
    data = load(RELAY_MANUAL_ATIF)
    assert callable(change)
    change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    proc = run_cli("replay", path, home=tmp_path / "h", cwd=tmp_path)
    return proc.returncode, proc.stderr


def test_missing_tool_call_id_is_reported(tmp_path: Path) -> None:
    """A tool call without an id cannot be replayed: exit 2 naming the file and the field."""
    code, err = _unreplayable(
        tmp_path, "noid.json", lambda d: d["steps"][1]["tool_calls"][0].pop("tool_call_id")
    )
    assert code == 2
    assert f"{tmp_path / 'noid.json'}: steps[1].tool_calls[0].tool_call_id: missing" in err
    assert "Traceback" not in err


def test_multimodal_content_is_reported(tmp_path: Path) -> None:
    """An image in a user message cannot be replayed: exit 2 naming the field and the part."""

    def image(d: dict) -> None:
        d["steps"][0]["message"] = [
            {"type": "text", "text": "look"},
            {"type": "image", "source": {"path": "x.png", "media_type": "image/png"}},
        ]

    code, err = _unreplayable(tmp_path, "image.json", image)
    assert code == 2
    assert "steps[0].message: cannot be replayed: a content part of type 'image' (multimodal" in err


def test_bad_input_exits_2(tmp_path: Path) -> None:
    """Unreadable, non-JSON and malformed trajectories exit 2 with the file and field named."""
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "bad.json").write_text(json.dumps({"steps": [{"source": "bot"}]}))
    for name, expected in (
        ("missing.json", "cannot read"),
        ("broken.json", "invalid JSON at line 1"),
        ("bad.json", "steps[0].source: must be one of user, agent, system; got 'bot'"),
    ):
        proc = run_cli("replay", tmp_path / name, home=tmp_path / "h", cwd=tmp_path)
        assert proc.returncode == 2, name
        assert expected in proc.stderr and "Traceback" not in proc.stderr
