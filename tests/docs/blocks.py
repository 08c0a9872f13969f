"""Fenced code blocks of the Markdown docs, and how each kind is checked or run.

Kinds: ``python`` blocks are executed, a file's blocks in order in one namespace (one
subprocess per file); ``bash``/``sh``/``shell`` blocks run with ``bash -euo pipefail`` when
every command is on the safe list (``wayline`` and a few read-only shell commands), in a
temporary directory with its own ``HOME``/``WAYLINE_HOME`` and ``docs`` linked in; ``json``,
``jsonl``, ``yaml`` and ``toml`` blocks are parsed; ``console`` blocks are transcripts:
each ``$ command`` line runs (same rules and sandbox) and must exit 0, or N when it ends
with ``# exit N``; their other lines are output, not compared. ``text``, ``output`` and
untagged blocks are output or diagrams and are not run. A file's blocks run in order in one
sandbox, so a file one block writes is there for the next. A block that cannot run (it installs
software, needs Hermes or a network service) is listed in ``SKIP`` with the reason.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import socket
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
DOC_PORT = "8765"  # the port the docs use for `wayline serve-model`; replaced by a free one

PYTHON = frozenset({"python", "py", "python3"})
SHELL = frozenset({"bash", "sh", "shell"})
PARSED = frozenset({"json", "jsonl", "ndjson", "yaml", "yml", "toml"})
CONSOLE = frozenset({"console", "shell-session"})
_EXPECTED_EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")
#: Tags that are never run, and why.
NOT_RUN = {
    "": "untagged: a diagram, a file layout or output",
    "text": "output or prose",
    "output": "output",
    "html": "markup shown as an example",
    "diff": "a change shown as an example",
}
#: Commands a shell block may run (the first word of each command).
SAFE_COMMANDS = frozenset(
    {"wayline", "ls", "cat", "echo", "export", "cd", "mkdir", "sleep", "head", "tail", "test",
     "true", "grep", "wc", "jq", "python", "printf"}
)  # fmt: skip

#: (file relative to the repo, start of the block's first line, why the block is not run).
SKIP: list[tuple[str, str, str]] = [
    ("README.md", "pip install", "installs the package from the index"),
    ("README.md", "make demo", "make builds .venv; the suite itself runs inside make test"),
    ("README.md", "source .venv/bin/activate",
     "the tour: test_readme_tour.py runs it as printed, in a fresh clone of the repository"),
    ("docs/hermes.md", "pip install", "installs into Hermes' environment, runs hermes (interop)"),
    ("docs/hermes.md", "export HERMES_NEMO_RELAY", "runs hermes (tests/interop covers it)"),
    ("docs/reliability.md", "make test", "make runs the whole suite, this test included"),
    ("docs/scripted-server.md", "$ wayline serve-model --script script.yaml [--port 0]",
     "a usage synopsis: the brackets mark optional flags"),
    ("docs/scripted-server.md", "from wayline.testing.server import ScriptedServer",
     "a sketch: `...` stands for the code under test, script.yaml for the reader's script"),
    ("docs/mcp.md", "wayline mcp --http 8765", "serves until stopped (tests/mcp covers --http)"),
    ("docs/mcp.md", "claude mcp add", "runs Claude Code, which the test environment lacks"),
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: where it is, its tag and its text."""

    path: Path
    line: int  # the line of the opening fence, 1-based
    lang: str
    text: str

    @property
    def where(self) -> str:
        """``file:line`` of the opening fence, relative to the repo."""
        return f"{self.rel}:{self.line}"

    @property
    def rel(self) -> str:
        """The file, relative to the repo root (as given when outside it)."""
        if self.path.is_relative_to(ROOT):
            return self.path.relative_to(ROOT).as_posix()
        return str(self.path)

    @property
    def first_line(self) -> str:
        """The first non-empty line (the ``SKIP`` key)."""
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")


