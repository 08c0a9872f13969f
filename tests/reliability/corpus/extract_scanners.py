"""Derive ``scanner_cases.json`` from the public test data of two maintained secret scanners.

Run by hand (not by the tests) with the two repositories checked out::

    python tests/reliability/corpus/extract_scanners.py GITLEAKS_DIR DETECT_SECRETS_DIR

Sources, read as data only (no code of theirs is copied or run):

- gitleaks (github.com/gitleaks/gitleaks, MIT): each ``cmd/generate/config/rules/*.go`` rule's
  true positives (``tps``) and false positives (``fps``). String literals are taken as they
  are; ``secrets.NewSecret(<regex>)`` bodies are generated here with a seeded random stream,
  and ``GenerateSampleSecrets(id, s)`` is expanded into our own set of embeddings
  (assignments, YAML, JSON, env), so the secret part of each case is known exactly. For a
  literal case, the secret is the rule regex's secret group when Python's ``re`` compiles it.
- detect-secrets (github.com/Yelp/detect-secrets, Apache-2.0): the ``(line, should_flag)``
  and ``(line, secret)`` parameters of ``tests/plugins/*_test.py``, read with ``ast``.

Each case: ``source`` (scanner and file), ``rule``, ``family``, ``text`` and ``secret`` (the
part that must not survive; ``null`` for a scanner's false positive).
"""

from __future__ import annotations

import ast
import json
import random
import re
import sys
import warnings
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("scanner_cases.json")

# Families the goals name; rules are assigned by words in their id.
_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("private_key", ("private-key", "privatekey", "pkcs", "ssh", "age-secret", "pgp", "gpg")),
    (
        "ai_provider",
        (
            "openai", "anthropic", "huggingface", "cohere", "perplexity", "groq", "xai",
            "replicate", "mistral", "deepseek", "gemini", "nvidia", "langsmith", "bedrock",
            "openrouter", "together", "fireworks", "anyscale",
        ),
    ),
    (
        "cloud",
        (
            "aws", "gcp", "google", "azure", "alibaba", "digitalocean", "heroku", "cloudflare",
            "ibm", "softlayer", "linode", "vultr", "scaleway", "oci", "tencent", "yandex",
            "firebase", "fly", "vercel", "netlify", "databricks", "snowflake", "hashicorp",
            "vault", "doppler", "pulumi", "terraform", "render", "cloudant", "artifactory",
            "cos-hmac", "cos_hmac", "azure-storage",
        ),
    ),
    ("vcs", ("github", "gitlab", "bitbucket", "gitea", "sourcegraph", "gitter")),
    ("database_url", ("jdbc", "postgres", "mongodb", "mysql", "redis", "database", "connection")),
    ("auth_header", ("basic-auth", "basic_auth", "bearer", "authorization", "jwt")),
    ("generic", ("generic", "keyword", "high-entropy", "high_entropy", "password", "secret")),
)  # fmt: skip


def family_of(rule: str) -> str:
    """The family a rule id belongs to (``saas`` when no word matches)."""
    low = rule.lower()
    for family, words in _FAMILIES:
        if any(w in low for w in words):
            return family
    return "saas"


# -- a generator for the simple regexes NewSecret is given ---------------------------------


