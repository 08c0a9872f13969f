"""Secret redaction for text and key names: the one policy every payload and exporter shares.

`is_sensitive_key` decides whether a mapping key (or header name, or the name in
`NAME=value` text) holds a credential; `redact_text` replaces only the secret part of
secret-looking spans in any string ("Authorization: Bearer <redacted>").

`redact_text` sits on hot paths: every rule is gated by lowercase trigger substrings, found
by one regex scan, and recent results are cached. Rules can be added at runtime
(`add_secret_pattern`, `add_sensitive_key`) or from a file named by `WAYLINE_REDACT_PATTERNS`.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from wayline.contract._trie import any_word_pattern

__all__ = [
    "REDACTED",
    "REDACT_PATTERNS_ENV",
    "SecretPattern",
    "add_secret_pattern",
    "add_sensitive_key",
    "is_sensitive_key",
    "redact_text",
    "reload_env_patterns",
    "remove_secret_pattern",
    "secret_patterns",
]

REDACTED = "<redacted>"
REDACT_PATTERNS_ENV = "WAYLINE_REDACT_PATTERNS"

_log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- key names

_CAMEL_LOWER_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CAMEL_ACRONYM = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")

# A key containing one of these words anywhere is a credential ("db_password", "client_secret").
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "secret",
        "secrets",
        "apikey",
        "credential",
        "credentials",
        "cookie",
        "bearer",
        "privatekey",
    }
)
# "<qualifier>_key" is a credential; plain "key", "primary_key", "pattern_key" and
# "session_key" (a Hermes approval field) are not.
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "private",
        "secret",
        "access",
        "signing",
        "encryption",
        "client",
        "master",
        "account",
        "shared",
        "subscription",
        "auth",
        "app",
        "license",
    }
)
# "max_token", "num_token": counts, never credentials (the plural forms never match at all).
_COUNT_WORDS = frozenset(
    {"max", "min", "num", "n", "total", "input", "output", "prompt", "completion", "cached"}
)

_extra_keys: frozenset[str] = frozenset()


def _split_key(key: str) -> tuple[str, ...]:
    spaced = _CAMEL_ACRONYM.sub("_", _CAMEL_LOWER_UPPER.sub("_", key)).lower()
    return tuple(w for w in _NON_ALNUM.split(spaced) if w)


@functools.lru_cache(maxsize=4096)
def _sensitive(key: str) -> bool:
    words = _split_key(key)
    if not words:
        return False
    if "_".join(words) in _extra_keys:
        return True
    if any(w in _SECRET_WORDS for w in words):
        return True
    last = words[-1]
    prev = words[-2] if len(words) > 1 else ""
    if last == "token":
        return prev not in _COUNT_WORDS
    if last in ("authorization", "auth"):
        return True
    if last == "key" and prev in _KEY_QUALIFIERS:
        return True
    if last == "header" and prev in ("auth", "authorization"):
        return True
    # POSIX $PWD is the working directory; "db_pwd" / "mysql_pwd" are passwords.
    return "pwd" in words and len(words) > 1


def is_sensitive_key(key: str) -> bool:
    """True when a key/header/variable name holds a credential (case and '-'/camelCase blind)."""
    return _sensitive(key if type(key) is str else str(key))


def add_sensitive_key(name: str) -> None:
    """Treat `name` (normalized like every key) as a credential key from now on, process-wide."""
    global _extra_keys, _key_words, _names_rx
    words = _split_key(name)
    if not words:
        raise ValueError(f"add_sensitive_key: {name!r} has no letters or digits")
    with _lock:
        _extra_keys = _extra_keys | {"_".join(words)}
        # Any spelling of the key contains its longest word in lowercase: scan for that.
        _key_words = tuple(sorted({*_key_words, max(words, key=len)}))
        _names_rx = _names_before_separators(_key_words)
        _sensitive.cache_clear()
        _rebuild()


# --------------------------------------------------------------------------- value rules


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One value-redaction rule: its name, lowercase trigger substrings gating it, its rewrite."""

    name: str
    triggers: frozenset[str]
    apply: Callable[[str], str]
    regex: re.Pattern[str] | None = None  # what a regex rule was made from (it pickles)


def _group_replacer(match: re.Match[str]) -> str:
    whole = match.group(0)
    start, end = match.span("secret")
    if start < 0 or start == end:
        return whole
    base = match.start()
    return whole[: start - base] + REDACTED + whole[end - base :]


