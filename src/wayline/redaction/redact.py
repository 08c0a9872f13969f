"""Secret redaction for text and key names: the one policy every payload and exporter shares.

`is_sensitive_key` decides whether a mapping key (or header name, or the name in
`NAME=value` text) holds a credential; `redact_text` replaces only the secret part of
secret-looking spans in any string ("Authorization: Bearer <redacted>").

The rules live in three modules: `secret_names` (which names hold credentials, which values
are only expressions), `redact_rules` (token shapes, context and command-line rules) and
`entropy` (bare random-looking tokens). This one applies them: named assignments and flags,
the rule registry, and the cached entry point.

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
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction._trie import WordFinder
from wayline.redaction.assign import apply_assignments, names_before_separators
from wayline.redaction.automaton import Automaton
from wayline.redaction.entropy import MIN_TOKEN, redact_bare_tokens
from wayline.redaction.jsontext import keep_json, replaced_spans
from wayline.redaction.known import MIN_LENGTH, KnownValues, registry
from wayline.redaction.passwords import password_rules
from wayline.redaction.redact_rules import REDACTED, SecretPattern, after_escape, builtin_rules
from wayline.redaction.redact_rules import regex_rule as _regex_rule
from wayline.redaction.secret_names import (
    KEY_TRIGGERS,
    flag_is_sensitive,
    foreign_password_name,
    is_expression,
    name_is_sensitive,
    name_is_weak,
    split_key,
)
from wayline.redaction.structured import apply_pgpass, apply_structured
from wayline.redaction.vendor_rules import dc_pat_rule, vendor_rules

__all__ = [
    "REDACTED",
    "REDACT_PATTERNS_ENV",
    "SecretPattern",
    "add_secret_pattern",
    "add_sensitive_key",
    "is_identifier_key",
    "is_sensitive_key",
    "is_weak_key",
    "redact_text",
    "redact_text_learning",
    "reload_env_patterns",
    "remove_secret_pattern",
    "secret_patterns",
]

REDACT_PATTERNS_ENV = "WAYLINE_REDACT_PATTERNS"

_log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- key names

_extra_keys: frozenset[str] = frozenset()
_split_key = split_key


@functools.lru_cache(maxsize=4096)
def _sensitive(key: str) -> bool:
    words = split_key(key)
    if not words or not key.isascii():
        return foreign_password_name(key) or (
            bool(words) and ("_".join(words) in _extra_keys or name_is_sensitive(words))
        )
    return "_".join(words) in _extra_keys or name_is_sensitive(words)


@functools.lru_cache(maxsize=1024)
def _flag_sensitive(name: str) -> bool:
    words = split_key(name)
    return bool(words) and ("_".join(words) in _extra_keys or flag_is_sensitive(words))


def is_sensitive_key(key: str) -> bool:
    """True when a key/header/variable name holds a credential (case and '-'/camelCase blind)."""
    return _sensitive(key if type(key) is str else str(key))


# A key naming an identifier: its last word is "id" and no word speaks of a credential.
_ID_WORDS = frozenset({"id", "ids", "uuid"})
_CREDENTIAL_WORDS = frozenset(
    {"key", "secret", "token", "password", "passwd", "pass", "pwd", "auth", "access", "api"}
)


@functools.lru_cache(maxsize=4096)
def _identifier(key: str) -> bool:
    words = split_key(key)
    return bool(words) and words[-1] in _ID_WORDS and _CREDENTIAL_WORDS.isdisjoint(words)


def is_identifier_key(key: str) -> bool:
    """True when a key names an identifier (``id``, ``tool_call_id``, ``sessionId``): its
    value is structure, so it is never redacted."""
    return _identifier(key if type(key) is str else str(key))


def is_weak_key(key: str) -> bool:
    """True for a name that holds a credential only when its value looks like one
    (``HEROKU_KEY``, ``sonarLogin``; ``cache_key`` and ``sort_key`` never)."""
    return _weak(key if type(key) is str else str(key))


def add_sensitive_key(name: str) -> None:
    """Treat `name` (normalized like every key) as a credential key from now on, process-wide."""
    global _extra_keys, _key_words, _names_rx
    words = split_key(name)
    if not words:
        raise ValueError(f"add_sensitive_key: {name!r} has no letters or digits")
    with _lock:
        _extra_keys = _extra_keys | {"_".join(words)}
        # Any spelling of the key contains its longest word in lowercase: scan for that.
        _key_words = tuple(sorted({*_key_words, max(words, key=len)}))
        _names_rx = names_before_separators(_key_words)
        _sensitive.cache_clear()
        _flag_sensitive.cache_clear()
        _rebuild()


# --------------------------------------------------------------------------- named values


def _assign_apply(text: str) -> str:
    return apply_assignments(text, _names_rx, _sensitive, _weak)


@functools.lru_cache(maxsize=4096)
def _weak(key: str) -> bool:
    return name_is_weak(split_key(key))


# --name value / --name=value / -u user:pass (shell commands in tool arguments). The
# value is in a lookahead so a non-sensitive flag consumes only its name.
_FLAG = re.compile(
    r"""-(?:(?<![\w\-]-)|""" + after_escape("-") + r""")-?(?P<name>[A-Za-z][\w\-]*+)(?:=|[ \t]+)"""
    r"""(?=(?:\\*(?P<q>["']))?(?P<val>(?(q)[^"'\\\r\n]+|(?!-)[^\s"'`;&|\\]+)))"""
)

_FLAG_NOUNS = frozenset(
    {"option", "options", "flag", "flags", "argument", "arguments", "parameter", "switch"}
)
_ARTICLE = lazy_compile(r"(?:^|\s)(?:the|a|an|use)[ \t]+$", re.IGNORECASE)
_QUOTED_AFTER = lazy_compile(r"""(?P<q>["'])(?P<val>[^"'\r\n]+)(?P=q)""")
# Flags whose value is "user:password" (curl, wget's --proxy-user, curl's -U proxy flag).
_USER_FLAGS = frozenset({"u", "user", "U", "proxy-user"})
_key_words: tuple[str, ...] = KEY_TRIGGERS  # plus the longest word of each added key
_names_rx = names_before_separators(_key_words)


def _flag_apply(text: str) -> str:
    out: list[str] = []
    pos = 0
    for match in _FLAG.finditer(text):
        if match.start() < pos:
            continue
        start, end = match.span("val")
        name = match.group("name")
        value = match.group("val")
        if name in _USER_FLAGS:  # curl -u user:pass keeps the user name
            colon = value.find(":")
            if colon < 0:
                continue
            if colon == len(value) - 1 and end < len(text) and text[end] in "'\"":
                quoted = _QUOTED_AFTER.match(text, end)  # --user kevin:'pass'
                if quoted is not None:
                    start, end = quoted.span("val")
                    value = quoted.group("val")
            elif colon == len(value) - 1:
                end = start + colon  # curl -u sk_live_…: an API key as the user name
            else:
                start += colon + 1
                value = value[colon + 1 :]
        elif not _flag_sensitive(name):
            continue
        elif _ARTICLE.search(text, max(0, match.start() - 6), match.start()) is not None:
            continue  # "use the --password flag": a flag named in prose
        elif value.lower() in _FLAG_NOUNS:
            continue  # "the --username and --password options": prose names the flags
        # A shell word is a literal whatever it looks like; only placeholders ($PW) are kept.
        if is_expression(value, quoted=True):
            continue
        out.append(text[pos:start])
        out.append(REDACTED)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_BUILTINS: tuple[SecretPattern, ...] = (
    *builtin_rules(),
    *password_rules(),
    *vendor_rules(),
    dc_pat_rule(),
)

# --------------------------------------------------------------------------- registry

_lock = threading.RLock()
_user_rules: dict[str, SecretPattern] = {}
_env_rules: tuple[SecretPattern, ...] | None = None  # None: the env file is not read yet


@dataclass(frozen=True, slots=True)
class _Snapshot:
    rules: tuple[tuple[SecretPattern, frozenset[str]], ...]  # rule + its minimal gate
    triggers: tuple[str, ...]
    always: bool  # some rule has no triggers, so no text may take the fast path
    finder: WordFinder  # one C-level scan finds which triggers occur
    known: Automaton | None  # the known values (known.py) these results were masked with
    # Results under these rules (see redact_text); a new snapshot (any rule change) starts empty.
    short: dict[str, str] = field(default_factory=dict)
    long: dict[str, str] = field(default_factory=dict)


# "pat" is a name's last word only after a separator (GITHUB_PAT): gate on those spellings,
# not on every "path" and "pattern".
_GATES = {"pat": ("_pat", "-pat", ".pat")}


def _key_rules() -> tuple[SecretPattern, ...]:
    triggers = frozenset(g for w in _key_words for g in _GATES.get(w, (w,)))
    return (
        SecretPattern("assignment", triggers, _assign_apply),
        SecretPattern(
            "cli_flag", triggers | {"-u", "--user", "--pw", "-pw", "proxy-user"}, _flag_apply
        ),
        SecretPattern("structured", triggers, _structured_apply),
        # .pgpass lines carry no credential word: gate on the usual port and the wildcard.
        SecretPattern("pgpass", frozenset({":5432:", ":*:"}), apply_pgpass),
    )


def _structured_apply(text: str) -> str:
    return apply_structured(text, _sensitive)


def _make_snapshot() -> _Snapshot:
    rules = (*_BUILTINS, *_key_rules(), *(_env_rules or ()), *_user_rules.values())
    gated = tuple((rule, frozenset(rule.triggers)) for rule in rules)
    triggers = tuple(sorted({t for rule in rules for t in rule.triggers}))
    always = any(not rule.triggers for rule in rules)
    return _Snapshot(gated, triggers, always, WordFinder(triggers), registry().automaton())


# Built on first use (`_current`), once the env file is read: building it at import too would
# build it twice in every process, and not at all is right for one that never redacts.
_snapshot: _Snapshot | None = None


def _rebuild() -> _Snapshot:
    global _snapshot
    _snapshot = snap = _make_snapshot()
    return snap


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
    snap = _snapshot
    if snap is None or _env_rules is None:
        snap = _first_use()
    known = registry().automaton()
    if snap.known is not known:  # a known value was added or went away: results start over
        with _lock:
            snap = _snapshot or snap  # set since the first use
            if snap.known is not known:
                snap = _set_snapshot(replace(snap, known=known, short={}, long={}))
    return snap


def _first_use() -> _Snapshot:
    # os.environ lookups cost microseconds, too much per string: the file is read once, here,
    # and reading it builds the snapshot.
    with _lock:
        if _env_rules is None:
            reload_env_patterns()
        snap = _snapshot
        return snap if snap is not None else _rebuild()


def _set_snapshot(snap: _Snapshot) -> _Snapshot:
    global _snapshot
    _snapshot = snap
    return snap


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


def redact_text_learning(text: str, into: KnownValues) -> str:
    """``redact_text(text)``, and every value its rules replaced becomes a known value of
    ``into`` (a session learns ``V`` from ``export T=V`` and masks ``echo $T``'s output)."""
    snap = _current()
    masked = snap.known.mask(text, REDACTED) if snap.known is not None else text
    ruled = _rules(snap, masked)
    if ruled == masked:
        return keep_json(text, ruled)
    spans = replaced_spans(masked, ruled) or ()
    if into.learn(v for v in (masked[a:b] for a, b in spans) if v != REDACTED):
        return redact_text(text)  # once more: the value may occur where no rule sees it
    return keep_json(text, ruled)


def _redact(snap: _Snapshot, text: str) -> str:
    # Known values first: they are exact, and the rules then see their marker, not them.
    masked = snap.known.mask(text, REDACTED) if snap.known is not None else text
    ruled = _rules(snap, masked)
    if ruled != masked:
        ruled = _mask_repeats(snap, masked, ruled)
    return keep_json(text, ruled)


# A value a rule replaced once is masked wherever else it occurs in the same text (principle
# 7 within one text): "account:V password:V" shows no V. Values under MIN_LENGTH are words.
_REPEATS_MIN, _REPEATS_MAX = MIN_LENGTH, 64
# The second pass for partly replaced repeats doubles a text's cost: texts up to this size
# (a message, a tool result) take it; a longer one keeps the first pass's masking, so that a
# megabyte of hostile repeats stays within one pass's time.
_RERUN_MAX = 65_536


def _mask_repeats(snap: _Snapshot, before: str, after: str) -> str:
    """``after`` with every other occurrence of a value the rules replaced masked too (at most
    64 values, each one linear scan). When an occurrence was only partly replaced (another
    rule took a piece of it first: ``'<redacted>:tail'``), the rules run once more on
    ``before`` with every occurrence of those values masked first."""
    spans = replaced_spans(before, after)
    if not spans:
        return after
    replaced: Counter[str] = Counter()
    for a, b in spans:
        value = before[a:b]
        if b - a >= _REPEATS_MIN and REDACTED not in value and value not in REDACTED:
            if value not in replaced and len(replaced) >= _REPEATS_MAX:
                break
            replaced[value] += 1
    partly = False
    rerun = len(before) <= _RERUN_MAX
    for value in sorted(replaced, key=len, reverse=True):
        whole = after.count(value)
        if whole:
            after = after.replace(value, REDACTED)
        if rerun and not partly and before.count(value) > replaced[value] + whole:
            partly = True
    if not partly:
        return after
    for value in sorted(replaced, key=len, reverse=True):
        before = before.replace(value, REDACTED)
    return _rules(snap, before)


def _rules(snap: _Snapshot, text: str) -> str:
    hits = snap.finder.found(text.lower())
    if snap.always or hits:
        for rule, gate in snap.rules:
            if not gate or not hits.isdisjoint(gate):
                text = rule.apply(text)
    # Last, so named and shaped secrets are already replaced by their readable forms.
    return redact_bare_tokens(text, REDACTED) if len(text) >= MIN_TOKEN else text
