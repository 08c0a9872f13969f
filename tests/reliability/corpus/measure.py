"""Redaction measured on text the project did not write: leaks, alterations, ids, time.

Corpora (see README.md in this directory for their sources):

- ``scanner_cases()``: the rule tests of gitleaks and detect-secrets (``scanner_cases.json``),
  true positives with their secret part, and the scanners' own false positives;
- ``benign_lines()``: every line of the ``.py .md .toml .yaml .json`` files of the packages
  installed next to wayline (its virtualenv's site-packages), read at run time; ``step``
  keeps one line in ``step``, chosen by a hash of the file and line number (deterministic);
- ``tool_call_ids()``: provider-shaped tool-call ids with seeded random bodies.

``python tests/reliability/corpus/measure.py [--step N]`` prints every figure by family and
by source; the tests in ``tests/reliability/test_secrets.py`` and ``tests/redaction`` assert
the goals.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import random
import re
import string
import sys
import sysconfig
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wayline.redaction import redact_text, sanitize

HERE = Path(__file__).resolve().parent
SUFFIXES = (".py", ".md", ".toml", ".yaml", ".json")
# The families whose goal is no leak at all.
ZERO_LEAK_FAMILIES = frozenset(
    {"private_key", "cloud", "vcs", "ai_provider", "database_url", "auth_header"}
)
FRAGMENT = 0.4  # a surviving run of this share of a secret counts as a leak


@dataclass(frozen=True, slots=True)
class Case:
    """One scanner test case: its text, the part that must vanish (None: none), its labels."""

    source: str
    rule: str
    family: str
    text: str
    secret: str | None


def scanner_cases() -> list[Case]:
    """Every case of ``scanner_cases.json``, in file order."""
    data = json.loads((HERE / "scanner_cases.json").read_text(encoding="utf-8"))
    return [Case(d["source"], d["rule"], d["family"], d["text"], d["secret"]) for d in data]


_USER_PASS = re.compile(r"""["'{]*[^:/\s"']+["'}]*:["'{]*(?P<pw>[^:/\s"'{}]+)["'}]*""")
_USERINFO = re.compile(r"//[^:/@\s]*:(?P<pw>[^@/\s]+)@")
_URL = re.compile(r"[A-Za-z][\w+.\-]*://\S+")


def needle(secret: str, text: str = "") -> str:
    """The part of a case's secret that must vanish: a URL's random path part, the password
    of a ``user:password`` pair or URL userinfo (the user name is no secret), else all of it.
    It is read off the secret, or off the URL of ``text`` whose userinfo holds the secret (a
    scanner that captured ``//username`` of ``https://username:password@host``), never off
    another URL of the text: that one has another password."""
    at = text.find(secret) if text and secret else -1
    for found in _USERINFO.finditer(text) if at >= 0 else ():
        if found.start() <= at < found.end():
            return found.group("pw")
    userinfo = _USERINFO.search(secret)
    if userinfo is not None:
        return userinfo.group("pw")
    if _URL.fullmatch(secret) is not None:  # a URL, not a file that holds one
        parts = [p for p in secret.split("://", 1)[1].split("/")[1:] if p]
        if parts:
            return max(parts, key=len)
    pair = _USER_PASS.fullmatch(secret)
    if pair is not None:
        return pair.group("pw")
    return secret


# Kept out of the leak figures, each for a reason read off the case by hand:
# - detect-secrets' IP-address plugin: an address is no credential;
# - masks and documentation placeholders ("AKCxxxxxxxxxx", "A3T0ZZZZZ…", "…EXAMPLEEXAMPLE…"):
#   the scanners flag the shape, but no secret is in them. Only the part that must vanish is
#   judged: elsewhere in the text an indentation, a rule line or an "example.com" host says
#   nothing about the secret;
# - secret parts that are a field name the rule's regex captured ("creationTimestamp",
#   '"type": "service_account"'): the extraction's miss, not a secret.
EXCLUDED_RULES = frozenset({"ip_public"})
_MASK = re.compile(r"(.)\1{7,}|EXAMPLE|xxxx", re.IGNORECASE)
_WORDY = re.compile(r"[A-Za-z_\-\s\":]+")
_CAMEL_WORD = re.compile(r"[a-z]+(?:[A-Z][a-z]+)+")


def excluded(case: Case) -> str | None:
    """Why a true-positive case does not count (None: it counts)."""
    if case.rule in EXCLUDED_RULES:
        return "not a credential"
    assert case.secret is not None
    if _MASK.search(needle(case.secret)) is not None:
        return "mask or placeholder"
    if _CAMEL_WORD.fullmatch(case.secret) is not None or len(needle(case.secret)) < 8:
        return "field name or fragment, not a secret"
    wordy = _WORDY.fullmatch(case.secret) is not None and len(case.secret) < 40
    if wordy and (not any(c.isupper() for c in case.secret[1:]) or " " in case.secret):
        return "field name, not a secret"
    if wordy and re.search(re.escape(case.secret) + r"[ \t]*[:=]", case.text) is not None:
        return "field name, not a secret"  # the name of a header or key (X-JFrog-Art-Api: …)
    return None


def generated_cases(count: int = 6, seed: int = 11) -> list[Case]:
    """Formats the scanners' rules document, with seeded random bodies: private keys (PEM,
    OpenSSH, base64 in a kubeconfig, escaped in JSON), database URLs, auth headers, cloud
    credential lines. The bodies are random, so no memorised value can pass."""
    rng = random.Random(seed)

    def rand(n: int, alphabet: str = _B62) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    b64 = _B62 + "+/"
    cases: list[Case] = []

    def add(family: str, rule: str, text: str, secret: str) -> None:
        cases.append(Case("generated", rule, family, text, secret))

    for _ in range(count):
        body = "\n".join(rand(64, b64) for _ in range(8))
        for kind in ("RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA "):
            pem = f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"
            add("private_key", f"pem {kind.strip() or 'pkcs8'}", pem, body.split("\n")[3])
            add("private_key", "pem in json", json.dumps({"private_key": pem}), body[:64])
        pem = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"
        encoded = base64.b64encode(pem.encode()).decode()
        add("private_key", "kubeconfig client-key-data", f"    client-key-data: {encoded}", encoded)
        password = rand(rng.randint(10, 24), _B62 + "-_.~!*")  # valid in URL userinfo
        user = rand(6, string.ascii_lowercase)
        for scheme in ("postgresql", "mysql", "mongodb+srv", "redis", "amqp", "mssql"):
            url = f"{scheme}://{user}:{password}@db-{rand(4).lower()}.internal:5432/app"
            add("database_url", f"{scheme} url", f"DATABASE_URL={url}", password)
            add("database_url", f"{scheme} url in prose", f"connect with {url} please", password)
        add(
            "database_url",
            "ado.net connection string",
            f"Server=tcp:db.example.net,1433;Database=app;User ID={user};Password={password};",
            password,
        )
        token = rand(rng.randint(24, 48), _B62 + "-_.")
        for scheme in ("Bearer", "Token", "Basic", "Splunk", "ApiKey", "SSWS", "Key"):
            value = token if scheme != "Basic" else base64.b64encode(token.encode()).decode()
            add("auth_header", f"Authorization {scheme}", f"Authorization: {scheme} {value}", value)
            add(
                "auth_header",
                f"curl -H {scheme}",
                f'curl -H "Authorization: {scheme} {value}" https://api.example.com/v1',
                value,
            )
        add("auth_header", "X-API-Key header", f"X-API-Key: {token}", token)
        secret = rand(40, b64)
        add("cloud", "aws secret line", f"aws_secret_access_key = {secret}", secret)
        add("cloud", "aws secret alone", secret, secret)
        key = base64.b64encode(rng.randbytes(64)).decode()
        add(
            "cloud",
            "azure storage connection string",
            f"DefaultEndpointsProtocol=https;AccountName=acct{rand(4).lower()};AccountKey={key};"
            "EndpointSuffix=core.windows.net",
            key,
        )
        add(
            "cloud",
            "gcp service account json",
            json.dumps(
                {
                    "type": "service_account",
                    "private_key_id": rand(40, "0123456789abcdef"),
                    "private_key": f"-----BEGIN PRIVATE KEY-----\n{body}\n"
                    "-----END PRIVATE KEY-----\n",
                }
            ),
            body[:64],
        )
    return cases


def site_packages() -> Path:
    """The site-packages directory of the running interpreter's environment."""
    return Path(sysconfig.get_paths()["purelib"])


