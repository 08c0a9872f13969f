"""Literals that code and configs hand to a credential in forms the assignment scan reads as
expressions. Each form comes from a language's or a
library's grammar, listed before any case was read:

- **a literal through a conversion, a container or a default** after a credential name:
  ``password = new String("…")``, ``strdup("…")``, ``[]byte("…")``, ``String::from("…")``,
  ``SecretStr("…")``, ``Buffer.from('…')``, ``"…".to_string()``, ``['…']``; the default of an
  environment or config lookup (``os.environ.get("X", "…")``, ``getenv("X") or "…"``,
  ``process.env.X ?? "…"``, ``ENV.fetch("X") { "…" }``, ``getOrDefault("X", "…")``);
- **a value quoted with HTML entities or after a percent-encoded separator**
  (``password=&quot;…&quot;``, ``password%3D…``);
- **a directive or a form field named for a credential** (``#define DB_PASS "…"``, CMake's
  ``set(PWD "…")``, ``<add key="pwd" value="…"/>``), and typed declarations (``password: str
  = "…"``) and R's ``<-``.

Formats of tools and standards (browser automation, libcurl, JWK, TOTP, prompts) are in
``tool_formats``.

Every rule is a literal-led regex or a bounded look around a literal: linear in the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.redact_rules import (
    REDACTED,
    SecretPattern,
    redact_spans,
)
from wayline.redaction.secret_names import (
    is_expression,
    name_is_sensitive,
    split_key,
)
from wayline.redaction.value_shapes import credential_like, pronounceable

__all__ = ["QUOTED_LITERAL", "literal_form_rules"]

QUOTED_LITERAL = r"(?P<q>\\*[\"'`])(?P<secret>(?![$%{<])[^\"'`\\\r\n]{1,256})\\*(?P=q)"
_ARG = r"(?:\\*[\"'][^\"'\\\r\n]{0,128}\\*[\"']|[A-Za-z_$][\w.$\[\]]{0,64})"

# ------------------------------------------------------------- the literal inside a form

# The forms of a value expression that hold one literal, each led by a literal or by the
# separator. (Conversions to a string or bytes type, or a secret wrapper; containers of one
# element; defaults of lookups.)
_CONVERSIONS = (
    r"(?:new[ \t]+)?(?:String|StringBuilder|SecureString|string|str|bytes|bytearray|QString"
    r"|QStringLiteral|CString|NSString|std::string|SecretStr|SecretBytes|SecretString|Secret"
    r"|strdup|strndup|_strdup|g_strdup|wcsdup|_wcsdup|String::from|String\.valueOf"
    r"|Buffer\.from|\[\]byte|_T|TEXT)"
)
# A lookup whose second argument is a default (checked on the callee's last name in code).
_LOOKUPS = frozenset(
    {"get", "getenv", "fetch", "getOrDefault", "getProperty", "get_or", "setdefault",
     "GetEnvironmentVariable"}
)  # fmt: skip


def _lit(n: str) -> str:
    return (
        QUOTED_LITERAL.replace("(?P<q>", f"(?P<q{n}>")
        .replace("(?P=q)", f"(?P=q{n})")
        .replace("secret>", f"s{n}>")
    )


# R's assignment arrow (and a Go channel send) of one literal: password <- "…".
_ARROW = r"<-[ \t]*" + _lit("7") + r"(?![\w.(\[])"

# The callee or the expression before a default is read possessively (no backtracking into
# it): each separator costs one pass over what follows it.
_FORMS = (
    r"(?::=|=>|=(?<![=!<>]=)|:)[ \t]*(?:"
    # a conversion or wrapper of one literal (more arguments may follow: an encoding)
    + _CONVERSIONS
    + r"[ \t]*\([ \t]*"
    + QUOTED_LITERAL
    + r"[ \t]*[,)]"
    # a literal converted by a method: "…".to_string(), "…".getBytes()
    + r"|"
    + _lit("2")
    + r"\.(?:to_string|to_owned|into|getBytes|encode|toCharArray|as_bytes|freeze|b)\b"
    # a container of one literal
    + r"|[\[{(][ \t]*"
    + _lit("3")
    + r"[ \t]*,?[ \t]*[\]})]"
    # a lookup's default: X.get("NAME", "…"), os.getenv("NAME", "…"), ENV.fetch("NAME", "…");
    # or a lookup, then "or", "||", "??" or a block with the literal
    + r"|(?P<callee>[A-Za-z_$][\w.$\[\]'\"]{0,96}+(?:\(\)[\w.$]{0,64}+)?)(?:"
    + r"[ \t]*\([ \t]*"
    + _ARG
    + r"[ \t]*,[ \t]*"
    + _lit("4")
    + r"|(?:\([^()\r\n]{0,128}+\))?(?:[ \t]+or|[ \t]*\|\||[ \t]*\?\?|[ \t]*\{)[ \t]*"
    + _lit("5")
    + r"))"
)
_SECRET_GROUPS = ("secret", "s2", "s3", "s4", "s5")
# The identifier before the separator, read backwards (a C pointer's "*" and a Go ", _" are
# not part of it).
_NAME_BACK = lazy_compile(r"[ \t]*\\*[\"'`]?[ \t]*([\w$]+)")


def _name_before(text: str, at: int) -> str:
    window = text[max(0, at - 96) : at][::-1]
    m = _NAME_BACK.match(window)
    return "" if m is None else m.group(1)[::-1]


_NAME_PIECES = lazy_compile(r"[._\-]")


def _word_piece(piece: str) -> bool:
    """A piece of a name: a lower-case word, or an abbreviation of three letters at most."""
    return piece.isalpha() and piece.islower() and (len(piece) <= 3 or pronounceable(piece))


def _literal_value(value: str, name: str) -> bool:
    """A literal that is a credential's value: not a placeholder, not a word or a sentence."""
    if len(value) < 4 or " " in value.strip() or is_expression(value, quoted=True):
        return False
    if "/" in value or "\\" in value or value[0] in "~.":
        return False  # a path (a PWD default, a key file's name)
    pieces = _NAME_PIECES.split(value)
    if len(pieces) > 1 and all(_word_piece(p) for p in pieces):
        return False  # a dotted or snake_case name of words ("gen_ai.server.time_to_first_token")
    if credential_like(value, name):
        return True
    letters = sum(c.isalpha() for c in value)
    others = len(value) - letters
    if len(value) >= 6 and letters >= 1 and others >= 1:
        return True  # a letter and a digit or symbol
    return len(value) >= 8 and value.lower() != value and not pronounceable(value)


