"""The built-in value rules: token shapes, context rules and command-line credentials.

Each rule is a `SecretPattern`: lowercase trigger substrings gate it (one scan finds which
occur), and its `apply` rewrites a string. Token shapes replace the whole token; context
rules replace only their `secret` group, so the text around stays readable
(``docker login -u ci -p <redacted> registry``).
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.token_shapes import SHAPE_TRIGGERS, TOKEN_SHAPES

__all__ = [
    "REDACTED",
    "SecretPattern",
    "after_ansi",
    "after_escape",
    "after_lead",
    "builtin_rules",
    "ci_word_start",
    "lead_class",
    "redact_spans",
    "regex_rule",
    "word_start",
]

REDACTED = "<redacted>"


def redact_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each ``(start, end)`` of ``spans`` replaced by ``REDACTED``: the spans
    come in the order of their starts, and one that starts inside a span already replaced
    is skipped. The rules that find values with checks a regex cannot make yield spans."""
    out: list[str] = []
    pos = 0
    for start, end in spans:
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append(REDACTED)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


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


def regex_rule(name: str, regex: re.Pattern[str], triggers: Iterable[str]) -> SecretPattern:
    """A rule replacing the `secret` named group when the regex has one, else the whole match."""
    replacer = _group_replacer if "secret" in regex.groupindex else _whole_replacer

    def apply(text: str) -> str:
        return regex.sub(replacer, text)

    return SecretPattern(name, frozenset(t.lower() for t in triggers), apply, regex)


# A credential-looking token: 8+ chars and either a digit or two capitals, so prose
# such as "bearer of good news" or "Basic arithmetic" never matches.
def _tokenish(chars: str, tail: str = "") -> str:
    return rf"(?=[{chars}]*[0-9]|(?:[{chars}]*?[A-Z]){{2}})[{chars}]{{8,}}{tail}"


def after_escape(literal: str) -> str:
    """Lookbehinds for ``literal`` after a JSON escape (the ``n`` of ``\\n`` is no token part)."""
    return rf"(?<=\\[nrtbf]{literal})|(?<=\\u[0-9A-Fa-f]{{4}}{literal})"


# The escape character of a terminal code, raw or written as an escape: JSON's \u001b (a
# tool's output inside arguments or a transcript), C's and Python's \x1b, \033 and \e.
_ESC = (r"\x1b", r"\\u001[bB]", r"\\x1[bB]", r"\\033", r"\\e")


def after_ansi(literal: str) -> str:
    """Lookbehinds for ``literal`` right after a terminal colour code (``\\x1b[93m``, also
    JSON-escaped ``\\u001b[93m``): the ``m`` that ends it is no token part."""
    return "|".join(
        rf"(?<={esc}\[{codes}m{literal})"
        for esc in _ESC
        for codes in ("[0-9]", "[0-9]{2}", "[0-9];[0-9]{2}")
    )


def _lit(prefix: str, rest: str, before: str = "A-Za-z0-9") -> str:
    """`prefix` then `rest`, where `prefix` must not be glued to a preceding `before` char.

    The boundary check sits after the literal on purpose: a leading lookbehind stops the
    regex engine from scanning for the literal prefix at C speed (about 100x slower).
    """
    escaped = re.escape(prefix)
    return (
        f"{escaped}(?:(?<![{before}]{escaped})|{after_escape(escaped)}|{after_ansi(escaped)}){rest}"
    )