def _picked(key: str, step: int) -> bool:
    digest = hashlib.blake2b(key.encode(), digest_size=4).digest()
    return step <= 1 or int.from_bytes(digest, "big") % step == 0


def benign_lines(step: int = 1, file_step: int = 1) -> Iterator[tuple[str, str]]:
    """(``package/path:line``, text) of the non-blank lines of installed packages: one line in
    ``step`` of one file in ``file_step``, picked by a hash of the path (deterministic)."""
    root = site_packages()
    for path in sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("wayline") or not _picked(rel, file_step):
            continue  # our own code is no outside text
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if step > 1 and not _picked(f"{rel}:{number}", step):
                continue
            yield f"{rel}:{number}", line


_B62 = string.ascii_letters + string.digits


def tool_call_ids(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """(kind, id): OpenAI ``call_…``, Anthropic ``toolu_…``, uuid4 and other provider ids."""
    rng = random.Random(seed)

    def body(n: int, alphabet: str = _B62) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    makers: dict[str, Callable[[], str]] = {
        "openai call_": lambda: "call_" + body(24),
        "anthropic toolu_": lambda: "toolu_01" + body(22),
        "anthropic srvtoolu_": lambda: "srvtoolu_01" + body(22),
        "bedrock tooluse_": lambda: "tooluse_" + body(22, _B62 + "-_"),
        "openai responses fc_": lambda: "fc_" + body(48, "0123456789abcdef"),
        "mistral 9-char": lambda: body(9),
        "uuid4": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "gemini function id": lambda: "function-call-" + body(20, string.digits),
    }
    return [(kind, make()) for _ in range(count) for kind, make in makers.items()]


def _windows(secret: str) -> list[str]:
    size = max(1, math.ceil(FRAGMENT * len(secret)))
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def leaked(secret: str, context: str, output: str) -> bool:
    """True when ``secret`` or a run of 40% of it survives in ``output`` (runs that the context
    around the secret also holds do not count: they are not the secret's)."""
    if secret in output:
        return True
    return any(w in output and w not in context for w in _windows(secret))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def exported(text: str) -> str:
    """Every string exporters write for ``text`` in the places a session carries it."""
    payloads = [
        {"role": "user", "content": text},
        {"tool_calls": [{"function": {"name": "terminal", "arguments": json.dumps({"c": text})}}]},
        {"role": "tool", "content": f"$ cat config\n{text}\nexit 0"},
    ]
    leaves = [s for p in payloads for s in _strings(sanitize(p))]
    leaves.append(redact_text(text))
    decoded = []
    for leaf in leaves:
        decoded.append(leaf)
        if leaf.startswith("{"):
            try:
                decoded.extend(_strings(json.loads(leaf)))
            except ValueError:
                pass
    return "\n\x00\n".join(decoded)


@dataclass
class Tally:
    """Counts per label: cases and misses."""

    cases: Counter[str]
    misses: Counter[str]

    @classmethod
    def new(cls) -> Tally:
        """An empty tally."""
        return cls(Counter(), Counter())

    def add(self, label: str, missed: bool) -> None:
        """Count one case under ``label``."""
        self.cases[label] += 1
        self.misses[label] += missed

    def rows(self) -> list[tuple[str, int, int]]:
        """(label, misses, cases), sorted by label."""
        return [(k, self.misses[k], self.cases[k]) for k in sorted(self.cases)]


@dataclass
class SecretFigures:
    """Leaks of the scanner true positives and alterations of their false positives."""

    by_family: Tally
    by_source: Tally
    leaks: list[Case]
    fp_altered: Tally
    excluded: Tally


def measure_secrets(cases: list[Case] | None = None) -> SecretFigures:
    """Run every scanner case through the exported embeddings."""
    figures = SecretFigures(Tally.new(), Tally.new(), [], Tally.new(), Tally.new())
    for case in [*scanner_cases(), *generated_cases()] if cases is None else cases:
        source = case.source.split(":")[0]
        if case.secret is None:
            figures.fp_altered.add(source, redact_text(case.text) != case.text)
            continue
        if excluded(case) is not None:
            figures.excluded.add(source, True)
            continue
        secret = needle(case.secret, case.text)
        context = case.text.replace(secret, "\x00")
        missed = leaked(secret, context, exported(case.text))
        figures.by_family.add(case.family, missed)
        figures.by_source.add(source, missed)
        if missed:
            figures.leaks.append(case)
    return figures


def measure_benign(step: int, file_step: int = 1) -> tuple[int, list[tuple[str, str, str]]]:
    """(lines checked, [(where, line, redacted)]) for the installed packages' lines."""
    total = 0
    altered: list[tuple[str, str, str]] = []
    for where, line in benign_lines(step, file_step):
        total += 1
        out = redact_text(line)
        if out != line:
            altered.append((where, line, out))
    return total, altered


def measure_ids(count: int) -> list[tuple[str, str]]:
    """The tool-call ids that any exported position alters."""
    bad = []
    for kind, ident in tool_call_ids(count):
        payload = {
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": ident, "type": "function", "function": {"name": "x"}}],
                },
                {"role": "tool", "tool_call_id": ident, "content": "ok"},
                {"type": "tool_use", "id": ident, "name": "x", "input": {}},
                {"type": "tool_result", "tool_use_id": ident, "content": f"result of {ident}"},
            ],
            "text": f"calling {ident} now",
        }
        if json.dumps(sanitize(payload)).count(ident) != 6:
            bad.append((kind, ident))
    return bad


