"""Every fenced code block in README.md and docs/*.md runs, parses, or is skipped for a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from .blocks import (
    CONSOLE,
    NOT_RUN,
    PARSED,
    PYTHON,
    ROOT,
    SHELL,
    SKIP,
    Block,
    PythonSession,
    check_parsed,
    console_commands,
    doc_files,
    parse_blocks,
    run_shell,
    skip_reason,
    unsafe_commands,
)

FILES = doc_files()


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(ROOT).as_posix() for p in FILES])
def test_code_blocks_run(path: Path, tmp_path: Path) -> None:
    """Python blocks run, safe shell blocks exit 0, data blocks parse; failures name file:line."""
    failures: list[str] = []
    python = PythonSession(tmp_path)
    try:
        for block in parse_blocks(path):
            failures += _check(block, python, tmp_path)
    finally:
        python.close()
    assert not failures, "\n\n".join(failures)


def _check(block: Block, python: PythonSession, tmp_path: Path) -> list[str]:
    """Run or parse one block by its tag; the failures."""
    failures: list[str] = []
    if skip_reason(block) is not None:
        pass
    elif block.lang in PYTHON:
        if not python.failed:  # later blocks build on earlier ones: report the first failure
            failure = python.run(block)
            if failure:
                failures.append(failure)
    elif block.lang in SHELL:
        unsafe = unsafe_commands(block)
        if unsafe:
            failures.append(
                f"{block.where}: shell block runs {', '.join(sorted(set(unsafe)))}, which the "
                "test does not run: make it safe or add it to SKIP in tests/docs/blocks.py "
                "with the reason"
            )
        else:
            failure = run_shell(block, tmp_path)
            if failure:
                failures.append(failure)
    elif block.lang in CONSOLE:
        failures += _run_console(block, tmp_path)
    elif block.lang in PARSED:
        failure = check_parsed(block)
        if failure:
            failures.append(failure)
    elif block.lang not in NOT_RUN:
        failures.append(
            f"{block.where}: no rule for {block.lang!r} blocks: tag it (python, bash, json, "
            "yaml, text…) or add the tag to NOT_RUN in tests/docs/blocks.py"
        )
    return failures


def _run_console(block: Block, tmp_path: Path) -> list[str]:
    """Run each ``$`` command of a console block; the failures."""
    failures: list[str] = []
    for command, expect in console_commands(block):
        unsafe = unsafe_commands(Block(block.path, block.line, "bash", command))
        if unsafe:
            failures.append(
                f"{block.where}: console block runs {', '.join(sorted(set(unsafe)))}, which the "
                "test does not run: add it to SKIP in tests/docs/blocks.py with the reason"
            )
            continue
        failure = run_shell(block, tmp_path, script=command, expect=expect)
        if failure:
            failures.append(failure)
    return failures


def test_every_skip_entry_names_an_existing_block() -> None:
    """A SKIP entry whose block was edited or removed is reported, so skips never go stale."""
    blocks = [b for path in FILES for b in parse_blocks(path)]
    stale = [
        (rel, prefix)
        for rel, prefix, _ in SKIP
        if not any(b.rel == rel and b.first_line.startswith(prefix) for b in blocks)
    ]
    assert stale == []


def test_readme_quickstart_is_executed_as_printed() -> None:
    """The README's Python quickstart is a ``python`` block the runner executes, unchanged."""
    readme = [b for b in parse_blocks(ROOT / "README.md") if b.lang == "python"]
    assert readme, "README.md has no python block"
    quickstart = readme[0]
    assert skip_reason(quickstart) is None
    assert "ScriptedServer" in quickstart.text and "agent.run(" in quickstart.text
    assert ".on(" in quickstart.text and ".use(" in quickstart.text


def test_the_runner_reports_the_failing_block_with_its_line(tmp_path: Path) -> None:
    """A failing python block is reported with the Markdown file and the failing line."""
    doc = tmp_path / "probe.md"
    doc.write_text("# probe\n\n```python\nx = 1\n```\n\n```python\nassert x == 2\n```\n")
    python = PythonSession(tmp_path)
    try:
        reports = [python.run(b) for b in parse_blocks(doc)]
    finally:
        python.close()
    assert reports[0] is None
    assert reports[1] is not None
    assert f"python block at {doc}:7 failed" in reports[1]
    assert f'File "{doc}", line 8' in reports[1]