_PEM_HEAD = lazy_compile(r"-----BEGIN (?P<kind>[A-Z0-9 ]*?)PRIVATE KEY(?P<block> BLOCK)?-----")
_PEM_END = lazy_compile(r"-----END [A-Z0-9 ]*?PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = lazy_compile(r"[A-Za-z0-9+/=\s\\:,.\-]*")  # an unterminated key: its base64 lines


def _pem_apply(text: str) -> str:
    """Each private key block from its BEGIN line to its END line (or, unterminated, to the end
    of its base64 body), with the head and foot kept. The END after each BEGIN is searched for
    once per text, not once per BEGIN: hostile text of many BEGINs and no END stays linear."""
    out: list[str] = []
    pos = 0
    end: re.Match[str] | None = None
    no_end_from = len(text) + 1  # no END line starts at or after this index
    while (head := _PEM_HEAD.search(text, pos)) is not None:
        after = head.end()
        if after >= no_end_from:
            end = None
        elif end is None or end.start() < after:
            end = _PEM_END.search(text, after)
            if end is None:
                no_end_from = after
        kind = head.group("kind")
        block = head.group("block") or ""
        if text.startswith(('"', "'", '\\"'), after):
            # the marker closes its string at once: a constant in code, no key follows
            out.append(text[pos:after])
            pos = after
            continue
        out.append(text[pos : head.start()])
        out.append(f"-----BEGIN {kind}PRIVATE KEY{block}-----{REDACTED}")
        if end is not None:
            out.append(f"-----END {kind}PRIVATE KEY{block}-----")
            pos = end.end()
        else:
            body = _PEM_BODY.match(text, after)
            pos = body.end() if body is not None else after
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# A PEM block in base64 (kubeconfig "client-key-data:", Helm values, env vars): the encoded
# "-----BEGIN" starts it; a private key is replaced whole, a certificate is public and stays.
_B64_PEM = lazy_compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}")


def _b64_pem_replacer(match: re.Match[str]) -> str:
    head = match.group(0)[:96]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4], validate=False)
    except ValueError:
        return match.group(0)
    # "-----BEGIN PRIVATE KEY", "-----BEGIN RSA PRIVATE KEY" (a cut head may lack "KEY")
    return REDACTED if b"PRIVATE" in decoded else match.group(0)


def _b64_pem_apply(text: str) -> str:
    return _B64_PEM.sub(_b64_pem_replacer, text)


_NOT_REDACTED = r"(?!<redacted>)"
_FOREIGN_WORDS = ("passwort", "kennwort", r"mot[ \t]+de[ \t]+passe", "contrase(?:ñ|n)a", "senha")
_FOREIGN_VALUE = (
    r"(?:\\*[\"'«„“])?[ \t]*(?P<secret>(?!<redacted>)(?![$%{<])[^\s\"'«»„“”\\]{3,}?)"
    r"(?=[.,;:!?)]*(?:[\s\"'`«»„“”\\]|$))"
)
_FOREIGN_TRIGGERS = ("passwort", "kennwort", "mot de passe", "contraseña", "contrasena", "senha")
_HASH_TRIGGERS = (
    "$1$", "$2$", "$2a$", "$2b$", "$2x$", "$2y$", "$5$", "$6$", "$7$", "$8$", "$9$", "$y$",
    "$gy$", "$apr1$", "$md5$", "$sha1$", "$scrypt$", "$argon2", "$pbkdf2", "$krb5",
)  # fmt: skip
# A SQL password literal: quoted or a bare word, never a bind parameter or placeholder (a
# backtick quotes an identifier in MySQL, not a literal).
_SQL_VALUE = r"""\\*["']?(?P<secret>(?!<redacted>)(?![$:?%{<@])[^\s"'`;,)\\]+)"""

# Characters besides a letter's two cases that IGNORECASE matches it with (Kelvin sign, long s,
# dotted and dotless i).
_FOLDS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}


def lead_class(words: Iterable[str]) -> str:
    """A case-sensitive class of every character an IGNORECASE word of ``words`` may start
    with. A pattern that starts with a class lets the engine skip to candidates at C speed;
    one that starts with a lookbehind or an IGNORECASE alternation is tried at every position.
    """
    firsts = sorted({w[0].lower() for w in words})
    return "[" + "".join(f"{c.upper()}{c}{_FOLDS.get(c, '')}" for c in firsts) + "]"


def after_lead(words: Iterable[str]) -> str:
    """The alternation of ``words`` (IGNORECASE regexes, each led by a plain letter) once that
    letter is consumed by ``lead_class(words)``: each word's rest, behind a check of its letter,
    in the words' own order (only one letter can match, so the order within a letter is the
    order that counts)."""
    by_first: dict[str, list[str]] = {}
    for word in words:
        by_first.setdefault(word[0].lower(), []).append(word[1:])
    return "(?:" + "|".join(f"(?<={c})(?:{'|'.join(r)})" for c, r in by_first.items()) + ")"


