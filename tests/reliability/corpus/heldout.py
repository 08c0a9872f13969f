"""The second set of outside corpora (issue 36): Nosey Parker and secretlint, whole files.

- ``heldout_cases()``: ``heldout_cases.json`` (``extract_heldout.py``), Nosey Parker's rule
  examples and secretlint's snapshots, with their secret part and negatives;
- ``fresh_cases()``: ``credsweeper_cases.json`` (``extract_credsweeper.py``), the values
  CredSweeper reports in its own samples: a source the rules were not written against;
- ``trufflehog_cases()``: ``trufflehog_cases.json`` (``extract_trufflehog.py``), the inputs
  of trufflehog's detector pattern tests and the values each detector must report;
- ``half(case)``: Kingfisher's rule files, CredSweeper's sample files and trufflehog's test
  files split in two by a hash of the file name, one half to look at while writing rules
  (``tune``), the other only measured (``held``);
- ``measure_files()``: whole files of the installed packages, each redacted as one text (a
  tool that prints a file), altered or not;
- the provider ids of ``measure.tool_call_ids`` and the lines of ``measure.benign_lines``.

``python tests/reliability/corpus/heldout.py [--file-step N] [--show N]`` prints the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/reliability, as pytest's rootdir import has it
from corpus import measure  # noqa: E402
from wayline.redaction import redact_text  # noqa: E402

__all__ = [
    "counted",
    "excluded",
    "fresh_cases",
    "half",
    "heldout_cases",
    "main",
    "measure_files",
    "print_files",
    "print_fresh",
    "print_secrets",
    "print_trufflehog",
    "trufflehog_cases",
]

MAX_FILE = 200_000  # characters: larger files are generated data, not what a tool prints


def heldout_cases() -> list[measure.Case]:
    """Every case of ``heldout_cases.json``, in file order."""
    return _cases("heldout_cases.json")


def fresh_cases() -> list[measure.Case]:
    """Every case of ``credsweeper_cases.json``, in file order."""
    return _cases("credsweeper_cases.json")


TRUFFLEHOG = HERE / "local" / "trufflehog_cases.json"
"""Written by ``extract_trufflehog.py`` from a checkout and never committed: trufflehog's
tests are AGPL-3.0, and wayline is Apache-2.0."""


def trufflehog_cases() -> list[measure.Case]:
    """Every case of the locally extracted ``trufflehog_cases.json``, in file order (none
    when it was not extracted here)."""
    if not TRUFFLEHOG.exists():
        return []
    return _cases(str(TRUFFLEHOG.relative_to(HERE)))


def _cases(name: str) -> list[measure.Case]:
    data = json.loads((HERE / name).read_text(encoding="utf-8"))
    return [measure.Case(d["source"], d["rule"], d["family"], d["text"], d["secret"]) for d in data]


def half(case: measure.Case) -> str:
    """``tune`` or ``held`` for a Kingfisher, CredSweeper or trufflehog case (by a hash of its
    rule, sample or test file), else ``""``."""
    if not case.source.startswith(("kingfisher:", "credsweeper:", "trufflehog:")):
        return ""
    digest = hashlib.blake2b(case.source.encode(), digest_size=4).digest()
    return "tune" if int.from_bytes(digest, "big") % 2 == 0 else "held"


# Kept out of the leak figures, each for a reason read off the cases by hand (README.md):
# rules whose match is an identifier or a public value, not a credential (principle 1 of
# docs/redaction.md: ids are structure), and secrets that are a variable or template
# expression (principle 4: `-p $Password`, `%nothing%`, `#{datastore['DBUID']}`).
_NOT_CREDENTIAL = (
    "account id",
    "s3 bucket",
    "amazon resource name",
    "client id",
    "storage bucket",
    "recipient",
    "shopify domain",
    "ad_tenant_id",
    "azure_client_id",
    # Kingfisher's rules for hosts, URLs, names and ids that other rules pair with a secret
    " url",
    " host",
    " domain",
    "org name",
    "account name",
    "username",
    "application id",
    "app id",
    "product id",
    # a bare word with no name or context ("letmein42"): no redactor can tell it from text
    "weak password pattern",
)
# A rule named for an identifier ("Discord Bot ID", "CodeClimate Reporter ID", an e-mail
# address, a UUID) or for a value public by design (a salt, a nonce); an access key id stays.
_IDENTIFIER_RULE = re.compile(r"(?i)(?:(?<!access key) id| email|^uuid|^salt|^nonce)$")
_EXPRESSION = re.compile(r"\$\{?[A-Za-z_][\w.\[\]'\"]*\}?|%\w*%|#\{.*\}")
_PLACEHOLDERS = frozenset({"password", "passwd", "secret", "token", "changeme"})
# In a connection string the password is the secret; server, database and user stay.
_CONNECTION_PASSWORD = re.compile(r"(?:^|;)[ \t]*(?:password|pwd)[ \t]*=[ \t]*(?P<pw>[^;]+)", re.I)
# The alphabet written out, forwards or backwards: a documentation placeholder.
_SEQUENCE = re.compile(r"ABCDEFGHIJ|ZYXWVUTSRQ", re.IGNORECASE)
# A Google OAuth client id: public by RFC 6749 section 2.2 ("the client identifier is not a
# secret") and by Google's documentation (it is embedded in every web page that signs in);
# its client secret (GOCSPX-…, or the older 24 characters) is one, and is counted as one.
_OAUTH_CLIENT_ID = re.compile(r"[0-9]+-[0-9A-Za-z_]{32}\.apps\.googleusercontent\.com")


# The public half of a pair, named so in the text: an OAuth client's (application's) id is
# "not a secret" (RFC 6749 section 2.2; GitLab's application id, beside its gloas- secret), and
# a Vault AppRole's role_id is its identifier (the secret_id is the credential). The
# scanners report the pair; the extraction may pick the id half as the more random one.
_PUBLIC_ID_LABEL = re.compile(
    r"(?i)(?<![a-z])(?:application|app|client|role)[ _.\-]?id\\*[\"']?[ \t]*(?::=|=>|[:=])?"
    r"[ \t]*\\*[\"'`]?\Z"
)


# A Salesforce organization id ("00D" and 12 or 15 alphanumerics, with no "!" and session
# after it) names the org, as a tenant id names a directory; the "00D…!…" session and access
# tokens count.
_SALESFORCE_ORG_ID = re.compile(r"00D[0-9A-Za-z]{9,15}")
# A bare endpoint (scheme, host and port: no userinfo, path or query) is where a credential is
# sent, not one; a detector may report it as the only part of its pair found in a text.
_ENDPOINT = re.compile(r"(?i)[a-z][a-z0-9+.\-]*://[^\s@/?#:]+(?::[0-9]{1,5})?/?")


def _named_public_id(case: measure.Case) -> bool:
    assert case.secret is not None
    at = case.text.find(case.secret)
    return at >= 0 and _PUBLIC_ID_LABEL.search(case.text, max(0, at - 40), at) is not None


def excluded(case: measure.Case) -> str | None:
    """Why a held-out true positive does not count (None: it counts)."""
    rule = f"{case.rule} {case.source}".lower()
    if any(word in rule for word in _NOT_CREDENTIAL):
        return "an identifier or public value"
    if _IDENTIFIER_RULE.search(case.rule) is not None:
        return "an identifier or public value"
    assert case.secret is not None
    secret = case.secret.strip().strip("\"'")
    if (
        _OAUTH_CLIENT_ID.fullmatch(secret) is not None
        or _SALESFORCE_ORG_ID.fullmatch(secret) is not None
        or _ENDPOINT.fullmatch(secret) is not None
        or _named_public_id(case)
    ):
        return "an identifier or public value"
    if _EXPRESSION.fullmatch(secret) is not None:
        return "a variable or template expression"
    if _SEQUENCE.search(case.secret) is not None or secret.lower() in _PLACEHOLDERS:
        return "a documentation placeholder"
    return measure.excluded(case)


def counted(cases: list[measure.Case]) -> tuple[list[measure.Case], Counter[str]]:
    """(the cases that count, reasons of the others): negatives always count."""
    kept: list[measure.Case] = []
    reasons: Counter[str] = Counter()
    for case in cases:
        if case.secret is not None and ";" in case.secret:
            pw = _CONNECTION_PASSWORD.search(case.secret)
            if pw is not None:
                case = replace(case, secret=pw.group("pw").strip())
        why = None if case.secret is None else excluded(case)
        if why is None:
            kept.append(case)
        else:
            reasons[why] += 1
    return kept, reasons


def measure_files(file_step: int) -> tuple[int, list[str]]:
    """(files checked, [altered file]) of one file in ``file_step`` of the installed packages."""
    root = measure.site_packages()
    total = 0
    altered: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.suffix in measure.SUFFIXES):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("wayline") or not measure._picked(rel, file_step):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not text.strip() or len(text) > MAX_FILE:
            continue
        total += 1
        if redact_text(text) != text:
            altered.append(rel)
    return total, altered


def print_secrets(show: int) -> tuple[int, int]:
    """Print the held-out leak figures by family and source, and the leaks outside Kingfisher's
    held half; return (leaked, counted)."""
    cases, reasons = counted(heldout_cases())
    figures = measure.measure_secrets(cases)
    measure._print_tally("held-out secrets leaked, by family", figures.by_family)
    measure._print_tally("held-out secrets leaked, by source", figures.by_source)
    _print_halves("Kingfisher's rule files in two halves (tune: looked at)", cases, figures)
    measure._print_tally("held-out negatives altered, by source", figures.fp_altered)
    print(f"\nexcluded, by reason: {dict(reasons)} and {sum(figures.excluded.cases.values())} more")
    leaked = sum(figures.by_family.misses.values())
    total = sum(figures.by_family.cases.values())
    print(f"all held-out secrets leaked: {leaked} / {total} ({100 * leaked / max(total, 1):.1f}%)")
    _print_leaks(figures.leaks, show)
    return leaked, total


def _print_leaks(leaks: list[measure.Case], show: int) -> None:
    """Print leaks of cases outside a ``held`` half: a held half is only ever counted."""
    for case in [c for c in leaks if half(c) != "held"][:show]:
        print(f"  LEAK {case.family} {case.source} {case.rule}: {case.text[:110]!r}")


def _print_halves(title: str, cases: list[measure.Case], figures: measure.SecretFigures) -> None:
    halves = measure.Tally.new()
    leaks = {id(case) for case in figures.leaks}
    for case in cases:
        part = half(case)
        if part and case.secret is not None and measure.excluded(case) is None:
            halves.add(part, id(case) in leaks)
    measure._print_tally(title, halves)


def print_fresh(show: int) -> tuple[int, int]:
    """Print the leak figures of the fresh corpus (CredSweeper's findings in its samples) and
    the leaks of its tune half only; return (leaked, counted)."""
    cases, reasons = counted(fresh_cases())
    figures = measure.measure_secrets(cases)
    measure._print_tally("CredSweeper's findings leaked, by family", figures.by_family)
    _print_halves("CredSweeper's sample files in two halves (tune: looked at)", cases, figures)
    print(f"excluded, by reason: {dict(reasons)} and {sum(figures.excluded.cases.values())} more")
    leaked = sum(figures.by_family.misses.values())
    total = sum(figures.by_family.cases.values())
    share = 100 * leaked / max(total, 1)
    print(f"all CredSweeper findings leaked: {leaked} / {total} ({share:.1f}%)")
    _print_leaks(figures.leaks, show)
    return leaked, total


def print_trufflehog(show: int) -> tuple[int, int]:
    """Print the leak figures of trufflehog's detector tests, and the leaks of the tune half
    only (the held half is never shown); return (leaked, counted)."""
    if not TRUFFLEHOG.exists():
        print(f"\ntrufflehog: not extracted here (extract_trufflehog.py writes {TRUFFLEHOG})")
        return 0, 0
    cases, reasons = counted(trufflehog_cases())
    figures = measure.measure_secrets(cases)
    print()
    measure._print_tally("trufflehog's detector tests leaked, by family", figures.by_family)
    _print_halves("trufflehog's test files in two halves (tune: looked at)", cases, figures)
    leaks = {id(case) for case in figures.leaks}
    for part in ("tune", "held"):
        by_family = measure.Tally.new()
        for case in cases:
            if half(case) == part and case.secret is not None and measure.excluded(case) is None:
                by_family.add(case.family, id(case) in leaks)
        measure._print_tally(f"trufflehog's {part} half leaked, by family", by_family)
    measure._print_tally("trufflehog's negatives altered", figures.fp_altered)
    print(f"excluded, by reason: {dict(reasons)} and {sum(figures.excluded.cases.values())} more")
    leaked = sum(figures.by_family.misses.values())
    total = sum(figures.by_family.cases.values())
    share = 100 * leaked / max(total, 1)
    print(f"all trufflehog reported values leaked: {leaked} / {total} ({share:.1f}%)")
    _print_leaks(figures.leaks, show)
    return leaked, total


def print_files(file_step: int, show: int) -> None:
    """Print how many whole installed files redaction alters."""
    files, altered = measure_files(file_step)
    print(f"\nbenign whole files altered: {len(altered)} / {files}", end=" ")
    print(f"({100 * len(altered) / max(files, 1):.2f}%)")
    for rel in altered[:show]:
        print(f"  {rel}")


def main(argv: list[str] | None = None) -> int:
    """Print the held-out figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--step", type=int, default=20, help="keep one benign line in STEP")
    parser.add_argument("--file-step", type=int, default=10, help="keep one file in STEP")
    parser.add_argument("--show", type=int, default=40, help="examples to print")
    parser.add_argument("--secrets-only", action="store_true", help="skip the benign figures")
    args = parser.parse_args(argv)
    parts = [print_secrets(args.show), print_fresh(args.show), print_trufflehog(args.show)]
    leaked, total = sum(p[0] for p in parts), sum(p[1] for p in parts)
    share = 100 * leaked / max(total, 1)
    print(f"\nall new corpora leaked: {leaked} / {total} ({share:.1f}%)")
    if args.secrets_only:
        return 0
    total, lines = measure.measure_benign(args.step)
    print(f"\nbenign lines altered: {len(lines)} / {total} ({100 * len(lines) / total:.3f}%)")
    for where, line, out in lines[: args.show]:
        print(f"  {where}: {line.strip()[:90]!r}\n    -> {out.strip()[:90]!r}")
    print_files(args.file_step, args.show)
    bad = measure.measure_ids(50)
    print(f"\nprovider ids altered: {len(bad)} / {len(measure.tool_call_ids(50))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