def _whole_replacer(match: re.Match[str]) -> str:
    return REDACTED if match.group(0) else ""  # no marker between every character


def _regex_rule(name: str, regex: re.Pattern[str], triggers: Iterable[str]) -> SecretPattern:
    """A rule replacing the `secret` named group when the regex has one, else the whole match."""
    replacer = _group_replacer if "secret" in regex.groupindex else _whole_replacer

    def apply(text: str) -> str:
        return regex.sub(replacer, text)

    return SecretPattern(name, frozenset(t.lower() for t in triggers), apply, regex)


# A credential-looking token: 8+ chars and either a digit or two capitals, so prose
# such as "bearer of good news" or "Basic arithmetic" never matches.
def _tokenish(chars: str, tail: str = "") -> str:
    return rf"(?=[{chars}]*[0-9]|(?:[{chars}]*?[A-Z]){{2}})[{chars}]{{8,}}{tail}"


def _after_escape(literal: str) -> str:
    """Lookbehinds for ``literal`` after a JSON escape (the ``n`` of ``\\n`` is no token part)."""
    return rf"(?<=\\[nrtbf]{literal})|(?<=\\u[0-9A-Fa-f]{{4}}{literal})"


def _lit(prefix: str, rest: str, before: str = "A-Za-z0-9") -> str:
    """`prefix` then `rest`, where `prefix` must not be glued to a preceding `before` char.

    The boundary check sits after the literal on purpose: a leading lookbehind stops the
    regex engine from scanning for the literal prefix at C speed (about 100x slower).
    """
    escaped = re.escape(prefix)
    return f"{escaped}(?:(?<![{before}]{escaped})|{_after_escape(escaped)}){rest}"


_PEM = re.compile(
    r"-----BEGIN (?P<kind>[A-Z0-9 ]*?)PRIVATE KEY(?P<block> BLOCK)?-----"
    r"(?:(?P<body>[\s\S]*?)(?P<end>-----END [A-Z0-9 ]*?PRIVATE KEY(?: BLOCK)?-----)"
    r"|[A-Za-z0-9+/=\s\\:,.\-]*)"
)


def _pem_replacer(match: re.Match[str]) -> str:
    kind = match.group("kind")
    block = match.group("block") or ""
    head = f"-----BEGIN {kind}PRIVATE KEY{block}-----"
    if match.group("end") is None:  # unterminated (e.g. cut by a length bound): redact the rest
        return head + REDACTED
    return f"{head}{REDACTED}-----END {kind}PRIVATE KEY{block}-----"


def _pem_apply(text: str) -> str:
    return _PEM.sub(_pem_replacer, text)


# An unquoted value ends at whitespace, a quote or separator, or a JSON escape (``\n``).
_BARE = r"""(?:[^\s"',;&\\]|\\(?![nrtbfu"]))+"""
# NAME = value / "name": "value" / name => 'value' (JSON, YAML, env, ini, kwargs, repr).
_ASSIGN = re.compile(
    r"""(?P<name>[A-Za-z_][\w.\-]*+)(?P<q1>\\*+["'])?[ \t]*+(?::=|==|=>|[:=])[ \t]*+"""
    r"""(?P<q2>\\*+["']|\\*'\\*"\\*'\\*"\\*')?(?P<scheme>(?:bearer|basic|token|digest)[ \t]+)?"""
    r"""(?P<val>(?(q2)(?:[^"'\\\r\n]|\\(?!\\*["']))+|""" + _BARE + "))",
    re.IGNORECASE,
)


def _names_before_separators(words: Iterable[str]) -> re.Pattern[str]:
    """A regex over the REVERSED lowercase text: a separator, then a name with a trigger word.

    Scanning reversed text lets the engine skip to each ':' or '=' at C speed and reject
    names without a trigger word there; a forward regex would have to be tried at every
    word start in Python-visible steps.
    """
    alternatives = "|".join(re.escape(w[::-1]) for w in sorted(words, key=len, reverse=True))
    # Applied to lowercased text: case-blind matching makes the engine about 2x slower.
    return re.compile(
        r"""[:=][ \t]*+(?:["']\\*+)?(?P<name>[\w.\-]*?(?:""" + alternatives + r""")[\w.\-]*+)"""
    )


