"""Which names hold credentials, and which values are expressions rather than secrets.

`name_is_sensitive` judges a key, header, flag or variable name from its words (camelCase,
``-`` and ``_`` split, lowercased), including names glued without a separator
(``PGPASSWORD``, ``DBPASS``, ``APIKEY``). `is_expression` tells a value that only refers to
a secret (``form.get(...)``, ``${VAR}``, ``settings.SECRET_KEY``, ``<redacted>``) from one
that is the secret, so source code that names a credential field survives redaction.
"""

from __future__ import annotations

import itertools
import re

from wayline.redaction._lazyre import lazy_compile

__all__ = [
    "KEY_TRIGGERS",
    "flag_is_sensitive",
    "foreign_password_name",
    "is_expression",
    "is_prose",
    "made_of_words",
    "name_is_sensitive",
    "name_is_weak",
    "split_key",
]

_CAMEL_LOWER_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CAMEL_ACRONYM = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_INDEX_SUFFIX = re.compile(r"(?<=[a-z]{3})[0-9]{1,2}\Z")
_DIGIT_NAMES = frozenset({"auth0"})

# A name containing one of these words anywhere is a credential ("db_password", "client_secret").
_SECRET_WORDS = frozenset(
    {
        "skey",  # Duo's secret key (its clients' name; "ikey" is the public integration key)
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
        "secrete",
        # the word in other languages' config keys (German, Dutch, Spanish, Portuguese,
        # Polish, Swedish, Finnish, French glued): "kennwort", "db_contrasena", "senha"
        "kennwort",
        "passwort",
        "wachtwoord",
        "contrasena",
        "senha",
        "haslo",
        "losenord",
        "salasana",
        "motdepasse",
        "pword",
        # the abbreviations CredSweeper's password keyword lists (pswr?, p(s|ss|as)?w(o?r)?d)
        "psw",
        "pswd",
        "pswrd",
    }
)
# The same words written in their own alphabets, found in the lowercase key as it is.
_FOREIGN_NAMES = (
    "contraseña", "hasło", "lösenord", "mot de passe", "пароль", "密码", "密碼", "パスワード",
    "비밀번호", "şifre",
)  # fmt: skip
# Glued spellings: a word ending in one of these is a credential ("pgpassword", "dbpass",
# "mysqlpwd", "awssecret", "clientapikey", "npmauthtoken"), unless it is one of _NOT_GLUED.
_GLUED_SUFFIXES = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "pass",
    "secret",
    "secrets",
    "apikey",
    "secretkey",
    "privatekey",
    "accesskey",
    "authtoken",
    "accesstoken",
    "apitoken",
    "credentials",
)
# Ordinary words (and $OLDPWD, a directory) that end like a credential word.
_NOT_GLUED = frozenset(
    {
        "bypass",
        "compass",
        "encompass",
        "surpass",
        "trespass",
        "overpass",
        "underpass",
        "impass",
        "oldpwd",
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
# A name ending in one of these describes a credential without holding it: POSTGRES_PASSWORD_FILE
# holds a path, password_field a form field, secretName a Kubernetes object's name,
# PasswordAuthentication an sshd switch.
_META_WORDS = frozenset(
    {
        "field",
        "fields",
        "file",
        "files",
        "path",
        "dir",
        "name",
        "names",
        "type",
        "length",
        "len",
        "policy",
        "prompt",
        "label",
        "hint",
        "env",
        "url",
        "uri",
        "endpoint",
        "regex",
        "pattern",
        "format",
        "placeholder",
        "strength",
        "expiry",
        "expiration",
        "ttl",
        "reset",
        "authentication",
        "command",
        "cmd",
        "ref",
        "arn",
        "version",
        "count",
        "manager",
        "store",
        "stdin",
        "provider",
        "helper",
        "mount",
        "rotation",
        "age",
        "consent",
        "banner",
        "samesite",
        "httponly",
        "jar",
        "id",
        "ids",
        "size",
        "domain",
        "scheme",
        "schemes",
        "method",
        "methods",
        "mode",
        "enabled",
        "required",
        "flag",
        "class",
        "param",
        "params",
    }
)
# Words before a final "pass" that make it a step, not a password ("first_pass", "dry_pass").
_PASS_STEPS = frozenset(
    {"first", "second", "third", "last", "next", "final", "single", "multi", "two", "one", "dry"}
)
# Substrings present in (the lowercase form of) every name `name_is_sensitive` accepts.
KEY_TRIGGERS = (
    "pass", "pwd", "psw", "secret", "key", "credential", "cookie", "bearer", "token", "auth",
    "login", "pat", "kennwort", "passwort", "wachtwoord", "contrase", "senha", "haslo", "losenord",
    "salasana", *_FOREIGN_NAMES,
)  # fmt: skip


def foreign_password_name(key: str) -> bool:
    """True when a key is the word "password" in an alphabet ``split_key`` drops
    (``contraseña``, ``пароль``, ``密码``)."""
    lowered = key.lower()
    return any(word in lowered for word in _FOREIGN_NAMES)


def split_key(key: str) -> tuple[str, ...]:
    """The lowercase words of a name: camelCase, acronyms and non-alphanumerics split."""
    spaced = _CAMEL_ACRONYM.sub("_", _CAMEL_LOWER_UPPER.sub("_", key)).lower()
    words = tuple(w for w in _NON_ALNUM.split(spaced) if w)
    index = _INDEX_SUFFIX.search(words[-1]) if words else None
    if index is not None and words[-1] not in _DIGIT_NAMES:
        # An index after a name's last word (sheet_token2, apiKey3, password1) names the same
        # kind of value; a product named with digits (Auth0) is no index.
        return (*words[:-1], words[-1][: index.start()])
    return words


def _glued(word: str) -> bool:
    if word in _NOT_GLUED:
        return False
    # A compound suffix is a credential on its own too ("secretkey", "accesstoken"); a short
    # one alone is not ("pass" is a step, "pwd" the working directory).
    return any(
        word.endswith(s) and (len(word) > len(s) or len(s) >= 8) for s in _GLUED_SUFFIXES
    ) or any(w in word for w in ("password", "passwd", "passphrase", "kennwort", "passwort"))


def name_is_sensitive(words: tuple[str, ...]) -> bool:
    """True when a name split by `split_key` holds a credential (built-in rules only)."""
    if not words:
        return False
    last = words[-1]
    prev = words[-2] if len(words) > 1 else ""
    if last in _META_WORDS and len(words) > 1:
        return False
    if any(w in _SECRET_WORDS or _glued(w) for w in words):
        return True
    if "passe" in words and "mot" in words:
        return True  # mot_de_passe, motDePasse
    if any(a == "pass" and b in ("word", "wd") for a, b in itertools.pairwise(words)):
        return True  # pass_word, PASS_WD
    if last == "token":
        return prev not in _COUNT_WORDS
    if last in ("authorization", "auth"):
        return True
    if last == "key" and prev in _KEY_QUALIFIERS:
        return True
    if last == "header" and prev in ("auth", "authorization"):
        return True
    if last == "pass" and prev and prev not in _PASS_STEPS:
        return True  # "smtp_pass", "DB_PASS"
    # POSIX $PWD is the working directory; "db_pwd" / "mysql_pwd" are passwords.
    return "pwd" in words and len(words) > 1


# "<vendor>_key" / "<vendor>Login" may hold a key (HEROKU_KEY, SONAR_LOGIN) or a name
# (cache_key, sort_key): such a name counts only when its value looks like a credential.
# "<vendor>_pat" is a personal access token (GITHUB_PAT, ASANA_PAT) or, in code, a pattern
# (_HEX_PAT = "[0-9A-Fa-f]{1,4}"): its value decides too.
_WEAK_LAST = frozenset({"key", "login", "pat"})
_NOT_WEAK = frozenset(
    {"primary", "foreign", "sort", "partition", "hash", "cache", "dict", "lookup", "row",
     "unique", "group", "index", "search", "shortcut", "translation", "column", "field",
     "public", "idempotency", "dedup", "object", "map", "list", "state", "event", "message",
     "model"}
)  # fmt: skip


# English words that end in "key" (a vendor's key glued to its name, "uclassifykey", does too).
_KEY_WORDS = frozenset(
    {"monkey", "donkey", "turkey", "hockey", "jockey", "whiskey", "hotkey", "passkey", "lackey",
     "malarkey", "latchkey", "turnkey", "keykey", "rekey", "subkey", "hashkey",
     "sortkey", "cachekey", "primarykey", "foreignkey", "publickey", "mapkey", "dictkey"}
)  # fmt: skip


def name_is_weak(words: tuple[str, ...]) -> bool:
    """True for ``<qualifier>_key`` / ``<qualifier>_login`` / ``<qualifier>_pat`` names, and a
    vendor's name with ``key`` glued on (``acmekey``), not known to hold a credential or a
    non-secret (their values decide)."""
    if len(words) == 1:
        word = words[0]
        return len(word) >= 6 and word.endswith("key") and word not in _KEY_WORDS
    return len(words) >= 2 and words[-1] in _WEAK_LAST and words[-2] not in _NOT_WEAK


_FLAG_WORDS = frozenset({"pass", "pw", "passwd", "password"})


def flag_is_sensitive(words: tuple[str, ...]) -> bool:
    """True when a command-line flag name holds a credential (``--pass`` and ``--pw`` too)."""
    return (len(words) == 1 and words[0] in _FLAG_WORDS) or name_is_sensitive(words)


# Values that only stand for a secret, quoted or not. Each alternative matches at the start.
_PLACEHOLDER = lazy_compile(
    r"""(?x)
    \$[{(]?[A-Za-z_]                     # $VAR, ${VAR}, $(command), $_POST
    | \$\{\{ | \$\( | \{\{ | \{% | <%      # ${{ secrets.X }}, {{ var }}, {% ... %}, <%= ... %>
    | %[A-Za-z_]\w*%                     # %VAR% (Windows)
    | \{[A-Za-z_][\w.()\[\]]*[}!:(]     # {name}, {len(x)}: f-string or format fields
    | <[A-Za-z_][\w .\-]*>               # <redacted>, <your-password>, <TOKEN>
    | %(?:\([A-Za-z_]\w*\))?[-+ #0]*\d*[sdrif](?![A-Za-z0-9])  # printf: %s, %(password)s
    | [*xX.\u2022]+$                     # a mask: ***, xxxx, ...
    """
)
# Code that reads a secret from somewhere: a call or subscript ("form.get(", "os.environ[").
_CALL = lazy_compile(r"(?:[A-Za-z_]\w*(?:\.|::|->|\?\.))*[A-Za-z_]\w*[(\[]")
_ATTRIBUTE = lazy_compile(r"@?[A-Za-z_]\w*(?:(?:\.|::|->|\?\.)[A-Za-z_]\w*)+|@[A-Za-z_]\w*")
_IDENTIFIER = lazy_compile(r"[a-z_][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z]\w*")
# Literals that carry no secret, and type names after "password: " in annotations.
_KEYWORDS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "undefined",
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        "secretstr",
        "any",
        "self",
        "required",
        "unset",
        "empty",
        # code keywords that start an expression ("token = await fetch()", "if not secret: raise")
        "await",
        "new",
        "yield",
        "lambda",
        "function",
        "not",
        "raise",
        "return",
        "typeof",
        # config words ("id-token: write", "secrets: inherit")
        "read",
        "write",
        "inherit",
        "optional",
        "auto",
        "always",
        "never",
        "enabled",
        "disabled",
        "object",
    }
)
# A version or address ("detect-secrets==1.5.0", "10.0.0.5"): no credential has that shape.
_VERSION = lazy_compile(r"v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?")


