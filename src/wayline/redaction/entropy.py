"""Bare high-entropy tokens: a random-looking run of token characters is a secret by itself.

A cloud secret key printed on its own line (``aws configure get aws_secret_access_key``) has
no prefix and no name beside it. `redact_bare_tokens` finds runs of base64/base62 characters
and replaces those whose *character classes* look random: all of upper case, lower case and
digits, switching between classes often, with a high per-character entropy and enough digit
runs. Identifiers (``getUTF8StringFromBase64``), paths, hex digests, UUIDs and git SHAs, digests
with an algorithm prefix (``sha512-…``, ``h1:…``), URLs and base64 image data are kept. The
thresholds were chosen on the corpora in ``tests/reliability`` (see docs/redaction.md).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from itertools import groupby

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.vendor_rules import dc_pat_pieces, is_atlassian_dc_pat, named_by_service

__all__ = ["MAX_TOKEN", "MIN_TOKEN", "looks_random", "redact_bare_tokens"]

MIN_TOKEN = 24  # shorter random runs are ids (nanoid 21, Stripe object ids ~24) more than keys
MAX_TOKEN = 256  # a longer run is judged by its first MAX_TOKEN characters, replaced whole
_MIN_ENTROPY = 0.80  # Shannon bits per char, as a fraction of log2(min(len, alphabet))
_MIN_SWITCHES = 0.40  # share of neighbouring characters whose classes differ
_MAX_WORDS = 0.40  # share of characters in word-like runs (4+ letters with a vowel)

# Both run patterns start only where a run starts: a match inside a run would end where the
# run's own match ends, so the lookbehind finds the same matches, and each position is tried
# once instead of once per character before it in its run (quadratic in a run's length).
# (The check sits after the first character so that the engine still skips to a token
# character at C speed.)
_TOKEN_START = r"[A-Za-z0-9+/_\-](?<![A-Za-z0-9+/_\-]{2})"
_RUN = re.compile(_TOKEN_START + r"[A-Za-z0-9+/_\-]{" + str(MIN_TOKEN - 1) + r",}={0,2}")
# A URL ends at a JSON escape too: inside JSON-encoded text "\n" is two characters, not a
# line break, and the next line's tokens are not the URL's path.
_URL = lazy_compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*://(?:[^\s\"'<>`\\]|\\(?![nrtbf\"\\/]|u[0-9A-Fa-f]{4}))*"
)
_DIGEST_BEFORE = lazy_compile(
    r"(?:sha(?:1|224|256|384|512)|sha3-\d+|md5|blake2[bs]?|h1|crc32c?)[:=]$", re.IGNORECASE
)
_ID_NAME_BEFORE = lazy_compile(
    r"""(?:\b|_)(?:id|ids|uuid|name|model|slug)["']?[ \t]*[:=][ \t]*["']?$""", re.IGNORECASE
)
_DIGEST_PREFIX = lazy_compile(r"(?:sha(?:1|224|256|384|512)|md5)-", re.IGNORECASE)
_MIXED_HEX = lazy_compile(r"[0-9a-fA-F]+")
_HEXISH = lazy_compile(r"[0-9a-f\-]+|[0-9A-F\-]+")  # one case: a digest; mixed case is no digest
# Base64 of PNG, JPEG, GIF, WebP, PDF, SVG, XML headers: image or document data.
# A base64 PEM block left by the private-key rule ("LS0tLS1CRUdJTi": "-----BEGIN") is a
# certificate or public key.
_MEDIA_HEADS = (
    "iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "JVBERi0", "PHN2Zy", "PD94bWwg", "LS0tLS1CRUdJTi"
)  # fmt: skip
_WORD = lazy_compile(r"[A-Z]?[a-z]*[aeiouy][a-z]*")
_DIGIT = lazy_compile(r"[0-9]")
_DOTTED_TAIL = lazy_compile(r"\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])")
_ESCAPE = lazy_compile(r"u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[nrtbf]")
# A NATS nkey seed: "S", the key type (user, account, operator, server, cluster, curve), then
# base32 (RFC 4648, upper case) to 58 characters. It is upper case and digits only, which the
# random profile (it wants lower case) does not take.
_NKEY_SEED = lazy_compile(r"S[UAONCX][A-Z2-7]{56}")
# Mailgun's API keys since 2021: 32 hex, "-", 8 hex, "-", 8 hex (no UUID or digest is written
# so); hex, which the random profile keeps as a digest.
_MAILGUN_KEY = lazy_compile(r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}")
# A Webex bot's access token: 64 alphanumerics, "_", 4, "_", then a UUID's layout.
_WEBEX_TOKEN = lazy_compile(
    r"[A-Za-z0-9]{64}_[A-Za-z0-9]{4}_[A-Za-z0-9]{8}(?:-[A-Za-z0-9]{4}){3}-[A-Za-z0-9]{12}"
)
# An Asana personal access token: "1/<user gid>:" (or "2/<user gid>/<app gid>:") before 32
# hex; the hex alone reads as a digest, so the head before the ":" tells it.
_ASANA_HEAD = lazy_compile(r"(?<![\w/])[0-9]{1,2}/[0-9]{15,20}(?:/[0-9]{15,20})?:\Z")
_ASANA_KEY = lazy_compile(r"[0-9a-f]{32}")