def word_start(*words: str) -> str:
    """``\\b(?:w1|w2…)`` for literal words, each literal first and its boundary check after it
    (a pattern led by ``\\b`` is tried at every position; one led by literals skips to them)."""
    branches = []
    for word in words:
        lit = re.escape(word)
        # \b before a word character: none before it; before any other: a word character
        look = "(?<!\\w" if re.match(r"\w", word) else "(?<=\\w"
        branches.append(f"{lit}{look}{lit})")
    return "(?:" + "|".join(branches) + ")"


def ci_word_start(words: Iterable[str], rest: str = "") -> str:
    """``\\b(?i:(?:w1|w2…)rest)``, led by ``lead_class(words)``: IGNORECASE words (regexes,
    each starting with a letter) at a word's start, then ``rest``, all IGNORECASE."""
    listed = list(words)
    return lead_class(listed) + r"(?<!\w.)(?i:" + after_lead(listed) + rest + ")"


# Credential words, one or two ("PRIVATE KEY", "SECRETkey", "access TOKEN"); a public key is
# no secret.
_CRED_WORD_LIST = (r"api[ _\-]?key", "apikey", "token", "secret", "access", "private", "key")
_CRED_WORD = "(?:" + "|".join(_CRED_WORD_LIST) + ")"
# The words after their first character, which ``lead_class(_CRED_WORD_LIST)`` consumed: every
# check before the first word looks one character further back.
_CRED_WORDS_LED = (
    r"(?i:(?<!public.)(?<!public[ _\-].)" + after_lead(_CRED_WORD_LIST)
    + r"(?:[ \t_\-]?" + _CRED_WORD + r")?)"
)  # fmt: skip
# After the words: blanks, or one of "-_." before a token holding a digit soon.
_WORD_SEP = r"(?:[ \t]+|[\-_.](?=[A-Za-z]{0,32}[0-9]))"
_GLUED_SEP = r"(?:[ \t]*[:=][ \t]*)"
_TOKEN_VALUE = (
    r"(?!<redacted>)(?!v?[0-9]+(?:\.[0-9]+)+(?![\w\-+/=]))"
    # a snake_case name's words are short; a piece of 16+ is a key's body (sk_12_34_<hex>)
    r"(?![a-z][a-z0-9]{0,15}(?:_[a-z0-9]{1,15})+(?![\w\-+/=.]))(?![A-Za-z_]+\b)"
    r"(?![A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w\-+/=]))"  # win32api.RegEnumKey: code
    r"(?:[0-9]{20,255}(?![A-Za-z])|(?=[A-Za-z0-9_\-+/=.]{0,255}[0-9])"
    r"(?=[A-Za-z0-9_\-+/=.]{0,255}[A-Za-z])[A-Za-z0-9][A-Za-z0-9_\-+/=.]{15,255})"
)

_FIRST_OF_TWO = ("api", "access", "private", "secret", "auth")
# The first word of a two-word credential label ("Secret Key:", "personal access token=").
_LABEL_WORDS = (
    "secret", "access", "api", "private", "auth", "authentication", "client", "master",
    "signing", "encryption", "license", "account", "app", "bearer", r"personal[ \t]+access",
)  # fmt: skip

# Stand-ins that cannot be a URL's password ("https://user:xxxx@host", an already redacted
# one). Words such as "password" or "changeme" are not among them: they are what default
# credentials are made of ("http://admin:password@127.0.0.1"), so they are redacted too.
_URL_PLACEHOLDER = r"(?i:redacted|x{3,}|\*{3,})"

_FOREIGN_PASSWORD = ci_word_start(
    _FOREIGN_WORDS, r"(?:[ \t]+(?:für|pour|de|para|do|da)(?:[ \t]+[^\s:=]{1,30}){1,3}?)?"
)

