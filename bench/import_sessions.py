"""Line IM: ``wayline import`` of 1,000 Claude Code sessions (goal <= 60 s).

The sessions are the public Claude Code samples of ``tests/importers/data/claude-code``
(SOURCES.md) repeated and varied: each copy gets its own session id, line uuids, message ids,
tool-call ids and a numbered first message, and the copies of the sample with subagent files
get their subagent files too. The whole folder is imported by one ``wayline import`` process
(start-up included), into an empty output folder. The reference is the floor of the same work:
one Python process that reads and parses every input line and writes each session's lines
back as one JSON file (no mapping, no redaction, no validation).

    .venv/bin/python -m bench.import_sessions [--sessions 1000] [--json]

Prints measured/goal lines (``--json``: one JSON list of rows for ``python -m bench``); it
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "importers" / "data" / "claude-code"
GOAL_S = 60.0

FLOOR = """
import json, sys
from pathlib import Path
src, out = Path(sys.argv[1]), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
for f in sorted(src.rglob("*.jsonl")):
    lines = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    (out / (f.stem + ".json")).write_text(json.dumps(lines))
"""


def _sources() -> list[Path]:
    return sorted(p for p in SAMPLES.rglob("*.jsonl") if "subagents" not in p.parts)


def _vary(text: str, index: int, ids: list[str]) -> str:
    """``text`` with every id of ``ids`` made unique to copy ``index``."""
    for old in ids:
        text = text.replace(f'"{old}"', f'"{old}-c{index}"')
    return text


def _ids(lines: list[dict[str, Any]]) -> list[str]:
    found: set[str] = set()
    for line in lines:
        for key in ("uuid", "parentUuid", "sessionId", "agentId", "leafUuid"):
            if isinstance(line.get(key), str):
                found.add(line[key])
        message = line.get("message") or {}
        if isinstance(message.get("id"), str):
            found.add(message["id"])
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            for key in ("id", "tool_use_id"):
                if isinstance(block, dict) and isinstance(block.get(key), str):
                    found.add(block[key])
    return sorted(found, key=len, reverse=True)


def generate(folder: Path, sessions: int) -> int:
    """Write ``sessions`` varied copies of the samples into ``folder``; the bytes written."""
    sources = _sources()
    total = 0
    for index in range(sessions):
        source = sources[index % len(sources)]
        text = source.read_text()
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        subagents = sorted(source.with_suffix("").glob("subagents/**/agent-*.jsonl"))
        sub_texts = [p.read_text() for p in subagents]
        ids = _ids(lines + [json.loads(x) for t in sub_texts for x in t.splitlines() if x.strip()])
        varied = _vary(text, index, ids).replace('"content": "', f'"content": "(copy {index}) ', 1)
        session = next((line["sessionId"] for line in lines if "sessionId" in line), source.stem)
        target = folder / f"project-{index % 20}" / f"{session}-c{index}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(varied)
        total += len(varied)
        for path, sub in zip(subagents, sub_texts, strict=True):
            sub_target = target.with_suffix("") / path.relative_to(source.with_suffix(""))
            sub_target.parent.mkdir(parents=True, exist_ok=True)
            sub_target.write_text(_vary(sub, index, ids))
            total += len(sub)
    return total


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{command[2:4]} failed: {proc.stderr[-2000:]}")
    return seconds, proc.stdout


def run(sessions: int) -> list[dict[str, Any]]:
    """Generate, import (one process), and the reference floor on the same folder."""
    work = Path(tempfile.mkdtemp(prefix="wayline-bench-import-"))
    try:
        source = work / "projects"
        size = generate(source, sessions)
        env = {k: v for k, v in os.environ.items() if not k.startswith("WAYLINE_")}
        env["WAYLINE_HOME"] = str(work / "home")
        seconds, stdout = _timed(
            [sys.executable, "-m", "wayline", "import", str(source), "-o", str(work / "out")], env
        )
        written = len(stdout.split())
        floor, _ = _timed([sys.executable, "-c", FLOOR, str(source), str(work / "floor")], env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [
        {
            "line": "IM",
            "name": f"wayline import of {sessions:,} Claude Code sessions ({size / 1e6:.1f} MB)",
            "wayline": round(seconds, 2),
            "reference": round(floor, 2),
            "reference_is": "read + parse + write the same lines as JSON (one process)",
            "unit": "s",
            "ratio": round(seconds / floor, 2) if floor else None,
            "goal": f"<= {GOAL_S:.0f} s",
            "passed": seconds <= GOAL_S and written == sessions,
            "detail": f"{written} ATIF files written, {sessions / seconds:.0f} sessions/s",
        }
    ]


def main() -> None:
    """Command line: how many sessions; ``--json`` prints the rows for ``python -m bench``."""
    parser = argparse.ArgumentParser(prog="python -m bench.import_sessions")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON line")
    args = parser.parse_args()
    rows = run(args.sessions)
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(
            f"{row['line']} {row['name']}: {row['wayline']} s "
            f"(reference {row['reference']} s, {row['ratio']}x; goal {row['goal']}: "
            f"{'pass' if row['passed'] else 'FAIL'}) {row['detail']}"
        )


if __name__ == "__main__":
    main()
