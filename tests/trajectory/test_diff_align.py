"""`wayline diff` on long trajectories: steps pair by content, then shape, in n log n."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

from traj_support import run_cli

from wayline.trajectory import compare
from wayline.trajectory.align import SMALL, WINDOW, align

TOOLS = ("read_file", "search_files", "terminal")


def _session(steps: int, seed: int = 3) -> dict[str, Any]:
    """A coding-agent session: a user step, then agent steps calling one of three tools."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": "Fix the test."}]
    for n in range(2, steps + 1):
        tool = rng.choice(TOOLS)
        out.append(
            {
                "step_id": n,
                "source": "agent",
                "message": f"Look at part {rng.randrange(50)}.",
                "tool_calls": [
                    {
                        "tool_call_id": f"call_{n}",
                        "function_name": tool,
                        "arguments": {"path": f"src/m{rng.randrange(10**6)}.py"},
                    }
                ],
                "observation": {"results": [{"source_call_id": f"call_{n}", "content": "ok"}]},
            }
        )
    return {"schema_version": "ATIF-v1.7", "session_id": f"s{seed}", "steps": out}


def _agent(n: int, tool: str, message: str, path: str) -> dict[str, Any]:
    return {
        "step_id": n,
        "source": "agent",
        "message": message,
        "tool_calls": [
            {"tool_call_id": f"x{n}", "function_name": tool, "arguments": {"path": path}}
        ],
    }


def test_edits_in_a_long_session_are_each_one_difference(tmp_path: Path) -> None:
    """3,000 steps with a dropped, a changed and an inserted step every few hundred: exactly
    those differences, at their steps (no cascade after an edit), through the CLI's JSON."""
    old = _session(3000)
    new = copy.deepcopy(old)
    dropped, changed, inserted_after = {400, 1700}, {900, 2500}, {1200, 2800}
    steps: list[dict[str, Any]] = []
    for step in new["steps"]:
        n = step["step_id"]
        if n in dropped:
            continue
        if n in changed:
            step["tool_calls"][0]["arguments"] = {"path": "src/changed.py"}
        steps.append(step)
        if n in inserted_after:
            steps.append(_agent(n, "terminal", "One more look.", "extra"))
    new["steps"] = steps
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    proc = run_cli("diff", "--json", "old.json", "new.json", home=tmp_path, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = {(d["kind"], d["step"], "old" in d, "new" in d) for d in json.loads(proc.stdout)}
    expected = {("step", n, True, False) for n in dropped}
    expected |= {("arguments", n, True, True) for n in changed}
    expected |= {("step", n, False, True) for n in inserted_after}  # new step_id = n
    assert found == expected


def test_one_step_inserted_among_steps_of_one_shape() -> None:
    """Every step calls the same tool: an inserted step is found by content, not shifted."""
    old = {"steps": [_agent(n, "read_file", "Read.", f"f{n}") for n in range(1, 2001)]}
    new = copy.deepcopy(old)
    new["steps"].insert(1000, _agent(0, "read_file", "Read.", "inserted"))
    diffs = compare(old, new)
    assert [(d.kind, d.path, d.new["message"]) for d in diffs] == [("step", "", "Read.")]


def test_a_large_gap_without_common_content_still_pairs_by_shape() -> None:
    """No step's content is shared (every argument differs), so nothing anchors: the gap is
    walked by shape and one extra step of another shape is one added step, the rest pairs."""
    size = 400
    assert size * size > SMALL  # the walk, not the exact matcher, aligns this gap
    old = {"steps": [_agent(n, "read_file", "Read.", f"a{n}") for n in range(1, size + 1)]}
    new = {"steps": [_agent(n, "read_file", "Read.", f"b{n}") for n in range(1, size + 1)]}
    new["steps"].insert(200, _agent(0, "terminal", "Run.", "x"))
    diffs = compare(old, new)
    assert [(d.step, d.new["tool_calls"]) for d in diffs if d.kind == "step"] == [(0, ["terminal"])]
    assert sum(d.kind == "arguments" for d in diffs) == size  # each pair: its own argument


def test_align_opcodes_cover_both_sides_in_order() -> None:
    """Whatever the input, the opcodes cover a and b once each, in order, and pair only
    equal shapes as equal (random sequences over three shapes, small and large)."""
    rng = random.Random(5)
    for length in (0, 1, 7, 60, 700):
        a = [rng.choice("xyz") for _ in range(length)]
        b = [rng.choice("xyz") for _ in range(rng.randrange(length + 2))]
        content_a = [f"{s}{rng.randrange(40)}" for s in a]
        content_b = [f"{s}{rng.randrange(40)}" for s in b]
        ops = align(a, b, content_a, content_b)
        i = j = 0
        for tag, i1, i2, j1, j2 in ops:
            assert (i1, j1) == (i, j), ops
            if tag == "equal":
                assert a[i1:i2] == b[j1:j2]
            i, j = i2, j2
        assert (i, j) == (len(a), len(b))


def test_a_block_longer_than_the_window_is_one_run_of_added_steps() -> None:
    """A block of added steps of one shape, longer than the walk's window, is reported as
    added steps and every old step still pairs with a new one (none is reported missing)."""
    size = 200
    old = {"steps": [_agent(n, "read_file", "Read.", f"a{n}") for n in range(1, size + 1)]}
    extra = [_agent(0, "terminal", "Run.", f"t{k}") for k in range(WINDOW + 10)]
    new = {"steps": [_agent(n, "read_file", "Read.", f"b{n}") for n in range(1, size + 1)]}
    new["steps"][100:100] = extra
    steps = [d.to_json() for d in compare(old, new) if d.kind in ("step", "tool_calls")]
    assert [("old" in s, s["new"]["tool_calls"]) for s in steps] == [(False, ["terminal"])] * len(
        extra
    )