# --name value / --name=value / -u user:pass (shell commands in tool arguments). The
# value is in a lookahead so a non-sensitive flag consumes only its name.
_FLAG = re.compile(
    r"""-(?:(?<![\w\-]-)|""" + _after_escape("-") + r""")-?(?P<name>[A-Za-z][\w\-]*+)(?:=|[ \t]+)"""
    r"""(?=(?P<q>["'])?(?P<val>(?(q)[^"'\r\n]+|(?!-)[^\s"'`;&|]+)))"""
)

# Substrings present in (the lowercase form of) every name `_sensitive` accepts.
_KEY_TRIGGERS = ("pass", "pwd", "secret", "key", "credential", "cookie", "bearer", "token", "auth")
_key_words: tuple[str, ...] = _KEY_TRIGGERS  # plus the longest word of each added key
_names_rx = _names_before_separators(_key_words)
_ESCAPE_LETTER = re.compile(r"[nrtbf]|u[0-9A-Fa-f]{4}")
_NEXT_VALUE = re.compile(
    r"""(?:(?<=[:=])|[ \t]*+(?::=|==|=>|[:=]))[ \t]*+(?:\\*["'])?"""
    + _BARE
    + r"""(?:["'][^"'\r\n]*)?"""
)


def _name_start(text: str, start: int, end: int) -> int:
    """A scanned name's start: past an escape's letter (``\\npassword``) and non-ASCII ones."""
    escape = _ESCAPE_LETTER.match(text, start, end) if text[start - 1 : start] == "\\" else None
    start = escape.end() if escape is not None else start
    while start < end and not (text[start] == "_" or "a" <= text[start].lower() <= "z"):
        start += 1
    return start


def _assign_apply(text: str) -> str:
    size = len(text)
    backwards = text[::-1].lower()
    if len(backwards) != size:  # a few characters lowercase to two; keep offsets aligned
        backwards = "".join(c.lower() if len(c.lower()) == 1 else c for c in text[::-1])
    starts = [
        _name_start(text, size - m.end("name"), size - m.start("name"))
        for m in _names_rx.finditer(backwards)
    ]
    out: list[str] = []
    pos = 0
    for j in reversed(starts):
        if j < pos:
            continue
        match = _ASSIGN.match(text, j)
        if match is None or not _sensitive(match.group("name")):
            continue
        start, end = match.span("val")
        if match.group("q2") is None:
            # "credentials: Proxy-Authorization: tok": the value is a name; take its value too
            more = _NEXT_VALUE.match(text, end)
            end = more.end() if more is not None else end
        if text.startswith(REDACTED, start):
            continue
        out.append(text[pos:start])
        out.append(REDACTED)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _flag_apply(text: str) -> str:
    out: list[str] = []
    pos = 0
    for match in _FLAG.finditer(text):
        if match.start() < pos:
            continue
        start, end = match.span("val")
        name = match.group("name")
        if name in ("u", "user"):  # curl -u user:pass keeps the user name
            colon = match.group("val").find(":")
            if colon < 0:
                continue
            start += colon + 1
        elif not _sensitive(name):
            continue
        if text.startswith(REDACTED, start):
            continue
        out.append(text[pos:start])
        out.append(REDACTED)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_NOT_REDACTED = r"(?!<redacted>)"

