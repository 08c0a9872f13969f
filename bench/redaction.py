"""Benchmark R: ``redact_text`` throughput on real third-party text, in MB/s.

The text is the Python source of two installed packages, httpx and openai (their versions are
printed), cut into 30-line chunks as a tool's output or a transcript message carries it. Each
round cuts the chunks at another line offset, so no chunk repeats and ``redact_text``'s cache
of recent results never answers. The reference is one generic credential regex
(``name = value`` after a key, token, secret or password word) applied with ``re.sub`` to the
same chunks: what the smallest useful redactor costs, so the ratio says how many such passes
the whole rule set is worth, and it moves with the machine as ``redact_text`` does. CPU
seconds, best of ``--rounds``, the two loops alternating round by round.

    .venv/bin/python -m bench.redaction [--rounds 5] [--json]

Prints measured lines; nothing here asserts on time in a test.
"""

from __future__ import annotations

import argparse
import re
import sysconfig
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.rows import print_rows

PACKAGES = ("httpx", "openai")
CHUNK_LINES = 30
# The reference: one rule of the kind every scanner starts with.
GENERIC = re.compile(
    r"(?i)(?:key|token|secret|password)[\w.\-]{0,20}[ \t]*[:=][ \t]*[\"']?([\w\-+/=.]{8,})"
)


def sources() -> list[list[str]]:
    """The lines of every ``.py`` file of ``PACKAGES`` in this environment, file by file."""
    root = Path(sysconfig.get_paths()["purelib"])
    files: list[list[str]] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            files.append(path.read_text(encoding="utf-8").splitlines(keepends=True))
    return files


def chunks(files: list[list[str]], offset: int) -> list[str]:
    """30-line chunks of every file, the first ``offset`` lines of each a chunk of their own."""
    out: list[str] = []
    for lines in files:
        cuts = [0, *range(offset % CHUNK_LINES or CHUNK_LINES, len(lines), CHUNK_LINES)]
        out.extend("".join(lines[a:b]) for a, b in zip(cuts, [*cuts[1:], len(lines)], strict=True))
    return [c for c in out if c]


def _cpu(apply: Callable[[str], str], texts: list[str]) -> float:
    began = time.process_time()
    for text in texts:
        apply(text)
    return time.process_time() - began


def _generic(text: str) -> str:
    return GENERIC.sub("<redacted>", text)


def run(rounds: int) -> list[dict[str, Any]]:
    """The R row: MB/s of ``redact_text`` and of the one-regex reference, and their ratio."""
    from wayline.redaction import redact_text

    files = sources()
    size = sum(len(line) for lines in files for line in lines)
    ours = reference = float("inf")
    for round_ in range(rounds):
        texts = chunks(files, 7 * round_ + 1)
        ours = min(ours, _cpu(redact_text, texts))
        reference = min(reference, _cpu(_generic, texts))
    mbps, ref_mbps = size / 1e6 / ours, size / 1e6 / reference
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in PACKAGES)
    return [
        {
            "line": "R",
            "name": f"redact_text on {versions} source in 30-line chunks, MB/s / one regex",
            "wayline": round(mbps, 2),
            "reference": round(ref_mbps, 2),
            "reference_is": "re.sub of one generic credential regex over the same chunks",
            "unit": "MB/s",
            "ratio": round(mbps / ref_mbps, 3),
            "detail": f"{size / 1e6:.1f} MB, {mbps:.2f} MB/s against {ref_mbps:.2f} MB/s, "
            f"CPU, best of {rounds}",
        }
    ]


def main() -> None:
    """Run and print the R row."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print_rows(run(args.rounds), args.json)


if __name__ == "__main__":
    main()