# Where a credential word stands, the rest of its name and the separator after it fit in
# this many characters; the forms are tried only at the separators there (most text has few
# credential words, and each separator costs one anchored match per form).
_WINDOW = 96
# One scan finds them all: the branches start with five letters, which the engine skips to.
_NAME_WORD = lazy_compile(
    r"p(?:ass|wd|sw|w)|secret|token|credential|api_?key|private_?key|access_?key"
)
# Words a credential word starts that name something else (CredSweeper's keyword rules
# exclude them the same way): tokens, tokenizer, passed, passing, passage.
_OTHER_WORDS = {"token": "sie", "pass": "eia"}
_SEPARATOR = lazy_compile(r"[:=]|<-")
_REACH = 640  # the longest form: a callee, its arguments and a 256-character literal


# More than one credential word per this many characters is no text a person wrote (the
# assignment rules' bound, assign._DENSE_SPACING): forms are not looked for in it.
_DENSE_SPACING = 48
_DENSE_MIN = 256


def _near_names(text: str) -> list[re.Match[str]]:
    """The matches of ``_ANY_FORM`` at the separators within ``_WINDOW`` characters after a
    credential word, in the order of their start; each window is scanned once (a match may
    run past it, by ``_REACH`` at most)."""
    lower = text.lower()
    words: list[int] = []
    for w in _NAME_WORD.finditer(lower):
        other = _OTHER_WORDS.get(w.group())
        if other is None or (lower[w.end() : w.end() + 1] or " ") not in other:
            words.append(w.start())
    if len(words) > _DENSE_MIN and len(words) * _DENSE_SPACING > len(lower):
        return []  # generated or hostile text: the assignment rules' cheap step covers it
    found: list[re.Match[str]] = []
    scanned = 0
    for at in words:
        begin = max(at, scanned)
        end = min(len(text), at + _WINDOW)
        if begin >= end:
            continue
        for sep in _SEPARATOR.finditer(text, begin, end):
            m = _ANY_FORM.match(text, sep.start(), sep.start() + _REACH)
            if m is not None:
                found.append(m)
        scanned = end
    return found


