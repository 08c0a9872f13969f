"""Read the second set of outside corpora into ``heldout_cases.json`` (run by hand).

``python tests/reliability/corpus/extract_heldout.py NOSEYPARKER SECRETLINT KINGFISHER``

- Nosey Parker (Apache-2.0): each rule's ``examples`` (true positives; the secret is the
  last capture group of the rule's own pattern, matched here with Python's ``re``) and
  ``negative_examples`` (the rule's false positives: no secret);
- Kingfisher (Apache-2.0): the same fields of its rules (``data/rules/*.yml``), where their
  example text is not already one of Nosey Parker's;
- secretlint (MIT): each ``test/snapshots/ng.*`` input with the ranges its ``output.json``
  reports (one case per reported range), and each ``ok.*`` input (no secret).

Only data is taken: the examples, the patterns to locate their secret part, and the
snapshot files. No code of these projects is copied or run.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/reliability
from corpus.extract_scanners import family_of

HERE = Path(__file__).resolve().parent


def _np_pattern(pattern: str) -> re.Pattern[str] | None:
    # Rust regex: (?x) ignores whitespace like Python's re.X; the few features Python
    # lacks (\p{...}, possessive forms) make a rule's examples unusable, and are skipped.
    try:
        return re.compile(pattern)
    except re.error:
        pass
    # Rust allows a global flag group anywhere; Python only at the start
    flags = "".join(sorted(set("".join(re.findall(r"\(\?([imsx]+)\)", pattern)))))
    try:
        return re.compile(f"(?{flags})" + re.sub(r"\(\?[imsx]+\)", "", pattern))
    except re.error:
        return None


def noseyparker_cases(root: Path) -> list[dict[str, Any]]:
    """True positives and negatives of every Nosey Parker rule."""
    return rule_examples(root / "crates/noseyparker/data/default/builtin/rules", "noseyparker")


def rule_examples(rules_dir: Path, name: str) -> list[dict[str, Any]]:
    """``examples`` and ``negative_examples`` of rule files in Nosey Parker's format (also
    Kingfisher's, which grew from it)."""
    out: list[dict[str, Any]] = []
    for path in sorted(rules_dir.glob("*.yml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for rule in data.get("rules", []):
            rx = _np_pattern(rule["pattern"])
            rid = f"{rule['id']} {rule['name']}"
            family = family_of(re.sub(r"\s+", "-", rule["name"]) + " " + path.stem)
            for text in rule.get("examples") or []:
                m = rx.search(text) if rx is not None else None
                if m is None or m.lastindex is None:
                    continue
                secret = next((g for g in reversed(m.groups()) if g), None)
                if secret:
                    out.append(_case(f"{name}:{path.name}", rid, family, text, secret))
            for text in rule.get("negative_examples") or []:
                out.append(_case(f"{name}:{path.name}", rid, family, text, None))
    return out


def secretlint_cases(root: Path) -> list[dict[str, Any]]:
    """Reported ranges of secretlint's ``ng`` snapshots and its ``ok`` snapshot inputs."""
    out: list[dict[str, Any]] = []
    for rule_dir in sorted((root / "packages/@secretlint").glob("secretlint-rule-*")):
        rule = rule_dir.name.removeprefix("secretlint-rule-")
        if rule in {"preset-recommend", "preset-canary", "no-homedir", "no-dotenv", "pattern"}:
            continue  # presets repeat the rules; paths and file names are no secrets
        family = family_of(rule)
        for snap in sorted((rule_dir / "test/snapshots").glob("*")):
            inputs = [p for p in snap.glob("input*") if p.is_file()]
            if not inputs:
                continue
            src = f"secretlint:{rule}/{snap.name}"
            if snap.name.startswith("ok."):
                text = inputs[0].read_text(encoding="utf-8", errors="replace")
                out.append(_case(src, rule, family, text, None))
                continue
            if not snap.name.startswith("ng."):
                continue
            report = json.loads((snap / "output.json").read_text(encoding="utf-8"))
            content = report.get("sourceContent", "")
            for message in report.get("messages", []):
                start, end = message["range"]
                secret = _value_of(content[start:end])
                if secret.strip():
                    out.append(_case(src, rule, family, content, secret))
    return out


# secretlint reports some secrets with their name ("AWS_SECRET_ACCESS_KEY = …",
# 'azureClientSecret := "…"'): the value alone is the secret (the name stays, by design).
_NAMED = re.compile(
    r"""[A-Za-z_][\w.\-]*["']?[ \t]*(?::=|=>|=|:)[ \t]*["'`]?(?P<v>[^"'`]+)["'`]?"""
)


def _value_of(reported: str) -> str:
    named = _NAMED.fullmatch(reported.strip())
    return named.group("v") if named is not None else reported


def _case(source: str, rule: str, family: str, text: str, secret: str | None) -> dict[str, Any]:
    return {"source": source, "rule": rule, "family": family, "text": text, "secret": secret}


def main(argv: list[str]) -> int:
    """Write ``heldout_cases.json`` from the two checkouts."""
    if len(argv) != 3:
        print("usage: extract_heldout.py NOSEYPARKER SECRETLINT KINGFISHER (checkouts)")
        return 2
    cases = noseyparker_cases(Path(argv[0])) + secretlint_cases(Path(argv[1]))
    seen = {c["text"] for c in cases}
    for case in rule_examples(Path(argv[2]) / "data/rules", "kingfisher"):
        if case["text"] not in seen:  # Kingfisher's rules began as Nosey Parker's: new ones only
            seen.add(case["text"])
            cases.append(case)
    (HERE / "heldout_cases.json").write_text(
        json.dumps(cases, indent=0, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