# Contextual rules replace only their `secret` group: (name, regex, triggers, flags).
_CONTEXT_REGEXES: tuple[tuple[str, str, tuple[str, ...], int], ...] = (
    # RFC 3986 userinfo: a user without ":" "/" "@", then the password up to the LAST "@"
    # that a host follows (passwords are pasted unencoded, with "#", "?" and "@" in them).
    ("url_credentials",
     r"://[^\s:/?#@\"'<>]*:(?!" + _URL_PLACEHOLDER + r"@)(?P<secret>[^\s/\"'<>]+)"
     r"@(?=\[?[A-Za-z0-9][\w.\-:\]%]*+(?!@))",
     ("@",), 0),
    ("url_token_userinfo", r"://(?P<secret>(?=[\w.~%\-]*[0-9])[\w.~%\-]{20,})@", ("@",), 0),
    ("bearer",
     r"earer(?:(?<![A-Za-z0-9_][Bb]earer)|" + after_escape("[Bb]earer") + r")[ \t]+(?P<secret>"
     + _tokenish(r"\w.~+/\-", "=*") + ")",
     ("bearer",), 0),
    ("basic_auth",
     r"asic(?:(?<![A-Za-z0-9_][Bb]asic)|" + after_escape("[Bb]asic") + r")[ \t]+(?P<secret>"
     + _tokenish("A-Za-z0-9+/", "={0,2}") + ")",
     ("basic",), 0),
    ("cookie_header",
     # "Cookie"/"cookie", alone or after "Set-": the value runs to the end of the line.
     r"ookie(?<=[Cc]ookie)(?:(?<![A-Za-z0-9_\-, (][Cc]ookie)|(?<=[Ss]et-[Cc]ookie)|"
     + after_escape("[Cc]ookie") + ")"
     r"(?:\\*+[\"'])?[ \t]*+:[ \t]*+(?:\\*+[\"'])?"
     r"(?P<secret>" + _NOT_REDACTED + r"(?=[^\"\\\r\n]*[A-Za-z0-9])[^\"\\\r\n]+)",
     ("cookie",), 0),
    # A web framework's session cookie, whose value is a bearer credential: Rails'
    # "_<app>_session", PHP's PHPSESSID, Java's JSESSIONID, Laravel's, Express's connect.sid.
    ("session_cookie",
     r"(?i:(?<![\w.])(?:_[a-z0-9_]{1,40}_session|phpsessid|jsessionid|laravel_session"
     r"|connect\.sid))[ \t]*=[ \t]*(?:\\*\")?"
     r"(?P<secret>(?!<redacted>)(?=[^\s;,\"'\\]{0,63}[0-9])[^\s;,\"'\\&]{16,4096})",
     ("_session", "phpsessid", "jsessionid", "connect.sid"), 0),
    ("query_secret_param",
     r"[?&;](?:key|sig|signature|auth|x-amz-signature|x-amz-credential|x-goog-signature"
     r"|x-goog-credential)=(?P<secret>" + _NOT_REDACTED + r"[^&#\s\"'<>]+)",
     ("key=", "sig", "auth=", "credential="), re.IGNORECASE),
    ("netrc_password",
     r"machine(?:(?<![A-Za-z0-9_]machine)|" + after_escape("machine") + r")"
     r"\s+\S+\s+login\s+\S+\s+password\s+(?P<secret>" + _NOT_REDACTED
     + r"(?:[^\s\\]|\\(?![nrtbfu\"]))+)",
     ("machine",), 0),
    # An Azure Functions key (or an OAuth authorization code) in a URL's "code" parameter:
    # only a long one with a digit, so "?code=AUTH_CODE" and "?code=abc" stay.
    ("query_code_param",
     r"[?&;]code=(?P<secret>(?!<redacted>)(?=[A-Za-z0-9_\-%]{0,80}[0-9])"
     r"[A-Za-z0-9_\-%]{30,}(?:={1,2}|%3[Dd]){0,2})",
     ("code=",), 0),
    ("slack_webhook",
     r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_\-]{10,})",
     ("hooks.slack.com",), 0),
    ("discord_webhook", r"/api/webhooks/[0-9]+/(?P<secret>[A-Za-z0-9_\-]{20,})",
     ("/api/webhooks/",), 0),
    # prose: "my password is hunter2" (a word with a digit or symbol; "is required" stays)
    ("password_in_prose",
     ci_word_start(
         ("password", "passphrase", "passwd", "pin code"),
         r"[ \t]+(?:is|was|would be)[ \t]*:?[ \t]+"
         r"[\"'`]?(?P<secret>(?=[^\s\"'`]*[0-9!@#$%^&*])(?![$%{<])[^\s\"'`]{3,}?)"
         r"(?=[.,;:!?)]*(?:[\s\"'`]|$))"),
     ("password is", "password was", "passphrase is", "passwd is", "password would"), 0),
    # SQL: CREATE/ALTER USER|ROLE|LOGIN … IDENTIFIED [WITH plugin] BY [PASSWORD] '…' (MySQL,
    # Oracle: quoted or a bare word), SET PASSWORD [FOR u] = [PASSWORD(]'…'. A bind parameter
    # or placeholder (:pw, ?, ${PW}, %s) is kept.
    ("sql_identified_by",  # MySQL's IDENTIFIED WITH plugin AS '<hash>' too
     ci_word_start(
         ("identified",),
         r"[ \t]+(?:(?:with[ \t]+[\w'\"`]+[ \t]+)?by|with[ \t]+[\w'\"`]+[ \t]+as)"
         r"[ \t]+(?:password[ \t]+)?"
         r"(?=\\*[\"'])(?!\\*[\"'][a-z]+\\*[\"'])" + _SQL_VALUE),
     ("identified",), 0),
    ("sql_identified_by_word",  # Oracle's bare word, only inside a statement that makes a user
     ci_word_start(
         ("create", "alter", "grant"),
         r"\b[^;\r\n]{0,200}?\bidentified[ \t]+(?:with[ \t]+[\w'\"`]+[ \t]+)?by[ \t]+"
         + _SQL_VALUE),
     ("identified",), 0),
    # PostgreSQL: CREATE/ALTER USER|ROLE|GROUP … [WITH] [ENCRYPTED] PASSWORD '…' (or a bare
    # word), whatever options follow it; PASSWORD NULL is none.
    ("sql_role_password",
     ci_word_start(
         ("create", "alter"),
         r"[ \t]+(?:user|role|group)\b[^;\r\n]{0,200}?"
         r"\b(?:(?:un)?encrypted[ \t]+)?password[ \t]+(?!null\b)" + _SQL_VALUE),
     ("create user", "create role", "alter user", "alter role", "create group", "alter group"),
     0),
    # PowerShell: ConvertTo-SecureString [-String] <plain text> [-AsPlainText] [-Force]; a
    # variable or a subexpression is kept.
    ("powershell_secure_string",
     r"(?i:convertto-securestring)(?:[ \t]+-(?i:string|asplaintext|force)\b)*[ \t]+"
     r"(?:\\*[\"'])?(?P<secret>(?!<redacted>)(?![$<{%(\-])[^\s\"'\\|;)]+)",
     ("convertto-securestring",), 0),
    ("sql_set_password",
     ci_word_start(
         ("set",),
         r"[ \t]+password\b[^;\r\n=]{0,120}=[ \t]*(?:password[ \t]*\([ \t]*)?" + _SQL_VALUE),
     ("set password",), 0),
    # PHP: define('DB_PASSWORD', '…'): the constant's name says what its value is.
    ("php_define_secret",
     ci_word_start(
         ("define",),
         r"[ \t]*\([ \t]*\\*(?P<q1>['\"])[A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|KEY"
         r"|TOKEN|SALT|NONCE)[A-Z0-9_]*\\*(?P=q1)[ \t]*,[ \t]*\\*(?P<q2>['\"])"
         r"(?P<secret>(?![$<{])[^'\"\\\r\n]{1,512})\\*(?P=q2)"),
     ("define",), 0),
    # Webhook URLs whose path is the credential: Microsoft Teams (incoming webhooks, old and
    # new hosts), Power Automate / Logic Apps triggers (the workflow, trigger and signed query
    # to the URL's end), ThingsBoard's device API (/api/v1/<access token>/telemetry).
    ("teams_webhook",
     r"(?:\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook(?:b2)?)/"
     r"(?P<secret>[A-Za-z0-9@/_\-]{20,})",
     ("webhook.office.com", "outlook.office"), re.IGNORECASE),
    ("power_automate_webhook",
     r"(?:\.logic\.azure\.com|\.api\.powerplatform\.com)(?::[0-9]{1,5})?/"
     r"(?:powerautomate/automations/direct/)?workflows/(?P<secret>(?:[^\s\"'<>`\\]|<redacted>){16,})",
     ("logic.azure.com", "api.powerplatform.com"), re.IGNORECASE),
    ("device_token_path",
     r"/api/v1/(?P<secret>(?=[a-z]*[0-9])[A-Za-z0-9_\-]{16,64})/"
     r"(?:telemetry|attributes|rpc|claim|firmware|software)\b",
     ("/api/v1/",), 0),
    # German, French, Spanish, Portuguese prose and forms: after ":" "=" or "lautet" (reads)
    # the next word is the password whatever its letters; after a copula (ist, est, es, é)
    # only a word with a digit, symbol or capital ("ist falsch", "est incorrect" stay).
    ("password_in_foreign_prose",
     _FOREIGN_PASSWORD + r"[ \t]*(?:[:=]|[ \t](?i:lautet))[ \t]*" + _FOREIGN_VALUE,
     _FOREIGN_TRIGGERS, 0),
    ("password_in_foreign_prose_copula",
     _FOREIGN_PASSWORD + r"[ \t]+(?i:ist|war|est|était|es|era|é|è)[ \t]*:?[ \t]+"
     r"(?=\\*[\"'«„“]|[^\s\"'«»„“”\\]*[0-9!@#$%^&*A-Z])" + _FOREIGN_VALUE,
     _FOREIGN_TRIGGERS, 0),
    # Azure DevOps personal access tokens (84 characters, "AZDO" at 76).
    ("azure_devops_pat",
     r"(?<![A-Za-z0-9])(?P<secret>[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})(?![A-Za-z0-9])",
     ("azdo",), 0),
    # Password hashes in modular crypt format ($id$[params$]salt$hash: md5crypt, bcrypt,
    # sha256/512crypt, yescrypt, Cisco, scrypt, argon2, pbkdf2) and Kerberos roasting hashes:
    # crackable offline, so as secret as the password. A shell's "$1" stays (no "$" after).
    ("password_hash",
     r"(?P<secret>\$(?<![\w$]\$)(?:1|2[abxy]?|5|6|7|8|9|y|gy|apr1|md5|sha1|scrypt|argon2(?:id|i|d)"
     r"|pbkdf2(?:-sha\d+)?|krb5asrep|krb5tgs|krb5pa)\$(?:[^\s\"'`$]{1,128}\$){0,5}"
     r"[./A-Za-z0-9+=]{16,})",
     _HASH_TRIGGERS, 0),
    # A 32-byte key in 0x hex (secp256k1 / Ethereum, ed25519 seeds). A transaction or block
    # hash has the same shape and is replaced too: a readable loss, no broken structure.
    ("hex_private_key_0x",
     r"0x(?<![\w$]0x)(?P<secret>[0-9a-fA-F]{64})(?![0-9a-zA-Z_])",
     ("0x",), 0),
    # A credential word (or two: "PRIVATE KEY", "SECRETkey", "access TOKEN") and a token
    # right after it, as prose, logs and loose config write them ("access token abc123…",
    # "SECRET 9f8e…", "lemlistPRIVATE 0f3a…", "codatoken-<uuid>", "getresponseKEY=0123…").
    # The words start a word, or are glued to a vendor's name before them; glued, an "=" or
    # ":" may follow (at a word's start that is an assignment, judged by the assignment
    # rules). The token: 16+ characters with a digit and a letter (hex and uuids too), or 20+
    # digits; never a version, a snake_case name or a word.
    ("token_after_credential_word",
     lead_class(_CRED_WORD_LIST)
     + r"(?:(?<![A-Za-z0-9].)" + _CRED_WORDS_LED + _WORD_SEP
     + r"|(?<=[a-z0-9].)" + _CRED_WORDS_LED + r"(?:" + _GLUED_SEP + r"|" + _WORD_SEP + r"))"
     r"(?:\\*[\"'])?(?P<secret>" + _TOKEN_VALUE + r")(?![A-Za-z0-9_\-+/=.])",
     ("token", "secret", "key", "access", "private"), 0),
    # Two credential words in a row ("private token", "access key", "access code") say what
    # follows more surely than one: a token of 10+ characters with a digit and a letter.
    ("token_after_two_credential_words",
     lead_class(_FIRST_OF_TWO) + r"(?<![A-Za-z0-9].)(?i:(?<!public.)(?<!public[ _\-].)"
     + after_lead(_FIRST_OF_TWO) + r"[ \t_\-]?(?:key|token|secret|code))[ \t]+(?:\\*[\"'])?"
     r"(?P<secret>(?!<redacted>)(?!v?[0-9]+(?:\.[0-9]+)+(?![\w\-+/=]))(?![0-9]{4}-[0-9]{2}-)"
     r"(?=[A-Za-z0-9_\-+/=.]{0,255}[0-9])"
     r"(?=[A-Za-z0-9_\-+/=.]{0,255}[A-Za-z])(?![a-z]+_[a-z_0-9]+(?![\w\-+/=.]))"
     r"[A-Za-z0-9][A-Za-z0-9_\-+/=.]{9,255})(?![A-Za-z0-9_\-+/=.])",
     ("token", "secret", "key", "access code", "access_code", "access-code", "auth code",
      "auth_code", "secret code", "private code"), 0),
    # A label of two words ("Secret Key: …", "access key=…", "API token: …"): the value,
    # 8+ characters with a digit, is the secret (one word is an assignment's name, judged there).
    ("credential_label",  # also glued to a vendor's name by "_" or "-" (acme_secret key=…)
     lead_class(_LABEL_WORDS)
     + r"(?i:(?:(?<![A-Za-z0-9_\-].)|(?<=[A-Za-z0-9][_\-].))" + after_lead(_LABEL_WORDS)
     + r"[ \t]+(?:key|token|secret))[ \t]*[:=][ \t]*(?:\\*[\"'])?"
     r"(?P<secret>(?!<redacted>)(?![$%{<])(?=[^\s\"'`,;\\]{0,63}[0-9])[^\s\"'`,;\\]{8,256})",
     ("key", "token", "secret"), 0),
    # Formats known by their suffix: MaxMind license keys (v2), New Relic license keys.
    ("maxmind_license_key",
     r"(?<![A-Za-z0-9_])(?P<secret>[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?![A-Za-z0-9_])",
     ("_mmk",), 0),
    ("newrelic_license_key",
     r"(?<![A-Za-z0-9])(?P<secret>[A-Za-z0-9]{36}NRAL)(?![A-Za-z0-9])", ("nral",), 0),
    ("mailchimp_key", r"(?<![0-9a-f])(?P<secret>[0-9a-f]{32}-us[0-9]{1,2})\b", ("-us",), 0),
    ("azure_client_secret",
     r"(?<![\w~.\-])(?P<secret>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})(?![\w~.\-])",
     ("q~",), 0),
)  # fmt: skip

