"""docs/replay.md runs: its python blocks execute in order, its `$ wayline` lines exit as said."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from traj_support import run_cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "replay.md"
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, str]]:
    """(language, body) of each fenced block; a python body is padded to its line in the doc."""
    text = DOC.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        pad = "\n" * (text.count("\n", 0, m.start(2))) if m.group(1) == "python" else ""
        out.append((m.group(1), pad + m.group(2)))
    return out


def test_doc_has_runnable_blocks() -> None:
    """The page has python blocks, wayline commands and a pytest example to run."""
    kinds = [kind for kind, _ in _blocks()]
    assert kinds.count("python") >= 3 and kinds.count("console") >= 3
    assert any("def test_" in body for _, body in _blocks())


def test_every_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each python block runs (and its test_ functions pass); each `$ wayline` line exits with
    the code its comment says (0 by default) and prints the output shown under it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WAYLINE_HOME", str(tmp_path / "home"))
    # The page's agent module is written to the current directory and imported from it, as
    # ``python`` run there would; it is forgotten afterwards.
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "coffee_shop", raising=False)
    namespace: dict[str, object] = {"__name__": "docs_replay"}
    ran_tests = 0
    for kind, body in _blocks():
        if kind == "python":
            before = set(namespace)
            exec(compile(body, str(DOC), "exec"), namespace)
            for name in sorted(set(namespace) - before):
                test = namespace[name]
                if name.startswith("test_") and callable(test):
                    test()
                    ran_tests += 1
        elif kind == "console":
            lines = body.splitlines()
            command = lines[0]
            assert command.startswith("$ wayline "), command
            command, _, comment = command[2:].partition("#")
            expected = int(comment.split("exit")[1]) if "exit" in comment else 0
            proc = run_cli(*shlex.split(command)[1:], home=tmp_path / "home", cwd=tmp_path)
            assert proc.returncode == expected, (command, proc.stdout, proc.stderr)
            shown = "\n".join(lines[1:])
            assert shown in proc.stdout, (command, proc.stdout)
    assert ran_tests == 4
    sys.modules.pop("coffee_shop", None)