_GRAMMAR_LENGTHS = frozenset({32, 44, 50, 58, 106})  # the lengths _by_grammar knows


def _by_grammar(text: str, start: int, core: str) -> bool:
    """A key verified by its vendor's grammar: a secret wherever it stands (a URL's path
    included), whatever its look (hex, upper case and digits)."""
    n = len(core)
    if n == 58 and _NKEY_SEED.fullmatch(core) is not None:
        return True
    if n == 50 and _MAILGUN_KEY.fullmatch(core) is not None:
        return True
    if n == 106 and _WEBEX_TOKEN.fullmatch(core) is not None:
        return True
    if n == 32 and start and text[start - 1] == ":" and _ASANA_KEY.fullmatch(core) is not None:
        return _ASANA_HEAD.search(text, max(0, start - 48), start) is not None
    return n == 44 and is_atlassian_dc_pat(core)


# Each token character's class: digit, upper case, lower case, other ("+/_-").
_CLASSES = str.maketrans(
    {
        **dict.fromkeys(map(ord, "0123456789"), "0"),
        **dict.fromkeys(range(ord("A"), ord("Z") + 1), "1"),
        **dict.fromkeys(range(ord("a"), ord("z") + 1), "2"),
        **dict.fromkeys(map(ord, "+/_-="), "3"),
    }
)


def looks_random(core: str) -> bool:
    """True when a run of token characters has the character-class profile of a random key."""
    # A longer run is judged by its head: a key, session or SAS token of 300 characters is
    # random throughout; encoded files are kept by their media head or base64 block
    return _looks_random(core[:MAX_TOKEN])