def measure_cuts(cases: list[Case]) -> tuple[int, list[tuple[Case, str]]]:
    """(placements, [(case, where)]): each secret placed across every bound sanitizing applies
    to text (the 8 000 / 1 000 / 200-char string bounds, the redaction window's edge), after
    text that redaction shrinks (so the cut moves), and counted when a fragment survives."""
    shrinking = "password=" + "p4ssw0rdValue" * 3 + " "  # becomes password=<redacted>
    placements = 0
    cut: list[tuple[Case, str]] = []
    for case in cases:
        if case.secret is None or excluded(case) is not None:
            continue
        secret = needle(case.secret, case.text)
        line = case.text.replace("\n", " ")
        at = line.find(secret)
        if at < 0 or leaked(secret, line.replace(secret, "\x00"), redact_text(line)):
            continue  # a secret the rules miss anyway is counted as a leak, not as a cut
        for bound in (8_000, 1_000, 200, 8_000 + 16_384):
            for share in (0.3, 0.6):
                # the bound falls inside the secret, share of it before the cut
                lead = bound - at - int(len(secret) * share)
                if lead < 0:
                    continue
                filler = (shrinking * (lead // len(shrinking) + 1))[: max(lead - 1, 0)] + "\n"
                text = filler + line + " tail"
                limit = 60_000 if bound >= 8_000 else (9_000 if bound == 1_000 else 2_000)
                out = json.dumps(sanitize({"t": text, "n": list(range(8))}, max_chars=limit))
                placements += 1
                if leaked(secret, filler + line.replace(secret, "\x00"), out):
                    cut.append((case, f"bound {bound}, {int(share * 100)}% before"))
    return placements, cut


def adversarial(size: int) -> dict[str, str]:
    """Texts of ``size`` chars built to make a backtracking or rescanning rule slow."""
    units = {
        "repeated key:": "key:",
        "repeated password=": "password=",
        "repeated token: ": "token: ",
        "separators": ":=:=\"'\\",
        "BEGIN without END": "-----BEGIN RSA PRIVATE KEY-----\n",
        # each BEGIN stops at a character no key body holds: a search for END per BEGIN
        # would read the rest of the text each time
        "BEGIN, token with _": "-----BEGIN PRIVATE KEY-----\nabc_def\n",
        "BEGIN, token with @": "-----BEGIN PRIVATE KEY-----user@host ",
        "quotes after keys": 'secret="',
        "auth schemes": "Authorization: Bearer ",
        "url userinfo": "https://u:p",
        "flags": "--password ",
        "random run": "aB3dE5gH7jK9",
        "escaped newlines": "api_key\\n",
        "open calls": "token=f(",
    }
    return {name: (unit * (size // len(unit) + 1))[:size] for name, unit in units.items()}


def time_adversarial(size: int) -> dict[str, float]:
    """CPU seconds ``redact_text`` takes on each adversarial text of ``size`` chars."""
    out = {}
    for name, text in adversarial(size).items():
        start = time.process_time()  # CPU time: the machine may be shared
        redact_text(text)
        out[name] = time.process_time() - start
    return out


# After a rule family's trigger: what makes a value's end hard to find (separators, quotes,
# escapes, an unclosed call, an @ or a _ in a token, a line break).
_TAILS = ('=a_b@c:d "x ', ": 'tok_en@h\\n", "(-----BEGIN PRIVATE KEY-----x_")


def trigger_texts(size: int, step: int = 1) -> dict[str, str]:
    """For every trigger word of the active rules (one in ``step``), ``size`` chars of it
    followed by each hostile tail in turn, and texts made of known values: one repeated, its
    prefix repeated (the automaton's worst), its base64 wrapped over lines."""
    from wayline.redaction.redact import _current

    triggers = _current().triggers[::step]
    texts = {}
    for trigger in triggers:
        unit = "".join(trigger + tail for tail in _TAILS)
        texts[f"trigger {trigger!r}"] = (unit * (size // len(unit) + 1))[:size]
    value = KNOWN_SAMPLE
    encoded = base64.b64encode(value.encode() * 40).decode()
    for name, unit in (
        ("known value repeated", value + " "),
        ("known value's prefix repeated", value[:-1] + "#"),
        (
            "known value in wrapped base64",
            "\n".join(encoded[i : i + 76] for i in range(0, 760, 76)),
        ),
    ):
        texts[name] = (unit * (size // len(unit) + 1))[:size]
    return texts


KNOWN_SAMPLE = "kN0wnV4lue-for-the-timing_texts"


def time_triggers(size: int, step: int = 1) -> dict[str, float]:
    """CPU seconds ``redact_text`` takes on each of ``trigger_texts(size, step)``, with
    ``KNOWN_SAMPLE`` a known value meanwhile."""
    return {name: time_of(text) for name, text in trigger_texts(size, step).items()}


def time_of(text: str) -> float:
    """CPU seconds of one ``redact_text(text)``, with ``KNOWN_SAMPLE`` a known value."""
    from wayline.redaction import KnownValues

    known = KnownValues()
    known.add(KNOWN_SAMPLE, "timing")
    redact_text("")  # the automaton of the known values is built now, not in the timing
    start = time.process_time()  # CPU time: the machine may be shared
    redact_text(text)
    spent = time.process_time() - start
    del known
    return spent


def _print_tally(title: str, tally: Tally) -> None:
    print(f"\n{title}")
    for label, misses, cases in tally.rows():
        print(f"  {label:<28} {misses:>5} / {cases:<5} ({100 * misses / max(cases, 1):.1f}%)")


def main(argv: list[str] | None = None) -> int:
    """Print every figure."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--step", type=int, default=20, help="keep one benign line in STEP")
    parser.add_argument("--show", type=int, default=30, help="examples to print")
    args = parser.parse_args(argv)
    figures = measure_secrets()
    _print_tally("secrets leaked, by family", figures.by_family)
    _print_tally("secrets leaked, by source", figures.by_source)
    _print_tally("scanner false positives altered, by source", figures.fp_altered)
    for case in figures.leaks[: args.show]:
        print(f"  LEAK {case.family} {case.rule}: {case.text[:110]!r}")
    total, altered = measure_benign(args.step)
    print(f"\nbenign lines altered: {len(altered)} / {total} ({100 * len(altered) / total:.3f}%)")
    for where, line, out in altered[: args.show]:
        print(f"  {where}: {line.strip()[:90]!r}\n    -> {out.strip()[:90]!r}")
    sys.path.insert(0, str(HERE.parent))  # the held-out corpora (heldout.py) import this module
    from corpus import heldout

    heldout.print_secrets(args.show)
    heldout.print_files(args.step // 2 or 1, args.show)
    bad = measure_ids(50)
    print(f"\ntool-call ids altered: {len(bad)} / {len(tool_call_ids(50))}")
    print(Counter(kind for kind, _ in bad))
    for size in (50_000, 1_000_000):
        worst = max(time_adversarial(size).items(), key=lambda kv: kv[1])
        print(f"adversarial {size} chars: worst {worst[0]!r} {worst[1]:.2f} s")
        worst = max(time_triggers(size).items(), key=lambda kv: kv[1])
        print(f"rule triggers and known values, {size} chars: worst {worst[0]} {worst[1]:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