_WORDISH = lazy_compile(r"[A-Z]?[a-z]*[aeiouy][a-z]*")  # a word-like run: letters with a vowel
_LAST_NAME = lazy_compile(r"[A-Za-z_]\w*(?=[(\[]$)")


def _random_name(callee: str) -> bool:
    """True when what precedes ``(`` is no function name but a random-looking token
    (``PASS=Hn7fAD5qBrRovWGsdm(``, ``PGPASSWORD=nr785KauC8XuxgurEW(``): upper case, lower
    case and digits, and less than half of it in pronounceable words. Names with digits
    (``getV2Client(``, ``toBase64String(``) are mostly words."""
    found = _LAST_NAME.search(callee)
    name = found.group(0) if found is not None else callee
    if len(name) < 10 or not any(c.isdigit() for c in name):
        return False
    if not (any(c.isupper() for c in name) and any(c.islower() for c in name)):
        return False
    words = sum(len(w) for w in _WORDISH.findall(name) if len(w) >= 4)
    return words < 0.5 * len(name)


def made_of_words(name: str) -> bool:
    """True when at least half of ``name`` is in pronounceable runs of 3+ letters (``SecretStr``,
    ``PasswordField``): a name a person chose, not random letters (``CfTDKSBAzacQzLfH``)."""
    words = sum(len(w) for w in _WORDISH.findall(name) if len(w) >= 3)
    return words * 2 >= len(name)