# Contextual rules replace only their `secret` group: (name, regex, triggers, flags).
_CONTEXT_REGEXES: tuple[tuple[str, str, tuple[str, ...], int], ...] = (
    ("url_credentials", r"://[^\s:/?#@\"'<>]*:(?P<secret>[^\s/?#@\"'<>]+)@", ("@",), 0),
    ("url_token_userinfo", r"://(?P<secret>(?=[\w.~%\-]*[0-9])[\w.~%\-]{20,})@", ("@",), 0),
    ("bearer",
     r"earer(?:(?<![A-Za-z0-9_][Bb]earer)|" + _after_escape("[Bb]earer") + r")[ \t]+(?P<secret>"
     + _tokenish(r"\w.~+/\-", "=*") + ")",
     ("bearer",), 0),
    ("basic_auth",
     r"asic(?:(?<![A-Za-z0-9_][Bb]asic)|" + _after_escape("[Bb]asic") + r")[ \t]+(?P<secret>"
     + _tokenish("A-Za-z0-9+/", "={0,2}") + ")",
     ("basic",), 0),
    ("cookie_header",
     # "Cookie"/"cookie", alone or after "Set-": the value runs to the end of the line.
     r"ookie(?<=[Cc]ookie)(?:(?<![A-Za-z0-9_\-][Cc]ookie)|(?<=[Ss]et-[Cc]ookie)|"
     + _after_escape("[Cc]ookie") + ")"
     r"(?:\\*+[\"'])?[ \t]*+[:=][ \t]*+(?:\\*+[\"'])?"
     r"(?P<secret>" + _NOT_REDACTED + r"[^\"\\\r\n]+)",
     ("cookie",), 0),
    ("query_secret_param",
     r"[?&;](?:key|sig|signature|auth|x-amz-signature|x-amz-credential|x-goog-signature"
     r"|x-goog-credential)=(?P<secret>" + _NOT_REDACTED + r"[^&#\s\"'<>]+)",
     ("key=", "sig", "auth=", "credential="), re.IGNORECASE),
    ("netrc_password",
     r"machine(?:(?<![A-Za-z0-9_]machine)|" + _after_escape("machine") + r")"
     r"\s+\S+\s+login\s+\S+\s+password\s+(?P<secret>" + _NOT_REDACTED
     + r"(?:[^\s\\]|\\(?![nrtbfu\"]))+)",
     ("machine",), 0),
    ("slack_webhook",
     r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_\-]{10,})",
     ("hooks.slack.com",), 0),
    ("discord_webhook", r"/api/webhooks/[0-9]+/(?P<secret>[A-Za-z0-9_\-]{20,})",
     ("/api/webhooks/",), 0),
)  # fmt: skip