# Credentials passed as command-line arguments of common tools, where the flag alone
# (often a short "-p") says nothing: the tool name before it does. The value may be quoted,
# also with JSON escapes; a $VAR, %VAR%, {{ }} or <...> placeholder is kept.
# The rest of one command up to its flag: no line break (raw or JSON-escaped) or ; | &.
_SEG = r"(?:[^\r\n;|&\\]|\\(?![nr]))" + "{0,200}?"


def _tool(*names: str) -> str:
    """Tool names (each a literal, optionally followed by ``/rest``, a regex) that start a
    word, also right after a JSON escape ("\\ndocker login ..."). Each literal leads its own
    check, as in ``_lit``: a pattern led by lookbehinds is tried at every position."""
    branches = []
    for name in names:
        word, _, rest = name.partition("/")
        lit = re.escape(word)
        branches.append(
            f"{lit}(?:(?<![\\w\\-]{lit})|(?<=\\\\[nrtbf]{lit})|(?<=\\\\u[0-9A-Fa-f]{{4}}{lit})){rest}"
        )
    return "(?:" + "|".join(branches) + ")"


_VALUE = r"""(?:\\*["'])*(?P<secret>(?![<$%{])[^\s"'`;&|\\]+)"""
# A glued "-p" is none of the longer flags other tools on the same line use (-pw, -passin).
_GLUED_P = r"-p(?!w[ \t]|ass(?:in|out)?[ \t])"
_CLI_REGEXES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("registry_login_password",
     _tool("docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane", "regctl",
           "az", "oc", "cf", "finch") + r"\b"
     + _SEG + r"\blogin\b" + _SEG + r"[ \t]-p(?:[ \t]+|=)" + _VALUE,
     ("login",)),
    ("mysql_inline_password",  # -pSECRET, glued: "-p name" names the database
     _tool(r"mysql/\w*", r"mariadb/[\w\-]*", "mycli") + r"\b" + _SEG + r"[ \t]" + _GLUED_P + _VALUE,
     ("mysql", "mariadb", "mycli")),
    ("sshpass_password",
     _tool("sshpass") + r"\b" + _SEG + r"[ \t]" + _GLUED_P + r"[ \t]*" + _VALUE, ("sshpass",)),
    ("putty_password",
     _tool("plink", "pscp", "psftp") + r"\b" + _SEG + r"[ \t]-pw[ \t]+" + _VALUE, ("-pw",)),
    ("redis_cli_password",
     _tool("redis-cli") + r"\b" + _SEG + r"[ \t]-a[ \t]+" + _VALUE, ("redis-cli",)),
    ("mongo_password", _tool(r"mongo/\w*") + r"\b" + _SEG + r"[ \t]-p[ \t]+" + _VALUE, ("mongo",)),
    ("sqlcmd_password",
     _tool("sqlcmd", "bcp", "osql", "isql") + r"\b" + _SEG + r"[ \t]-P[ \t]*" + _VALUE,
     ("sqlcmd", "bcp", "osql", "isql")),
    ("zip_password",
     _tool("zip", "unzip", "zipcloak") + r"\b" + _SEG + r"[ \t]-P[ \t]+" + _VALUE, ("zip",)),
    ("sevenzip_password", _tool("7z/[az]?") + r"\b" + _SEG + r"[ \t]" + _GLUED_P + _VALUE, ("7z",)),
    ("ldap_password", _tool(r"ldap/\w+") + r"\b" + _SEG + r"[ \t]-w[ \t]+" + _VALUE, ("ldap",)),
    ("openssl_pass_arg", r"-pass(?:in|out)?[ \t]+pass:" + _VALUE, ("pass:",)),
    ("openssl_k", _tool("openssl") + r"\b" + _SEG + r"[ \t]-k[ \t]+" + _VALUE, ("openssl",)),
    ("smb_user_password",
     _tool("smbclient", "rpcclient", "smbmap", "smbcacls") + r"\b" + _SEG
     + r"[ \t](?:-U[ \t]*|--user=)[^\s%]+%" + _VALUE,
     ("smbclient", "rpcclient", "smbmap", "smbcacls")),
    ("psexec_password",
     # psexec in any case: the first letter leads, its checks look one character back
     r"[Pp](?:(?<![\w\-].)|(?<=\\[nrtbf].)|(?<=\\u[0-9A-Fa-f]{4}.))(?i:sexec(?:64)?(?:\.exe)?)\b"
     + _SEG + r"[ \t]-p[ \t]+" + _VALUE, ("psexec",)),
)  # fmt: skip