def _closed(value: str, opener: int, rest: str) -> bool:
    """Whether the bracket at ``value[opener]`` is closed later (in ``value`` or ``rest``, the
    text after it): a call has its arguments and a ")", a token followed by "(" does not."""
    closer = ")" if value[opener] == "(" else "]"
    return closer in value[opener + 1 :] or closer in rest


_PASCAL = lazy_compile(r"_?[A-Z][a-z]+(?:[A-Z][a-z]*)*(?:\[[\w, .\[\]|]*\])?")
_UPPER_SNAKE = lazy_compile(r"_?[A-Z][A-Z]*(?:_[A-Z]+)+")
_STOPWORDS = frozenset(
    {
        "a", "an", "the", "of", "to", "for", "in", "on", "is", "are", "if", "and", "or", "with",
        "from", "this", "that", "be", "by", "as", "it", "its", "will", "should", "when", "used",
        "use", "not", "can", "into", "which", "your", "you", "see", "e.g.", "i.e.",
    }
)  # fmt: skip


_ALNUM = lazy_compile(r"[^\W_]")


_COLOUR = lazy_compile(r"#[0-9a-fA-F]{3,8}")


def _names_itself(value: str, name: str) -> bool:
    """A constant whose value is (part of) its own name: _AUTHORIZATION = "authorization"."""
    words = split_key(value)
    return (
        bool(words) and not any(c.isdigit() for c in value) and set(words) <= set(split_key(name))
    )