class _Gen:
    """Random strings for a regex of literals, classes, groups, alternation and counts."""

    def __init__(self, pattern: str, rng: random.Random) -> None:
        self.p, self.i, self.rng = pattern, 0, rng

    def run(self) -> str:
        out = self.alt()
        if self.i != len(self.p):
            raise ValueError(f"unsupported regex at {self.i}: {self.p!r}")
        return out

    def alt(self) -> str:
        branches = [self.seq()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.seq())
        return self.rng.choice(branches)

    def seq(self) -> str:
        out = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            atom = self.atom()
            lo, hi = self.count()
            out.append("".join(atom() for _ in range(self.rng.randint(lo, hi))))
        return "".join(out)

    def count(self) -> tuple[int, int]:
        p = self.p
        if self.i < len(p) and p[self.i] in "?*+":
            ch = p[self.i]
            self.i += 1
            return {"?": (0, 1), "*": (0, 3), "+": (1, 3)}[ch]
        if self.i < len(p) and p[self.i] == "{":
            end = p.index("}", self.i)
            body = p[self.i + 1 : end]
            self.i = end + 1
            lo, _, hi = body.partition(",")
            return int(lo), int(hi) if hi else (int(lo) if not _ else int(lo) + 8)
        return 1, 1

    def atom(self) -> Any:
        p = self.p
        ch = p[self.i]
        if ch == "(":
            self.i += 1
            if p.startswith("?:", self.i):
                self.i += 2
            elif p.startswith("?i:", self.i):
                self.i += 3
            start = self.i
            depth = 0
            # Re-parse the group each time it is repeated, for fresh randomness.
            while True:
                c = p[self.i]
                if c == "\\":
                    self.i += 2
                    continue
                if c == "[":
                    self.i = self._class_end(self.i)
                    continue
                if c == "(":
                    depth += 1
                elif c == ")":
                    if depth == 0:
                        break
                    depth -= 1
                self.i += 1
            inner = p[start : self.i]
            self.i += 1
            return lambda: _Gen(inner, self.rng).run()
        if ch == "[":
            end = self._class_end(self.i)
            chars = _class_chars(p[self.i + 1 : end - 1])
            self.i = end
            return lambda: self.rng.choice(chars)
        if ch == "\\":
            esc = p[self.i + 1]
            self.i += 2
            classes = {"d": "0123456789", "w": _WORD, "s": " "}
            if esc in classes:
                pool = classes[esc]
                return lambda: self.rng.choice(pool)
            return lambda: esc
        if ch in "^$":
            self.i += 1
            return lambda: ""
        self.i += 1
        return lambda: ch

    def _class_end(self, i: int) -> int:
        i += 1
        if self.p[i] == "]":
            i += 1
        while self.p[i] != "]":
            i += 2 if self.p[i] == "\\" else 1
        return i + 1


_WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"


def _class_chars(body: str) -> str:
    if body.startswith("^"):
        raise ValueError("negated class")
    chars: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1]
            chars.extend({"d": "0123456789", "w": _WORD}.get(nxt, nxt))
            i += 2
            continue
        if i + 2 < len(body) and body[i + 1] == "-":
            chars.extend(chr(x) for x in range(ord(c), ord(body[i + 2]) + 1))
            i += 3
            continue
        chars.append(c)
        i += 1
    return "".join(chars)