def builtin_rules() -> list[SecretPattern]:
    """Every built-in value rule, in the order they are applied."""
    rules = [
        SecretPattern("pem_private_key", frozenset({"private key"}), _pem_apply),
        SecretPattern("base64_pem_private_key", frozenset({"ls0tls1crudjti"}), _b64_pem_apply),
    ]
    for name, pattern, triggers, flags in _CONTEXT_REGEXES:
        rules.append(_lazy_regex_rule(name, pattern, flags, triggers))
    for name, pattern, triggers in _CLI_REGEXES:
        rules.append(_lazy_regex_rule(name, pattern, 0, triggers))
    for name, prefix, rest in TOKEN_SHAPES:
        triggers = SHAPE_TRIGGERS.get(name, (prefix.lower(),))
        rules.append(_lazy_regex_rule(name, functools.partial(_shape, prefix, rest), 0, triggers))
    return rules


def _shape(prefix: str, rest: str) -> str:
    # The telegram token's prefix is ":AA" after digits, so it keeps no boundary check.
    return re.escape(prefix) + rest if prefix == ":AA" else _lit(prefix, rest)


def _lazy_regex_rule(
    name: str, pattern: str | Callable[[], str], flags: int, triggers: Iterable[str]
) -> SecretPattern:
    """``regex_rule`` of a built-in pattern (or of what ``pattern()`` returns), made when its
    triggers first occur: most never do in a process, and compiling them all would cost every
    process's start-up."""
    made: list[SecretPattern] = []  # the compiled rule, once (a race compiles it twice)

    def apply(text: str) -> str:
        if not made:
            source = pattern if isinstance(pattern, str) else pattern()
            made.append(regex_rule(name, re.compile(source, flags), ()))
        return made[0].apply(text)

    return SecretPattern(name, frozenset(t.lower() for t in triggers), apply)