def doc_files() -> list[Path]:
    """README.md and every docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def parse_blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``; an unclosed fence is an error naming its line."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, start = match.group("fence"), i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence[0] * len(fence))
            and set(lines[i].strip()) == {fence[0]}
        ):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{path}:{start + 1}: code block is never closed")
        lang = match.group("info").lower().split("{")[0]
        blocks.append(Block(path, start + 1, lang, "\n".join(body) + "\n"))
        i += 1
    return blocks


def check_parsed(block: Block) -> str | None:
    """Parse a data block; the error (with the block's place) or None."""
    try:
        if block.lang == "json":
            json.loads(block.text)
        elif block.lang in ("jsonl", "ndjson"):
            for line in block.text.splitlines():
                if line.strip():
                    json.loads(line)
        elif block.lang in ("yaml", "yml"):
            list(yaml.safe_load_all(block.text))
        elif block.lang == "toml":
            tomllib.loads(block.text)
    except (ValueError, yaml.YAMLError) as exc:
        return f"{block.where}: {block.lang} block does not parse: {exc}"
    return None


def _commands(script: str) -> list[str]:
    """The commands of a shell block: continuations joined, comments dropped, split on
    ``&&``, ``||``, ``;``, ``|`` and ``&``."""
    joined = re.sub(r"\\\n", " ", script)
    out: list[str] = []
    for line in joined.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            words = line.split()
        command: list[str] = []
        for word in [*words, ";"]:
            if word in ("&&", "||", ";", "|", "&"):
                if command:
                    while command and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", command[0]):
                        command = command[1:]  # VAR=value prefixes
                    if command:
                        out.append(command[0])
                command = []
            else:
                command.append(word)
    return out


def unsafe_commands(block: Block) -> list[str]:
    """Commands of a shell block that are not on the safe list."""
    return [c for c in _commands(block.text) if c not in SAFE_COMMANDS]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def sandbox_env(tmp: Path) -> dict[str, str]:
    """The environment blocks run in: a temp HOME (so ``~/.wayline`` is temp), the venv first."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WAYLINE_", "HERMES_", "OTEL_")) and k != "OPENAI_API_KEY"
    }
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        WAYLINE_HOME=str(home / ".wayline"),
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
    )
    return env


def sandbox_dir(tmp: Path) -> Path:
    """The working directory blocks run in, with ``docs`` linked so example paths resolve."""
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    link = work / "docs"
    if not link.exists():
        link.symlink_to(ROOT / "docs")
    return work


def console_commands(block: Block) -> list[tuple[str, int]]:
    """The ``$ `` commands of a console block (continuations joined) and their expected exit."""
    commands: list[tuple[str, int]] = []
    current: str | None = None
    for line in block.text.splitlines():
        if current is not None:
            current += "\n" + line
        elif line.startswith("$ "):
            current = line[2:]
        else:
            continue
        if not current.endswith("\\"):
            expected = _EXPECTED_EXIT.search(current)
            commands.append((current, int(expected.group(1)) if expected else 0))
            current = None
    return commands


def run_shell(
    block: Block, tmp: Path, timeout: float = 120, *, script: str | None = None, expect: int = 0
) -> str | None:
    """Run a shell block (or one ``script`` of it); the failure report or None."""
    script = (block.text if script is None else script).replace(DOC_PORT, str(free_port()))
    prologue = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"
    try:
        proc = subprocess.run(
            ["bash", "-c", prologue + script],
            cwd=sandbox_dir(tmp),
            env=sandbox_env(tmp),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{block.where}: shell block did not finish within {timeout:.0f} s"
    if proc.returncode == expect:
        return None
    return (
        f"{block.where}: shell block exited {proc.returncode} (expected {expect})\n"
        f"--- script ---\n{script}\n--- stdout ---\n"
        f"{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"
    )


_DRIVER = """
import json, sys, traceback
replies = sys.stdout
sys.stdout = sys.stderr  # a block's prints must not mix with the replies
namespace = {"__name__": "__main__"}
for raw in sys.stdin:
    path, line, code = json.loads(raw)
    try:
        exec(compile("\\n" * line + code, path, "exec"), namespace)
        reply = {"ok": True}
    except BaseException:
        reply = {"ok": False, "error": traceback.format_exc()}
    replies.write(json.dumps(reply) + "\\n")
    replies.flush()
"""


class PythonSession:
    """One interpreter that runs a file's python blocks in order, in one namespace.

    Blocks run when the file reaches them, so a file written by a shell block before is there,
    and one a python block writes is there for the shell blocks after it. Tracebacks name the
    Markdown file and its real line numbers.
    """

    def __init__(self, tmp: Path) -> None:
        self._log = (tmp / "python-blocks.log").open("w+", encoding="utf-8")
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _DRIVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            cwd=sandbox_dir(tmp),
            env=sandbox_env(tmp),
            text=True,
        )
        self.failed = False

    def run(self, block: Block, timeout: float = 120) -> str | None:
        """Run one block; the failure report or None."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps([str(block.path), block.line, block.text]) + "\n")
        self._proc.stdin.flush()
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        line = self._proc.stdout.readline() if ready else ""
        if not line:
            self.failed = True
            why = "did not finish within" if not ready else "ended the interpreter after"
            return f"{block.where}: python block {why} {timeout:.0f} s\n{self._output()}"
        reply = json.loads(line)
        if reply["ok"]:
            return None
        self.failed = True
        return f"python block at {block.where} failed:\n{reply['error']}\n{self._output()}"

    def _output(self) -> str:
        self._log.flush()
        self._log.seek(0)
        text = self._log.read()
        return f"--- output ---\n{text[-2000:]}" if text else ""

    def close(self) -> None:
        """Stop the interpreter."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()


def skip_reason(block: Block) -> str | None:
    """Why ``block`` is not run, when a SKIP entry names it."""
    for rel, prefix, reason in SKIP:
        if block.rel == rel and block.first_line.startswith(prefix):
            return reason
    return None
