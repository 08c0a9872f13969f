"""Rules by a format's grammar for credentials that carry no usual name.

Each rule is derived from a vendor's published token structure or from the way a log or a
config writes a value, not from one example:

- **Azure identifiable keys**: a fixed provider signature at a fixed offset (``+ASt``
  storage, ``ACDb`` Cosmos DB, ``APIM``, ``AzFu``, ``AzSe``, ``+ACR``, …), checked around it;
- **Atlassian Data Center tokens**: 44 characters of base64 that decode to 12 digits, ``:``
  and 20 random bytes, verified by decoding (the bare-token pass uses it too);
- **a bare ``key`` label** (``Using Key=…``): a value only with a vendor key's shape;
- **a credential word and a quoted value joined by ``-``, ``->`` or ``=>``** (``token - '…'``);
- **a VCS or cloud vendor's name and a value of its unprefixed format** (``github: <40 hex>``,
  ``cloudflare <37 hex>``, ``heroku <uuid>``), on its line or the next;
- **Azure SAS tokens** as their whole query string; legacy **Vault** ``s.``/``b.`` tokens
  where Vault is named; an AppRole ``secret_id``; a token where a URL's port would stand.

Token shapes with a literal prefix are in ``token_shapes``; code forms in ``literal_forms``;
tool and standard formats in ``tool_formats``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.redact_rules import REDACTED, SecretPattern, redact_spans
from wayline.redaction.value_shapes import pronounceable

__all__ = [
    "dc_pat_pieces",
    "dc_pat_rule",
    "is_atlassian_dc_pat",
    "named_by_service",
    "vendor_key_shaped",
    "vendor_rules",
]

_B64 = "A-Za-z0-9+/"

# ----------------------------------------------------------------- Azure identifiable keys

# Microsoft's identifiable keys: 64-byte keys are 88 characters with the signature at 76 and
# a padding-determined character before "=="; 32-byte keys are 44 characters with the
# signature at 33; Azure Functions keys use the URL-safe alphabet (56 characters); search
# and container-registry keys are 52 characters of base62 (+ACR inside). Signatures are
# found first (one literal scan), then the key around them is checked: no per-position scan.
_SIGNATURE = lazy_compile(
    r"\+ASt|\+ABa|ACDb|APIM|\+AMC|\+ASb|\+AEh|\+ARm|AzCa|AIoT|AZEG|\+SQL|AzFu|AzSe|\+ACR|JQQJ9"
)
_AZURE_SHAPES = (
    # (characters before the signature, regex from the signature's start, alphabet before)
    (76, lazy_compile(r"[A-Za-z0-9+/]{4}[A-Za-z0-9+/]{5}[AQgw]==(?![A-Za-z0-9+/=])"), _B64),
    (33, lazy_compile(r"[A-Za-z0-9+/]{4}[A-P][A-Za-z0-9+/]{5}=(?![A-Za-z0-9+/=])"), _B64),
    (44, lazy_compile(r"AzFu[A-Za-z0-9_\-]{5}[AQgw]==(?![\w\-=])"), r"A-Za-z0-9_\-"),
    (42, lazy_compile(r"AzSe[A-D][A-Za-z0-9]{5}(?![A-Za-z0-9])"), "A-Za-z0-9"),
    (42, lazy_compile(r"\+ACR[A-Za-z0-9]{6}(?![A-Za-z0-9+/])"), _B64),
    # Microsoft's common annotated security keys (Azure AI services, OpenAI): 84 characters,
    # "JQQJ9" at 52, then a version, a date and the provider's data.
    (
        52,
        lazy_compile(
            r"JQQJ9[9DH][A-Za-z0-9][A-L][A-Za-z0-9]{16}[A-Za-z][A-Za-z0-9]{7}"
            r"(?:[A-Za-z0-9]{2}==)?(?![A-Za-z0-9+/=])"
        ),
        "A-Za-z0-9",
    ),
)
_AZURE_HEADS = {alphabet: re.compile(f"[{alphabet}]+") for _, _, alphabet in _AZURE_SHAPES}


def _azure_keys(text: str) -> str:
    out: list[str] = []
    pos = 0
    for sig in _SIGNATURE.finditer(text):
        at = sig.start()
        if at < pos:
            continue
        for before, tail, alphabet in _AZURE_SHAPES:
            start = at - before
            run = _AZURE_HEADS[alphabet]
            if start < 0 or (start > 0 and run.match(text, start - 1, start) is not None):
                continue
            head = run.match(text, start, at)
            end_match = tail.match(text, at)
            if head is None or head.end() != at or end_match is None:
                continue
            out.append(text[pos:start])
            out.append(REDACTED)
            pos = end_match.end()
            break
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# ------------------------------------------------------ Atlassian Data Center access tokens

# A "/" may precede it (a URL's path); decoding, not the boundary, decides.
_DC_PAT = lazy_compile(r"(?<![A-Za-z0-9+])[MNO][A-Za-z0-9+/]{43}(?![A-Za-z0-9+/=])")
_DC_PAT_ID = re.compile(rb"[0-9]{1,31}:")


def is_atlassian_dc_pat(token: str) -> bool:
    """Whether ``token`` is a Jira / Confluence / Bitbucket Data Center personal access
    token: base64 of a numeric id (12 digits in Atlassian's, any count in the scanners'
    check), ``:`` and random bytes, 44 characters with no padding."""
    if len(token) != 44 or token[0] not in "MNO":
        return False
    try:
        raw = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 33 and _DC_PAT_ID.match(raw) is not None


def dc_pat_pieces(core: str) -> list[tuple[int, int]]:
    """The spans of the Atlassian DC tokens among the ``/``-separated pieces of a run (a URL's
    path: ``…/token/<token>``)."""
    spans = []
    at = 0
    for piece in core.split("/"):
        if len(piece) == 44 and is_atlassian_dc_pat(piece):
            spans.append((at, at + 44))
        at += len(piece) + 1
    return spans


def _dc_pats(text: str) -> str:
    return _DC_PAT.sub(lambda m: REDACTED if is_atlassian_dc_pat(m.group(0)) else m.group(0), text)


# ------------------------------------------------------------------- a bare "key" label

# "Using Key=…", "key = …", "KEY: …": the word "key" alone names a table's key as often as
# a credential, so its value must have the shape of a vendor key. A qualifier before it
# that names a non-secret key ("cache key", "sort key", "primary key") keeps the value.
_KEY_LABEL = lazy_compile(
    r"(?i:key)(?<![\w.\-/]key)(?<![\w.\-/]Key)(?<![\w.\-/]KEY)(?:\\*[\"'])?[ \t]*[:=][ \t]*"
    r"(?:\\*[\"'])?"
    r"(?P<val>(?!<redacted>)[A-Za-z0-9_\-+/=.]{16,256})(?![A-Za-z0-9_\-+/=.])"
)
_QUALIFIER = lazy_compile(r"([A-Za-z]+)[ \t_\-]+\Z")
_NOT_SECRET_KEYS = frozenset(
    {"cache", "sort", "primary", "foreign", "partition", "hash", "lookup", "row", "unique",
     "index", "search", "public", "idempotency", "dedup", "object", "map", "dict", "group",
     "shortcut", "translation", "column", "field", "state", "event", "message", "model",
     "composite", "natural", "surrogate", "candidate", "sharding", "routing", "cluster",
     "hot", "music", "the", "a", "this", "that", "same", "next", "previous", "dictionary"}
)  # fmt: skip
_HEX = lazy_compile(r"[0-9a-f]{32,}|[0-9A-F]{32,}")
_GROUP_MIXED = lazy_compile(r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]+")
_LETTER_RUN = lazy_compile(r"[A-Za-z]{17,}")
_DIGITS = lazy_compile(r"[0-9]+")
_PIECES = lazy_compile(r"[_\-]")


def vendor_key_shaped(value: str) -> bool:
    """Whether a value has the shape of a vendor's key: 32+ hex digits (with a letter and a
    digit), groups of letters and digits joined by ``-`` (three or more, two of them mixed),
    or a run of key characters whose digits are spread through it (32+ characters, or 20+
    with upper case, lower case and digits), never words joined by ``_`` or ``-``."""
    if _HEX.fullmatch(value) is not None:
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    groups = value.split("-")
    if len(groups) >= 3 and all(len(g) >= 4 and g.isalnum() for g in groups):
        return sum(_GROUP_MIXED.fullmatch(g) is not None for g in groups) >= 2
    if len(value) < 20 or any(c in value for c in "./+=") or pronounceable(value):
        return False  # getUTF8StringFromBase64: a name of words
    pieces = _PIECES.split(value)
    if len(pieces) > 1 and all(p.isdigit() or (p.isalpha() and p.islower()) for p in pieces if p):
        return False  # snake_case or kebab-case words with a version: a name
    if _LETTER_RUN.search(value) is not None:
        return False
    digit_runs = len(_DIGITS.findall(value))
    if len(value) >= 32:
        return digit_runs >= 3
    return digit_runs >= 2 and value.lower() != value and value.upper() != value


def _key_labels(text: str) -> str:
    return redact_spans(text, _key_labels_spans(text))


def _key_labels_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _KEY_LABEL.finditer(text):
        value = m.group("val")
        if text.startswith("(", m.end("val")) or not vendor_key_shaped(value):
            continue
        qualifier = _QUALIFIER.search(text, max(0, m.start() - 40), m.start())
        if qualifier is not None and qualifier.group(1).lower() in _NOT_SECRET_KEYS:
            continue
        yield m.start("val"), m.end("val")


# ------------------------------------------- a credential word, a dash or arrow, a literal

# "token - '…'", "key -> "…"", "secret => '…'": a pair in a log or test line. The literal is
# one word of 8+ characters with a digit (a word or a sentence stays). The separator and the
# quote are matched first (a scan for a literal), the credential word behind them after.
_DASH_PAIR = re.compile(
    r"(?:->?|=>|–|—)[ \t]+\\*(?P<q>[\"'])"
    r"(?P<secret>(?!<redacted>)(?![$%{<])(?=[^\s\"'\\]*[0-9])[^\s\"'\\]{8,256})\\*(?P=q)"
)
_DASH_WORD = lazy_compile(
    r"(?<![A-Za-z0-9])(?:token|secret|key|api[_\-]?key|apikey|password|passwd|pat)[ \t]+\Z",
    re.IGNORECASE,
)


def _dash_pairs(text: str) -> str:
    return redact_spans(text, _dash_pairs_spans(text))


def _dash_pairs_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _DASH_PAIR.finditer(text):
        if _DASH_WORD.search(text, max(0, m.start() - 24), m.start()) is None:
            continue
        yield m.start("secret"), m.end("secret")


# --------------------------------------------------- a VCS or cloud vendor's bare value

# Vendors of the zero-leak families whose tokens carry no prefix, with their documented
# formats (and the alphabets and lengths the scanners' rules give them): GitHub OAuth app
# secrets and legacy tokens, legacy Sourcegraph tokens (40 hex), Gitter tokens (40 lower-case
# alphanumerics and "-"), legacy GitLab personal tokens (20 to 22 characters), Cloudflare's
# global API key (37 to 45 hex) and API tokens (40), Heroku keys (UUIDs), Scaleway secret
# keys (a UUID's layout), Vultr API keys (36 upper case and digits), Azure's keys (32 hex:
# AI services, API Management subscriptions; 32 or 52 alphanumerics: subscription and
# search keys; 52 lower-case alphanumerics: legacy DevOps personal access tokens; 40 to 56
# URL-safe characters: function keys), Netlify (43 to 45), Vercel (24), IBM Cloud (44),
# Alibaba Cloud secrets (30; "aliyun" is its Chinese name), DigitalOcean and Linode (64 hex)
# tokens from before their prefixes, AlienVault OTX keys (64 lower-case alphanumerics),
# Scrapfly keys (32 lower-case alphanumerics). The vendor's name alone or with a credential
# label (``gitlab token``, ``AZURE_KEY``, ``scalewaySecret``), then ":" "=" "," or a blank,
# then one value or two (an id and its secret: the values of that shape are replaced).
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID_LAYOUT = r"[0-9a-z]{8}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{12}"
_MIXED = r"(?=[A-Za-z_\-]*[0-9])(?=[0-9_\-]*[A-Za-z])"  # a digit and a letter
_RANDOM = r"(?=[^a-z]*[a-z])(?=[^A-Z]*[A-Z])(?=[^0-9]*[0-9])"  # the three classes
_VENDOR_SHAPES = {
    "github": re.compile(r"[0-9a-f]{40}"),
    "gitter": re.compile(_MIXED + r"[0-9a-z\-]{40}"),
    "sourcegraph": re.compile(r"[0-9a-f]{40}|[0-9A-F]{40}"),
    "gitlab": re.compile(_MIXED + r"[A-Za-z0-9][A-Za-z0-9_\-]{19,21}"),
    "cloudflare": re.compile(r"[0-9a-f]{37,45}|" + _MIXED + r"[A-Za-z0-9_\-]{40}"),
    "heroku": re.compile(_UUID),
    "scaleway": re.compile(_MIXED + _UUID_LAYOUT),
    "vultr": re.compile(r"(?=[A-Z]*[0-9])(?=[0-9]*[A-Z])[A-Z0-9]{36}"),
    "azure": re.compile(
        r"[0-9a-f]{32}|[0-9A-F]{32}|" + _RANDOM + r"(?:[A-Za-z0-9]{32}|[A-Za-z0-9]{52})|"
        r"(?=[a-z]*[0-9])(?=[0-9]*[a-z])[0-9a-z]{52}|" + _RANDOM + r"[A-Za-z0-9_\-]{40,56}"
    ),
    "netlify": re.compile(r"(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{43,45}"),
    "vercel": re.compile(r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{24}"),
    "ibm": re.compile(r"(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{44}"),
    "alibaba": re.compile(r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{30}"),
    "aliyun": re.compile(r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{30}"),
    "digitalocean": re.compile(r"[0-9a-f]{64}"),
    "linode": re.compile(r"[0-9a-f]{64}"),
    "alienvault": re.compile(r"(?=[a-z]*[0-9])[0-9a-z]{64}"),
    "otx": re.compile(r"(?=[a-z]*[0-9])[0-9a-z]{64}"),
    "scrapfly": re.compile(r"(?=[a-z]*[0-9])(?=[0-9]*[a-z])[0-9a-z]{32}"),
}
# A credential label after the vendor's name ("gitlab token", "AZURE_KEY", "herokuApiKey").
_VENDOR_LABEL = (
    r"(?:[ \t_.\-]?(?i:api|access|secret|private|personal|auth|global|account|admin|user)?"
    r"[ \t_.\-]?(?i:key|token|secret|pat|password|passwd|pwd))?"
)
_VENDOR_VALUE = (
    r"(?:[ \t]*[:=,][ \t]*|[ \t]+)\\*(?P<q{n}>[\"']?)"
    r"(?P<v{n}>(?!<redacted>)[A-Za-z0-9_\-]{{20,64}})\\*(?P=q{n})(?![A-Za-z0-9_\-.@/])"
)
# The names are found in the lower-cased text by one scan for literals; the values are
# matched after each name.
_VENDOR_WORD = re.compile("|".join(_VENDOR_SHAPES))
_VENDOR_TAIL = re.compile(
    _VENDOR_LABEL
    + r"\\*[\"']?"
    + _VENDOR_VALUE.format(n=1)
    + r"(?:"
    + _VENDOR_VALUE.format(n=2)
    + r")?"
)
_GLUED_BEFORE = re.compile(r"[\w.\-/@]")  # a vendor's name is a word of its own
_IDENT_CHAR = lazy_compile(r"[A-Za-z0-9_]")


def _vendor_values(text: str) -> str:
    return redact_spans(text, _vendor_values_spans(text))


def _vendor_values_spans(text: str) -> Iterator[tuple[int, int]]:
    lower = text.lower()
    if len(lower) != len(text):  # a character that lower-cases to two: offsets would move
        lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    words = list(_VENDOR_WORD.finditer(lower))
    # a vendor named more than once per 48 characters is generated text: only the value right
    # after each name is read, not the next line's
    near = not (len(words) > 256 and len(words) * 48 > len(text))
    for word in words:
        if word.start() and _GLUED_BEFORE.match(text, word.start() - 1) is not None:
            continue
        shape = _VENDOR_SHAPES[word.group()]
        m = _VENDOR_TAIL.match(text, word.end())
        spans = [] if m is None else [m.span(g) for g in ("v1", "v2") if m.group(g) is not None]
        found = [(a, b) for a, b in spans if shape.fullmatch(text, a, b) is not None]
        if not found and near and not _IDENT_CHAR.match(text, word.end()):
            # the vendor named in prose or a comment, not inside an identifier (AzureOpenAI,
            # azure_endpoint): its value may follow a little later
            found = _near_values(text, word.end(), shape)
        yield from found


# The vendor named, then its value a little later: on the same line after other words
# (``cloudflare API, using token=…``) or on the next line (``# gitlab``, then ``value = …``),
# as logs and configs write them. The value must have the vendor's format and stand as a
# value: after ":" "=" ":=" "=>" or as a quoted string, not inside a URL or a path; the label
# before it must name no digest, id or version (``commit``, ``sha``, ``revision``).
_NEAR = 120  # characters after the vendor's name, to the end of the next line at most
_NEAR_VALUE = lazy_compile(
    r"(?<![A-Za-z0-9_\-.@/+$%&?#])(?P<v>[A-Za-z0-9][A-Za-z0-9_\-]{19,63})(?![A-Za-z0-9_\-.@/+])"
)
_NEAR_BEFORE = lazy_compile(
    r"(?:(?P<label>[A-Za-z][A-Za-z0-9]*)[_\-]?[0-9]?\\*[\"']?[ \t]*(?::=|=>|[:=])[ \t]*\\*[\"']?"
    r"|\\*[\"'(\[,][ \t]*\\*[\"']|\\*[\"'])\Z"
)
_NOT_NEAR = lazy_compile(
    r"(?:id|ids|uuid|guid|uid|sha[0-9]*|md5|hash|digest|checksum|sum|etag|commit|revision|rev"
    r"|ref|tree|parent|object|blob|version|nonce|salt|fingerprint|thumbprint|boundary|serial"
    r"|integrity|urn|request|trace|span|build|run|job|tag|image|layer|manifest|node|tx|txid"
    r"|name|slug|path|file|url|uri|host|user|username|email|org|owner|repo|project|branch)",
    re.IGNORECASE,
)
_CAMEL_TAIL = lazy_compile(r"[A-Z]?[a-z0-9]+\Z|[A-Z0-9]+\Z")


def _near_values(text: str, start: int, shape: re.Pattern[str]) -> list[tuple[int, int]]:
    line = text.find("\n", start, start + _NEAR)
    if line >= 0:
        nxt = text.find("\n", line + 1, start + _NEAR)
        stop = nxt if nxt >= 0 else min(len(text), start + _NEAR)
    else:
        stop = min(len(text), start + _NEAR)
    found: list[tuple[int, int]] = []
    for m in _NEAR_VALUE.finditer(text, start, stop):
        if shape.fullmatch(m.group("v")) is None:
            continue
        before = _NEAR_BEFORE.search(text, max(start, m.start() - 48), m.start())
        if before is None:
            continue
        label = before.group("label")
        if label is not None:
            tail = _CAMEL_TAIL.search(label)
            last = label if tail is None else tail.group()
            if _NOT_NEAR.fullmatch(last) is not None:
                continue
        found.append(m.span("v"))
    return found


# --------------------------------------------------- any service's name before a hex key

# "<service> <token>", "<service>: <token>", "{aha <token>}": a log or a config names the
# service whose credential follows. A hex run of 32+ (an API key's usual form: 16 random
# bytes and more), a run of lower case and spread digits (base36 keys) or 32 or 64 bytes in
# padded base64 after a word is such a key, unless the word names what digests, ids and
# versions are written after (checked by the bare-token pass, ``entropy``, for runs it does
# not take as random by their look). A URL's query names (``?rcl=<hex>``) are the query
# rules' to judge.
_SERVICE_BEFORE = lazy_compile(
    r"(?<![\w.\-/$@:%?&=#])(?P<word>[A-Za-z][A-Za-z0-9]{2,30})\\*[\"']?(?:[ \t]*[:=][ \t]*|[ \t]+)"
    r"\\*[\"']?\Z"
)
_NOT_SERVICE = lazy_compile(
    r"(?:id|ids|uuid|guid|uid|sha[0-9]*|md5|hash|digest|checksum|sum|etag|commit|revision|rev"
    r"|ref|tree|parent|object|blob|version|nonce|salt|fingerprint|thumbprint|boundary"
    r"|signature|sig|serial|address|addr|content|source|integrity|urn|request|trace|span"
    r"|build|run|job|tag|image|layer|manifest|node|txid|tx|hex|color|colour|seed|expected"
    r"|got|actual|bits|alphabet|name|model|slug|return|yield|print|echo|assert|const|let|var"
    r"|value|default|data|text|string|str|input|output|result|res|out|file|path|head|index"
    r"|from|to|and|or|is|in|of|the|with|at|by|for|as|key|was|were|are|be|been|now|then|on"
    r"|into|onto|via|per|after|before|since|until|see|use|using|set|get|new|old"
    # commands that take an object id, a digest or an image (git, docker, package managers)
    r"|checkout|show|revert|reset|rebase|pick|merge|diff|log|describe|switch|branch|fetch"
    r"|pull|push|clone|blame|bisect|parse|verify|inspect|rmi|rm|delete|apply|download|install"
    r"|fixes|fix|fixed|reverts|closes|resolves)",
    re.IGNORECASE,
)
_SERVICE_HEX = lazy_compile(r"(?=[a-f]*[0-9])(?=[0-9]*[a-f])[0-9a-f]{32,}")
_SERVICE_BASE36 = lazy_compile(r"(?=(?:[a-z]*[0-9]+){3})[a-z0-9]{24,64}")
_LOWER_RUN = lazy_compile(r"[a-z]{10,}")


def _padded_key(text: str, start: int, core: str) -> bool:
    """A 32- or 64-byte key in standard base64 with its padding (44 or 88 characters), with
    upper case, lower case and a digit."""
    pad = {43: "=", 86: "=="}.get(len(core))
    return (
        pad is not None
        and text.startswith(pad, start + len(core))
        and _B64_RUN.fullmatch(core) is not None
        and core.lower() != core
        and core.upper() != core
        and any(c.isdigit() for c in core)
    )


_B64_RUN = lazy_compile(r"[A-Za-z0-9+/]+")


def named_by_service(text: str, start: int, core: str) -> bool:
    """Whether the run ``core`` at ``start`` is a service's key by its shape and the word
    before it (see above)."""
    if core.isalnum() and core.islower() and core.isascii():
        base36 = _SERVICE_BASE36.fullmatch(core) is not None and _LOWER_RUN.search(core) is None
        if not base36 and _SERVICE_HEX.fullmatch(core) is None:
            return False
    elif not _padded_key(text, start, core):
        return False
    line = text.rfind("\n", max(0, start - 48), start)
    before = _SERVICE_BEFORE.search(text, max(line + 1, start - 48), start)
    return before is not None and _NOT_SERVICE.fullmatch(before.group("word")) is None


# ----------------------------------------------------------- legacy HashiCorp Vault tokens

# Before Vault 1.10 service tokens were "s." and 24 base62 characters, batch tokens "b." and
# more; "s." ends many words, so they count only in a text that names Vault, and only with
# the classes of a random string.
# The scanners' rules give the body 18 to 40 characters of base62, "_" and "-": a digit and
# a letter, or both cases over 24 characters (random letters), tell it from a word.
_VAULT_LEGACY = (
    r"(?<![\w.$/\-])[sb]\.(?P<secret>(?:(?=[\w\-]*[0-9])(?=[\w\-]*[A-Za-z])[\w\-]{18,128}"
    r"|(?=[\w\-]*[A-Z])(?=[\w\-]*[a-z])[\w\-]{24,128}))(?![\w.\-])"
)


# HashiCorp Vault AppRole logins pair a role_id with a secret_id, both UUIDs; the secret_id
# is the credential. (An AWS Secrets Manager "SecretId" is a name or an ARN, not a UUID.)
_SECRET_ID = (
    r"(?i:secret[_\-]?id)(?:\\*[\"'])?(?:[ \t]*(?:[:=]|=>)[ \t]*|[ \t]+)(?:\\*[\"'])?"
    r"(?P<secret>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    r"(?![0-9A-Za-z])"
)


# ------------------------------------------------------------- Azure shared access signatures

# A SAS token is the whole query string that grants access (Microsoft's "Create SAS tokens"):
# the signed version ``sv``, the permissions, resource and times, and the signature ``sig``
# computed over them. ``sig`` alone was replaced by the query rules; the token is replaced
# whole when the pairs around ``sig`` are SAS parameters and include ``sv``. Found from each
# ``sig=`` (a literal), the pairs walked with ``rfind`` and one regex: linear.
_SAS_NAMES = frozenset(
    {"sv", "ss", "srt", "sp", "se", "st", "spr", "sr", "sip", "si", "sdd", "ses", "sig",
     "skoid", "sktid", "skt", "ske", "sks", "skv", "saoid", "suoid", "scid", "rscc", "rscd",
     "rsce", "rscl", "rsct", "api-version"}
)  # fmt: skip
_SAS_PAIR = lazy_compile(r"(?P<name>[a-z][a-z\-]{1,10})=[^&?\s\"'<>#\\]*")
_SAS_SIG = lazy_compile(r"[?&]sig=")
_SAS_VALUE = lazy_compile(r"[^&?\s\"'#\\]+")
_SAS_PAIRS = 24  # pairs walked left of sig=, at most
_SAS_OPENERS = "&?\"' \t\n(,"  # what stands before a pair


def _sas_span(text: str, at: int, floor: int) -> tuple[int, int] | None:
    """The SAS token around the ``sig`` at ``at``; its pairs are walked back no further than
    ``floor`` (the previous ``sig``: a token has one), so each pair is read at most twice."""
    names: set[str] = set()
    begin = at + 1
    pos = at
    for _ in range(_SAS_PAIRS):
        if pos < floor or pos < 0 or text[pos] != "&":
            break  # "?", a quote or a blank (or the text's start) opens the query
        lo = max(0, floor, pos - 256)
        cut = max(text.rfind("&", lo, pos), text.rfind("?", lo, pos), lo - 1)
        pair = _SAS_PAIR.fullmatch(text, cut + 1, pos)
        if pair is None:  # the first pair, after a quote or a blank
            cut = max(max(text.rfind(c, lo, pos) for c in _SAS_OPENERS), lo - 1)
            pair = _SAS_PAIR.fullmatch(text, cut + 1, pos)
        if pair is None:  # "AZURE_SAS=sv=…": the first pair after a name's "="
            eq = text.find("=", cut + 1, pos)
            cut = eq if eq >= 0 and text.count("=", eq + 1, pos) else cut
            pair = _SAS_PAIR.fullmatch(text, cut + 1, pos) if eq >= 0 else None
        if pair is None or pair.group("name") not in _SAS_NAMES:
            break
        names.add(pair.group("name"))
        begin, pos = cut + 1, cut
        if cut < 0:
            break
    tail = _SAS_VALUE.match(text, at + 5)
    if tail is None:
        return None
    end = tail.end()
    for _ in range(_SAS_PAIRS):
        pair = _SAS_PAIR.match(text, end + 1) if text.startswith("&", end) else None
        if pair is None or pair.group("name") not in _SAS_NAMES or pair.group("name") == "sig":
            break
        names.add(pair.group("name"))
        end = pair.end()
    if "sv" not in names or not names & {"se", "sp", "sr", "ss", "st"}:
        return None
    return begin, end


def _sas_tokens(text: str) -> str:
    if "sv=" not in text:
        return text  # no signed version: no SAS token (a lone sig is the query rules')
    sigs = text.count("sig=")
    if sigs > 256 and sigs * 64 > len(text):
        return text  # a sig per 64 characters is no SAS token (each is 100+): generated text
    out: list[str] = []
    pos = 0
    floor = 0
    for m in _SAS_SIG.finditer(text):
        if m.start() < pos:
            continue  # inside the token just replaced
        span = _sas_span(text, m.start(), max(floor, pos))
        floor = m.start() + 1
        if span is None or span[0] < pos:
            continue
        out.append(text[pos : span[0]])
        out.append(REDACTED)
        pos = span[1]
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# A URL whose authority is "<id>:<token>" with no "@" (Apprise's tgram://<bot id>:<token>/,
# and other notification URLs): a port is digits, so a run of 20+ token characters with a
# letter after the ":" is a credential where a port would stand.
_AUTHORITY_TOKEN = (
    r"://[^/\s:@\"'<>]{1,64}:(?P<secret>(?=[0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{20,128})"
    r"(?=[/\s\"'<>?#]|\Z)"
)


def vendor_rules() -> list[SecretPattern]:
    """The rules of this module, in the order they are applied."""
    from wayline.redaction.literal_forms import literal_form_rules
    from wayline.redaction.redact_rules import regex_rule
    from wayline.redaction.tool_formats import tool_format_rules

    vault = re.compile(_VAULT_LEGACY)
    secret_id = re.compile(_SECRET_ID)
    authority = re.compile(_AUTHORITY_TOKEN)
    return [
        SecretPattern(
            "azure_identifiable_key",
            frozenset(s.lower() for s in re.sub(r"\\|\s", "", _SIGNATURE.pattern).split("|")),
            _azure_keys,
        ),
        SecretPattern("bare_key_label", frozenset({"key"}), _key_labels),
        SecretPattern(
            "credential_dash_literal",
            frozenset({"token", "secret", "key", "pass", "pat"}),
            _dash_pairs,
        ),
        SecretPattern("vendor_bare_value", frozenset(_VENDOR_SHAPES), _vendor_values),
        SecretPattern("azure_sas_token", frozenset({"sig="}), _sas_tokens),
        regex_rule("vault_legacy_token", vault, ("vault",)),
        regex_rule("approle_secret_id", secret_id, ("secret_id", "secret-id", "secretid")),
        regex_rule("url_authority_token", authority, ("://",)),
        *literal_form_rules(),
        *tool_format_rules(),
    ]


def dc_pat_rule() -> SecretPattern:
    """Atlassian Data Center tokens: no literal gates their shape, so they are checked in the
    bare-token pass (``entropy``: a run, or a piece of a URL's path), and by this rule where a
    product or a bearer is named."""
    return SecretPattern(
        "atlassian_dc_pat",
        frozenset({"jira", "confluence", "bitbucket", "atlassian", "bearer"}),
        _dc_pats,
    )