# -- a tiny evaluator for the Go expressions of the rule files --------------------------------

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|(?P<raw>`[^`]*`)|(?P<str>"(?:[^"\\]|\\.)*")|(?P<ident>[A-Za-z_][\w.]*)"""
    r"""|(?P<num>\d+)|(?P<punct>\.\.\.|[()\[\]{},+:])"""
)

_HELPERS = {
    "utils.Numeric": "[0-9]{%s}",
    "utils.Hex": "[a-f0-9]{%s}",
    "utils.AlphaNumeric": "[a-z0-9]{%s}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
    "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
}

# Our own embeddings of a (name, secret) pair: what GenerateSampleSecrets stands for.
_EMBEDDINGS = (
    '{i}_token = "{s}"',
    "{I}_TOKEN={s}",
    "{i}_token: {s}",
    '{{"{i}_token": "{s}"}}',
    "{i}Token := `{s}`",
    "export {I}_TOKEN='{s}'",
)


class _Parser:
    def __init__(self, text: str, rng: random.Random) -> None:
        self.toks: list[tuple[str, str]] = []
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup
            if kind is not None:
                self.toks.append((kind, m.group(kind)))
        self.i = 0
        self.rng = rng

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.i += 1
        return tok

    def expr(self) -> Any:
        value = self.term()
        while self.peek() == ("punct", "+"):
            self.take()
            right = self.term()
            value = value + right if isinstance(value, str) and isinstance(right, str) else None
        return value

    def items(self, close: str) -> list[Any]:
        out: list[Any] = []
        while self.peek()[1] != close and self.peek()[0] != "eof":
            value = self.expr()
            if self.peek() == ("punct", ":"):  # map[string]string{"name": "text"}
                self.take()
                value = self.expr()
            if self.peek() == ("punct", "..."):
                self.take()
            out.append(value)
            if self.peek() == ("punct", ","):
                self.take()
        self.take()
        return out

    def term(self) -> Any:
        kind, text = self.take()
        if kind == "raw":
            return text[1:-1]
        if kind == "str":
            return ast.literal_eval(text)
        if kind == "punct" and text == "[":  # []string{...}
            self.take()
            self.take()
            self.take()
            return self.items("}")
        if kind == "ident" and text == "map":  # map[string]string{...}
            while self.take()[1] != "{":
                pass
            return self.items("}")
        if kind == "ident":
            if self.peek() == ("punct", "("):
                self.take()
                return self.call(text, self.items(")"))
            return None
        return None

    def call(self, name: str, args: list[Any]) -> Any:
        if name in _HELPERS and args and isinstance(args[0], str):
            return _HELPERS[name] % args[0]
        if name == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name == "secrets.NewSecret" and args and isinstance(args[0], str):
            try:
                return _Gen(args[0], self.rng).run()
            except (ValueError, IndexError):
                return None
        if name == "utils.GenerateSampleSecrets" and len(args) == 2:
            ident, secret = args
            if isinstance(ident, str) and isinstance(secret, str):
                return [(e.format(i=ident, I=ident.upper(), s=secret), secret) for e in _EMBEDDINGS]
        if name == "utils.GenerateSampleSecret" and len(args) == 2:
            ident, secret = args
            if isinstance(ident, str) and isinstance(secret, str):
                return [(f'{ident}_api_token = "{secret}"', secret)]
        if name == "append":
            out: list[Any] = []
            for arg in args:
                if isinstance(arg, list):
                    out.extend(arg)
                elif arg is not None:
                    out.append(arg)
            return out
        if name == "strings.Repeat" and len(args) == 2 and isinstance(args[0], str):
            return None
        return None


def _flatten(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _go_regex(func: str) -> tuple[re.Pattern[str] | None, int]:
    group = re.search(r"SecretGroup:\s*(\d+)", func)
    secret_group = int(group.group(1)) if group else 0
    m = re.search(r"Regex:\s*(.*?),\n\t\t(?:[A-Z]\w*:|\})", func, re.S)
    if m is None:
        return None, secret_group
    source = m.group(1).strip()
    parser = _Parser(source, random.Random(0))
    pattern: Any = None
    if source.startswith("utils.GenerateUniqueTokenRegex("):
        parser.take()
        parser.take()
        args = parser.items(")")
        if args and isinstance(args[0], str):
            flag = "(?i)" if "true" in source.rsplit(",", 1)[-1] else ""
            pattern = flag + r"\b(" + args[0] + r")(?:[\x60'\"\s;]|\\[nr]|$)"
    elif source.startswith("utils.GenerateSemiGenericRegex("):
        parser.take()
        parser.take()
        args = parser.items(")")
        if len(args) >= 2 and isinstance(args[0], list) and isinstance(args[1], str):
            ids = "|".join(x for x in args[0] if isinstance(x, str))
            pattern = (
                r"(?i)[\w.-]{0,50}?(?:" + ids + r")(?:[ \t\w.-]{0,20})[\s'\"]{0,3}"
                r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'\"\s=]{0,5}(" + args[1] + r")"
                r"(?:[\x60'\"\s;]|\\[nr]|$)"
            )
    elif source.startswith("regexp.MustCompile("):
        parser.take()
        parser.take()
        args = parser.items(")")
        pattern = args[0] if args and isinstance(args[0], str) else None
    if not isinstance(pattern, str):
        return None, secret_group
    pattern = pattern.replace(r"\z", r"\Z")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(pattern), secret_group
    except (re.error, OverflowError):
        return None, secret_group


_RUNS = re.compile(r"[A-Za-z0-9+/=_\-.~]{8,}")


def _secret_of(text: str, rx: re.Pattern[str] | None, group: int) -> str | None:
    if rx is not None:
        m = rx.search(text)
        if m is not None:
            if group and m.group(group):
                return m.group(group)
            for g in m.groups():
                if g:
                    return g
            return m.group(0)
    runs = _RUNS.findall(text)
    # The secret is the run that looks least like a word: digits first, then length.
    return max(runs, key=lambda r: (any(c.isdigit() for c in r), len(r))) if runs else None


def gitleaks_cases(root: Path) -> list[dict[str, Any]]:
    """The tps and fps of every gitleaks rule file."""
    cases: list[dict[str, Any]] = []
    for path in sorted((root / "cmd/generate/config/rules").glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        source = path.read_text(encoding="utf-8")
        for func in re.split(r"\nfunc ", source)[1:]:
            rule = re.search(r'RuleID:\s*"([^"]+)"', func)
            if rule is None:
                continue
            rule_id = rule.group(1)
            rx, group = _go_regex(func)
            rng = random.Random(f"{path.name}:{rule_id}")
            for m in re.finditer(r"\b(tps|fps)\s*:?=\s*", func):
                parser = _Parser(func[m.end() :], rng)
                try:
                    values = _flatten(parser.expr())
                except (IndexError, ValueError, SyntaxError):
                    continue
                for value in values:
                    if isinstance(value, tuple):
                        text, secret = value
                    elif isinstance(value, str):
                        text, secret = value, _secret_of(value, rx, group)
                    else:
                        continue
                    if m.group(1) == "fps":
                        secret = None
                    elif not secret:
                        continue
                    cases.append(
                        {
                            "source": f"gitleaks:{path.name}",
                            "rule": rule_id,
                            "family": family_of(rule_id),
                            "text": text,
                            "secret": secret,
                        }
                    )
    return cases


class _PyEval(ast.NodeVisitor):
    """Literal strings of a test module, with module constants and str.format resolved."""

    def __init__(self, module: ast.Module) -> None:
        self.names: dict[str, Any] = {}
        for node in module.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    value = self.value(node.value)
                    if value is not None:
                        self.names[target.id] = value

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self.value(node.left), self.value(node.right)
            return a + b if isinstance(a, str) and isinstance(b, str) else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
        ):
            base = self.value(node.func.value)
            args = [self.value(a) for a in node.args]
            if isinstance(base, str) and all(isinstance(a, str) for a in args):
                try:
                    return base.format(*args)
                except (IndexError, KeyError, ValueError):
                    return None
        if isinstance(node, ast.Tuple | ast.List):
            return [self.value(e) for e in node.elts]
        return None


def detect_secrets_cases(root: Path) -> list[dict[str, Any]]:
    """``(line, should_flag)`` and ``(line, secret)`` parameters of the plugin tests."""
    cases: list[dict[str, Any]] = []
    for path in sorted((root / "tests/plugins").glob("*_test.py")):
        rule = path.stem.removesuffix("_test")
        module = ast.parse(path.read_text(encoding="utf-8"))
        ev = _PyEval(module)
        seen: set[tuple[str, Any]] = set()
        for node in ast.walk(module):
            if not isinstance(node, ast.Tuple) or len(node.elts) < 2:
                continue
            line, expect = ev.value(node.elts[0]), ev.value(node.elts[1])
            if not isinstance(line, str) or not line.strip():
                continue
            if isinstance(expect, bool):
                secret = _secret_of(line, None, 0) if expect else None
            elif isinstance(expect, str) and expect in line:
                secret = expect
            elif expect is None and isinstance(node.elts[1], ast.Constant):
                secret = None
            else:
                continue
            if (line, secret) in seen:
                continue
            seen.add((line, secret))
            cases.append(
                {
                    "source": f"detect-secrets:{path.name}",
                    "rule": rule,
                    "family": family_of(rule),
                    "text": line,
                    "secret": secret,
                }
            )
    return cases


def main(argv: list[str]) -> int:
    """Write scanner_cases.json from the two checkouts named on the command line."""
    gitleaks, detect = Path(argv[1]), Path(argv[2])
    cases = gitleaks_cases(gitleaks) + detect_secrets_cases(detect)
    OUT.write_text(json.dumps(cases, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