_SCHEMES = frozenset({"basic", "bearer", "token", "digest", "negotiate"})
# A schema's type names ("password": "string" in a protocol's field list): principle 2.
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def is_prose(value: str) -> bool:
    """True when a ``key: value`` line's value reads as a sentence (a docstring's parameter
    description), not a passphrase: at least four words, two of them function words."""
    words = value[:200].lower().split()
    if len(words) < 2 or not words[0].strip(".,;:()").isalpha():
        return False
    sentence = words[0] in ("a", "an", "the") or (len(words) >= 3 and value.rstrip()[-1:] == ".")
    if sentence and value[:1].isupper():
        return True  # "A ServerCredentials object.", "Text to consume."
    if len(words) < 4:
        return False
    stops = sum(w.strip(".,;:()") in _STOPWORDS for w in words)
    # "ChannelCredentials object for server authentication": four words of letters, one of
    # them a function word, is a description (a passphrase has no punctuation-free grammar
    # word between plain words often enough to matter here).
    plain = all(w.strip(".,;:()").isalpha() for w in words[:8])
    return stops >= 2 or (stops >= 1 and plain)


def is_expression(
    value: str,
    *,
    quoted: bool = False,
    rest: str | None = None,
    name: str | None = None,
    annotation: bool = False,
) -> bool:
    """True when an assignment's value refers to a secret instead of being one.

    Placeholders (``${VAR}``, ``{{ x }}``, ``<redacted>``, ``***``) count quoted or not; code
    (calls, attribute access, variable names, type names, constants and keywords) only
    unquoted, since a quoted string is a literal whatever it looks like. ``rest``, the text
    after the value when the caller has it, must close a call's bracket. A value that repeats
    its ``name`` (``password=password``) is a variable; after ``:`` (``annotation``) a
    capitalised word is a type (``token: Token``).
    """
    if not value or _PLACEHOLDER.match(value) is not None:
        return True
    stripped = value.rstrip(",;):]}")
    if _ALNUM.search(stripped) is None:
        return True  # punctuation ("getpass('Password: ')"), an emoji, a rule line
    if quoted:
        # "Basic " + b64encode(...); a colour; a constant whose value is its own name
        return (
            stripped.strip().lower() in _SCHEMES
            or stripped in _JSON_TYPES
            or _COLOUR.fullmatch(stripped) is not None
            or (name is not None and _names_itself(stripped, name))
        )
    if stripped.lstrip("-").isdigit() and len(stripped) <= 4:
        return True  # token = 0: a counter or a flag, no credential
    if name is not None and stripped.lower() in {name.lower(), *split_key(name)}:
        return True  # password=password, auth=auth
    if _UPPER_SNAKE.fullmatch(stripped) is not None:
        return True  # a constant: api_key = API_KEY_SENTINEL
    if _PASCAL.fullmatch(stripped) is not None and made_of_words(stripped):
        return True  # a type or class: token: Token (CfTDKSBAzacQzLfH is letters, no words)
    if _typed(value, stripped, rest):
        return True  # private_key: Ed25519PrivateKey | Ed448PrivateKey, token: OAuthToken)
    return _code(value, stripped, rest)


