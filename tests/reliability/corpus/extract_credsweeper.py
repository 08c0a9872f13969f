"""Read CredSweeper's expected findings into ``credsweeper_cases.json`` (run by hand).

``python tests/reliability/corpus/extract_credsweeper.py CREDSWEEPER_CHECKOUT``

CredSweeper (Samsung, MIT) keeps sample files (``tests/samples/``) and the findings its
default run reports on them (``tests/data/output.json``: the rule, each line and the value
found in it). Each reported value is one case: its text is the line (the lines of one
finding, joined, when it spans two: a credential pair), its secret the value; a finding of
more lines (a PEM key) is one case, its text all the lines and its secret the longest value.
The samples hold no negatives in that file, so this corpus measures leaks only.

Only data is taken: the lines and values of that file. No code of CredSweeper is copied or run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/reliability
from corpus.extract_scanners import family_of

HERE = Path(__file__).resolve().parent


def credsweeper_cases(root: Path) -> list[dict[str, Any]]:
    """One case per value CredSweeper reports in its own samples."""
    findings = json.loads((root / "tests/data/output.json").read_text(encoding="utf-8"))
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for finding in findings:
        rule = finding["rule"]
        lines = sorted(finding["line_data_list"], key=lambda d: (d["path"], d["line_num"]))
        text = "\n".join(dict.fromkeys(d["line"] for d in lines))
        # a key of many lines (PEM) counts once, by its longest line
        picked = lines if len(lines) <= 2 else [max(lines, key=lambda d: len(d["value"]))]
        for data in picked:
            secret = data["value"]
            if not secret or (text, secret) in seen:
                continue
            seen.add((text, secret))
            path = data["path"].removeprefix("./")
            out.append(
                {
                    "source": f"credsweeper:{path}",
                    "rule": rule,
                    "family": family_of(rule.replace(" ", "-")),
                    "text": text,
                    "secret": secret,
                }
            )
    return out


def main(argv: list[str]) -> int:
    """Write ``credsweeper_cases.json`` from a checkout."""
    if len(argv) != 1:
        print("usage: extract_credsweeper.py CREDSWEEPER_CHECKOUT")
        return 2
    cases = credsweeper_cases(Path(argv[0]))
    (HERE / "credsweeper_cases.json").write_text(
        json.dumps(cases, indent=0, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
