"""Read trufflehog's detector pattern tests into ``local/trufflehog_cases.json`` (by hand).

The file is not committed (see ``heldout.TRUFFLEHOG``).

``python tests/reliability/corpus/extract_trufflehog.py TRUFFLEHOG_CHECKOUT``

trufflehog (Truffle Security, AGPL-3.0) tests each detector's pattern with a table of
``input`` texts and the values (``want``) its detector must report in them
(``pkg/detectors/**/*_test.go``, integration tests left out). Each reported value is one case:
its text the input, its secret the value. A reported value that is not in the input as it
stands (trufflehog joins a key and its id, or writes them as a JSON object) is cut into the
pieces that are; the most random piece that is not a URL, host or e-mail is the secret. An
input with nothing to report is a negative (no secret).

The Go test files are read here with a small reader of our own: string literals (raw and
interpreted), package and local string constants, ``+``, ``fmt.Sprintf`` with ``%s %v %q
%d``, ``strings.Repeat`` and ``strings.TrimSpace``. A test whose input or values use anything
else is skipped. Only data is taken: the test texts and values. No code of trufflehog is
copied or run.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/reliability
from corpus.extract_heldout import _case
from corpus.extract_scanners import family_of

HERE = Path(__file__).resolve().parent

_TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<raw>`[^`]*`)"""
    r"""|(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<rune>'(?:[^'\\\n]|\\.)+')"""
    r"""|(?P<ident>[A-Za-z_]\w*)|(?P<num>\d[\w.]*)|(?P<op>:=|\.\.\.|&&|\|\||==|!=|<-|.)""",
    re.S,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a"}
_ESCAPES |= {"b": "\b", "f": "\f", "v": "\v"}

Tok = tuple[str, str]  # (kind, text); kind "str" holds the decoded value


