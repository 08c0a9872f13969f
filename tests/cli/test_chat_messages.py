"""`wayline chat` says what is wrong in terms the user typed: the flag, the missing /v1."""

from __future__ import annotations

from pathlib import Path

import pytest

import wayline
from wayline.testing import ScriptedServer

from .support import run


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_a_negative_max_turns_names_the_flag(tmp_path: Path) -> None:
    """`--max-turns -1`: exit 2 and one error naming --max-turns, not a config.yaml."""
    proc = run(
        "chat", "-q", "hi", "--max-turns", "-1", "--base-url", "http://127.0.0.1:9/v1",
        home=tmp_path / "home", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    (line,) = _errors(proc.stderr)
    assert line.startswith("error: --max-turns") and "config.yaml" not in line, line
    assert "-1" in line


def test_a_negative_setting_in_python_names_the_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Agent(max_retries=-1)` raises a ValueError naming max_retries=, not config.yaml."""
    monkeypatch.setenv("WAYLINE_HOME", str(tmp_path / "home"))
    with pytest.raises(ValueError, match=r"max_retries=\): must be ≥ 0") as caught:
        wayline.Agent(model="m", base_url="http://127.0.0.1:9/v1", max_retries=-1)
    assert "config.yaml" not in str(caught.value)


def test_a_404_from_a_base_url_without_v1_suggests_it(tmp_path: Path) -> None:
    """The server's root as the base URL: the 404's one error line says to add /v1."""
    with ScriptedServer({"default": {"content": "hi"}}) as model:
        root = model.base_url.removesuffix("/v1")
        proc = run(
            "chat", "-q", "hi", "--base-url", root, "-m", "scripted-model",
            "--max-retries", "0", "-Q", home=tmp_path / "home", cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = _errors(proc.stderr)
    assert "HTTP 404" in line and "try adding /v1" in line, line


def test_a_404_from_a_v1_base_url_gives_no_such_hint(tmp_path: Path) -> None:
    """A base URL that has /v1 and still gets a 404 (an unknown model): no /v1 hint."""
    script = {"default": {"content": "never", "fault": {"status": 404}}}
    with ScriptedServer(script) as model:
        proc = run(
            "chat", "-q", "hi", "--base-url", model.base_url, "-m", "scripted-model",
            "--max-retries", "0", "-Q", home=tmp_path / "home", cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 1
    (line,) = _errors(proc.stderr)
    assert "HTTP 404" in line and "hint" not in line and "adding /v1" not in line, line