# Token shapes replace the whole token: (name, literal prefix, rest). The prefix, lowercased,
# is the trigger.
_TOKEN_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("openai_style_key", "sk-", r"(?=[\w\-]*[0-9])[\w\-]{20,}"),  # also sk-ant-, sk-proj-, …
    ("stripe_secret_key", "sk_", r"(?:live|test)_[0-9A-Za-z]{16,}"),
    ("stripe_restricted_key", "rk_", r"(?:live|test)_[0-9A-Za-z]{16,}"),
    ("stripe_webhook_secret", "whsec_", r"[A-Za-z0-9+/=]{24,}"),
    # Access key ids only; AIDA/AROA/… are public principal ids, not credentials.
    ("aws_access_key_id", "A", r"(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ("github_token", "gh", r"[pousr]_[A-Za-z0-9]{30,}"),
    ("github_fine_grained_pat", "github_pat_", r"[A-Za-z0-9_]{40,}"),
    ("gitlab_token", "gl", r"(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", "xox", r"[abposr]-[A-Za-z0-9\-]{10,}"),
    ("slack_app_token", "xapp-", r"[0-9]-[A-Za-z0-9\-]{10,}"),
    ("jwt", "eyJ", r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*)?"),
    ("google_api_key", "AIza", r"[0-9A-Za-z_\-]{35}"),
    ("google_oauth_client_secret", "GOCSPX-", r"[A-Za-z0-9_\-]{20,}"),
    ("google_oauth_access_token", "ya29.", r"[0-9A-Za-z_\-]{20,}"),
    ("huggingface_token", "hf_", r"[A-Za-z0-9]{30,}"),
    ("npm_token", "npm_", r"[A-Za-z0-9]{30,}"),
    ("pypi_token", "pypi-", r"[A-Za-z0-9_\-]{50,}"),
    ("sendgrid_key", "SG.", r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("twilio_api_key", "SK", r"[0-9a-f]{32}(?![0-9a-zA-Z])"),
    ("mailgun_key", "key-", r"[0-9a-f]{32}(?![0-9a-zA-Z])"),
    ("digitalocean_token", "do", r"[por]_v1_[a-f0-9]{64}"),
    ("shopify_token", "shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("databricks_token", "dapi", r"[a-f0-9]{32}(?:-[0-9])?"),
    ("telegram_bot_token", ":AA", r"(?<=[0-9]{8}:AA)[A-Za-z0-9_\-]{33}"),
    ("groq_key", "gsk_", r"[A-Za-z0-9]{40,}"),
    ("replicate_token", "r8_", r"[A-Za-z0-9]{30,}"),
    ("perplexity_key", "pplx-", r"[A-Za-z0-9]{40,}"),
    ("xai_key", "xai-", r"[A-Za-z0-9]{40,}"),
    ("nvidia_key", "nvapi-", r"[A-Za-z0-9_\-]{40,}"),
    ("langsmith_key", "lsv2_", r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    ("tavily_key", "tvly-", r"(?:dev-)?[A-Za-z0-9]{20,}"),
    ("notion_token", "ntn_", r"[A-Za-z0-9]{40,}"),
    ("notion_legacy_token", "secret_", r"[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
    ("linear_key", "lin_api_", r"[A-Za-z0-9]{40}"),
    ("atlassian_token", "ATATT3", r"[A-Za-z0-9_\-=]{50,}"),
    ("vault_token", "hv", r"[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("square_token", "sq0", r"(?:atp|csp)-[A-Za-z0-9_\-]{22,}"),
    ("postman_key", "PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"),
    ("age_secret_key", "AGE-SECRET-KEY-1", r"[0-9A-Z]{58}"),
    ("sentry_token", "sntry", r"[su]_[A-Za-z0-9+/=_]{40,}"),
    ("grafana_service_token", "glsa_", r"[A-Za-z0-9]{32}_[a-f0-9]{8}"),
    ("grafana_cloud_token", "glc_", r"[A-Za-z0-9+/=]{32,}"),
    ("figma_token", "figd_", r"[A-Za-z0-9_\-]{40,}"),
    ("doppler_token", "dp.", r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
)


# Shapes whose literal prefix is too short to gate on (one or two letters occur in most
# text): gate on the full distinctive prefixes instead.
_SHAPE_TRIGGERS: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("akia", "asia", "abia", "acca"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "gitlab_token": ("glpat-", "gldt-", "glptt-", "glrt-"),
    "digitalocean_token": ("dop_v1_", "doo_v1_", "dor_v1_"),
    "vault_token": ("hvs.", "hvb.", "hvr."),
}


def _builtin_rules() -> list[SecretPattern]:
    rules = [SecretPattern("pem_private_key", frozenset({"private key"}), _pem_apply)]
    for name, pattern, triggers, flags in _CONTEXT_REGEXES:
        rules.append(_regex_rule(name, re.compile(pattern, flags), triggers))
    for name, prefix, rest in _TOKEN_SHAPES:
        # The telegram token's prefix is ":AA" after digits, so it keeps no boundary check.
        regex = re.escape(prefix) + rest if prefix == ":AA" else _lit(prefix, rest)
        triggers = _SHAPE_TRIGGERS.get(name, (prefix.lower(),))
        rules.append(_regex_rule(name, re.compile(regex), triggers))
    return rules


_BUILTINS: tuple[SecretPattern, ...] = tuple(_builtin_rules())

# --------------------------------------------------------------------------- registry

_lock = threading.RLock()
_user_rules: dict[str, SecretPattern] = {}
_env_rules: tuple[SecretPattern, ...] | None = None  # None: the env file is not read yet


@dataclass(frozen=True, slots=True)
class _Snapshot:
    rules: tuple[tuple[SecretPattern, frozenset[str]], ...]  # rule + its minimal gate
    triggers: tuple[str, ...]
    always: bool  # some rule has no triggers, so no text may take the fast path
    trigger_re: re.Pattern[str]  # one C-level scan tells "no trigger at all" (the usual case)
    # Results under these rules (see redact_text); a new snapshot (any rule change) starts empty.
    short: dict[str, str] = field(default_factory=dict)
    long: dict[str, str] = field(default_factory=dict)


def _key_rules() -> tuple[SecretPattern, ...]:
    triggers = frozenset(_key_words)
    return (
        SecretPattern("assignment", triggers, _assign_apply),
        SecretPattern("cli_flag", triggers | {"-u", "--user"}, _flag_apply),
    )


def _make_snapshot() -> _Snapshot:
    rules = (*_BUILTINS, *_key_rules(), *(_env_rules or ()), *_user_rules.values())
    gated = tuple((rule, frozenset(rule.triggers)) for rule in rules)
    triggers = tuple(sorted({t for rule in rules for t in rule.triggers}))
    trigger_re = re.compile(any_word_pattern(triggers))
    return _Snapshot(gated, triggers, any(not rule.triggers for rule in rules), trigger_re)


_snapshot = _make_snapshot()


def _rebuild() -> None:
    global _snapshot
    _snapshot = _make_snapshot()


def _compile_user(name: str, regex: str | re.Pattern[str]) -> re.Pattern[str]:
    try:
        compiled = re.compile(regex) if isinstance(regex, str) else regex
    except re.error as exc:
        raise ValueError(f"secret pattern {name!r}: invalid regex: {exc}") from None
    if not isinstance(compiled.pattern, str):
        raise TypeError(f"secret pattern {name!r}: needs a str regex, not bytes")
    if compiled.fullmatch("") is not None:
        raise ValueError(f"secret pattern {name!r}: matches the empty string")
    return compiled


def add_secret_pattern(
    name: str, regex: str | re.Pattern[str], *, triggers: Iterable[str] = ()
) -> None:
    """Register (or replace) a value pattern, process-wide and thread-safe.

    The whole match is replaced, or only the named group `secret` when the regex has one.
    `triggers` are optional substrings (matched case-blind) that must occur for the regex
    to run; without them the regex runs on every string (slower but never misses).
    """
    rule = _regex_rule(name, _compile_user(name, regex), triggers)
    with _lock:
        _user_rules[name] = rule
        _rebuild()


def remove_secret_pattern(name: str) -> bool:
    """Drop a pattern added by `add_secret_pattern`; False when no such name exists."""
    with _lock:
        found = _user_rules.pop(name, None) is not None
        if found:
            _rebuild()
        return found


def secret_patterns() -> tuple[str, ...]:
    """Names of every active value rule, in the order they are applied."""
    return tuple(rule.name for rule, _ in _current().rules)


def _load_env_file(path: str) -> tuple[SecretPattern, ...]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        _log.warning("%s=%s: cannot read pattern file: %s", REDACT_PATTERNS_ENV, path, exc)
        return ()
    rules: list[SecretPattern] = []
    for lineno, line in enumerate(lines, 1):
        source = line.strip()
        if not source or source.startswith("#"):
            continue
        name = f"{path}:{lineno}"
        try:
            rules.append(_regex_rule(name, _compile_user(name, source), ()))
        except (ValueError, TypeError) as exc:
            _log.warning("%s: skipped line: %s", REDACT_PATTERNS_ENV, exc)
    return tuple(rules)


def reload_env_patterns() -> tuple[str, ...]:
    """(Re-)read the file named by `WAYLINE_REDACT_PATTERNS`; returns the loaded rule names.

    The file is read once, on first use; call this after changing the variable or file.
    """
    global _env_rules
    path = os.environ.get(REDACT_PATTERNS_ENV) or ""
    with _lock:
        _env_rules = _load_env_file(path) if path else ()
        _rebuild()
        return tuple(rule.name for rule in _env_rules)


def _current() -> _Snapshot:
    # os.environ lookups cost microseconds, too much per string: read the file once.
    if _env_rules is None:
        with _lock:
            if _env_rules is None:
                reload_env_patterns()
    return _snapshot


# Short strings (keys, roles, names) recur in every payload; a longer text (a tool result, a
# message) is redacted by the host, the relay and OTel in turn: recent results are kept.
_SHORT, _SHORT_ENTRIES = 64, 8192
_LONG, _LONG_ENTRIES = 16_384, 256


def redact_text(text: str) -> str:
    """Replace every secret-looking span in `text` with `REDACTED`, keeping the context."""
    snap = _current()
    size = len(text)
    if size > _LONG:
        return _redact(snap, text)
    cache, entries = (snap.short, _SHORT_ENTRIES) if size <= _SHORT else (snap.long, _LONG_ENTRIES)
    known = cache.get(text)
    if known is None:
        known = _redact(snap, text)
        if len(cache) >= entries and size > _SHORT:
            cache.clear()  # the long-text cache only serves texts seen moments ago
        if len(cache) < entries:
            cache[text] = known
    return known


def _redact(snap: _Snapshot, text: str) -> str:
    lowered = text.lower()
    if not snap.always and snap.trigger_re.search(lowered) is None:
        return text
    hits = {t for t in snap.triggers if t in lowered}
    if not hits and not snap.always:
        return text
    for rule, gate in snap.rules:
        if not gate or not hits.isdisjoint(gate):
            text = rule.apply(text)
    return text