def _forms(text: str) -> str:
    return redact_spans(text, _forms_spans(text))


def _forms_spans(text: str) -> Iterator[tuple[int, int]]:
    """The literal of a form (``_FORMS``) or of a typed declaration (``_DECLARED``) after a
    credential name: one scan of the windows after the credential words for both."""
    for m in _near_names(text):
        if m.group("s6") is not None:
            group = "s6"
        elif m.group("s7") is not None:
            group = "s7"
        else:
            group = next(g for g in _SECRET_GROUPS if m.group(g) is not None)
            if group == "s4" and m.group("callee").rsplit(".", 1)[-1] not in _LOOKUPS:
                continue  # f("NAME", "…") of any other function: not a default
        name = _name_before(text, m.start())
        words = split_key(name)
        if not words or words[-1] in _NOT_VALUE_WORDS:
            continue
        value = m.group(group)
        short = words[-1] in _SHORT_NAMES  # pwd = new String("…"): a password, not a directory
        if not (name_is_sensitive(words) or short) or not _literal_value(value, name):
            continue
        start, end = m.span(group)
        if value.startswith(REDACTED):
            continue
        yield start, end


_SHORT_NAMES = frozenset({"pwd", "pw", "pass", "psw"})
# Names of a credential's metadata, not its value (password_field, token_type, secret_name).
_NOT_VALUE_WORDS = frozenset(
    {"field", "type", "name", "label", "hint", "prompt", "policy", "length", "file", "path",
     "env", "var", "header", "param", "url", "uri", "endpoint", "id", "kind", "format"}
)  # fmt: skip


# ------------------------------------------------------------ a typed declaration

# "name: type = literal": Python's annotated assignments and dataclass or settings fields,
# TypeScript's and Kotlin's typed declarations, Rust's "&str" (CredSweeper's keyword grammar
# writes the separator ":(\s[a-z]{3,9}[?]?\s)?="). The type is a short type expression; a
# default that is no literal (Field(...), os.environ[...]) is the assignment rules' to judge.
_DECLARED = (
    r":[ \t]*(?P<type>&?[A-Za-z_][\w.]{0,40}(?:\[[\w.\[\], |]{0,60}\])?\??"
    r"(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]{0,20})?)[ \t]*=(?![=>])[ \t]*" + _lit("6") + r"(?![\w.(\[])"
)
# The three, one alternation: one anchored match per separator.
_ANY_FORM = lazy_compile("(?:" + _FORMS + ")|(?:" + _DECLARED + ")|(?:" + _ARROW + ")")


# ------------------------------------------- HTML-entity quotes, a percent-encoded separator

# password=&quot;…&quot; (an attribute's or a JSON's quotes escaped for HTML), and
# password%3D… (a form or query encoded once more). The name before is checked in code.
# The quotes of an HTML attribute escaped as entities, or of a JSON text escaped as \u00XX
# (JavaScript, a JSON string inside a JSON string); "=" and ":" escaped the same way.
_QUOTE_ESCAPES = r"&quot;|&#34;|&#x22;|&apos;|&#39;|\\u0022|\\u0027"
# Led by the escaped quote (a scan for a literal); the separator and the name before it are
# checked in code.
_ENTITY = lazy_compile(
    r"(?P<q>" + _QUOTE_ESCAPES + r")"
    r"(?P<secret>(?:(?!" + _QUOTE_ESCAPES + r")[^\s<>&\\]){4,256})(?P=q)"
)
_ENTITY_SEPARATOR = lazy_compile(r"(?:=|:|\\u003[dDaA])[ \t]*\Z")
_ENCODED = lazy_compile(
    r"(?:%3[dD]|\\u003[dD])(?P<secret>(?!%2[47]|\\u00)(?:(?!%26|\\u00)[^\s&\"'<>;\\]){4,256})"
)


def _entity_name(text: str, at: int) -> str:
    window = text[max(0, at - 104) : at]
    for quote in ("&quot;", "&#34;", "&#x22;", "\\u0022"):
        if window.endswith(quote):
            window = window[: -len(quote)]
    return _name_before(window, len(window))