def _unquote(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            out.append(chr(int(body[i + 2 : i + 2 + width], 16)))
            i += 2 + width
        else:  # octal \NNN
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
    return "".join(out)


def tokens(source: str) -> list[Tok]:
    """Go tokens, comments and blanks dropped, string literals decoded."""
    out: list[Tok] = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup
        text = m.group()
        if kind in ("ws", "comment"):
            continue
        if kind == "raw":
            out.append(("str", text[1:-1].replace("\r", "")))
        elif kind == "str":
            out.append(("str", _unquote(text[1:-1])))
        else:
            out.append((str(kind), text))
    return out


class _Unknown(Exception):
    """An expression this reader does not evaluate."""


_VERB = re.compile(r"%([-+# 0]*\d*)([svqdx%])")


def _sprintf(fmt: str, args: list[str]) -> str:
    values = iter(args)

    def one(m: re.Match[str]) -> str:
        if m.group(2) == "%":
            return "%"
        if m.group(1):
            raise _Unknown("width or flags")
        value = next(values)
        return json.dumps(value, ensure_ascii=False) if m.group(2) == "q" else value

    try:
        return _VERB.sub(one, fmt)
    except StopIteration as e:
        raise _Unknown("too few arguments") from e


class GoFile:
    """String constants and pattern-test tables of one Go test file."""

    def __init__(self, source: str) -> None:
        self.toks = tokens(source)
        self.names: dict[str, str | None] = {}
        self.unread = 0  # table elements whose input or values this reader cannot evaluate
        self._collect_names()

    # -- expressions ----------------------------------------------------------------------

    def _skip(self, i: int) -> int:
        """Index after the expression at ``i`` (stops at ``,`` ``}`` ``)`` ``;`` at depth 0,
        or at a new line's assignment, which Go's tokens do not mark: callers bound it)."""
        depth = 0
        while i < len(self.toks):
            kind, text = self.toks[i]
            if kind == "op" and text in "([{":
                depth += 1
            elif kind == "op" and text in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            elif kind == "op" and text == "," and depth == 0:
                return i
            i += 1
        return i

    def expr(self, i: int) -> tuple[str, int]:
        """(value, index after) of the string expression at ``i``; raises ``_Unknown``."""
        value, i = self._primary(i)
        while i < len(self.toks) and self.toks[i] == ("op", "+"):
            more, i = self._primary(i + 1)
            value += more
        return value, i

    def _args(self, i: int) -> tuple[list[str], int]:
        if self.toks[i] != ("op", "("):
            raise _Unknown("call")
        i += 1
        args: list[str] = []
        while self.toks[i] != ("op", ")"):
            if self.toks[i][0] == "num":
                args.append(self.toks[i][1])
                i += 1
            else:
                value, i = self.expr(i)
                args.append(value)
            if self.toks[i] == ("op", ","):
                i += 1
        return args, i + 1

    def _primary(self, i: int) -> tuple[str, int]:
        kind, text = self.toks[i]
        if kind == "str":
            return text, i + 1
        if kind != "ident":
            raise _Unknown(text)
        if self.toks[i + 1] == ("op", ".") and self.toks[i + 2][0] == "ident":
            call = f"{text}.{self.toks[i + 2][1]}"
            funcs: dict[str, Callable[[list[str]], str]] = {
                "fmt.Sprintf": lambda a: _sprintf(a[0], a[1:]),
                "strings.Repeat": lambda a: a[0] * int(a[1]),
                "strings.TrimSpace": lambda a: a[0].strip(),
            }
            if call not in funcs:
                raise _Unknown(call)
            args, end = self._args(i + 3)
            return funcs[call](args), end
        value = self.names.get(text)
        if value is None:
            raise _Unknown(text)
        return value, i + 1

    # -- names ----------------------------------------------------------------------------

    def _collect_names(self) -> None:
        """``NAME = "…"`` and ``NAME := "…"`` anywhere: a name given two values is unknown."""
        values: dict[str, set[str]] = {}
        for _ in range(3):  # names defined from names, in any order
            for i in range(1, len(self.toks) - 1):
                kind, name = self.toks[i]
                if kind != "ident" or self.toks[i + 1] not in (("op", "="), ("op", ":=")):
                    continue
                if self.toks[i - 1] == ("op", "."):
                    continue  # a field assignment
                try:
                    value, _ = self.expr(i + 2)
                except (_Unknown, IndexError, ValueError):
                    continue
                values.setdefault(name, set()).add(value)
                self.names[name] = value if len(values[name]) == 1 else None

    # -- tables ---------------------------------------------------------------------------

    def tables(self) -> list[tuple[str, str, list[str]]]:
        """(test name, input, wanted values) of every table element with both fields."""
        out: list[tuple[str, str, list[str]]] = []
        stack: list[dict[str, Any]] = []
        i = 0
        while i < len(self.toks):
            tok = self.toks[i]
            if tok == ("op", "{"):
                stack.append({})
            elif tok == ("op", "}") and stack:
                element = _wanted(stack.pop())
                if isinstance(element.get("input"), str) and isinstance(element.get("want"), list):
                    out.append((str(element.get("name", "")), element["input"], element["want"]))
                elif "input" in element and "want" in element:
                    self.unread += 1
            elif (
                stack
                and tok[0] == "ident"
                and tok[1] in _FIELDS
                and self.toks[i + 1] == ("op", ":")
                and self.toks[i - 1] in (("op", "{"), ("op", ","))
            ):
                value = self._field(tok[1], i + 2)
                stack[-1][_FIELDS[tok[1]]] = value
            i += 1
        return out

    def _field(self, field: str, i: int) -> Any:
        try:
            if self.toks[i] in (("ident", "true"), ("ident", "false")):
                return self.toks[i][1] == "true"
            if field != "want":
                return self.expr(i)[0]
            if self.toks[i] == ("ident", "nil"):
                return []
            head = [t for _, t in self.toks[i : i + 4]]
            if head != ["[", "]", "string", "{"]:
                return None
            i += 4
            values: list[str] = []
            while self.toks[i] != ("op", "}"):
                value, i = self.expr(i)
                values.append(value)
                if self.toks[i] == ("op", ","):
                    i += 1
            return values
        except (_Unknown, IndexError, ValueError):
            return None


# Two table shapes: ``input`` with the ``want`` values, and ``data`` with ``shouldMatch`` and
# the one ``match`` (a ``skip``ped element is a case trufflehog's detector gets wrong: still
# a case here, its text and value are as good).
_FIELDS = {"name": "name", "input": "input", "data": "input", "want": "want"}
_FIELDS |= {"shouldMatch": "should", "match": "match"}


def _wanted(element: dict[str, Any]) -> dict[str, Any]:
    if "should" in element:
        match = element.get("match")
        if element["should"] is False:
            element["want"] = []
        elif isinstance(match, str):
            element["want"] = [match]
        else:
            element["want"] = None
    return element


# -- the secret part of a reported value -----------------------------------------------------

_USERINFO = re.compile(r"://[^/\s:@]*:(?P<pw>[^@\s/]+)@")
# a URL, an e-mail address, or a host name (a top-level domain of letters: "hvs.CAES…1Ync"
# and other dotted tokens end in a random label)
_PUBLIC = re.compile(
    r"(?i)^(?:[a-z][\w+.-]*://\S*|[\w.+-]+@[\w-]+\.[\w.-]+|(?:[a-z0-9-]+\.)+[a-z]{2,24}(?::\d+)?)$"
)


def _randomness(piece: str) -> float:
    counts = Counter(piece)
    return -sum(n / len(piece) * math.log2(n / len(piece)) for n in counts.values()) * len(piece)


def pieces(value: str, text: str) -> list[str]:
    """The parts of a reported value that stand in the input: the value itself, a JSON
    object's values, two halves joined with or without a separator, or a key joined with a
    URL or host that is not in the input."""
    if value in text:
        return [value]
    try:
        data = json.loads(value)
    except ValueError:
        data = None
    if isinstance(data, dict):
        return [
            v
            for k, v in data.items()
            if isinstance(v, str) and v and v in text and _IDENTIFIER.search(k) is None
        ]
    for sep in (":", ";", "|", "@", ",", " ", "/"):
        # a separator followed by "//" starts a URL: the URL stays one part
        parts = [p for p in re.split(re.escape(sep) + "(?!//)", value) if p]
        if len(parts) > 1 and all(p in text for p in parts):
            return parts
    for cut in range(4, len(value) - 3):
        if value[:cut] in text and value[cut:] in text:
            return [value[:cut], value[cut:]]
    # a key joined with the endpoint its detector assumed ("glpat-…https://gitlab.com")
    for cut in range(len(value) - 4, 7, -1):
        rest = value[cut:].lstrip(":;|@ ")
        if value[:cut] in text and rest and _PUBLIC.fullmatch(rest) is not None:
            return [value[:cut]]
    return []


def _public(piece: str) -> bool:
    return _PUBLIC.fullmatch(piece) is not None and _USERINFO.search(piece) is None


# The name a piece stands after ("User=…", "<username>{vendor …", '"tenant_id": "…"'): a piece
# named as an identifier is the public half of a pair (docs/redaction.md, principle 1).
_IDENTIFIER = re.compile(
    r"(?i)(?:^|[^a-z])(?:id|ids|user|username|login|email|mail|org|organization|account"
    r"|tenant|domain|host|hostname|url|endpoint|region|project|workspace|team|name)$"
)
_LABELS = re.compile(r"[A-Za-z][\w-]*")


def _named_identifier(piece: str, text: str) -> bool:
    line_start = text.rfind("\n", 0, text.index(piece)) + 1
    words = _LABELS.findall(text[line_start : text.index(piece)])
    return any(_IDENTIFIER.search(word) is not None for word in words[-2:])


def secret_of(value: str, text: str) -> str | None:
    """The most random piece of ``value`` found in ``text`` that is no URL, host or e-mail,
    nor named as an identifier when another piece is not; for a URL rewritten by its
    detector, the password of its userinfo."""
    found = [p for p in pieces(value, text) if not _public(p)] or ([value] if value in text else [])
    if len(found) > 1:
        found = [p for p in found if not _named_identifier(p, text)] or found
    if not found:
        userinfo = _USERINFO.search(value)
        if userinfo is not None and userinfo.group("pw") in text:
            return userinfo.group("pw")
    return max(found, key=_randomness) if found else None


_ADDRESS = re.compile(r"(?i)[\w.+-]+@[\w-]+\.[\w.-]+|(?:[a-z0-9-]+\.)+[a-z]{2,24}(?::\d+)?")

# A connection string of key=value parts ("Endpoint=…;Id=…;Secret=…"): its secret is the
# part a credential key names; endpoints, ids and names stay.
_KEY_VALUES = re.compile(r"[A-Za-z][\w ]*=[^;]*(?:;[A-Za-z][\w ]*=[^;]*)+;?")
_CREDENTIAL_PART = re.compile(
    r"(?i)(?:^|;)\s*(?:secret|password|pwd|account ?key|shared ?access ?key|access ?key"
    r"|shared ?secret)=(?P<v>[^;]+)"
)

# A database URL's secret is its password (userinfo or a password parameter); one with none
# ("jdbc:sqlite:/data/test.db", "jdbc:postgresql://localhost:5432/postgres") holds no secret.
_DATABASE_URL = re.compile(
    r"(?i)^(?:jdbc:)?(?:postgres(?:ql)?|mysql|mariadb|sqlserver|mssql|oracle|db2|sqlite"
    r"|mongodb(?:\+srv)?|rediss?|couchbases?|amqps?)[:]"
)
_URL_PASSWORD = re.compile(
    r"(?i)://[^/\s:@]*:(?P<userinfo>[^@\s/]+)@|[;?&](?:password|pwd)=(?P<param>[^;&\s]+)"
)


def database_password(url: str) -> str | None:
    """The password of a database URL, ``""`` for one without, None for no database URL."""
    if _DATABASE_URL.match(url) is None:
        return None
    found = _URL_PASSWORD.search(url)
    return "" if found is None else found.group("userinfo") or found.group("param")


# -- the corpus -------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={root}", *args], check=True, capture_output=True, text=True
    ).stdout