# A type name with acronyms and digits (PKCS7PrivateKeyTypes, OAuthToken), ending in a word.
_TYPE_NAME = lazy_compile(r"_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*?[A-Z][a-z]{2,}")
_CODE_AFTER = frozenset({",", ")", "]", "|", "="})


def _typed(value: str, stripped: str, rest: str | None) -> bool:
    """A type name that code punctuation follows (a parameter list, a union, a default): a
    YAML or ini value stands alone on its line, so a password shaped like a name stays."""
    if _TYPE_NAME.fullmatch(stripped) is None or not made_of_words(stripped):
        return False
    after = value[len(stripped) :].lstrip()[:1] or (rest or "").lstrip()[:1]
    return after in _CODE_AFTER


# A module path and a class (httpx2.Auth, ed25519.Ed25519PrivateKey), or a chain of three or
# more names from a module (rust_openssl.hpke.MLKEM768X25519PrivateKey): code, digits or not.
_MODULE_CLASS = lazy_compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*\.(?P<cls>[A-Z][A-Za-z0-9]*)")
_MODULE_CHAIN = lazy_compile(r"[a-z_]+(?:\.[a-z_][a-z0-9_]*)+\.[A-Za-z_]\w*")


def _code(value: str, stripped: str, rest: str | None) -> bool:
    call = _CALL.match(value)
    if (
        call is not None
        and not _random_name(call.group(0))
        and (
            rest is None
            or _closed(value, call.end() - 1, rest)
            or (call.end() == len(value) and not rest.split("\n", 1)[0].strip())
        )
    ):  # a call's arguments may continue on the next lines: "token = attach("
        return True  # a call ("form.get(", "os.environ[")
    if value[0] == "`":  # a template literal
        return True
    if _VERSION.fullmatch(stripped) is not None:
        return True
    if stripped.lower() in _KEYWORDS:
        return True
    module = _MODULE_CLASS.fullmatch(stripped)
    if (module is not None and made_of_words(module.group("cls"))) or _MODULE_CHAIN.fullmatch(
        stripped
    ):
        return True
    # A dotted or snake_case word with a digit ("v1.x2", "abc_123") is a literal, not code.
    if any(c.isdigit() for c in stripped):
        return False
    return _ATTRIBUTE.fullmatch(stripped) is not None or _IDENTIFIER.fullmatch(stripped) is not None
