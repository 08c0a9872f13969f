"""Answers on stdout; errors and diagnostics on stderr with one ``error:`` prefix; exit 0/1/2."""

from __future__ import annotations

from pathlib import Path

import pytest

from wayline.testing import ScriptedServer

from .support import invoke, run


def test_a_provider_failure_is_not_printed_as_the_answer(tmp_path: Path) -> None:
    """`chat -q` against a failing provider: nothing on stdout, one error line, exit 1."""
    script = {"default": {"content": "never sent", "fault": {"status": 500}}}
    with ScriptedServer(script) as model:
        proc = run(
            "chat", "-q", "hello", "--base-url", model.base_url, "-m", "scripted-model",
            "--max-retries", "0", "-Q", home=tmp_path / "home", cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "model provider failed" in errors[0], proc.stderr
    assert "never sent" not in proc.stdout + proc.stderr


def test_the_answer_alone_is_on_stdout(tmp_path: Path) -> None:
    """`chat -q -Q` prints exactly the answer on stdout and nothing on stderr."""
    with ScriptedServer({"default": {"content": "the answer"}}) as model:
        proc = run(
            "chat", "-q", "hello", "--base-url", model.base_url, "-m", "scripted-model", "-Q",
            home=tmp_path / "home", cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == ("the answer\n", "")


BAD_INPUT = [
    ("view", "nope.json"),
    ("view", "."),
    ("diff", "nope.json", "nope.json"),
    ("replay", "nope.json"),
    ("export", "sft", "nope.json", "-o", "out.jsonl"),
    ("atif", "validate", "nope.json"),
    ("atif", "convert", "nope.jsonl"),
    ("atof", "validate", "nope.jsonl"),
    ("serve-model", "--script", "nope.yaml"),
    ("plugins", "enable", "no/such-plugin"),
]


@pytest.mark.parametrize("args", BAD_INPUT, ids=[" ".join(a[:2]) for a in BAD_INPUT])
def test_every_command_reports_bad_input_as_one_error_line(
    args: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing file (or name) is one `error:` line on stderr, nothing on stdout, exit 2."""
    monkeypatch.chdir(tmp_path)
    result = invoke(*args, home=tmp_path / "home")
    assert result.exit_code == 2, result.output + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr


def test_click_usage_errors_use_the_same_prefix(tmp_path: Path) -> None:
    """A usage error from click itself (a missing argument) keeps the usage hint, then one
    `error:` line; exit 2."""
    result = invoke("diff", home=tmp_path / "home")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Usage: wayline diff")
    assert lines[-1] == "error: Missing argument 'OLD'."
    assert [line for line in lines if line.lower().startswith("error")] == [lines[-1]]


def test_a_failed_demo_turn_is_an_error_not_an_answer(tmp_path: Path) -> None:
    """`demo` against a model that refuses (HTTP 400): no `answer:` line, one error, exit 1."""
    script = {"default": {"content": "never sent", "fault": {"status": 400}}}
    with ScriptedServer(script) as model:
        proc = run(
            "demo", "--base-url", model.base_url, "--model", "scripted-model",
            "--keep", tmp_path / "keep", home=tmp_path / "home", cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "answer:" not in proc.stdout and "never sent" not in proc.stdout
    assert proc.stderr.splitlines()[-1].startswith("error: the model provider failed")