def test_files(root: Path) -> dict[str, str]:
    """``{path: source}`` of the detector pattern tests of a checkout or a bare git dir."""
    if (root / "pkg/detectors").is_dir():
        paths = sorted(root.glob("pkg/detectors/**/*_test.go"))
        found = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in paths}
    else:
        names = _git(root, "ls-tree", "-r", "--name-only", "HEAD", "pkg/detectors").split("\n")
        paths_in = [n for n in names if n.endswith("_test.go")]
        found = {n: _git(root, "show", f"HEAD:{n}") for n in paths_in}
    return {p: s for p, s in found.items() if not p.endswith("_integration_test.go")}


def trufflehog_cases(root: Path) -> tuple[list[dict[str, Any]], Counter[str]]:
    """(cases, counts of what was skipped and why)."""
    out: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    seen: set[tuple[str, str | None]] = set()
    for path, source in test_files(root).items():
        detector = path.removeprefix("pkg/detectors/").rsplit("/", 1)[0]
        if "/" not in path.removeprefix("pkg/detectors/"):
            continue  # the package's own helpers, not a detector
        family = family_of(re.sub(r"[/_\s]+", "-", detector))
        src = f"trufflehog:{path}"
        go = GoFile(source)
        tables = go.tables()
        skipped["test whose input or values are not read"] += go.unread
        for _name, raw, wanted in tables:
            # a raw string's lines carry the Go code's indentation, not the text's own
            text = textwrap.dedent(raw.expandtabs(4)).strip("\n")
            if not text.strip():
                continue
            if not wanted and (text, None) not in seen:
                seen.add((text, None))
                out.append(_case(src, detector, family, text, None))
            for value in wanted:
                secret = secret_of(value, text)
                password = None if secret is None else database_password(secret)
                if password is not None:
                    secret = password or None
                    if secret is None:
                        skipped["database URL without a password"] += 1
                        continue
                if secret is not None and _KEY_VALUES.fullmatch(secret) is not None:
                    named = _CREDENTIAL_PART.search(secret)
                    secret = secret if named is None else named.group("v")
                if secret is not None and _ADDRESS.fullmatch(secret) is not None:
                    skipped["reported value is an e-mail address or a host"] += 1
                    continue  # zipbooks reports the user's address, not the password by it
                if secret is None:
                    skipped["reported value not in its input"] += 1
                elif (text, secret) not in seen:
                    seen.add((text, secret))
                    out.append(_case(src, detector, family, text, secret))
    return out, skipped


def main(argv: list[str]) -> int:
    """Write ``trufflehog_cases.json`` from a checkout (or a bare git directory)."""
    if len(argv) != 1:
        print("usage: extract_trufflehog.py TRUFFLEHOG_CHECKOUT")
        return 2
    cases, skipped = trufflehog_cases(Path(argv[0]))
    (HERE / "local").mkdir(exist_ok=True)
    (HERE / "local" / "trufflehog_cases.json").write_text(
        json.dumps(cases, indent=0, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    positives = sum(1 for c in cases if c["secret"] is not None)
    print(f"{len(cases)} cases ({positives} with a secret); skipped: {dict(skipped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