# A pure function of at most MAX_TOKEN characters: the same token recurs (a repeated value, a
# name used again and again), and judging it costs more than a lookup.
@functools.lru_cache(maxsize=4096)
def _looks_random(core: str) -> bool:
    n = len(core)
    if n < MIN_TOKEN:
        return False
    if core.count("/") >= max(4, n // 24):
        return False  # a path, not base64 with a slash in every 64 characters or so
    classes = core.translate(_CLASSES)
    if "2" not in classes and n == 32 and _BASE32_SEED.fullmatch(core) is not None:
        return _random_base32(core, classes)
    if "0" not in classes or "2" not in classes:
        return False
    if "1" not in classes:
        return _random_lower(core, classes)
    if n >= 32 and _MIXED_HEX.fullmatch(core) is not None:
        return True  # hex in both cases: no digest is written so (a Sourcegraph token is)
    switches = sum(1 for _ in groupby(classes)) - 1
    if switches < _MIN_SWITCHES * (n - 1):
        return False
    if sum(len(w) for w in _WORD.findall(core) if len(w) >= 4) >= _MAX_WORDS * n:
        return False  # mostly pronounceable words: an identifier such as getUTF8StringFromBase64
    counts = Counter(core)
    entropy = -sum(k / n * math.log2(k / n) for k in counts.values())
    if entropy >= _MIN_ENTROPY * math.log2(min(n, 64)):
        return True
    # A long run drawn from a smaller alphabet (hex in both cases) cannot reach the entropy of
    # 64 symbols: judged against the symbols it uses, when they are many and every class is
    # well represented (a "0x" before upper-case hex is one lower-case letter, no mix).
    alphabet = len(counts)
    if n < _LONG_RUN or alphabet < 20 or min(classes.count(c) for c in "012") < n // 10:
        return False
    return entropy >= _SMALL_ALPHABET * math.log2(alphabet)


# A TOTP/HOTP seed (RFC 6238 over RFC 4226): RFC 4648 base32 of 20 bytes, 32 characters of
# upper case and 2-7. Upper-case names have words; hex has 0, 1, 8 and 9.
_BASE32_SEED = lazy_compile(r"[A-Z2-7]{32}")


def _random_base32(core: str, classes: str) -> bool:
    digits = classes.count("0")
    if not 3 <= digits <= 16 or len(set(core)) < 16:
        return False
    switches = sum(1 for _ in groupby(classes)) - 1
    return switches >= 0.2 * (len(core) - 1)


_LONG_RUN = 64
_SMALL_ALPHABET = 0.9


# Provider object ids: tool calls (OpenAI ``call_``, ``fc_``; Anthropic ``toolu_``; Bedrock
# ``tooluse_``), messages, responses, runs, files. Ids are structure: a replay needs them, and
# none is a credential.
_ID_PREFIX = lazy_compile(
    r"(?:call|toolu|tooluse|srvtoolu|fc|msg|resp|rs|run|thread|asst|req|batch|item|chatcmpl|cmpl"
    r"|file|ftjob|step|vs|conv|evt|sess|session|trace|span)[_\-]"
)


def _random_lower(core: str, classes: str) -> bool:
    """A lower-case and digits run (base36 keys): 32+ chars, digits a fifth to two thirds,
    letters beyond hex, classes switching often, no words, high entropy."""
    n = len(core)
    digits = classes.count("0")
    if n < 32 or not 0.15 * n <= digits <= 0.7 * n or "3" in classes:
        return False
    if not any(c > "f" for c in core if c.isalpha()):
        return False  # hex: a digest
    switches = sum(1 for _ in groupby(classes)) - 1
    if switches < 0.3 * (n - 1):
        return False
    entropy = -sum(k / n * math.log2(k / n) for k in Counter(core).values())
    return entropy >= 0.8 * math.log2(min(n, 36))


def _kept(text: str, start: int, core: str) -> bool:
    """Context that makes a random-looking run no secret: a digest, media data, an id."""
    shape = _kept_shape_cached(core) if len(core) <= MAX_TOKEN else _kept_shape(core)
    if shape or text.endswith("base64,", 0, start):
        return True
    # Both names end with ":" or "=" (and "$" may stand before a final line break): where
    # neither is near, no regex needs to run.
    window = max(0, start - 24)
    if (
        text.find(":", window, start) >= 0 or text.find("=", window, start) >= 0
    ) and _ID_NAME_BEFORE.search(text, window, start) is not None:
        return True  # id='Sao10K/L3-70B-Euryale-v2.1', model: "Gemma-…": names and ids
    near = max(0, start - 2)
    return (text.find(":", near, start) >= 0 or text.find("=", near, start) >= 0) and (
        _DIGEST_BEFORE.search(text, max(0, start - 9), start) is not None
    )


def _kept_shape(core: str) -> bool:
    """A digest, a provider id or media data by its own shape."""
    return (
        _HEXISH.fullmatch(core) is not None
        or _DIGEST_PREFIX.match(core) is not None
        or _ID_PREFIX.match(core) is not None
        or core.startswith(_MEDIA_HEADS)
    )


# Tokens recur (a repeated value, a name used again and again); a run longer than MAX_TOKEN is
# judged without the cache, so that no long text is held as one of its keys.
_kept_shape_cached = functools.lru_cache(maxsize=4096)(_kept_shape)


def _in_base64_block(text: str, start: int, end: int) -> bool:
    """A line of a wrapped base64 block (``base64 image.png``): lines 64 or 76 characters wide
    and the last one shorter. A full line needs a full neighbour of its width; a last line
    needs two full lines before it. One or two keys on their own lines are no block."""
    line = text[start:end]
    found = _line_before(text, start)
    before = found[0] if found is not None else None
    if len(line) in _WRAPS:
        after = _line_after(text, end)
        return any(
            n is not None and len(n) == len(line) and n != line and _RUN.fullmatch(n)
            for n in (before, after)
        )
    if found is None or before is None or len(before) not in _WRAPS or len(line) > len(before):
        return False
    earlier = _line_before(text, found[1])
    return earlier is not None and len(earlier[0]) == len(before) and earlier[0] != before


_WRAPS = (64, 76)
_NEWLINE = lazy_compile(r"\r?\n|(?:\\+r)?\\+n")  # a line break, or one JSON-escaped


def _line_after(text: str, end: int) -> str | None:
    newline = _NEWLINE.match(text, end)
    if newline is None:
        return None
    run = re.compile(r"[A-Za-z0-9+/_\-]+={0,2}").match(text, newline.end())
    return run.group() if run is not None else None


def _line_before(text: str, start: int) -> tuple[str, int] | None:
    """The whole line before the one starting at `start`, and where it starts."""
    if not text.endswith(("\n", "\\n"), max(0, start - 90), start):
        return None  # no line break right before `start` (the usual case, found without a scan)
    head = text[max(0, start - 90) : start]
    breaks = list(_NEWLINE.finditer(head))
    if not breaks or breaks[-1].end() != len(head):
        return None  # no line break right before `start`
    offset = start - len(head)
    stop = breaks[-1].start()
    if len(breaks) > 1:
        begin = breaks[-2].end()
    elif offset == 0:
        begin = 0
    else:
        return None  # the line before is longer than any wrapped base64 line
    return head[begin:stop], offset + begin


def _in_url_path(text: str, urls: list[tuple[int, int]], start: int) -> bool:
    """Inside a URL's host or path (ids such as a document's are kept), not a query value."""
    for a, b in urls:
        if a <= start < b:
            return text.find("?", a, start) < 0
    return False


# Pieces of one token joined by "." or "=" (a dotted session token, base64 values
# concatenated with their padding): judged and replaced as one token, never piecewise.
_COMPOUND = re.compile(_TOKEN_START + r"[A-Za-z0-9+/_\-]*+(?:[.=]{1,2}[A-Za-z0-9+/_\-]++)+={0,2}")
_SEPARATORS = lazy_compile(r"[.=]+")
_LETTERS_ONLY = lazy_compile(r"[A-Za-z_\-]{6,}")
_NAME = lazy_compile(r"[A-Za-z_][A-Za-z_\-]*=(?!=)")  # "key=" before a value: a name, kept


def _compound_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of a random token made of pieces in ``text[start:end]``, or None."""
    name = _NAME.match(text, start, end)
    if name is not None:
        start = name.end()
    pieces = _SEPARATORS.split(text[start:end])
    joined = "".join(pieces)
    if len(pieces) < 2 or len(joined) < MIN_TOKEN or max(len(p) for p in pieces) < 6:
        return None  # versions, dotted names of short parts
    dotted = "=" not in text[start:end].rstrip("=")
    if dotted and any(_LETTERS_ONLY.fullmatch(p) for p in pieces):
        return None  # an attribute chain (PB2Span.SpanKind.SPAN_KIND_SERVER): names
    return (start, end) if looks_random(joined.strip("-_")) else None


def redact_bare_tokens(text: str, replacement: str) -> str:
    """Replace random-looking runs of token characters in `text` with `replacement`; a token
    of pieces joined by ``.`` or ``=`` is replaced whole."""
    text = _redact_compounds(text, replacement)
    return _redact_runs(text, replacement)


def _redact_compounds(text: str, replacement: str) -> str:
    if "." not in text and "=" not in text:
        return text
    urls: list[tuple[int, int]] | None = None
    out: list[str] = []
    pos = 0
    for match in _COMPOUND.finditer(text):
        if match.end() - match.start() < MIN_TOKEN:
            continue  # its pieces joined are shorter still (most are attribute chains)
        span = _compound_span(text, *match.span())
        if span is None:
            continue
        start, end = span
        if start and text[start - 1] == "\\":  # a JSON escape's letter is no token part
            escape = _ESCAPE.match(text, start)
            if escape is not None:
                start = escape.end()
        if _kept(text, start, text[start:end]):
            continue
        if urls is None:
            urls = [m.span() for m in _URL.finditer(text)]
        if _in_url_path(text, urls, start):
            continue
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _padded(run: int, core: int) -> bool:
    """Whether a run of ``run`` characters whose first ``core`` precede ``=`` padding ends as
    base64 does (no path ends so)."""
    return run != core


def _redact_runs(text: str, replacement: str) -> str:
    urls: list[tuple[int, int]] | None = None
    out: list[str] = []
    pos = 0
    for match in _RUN.finditer(text):
        start, end = match.span()
        if start < pos:
            continue
        tail = _DOTTED_TAIL.match(text, end) if text[end : end + 1] == "." else None
        if (
            tail is not None
            and 23 <= end - start <= 28
            and text[start].isalpha()
            and _DIGIT.search(text, start, end) is not None
            and _DIGIT.search(text, end, tail.end()) is not None
        ):
            # a Discord bot token: base64 user id, timestamp, HMAC (dots between)
            out.append(text[pos:start])
            out.append(replacement)
            pos = tail.end()
            continue
        if start and text[start - 1] == "\\":  # a JSON escape's letter is no token part
            escape = _ESCAPE.match(text, start)
            if escape is not None:
                start = escape.end()
        core = text[start:end].rstrip("=")
        # a key verified by its grammar (an nkey seed, a Mailgun, Webex or Asana key, an
        # Atlassian token by decoding it) is a secret wherever it stands
        if len(core) not in _GRAMMAR_LENGTHS or not _by_grammar(text, start, core):
            pieces = dc_pat_pieces(core) if len(core) > 44 and "/" in core else ()
            for a, b in pieces:  # "…/token/<Atlassian DC token>": the token of a path
                out.append(text[pos : start + a])
                out.append(replacement)
                pos = start + b
            named = named_by_service(text, start, core)  # "<service> <hex key>"
            judged = core.strip("-_")
            if "/" in judged and _padded(end - start, len(core)):
                judged = judged.replace("/", "+")  # padded base64 is no path, its "/" no separator
            if pieces or (not named and (_kept(text, start, core) or not looks_random(judged))):
                continue
            if urls is None:
                urls = [m.span() for m in _URL.finditer(text)]
            if _in_url_path(text, urls, start) or _in_base64_block(text, start, end):
                continue
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)