def _quoted_forms(text: str) -> str:
    return redact_spans(text, _quoted_forms_spans(text))


def _quoted_forms_spans(text: str) -> Iterator[tuple[int, int]]:
    matches = [*_ENTITY.finditer(text), *_ENCODED.finditer(text)]
    if len(matches) > _DENSE_MIN and len(matches) * _DENSE_SPACING > len(text):
        return  # generated or hostile text: the assignment rules' cheap step covers it
    for m in sorted(matches, key=lambda x: x.start()):
        at = m.start()
        if "q" in m.re.groupindex:  # an escaped quote (_ENTITY), not a %3D separator
            sep = _ENTITY_SEPARATOR.search(text, max(0, at - 12), at)
            if sep is None:
                continue  # an escaped quote that opens no value
            at = sep.start()
        name = _entity_name(text, at)
        if not name or not name_is_sensitive(split_key(name)):
            continue
        value = m.group("secret")
        if value.startswith(REDACTED) or not _literal_value(value, name):
            continue
        start, end = m.span("secret")
        yield start, end


# ------------------------------------------------- directives and form fields by their name

# A preprocessor or build directive names a constant before its value with a blank between
# (C's "#define NAME "…"", CMake's "set(NAME "…")", RPM's "%global NAME …"); an HTML input's
# name attribute names the value attribute of the same tag.
_DIRECTIVE = lazy_compile(
    r"(?:#[ \t]*define[ \t]+|set\((?<![\w.]set\()[ \t]*|%global[ \t]+|%define[ \t]+)"
    r"(?P<name>[A-Za-z_]\w{0,63})[ \t]+"
    r"(?:" + QUOTED_LITERAL + r"|(?P<bare>(?![\"'$%{<(])[^\s)]{6,128}))"
)
# Any tag that pairs a name or key attribute with a value attribute: HTML's <input>, .NET's
# <add key=… value=…>, Ant's and Spring's <property name=… value=…>, <param>, <setting>.
_INPUT = lazy_compile(
    r"<[A-Za-z][\w:.\-]{0,32}[ \t\r\n][^<>]{0,256}?\b(?i:name|key)=(?P<qn>[\"']?)"
    r"(?P<name>[\w\-\[\].:]{1,64})(?P=qn)"
    r"[^<>]{0,256}?\b(?i:value)=(?P<q>[\"'])(?P<secret>[^\"'<>]{1,256})(?P=q)"
)


def _named_value(name: str) -> bool:
    words = split_key(name)
    return bool(words) and (name_is_sensitive(words) or words[-1] in _SHORT_NAMES)


def _by_name(text: str) -> str:
    return redact_spans(text, _by_name_spans(text))


def _by_name_spans(text: str) -> Iterator[tuple[int, int]]:
    found = [*_DIRECTIVE.finditer(text), *_INPUT.finditer(text)]
    for m in sorted(found, key=lambda x: x.start()):
        if not _named_value(m.group("name")):
            continue
        group = "secret" if m.group("secret") is not None else "bare"
        value = m.group(group)
        if not _literal_value(value, m.group("name")):
            continue
        start, end = m.span(group)
        yield start, end


@functools.cache
def literal_form_rules() -> tuple[SecretPattern, ...]:
    """The rules of this module, in the order they are applied."""
    return (
        SecretPattern(
            "credential_literal_form",
            # the credential words of names that hold a literal (a bare "key" names a table's
            # key as often as a credential: its values are the vendor-key rules')
            frozenset(
                {
                    "pass",
                    "pwd",
                    "psw",
                    "secret",
                    "token",
                    "credential",
                    "apikey",
                    "api_key",
                    "privatekey",
                    "private_key",
                    "accesskey",
                    "access_key",
                }
            ),
            _forms,
        ),
        SecretPattern(
            "credential_quoted_form",
            frozenset(
                {"&quot;", "&#34;", "&#x22;", "&apos;", "&#39;", "%3d", "\\u0022", "\\u003d"}
            ),
            _quoted_forms,
        ),
        SecretPattern(
            "credential_directive_or_field",
            frozenset({"define", "set(", "%global", "value="}),
            _by_name,
        ),
    )
