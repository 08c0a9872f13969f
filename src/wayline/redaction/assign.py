"""Named values: ``NAME = value`` in any syntax, replaced to the value's natural end.

A credential name (``is_sensitive`` decides) followed by a separator (``=``, ``:``, ``:=``,
``=>``, ``?=``, ``,`` after a quoted name, a comparison before a quoted literal) holds a value.
The value ends where its syntax ends it:

- quoted (``"``, ``'``, a backtick, JSON-escaped quotes): at the closing quote on its line;
- ``key: value`` (YAML, prose, headers) and ``key = value`` with spaces (ini, properties,
  ``.env``): at the end of the line, or at the quote that closes a string the name is in
  (``-H "Authorization: Bearer …"``), or at ``,`` ``}`` after a quoted JSON name;
- ``key=value`` glued (shell, kwargs, URL queries): at whitespace, a quote, ``,;&)``;
- a tuple (``auth=("admin", "…")``): every quoted string after the first.

What only refers to a secret (``$VAR``, ``Depends(get_token)``, ``password=password``, type
annotations, prose) is kept: see ``secret_names.is_expression``.

Every step is linear: candidate names come from one scan of the reversed text, each value's
end is found by a bounded search on its own line, and a candidate inside a value already
replaced is skipped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from wayline.redaction._lazyre import LazyPattern, lazy_compile
from wayline.redaction._trie import any_word_pattern
from wayline.redaction.redact_rules import REDACTED
from wayline.redaction.secret_names import is_expression, is_prose, split_key
from wayline.redaction.value_shapes import ENV_NAME, credential_like, short_key_like

__all__ = ["apply_assignments", "names_before_separators"]

# A shell word that closes its single quote, quotes one and reopens it, as a session's
# terminal command writes 'export NAME='"'"'value'"'"'' or 'NAME='\''value'\''' (JSON-escaped
# or in a Python repr too, where any quote may carry backslashes): the value is the quoted
# text after it, up to the next single quote.
_SHELL_REQUOTE = r"""\\*+'(?:\\*+"\\*+'\\*+"|\\++')\\*+'"""
# The name, its closing quote (a JSON/dict key), and the separator.
_HEAD = lazy_compile(
    r"""(?P<name>[^\W\d][\w.\-]*+)(?:\[\w*\])?(?P<q1>\\*+["'`])?(?:\)|(?P<sub>\]))?[ \t]*+"""
    r"""(?P<sep>:{1,3}=|=>|\?=|===|!==|==|!=|\|\||[:=]|,(?=[ \t]*+\\*+["'`])"""
    r"""|(?<=[ \t])(?=\\*+["'`]))"""
    r"""(?P<gap>[ \t]*+)"""
    r"""(?P<open>\(?)(?:(?P<esc>""" + _SHELL_REQUOTE + r""")|(?P<q2>[fbr]?\\*+["'`]|@\\*["']))?"""
)
# An authorization value's scheme word ("Bearer", "Splunk", "token", "Digest").
_SCHEME = lazy_compile(r"[A-Za-z][A-Za-z0-9_\-]{1,24}[ \t]+(?=[\w$<{%.*])")
# A glued value: up to whitespace, a quote, a separator, a closing bracket or a JSON escape.
# A printf field's bracket (``password=%(pw)s``) is the placeholder's, not a closing one.
_BARE = lazy_compile(
    r"""(?:%\([A-Za-z_]\w{0,64}\)|[^\s"'`,;&\\)<]|\\\\|\\(?![nrtbf"'\\]|u[0-9A-Fa-f]{4}))+"""
)  # a JSON-escaped backslash ("\\\\") is a character of the value
# Where an unquoted line value stops: a raw or JSON-escaped line break.
_LINE_END = lazy_compile(r"\r|\n|\\+[nr]")
_SCALAR_END = lazy_compile(r"[,}\]]")
_TRAILING = lazy_compile(r"[\s)\]};,:]*(?:\{[^\r\n]*)?")
# A line value's text up to a closing bracket it did not open (one nesting level is enough
# for "f(a, b)" or "[x]" inside a value; deeper text simply runs to the line's end).
_UNOPENED = lazy_compile(r"(?:\([^()]*+\)|\[[^\[\]]*+\]|\{[^{}]*+\}|[^)\]}])*+")
_QUOTE = lazy_compile(r"""\\*+["']""")
_JSON_STRING_END = lazy_compile(r'(?<!\\)"')
_AUTH_WORDS = frozenset({"authorization", "auth"})
_COMPARISONS = frozenset({"===", "!==", "==", "!="})
MAX_VALUE = 4096  # a quoted value is looked at this far; longer ones are replaced to this end
# A line value ("key: value" to the end of the line) is at most this long: a longer line holds
# more than one value (minified code, a long sentence), so only its first word is the value.
LINE_VALUE = 256
BARE_VALUE = 1024  # an unquoted word is looked at this far


def names_before_separators(words: tuple[str, ...]) -> LazyPattern:
    """A regex over the REVERSED lowercase text: a separator, then a name with a trigger word.

    Scanning reversed text lets the engine skip to each separator at C speed (the pattern
    starts with one class of the separators' first characters) and reject names without a
    trigger word there; a forward regex would be tried at every word start.
    """
    # The words, longest first; where the first that matches decides only where the name ends
    # ("mot de passe" holds blanks), it comes alone, and each run of words made of name
    # characters (the name ends where its run does, whichever matched) is one trie.
    parts: list[str] = []
    run: list[str] = []
    for word in sorted(words, key=len, reverse=True):
        if _NAME_CHARS.fullmatch(word) is not None:
            run.append(word)
            continue
        parts.extend(_run_alternatives(run))
        run = []
        parts.append(_reversed_word(word))
    parts.extend(_run_alternatives(run))
    return lazy_compile(
        r"""[=:,|"'`](?:(?<==)[=!:?]*+|(?<=[:,])|(?<=\|)\||(?<=["'`])\\*[ \t])"""
        r"""[ \t]*+(?:[)\]]?["'`]\\*+|\][\w]*\[)?"""
        r"""(?P<name>[\w.\-]*?(?:""" + "|".join(parts) + r""")[\w.\-]*+)"""
    )


_NAME_CHARS = re.compile(r"[\w.\-]+")


def _reversed_word(word: str) -> str:
    # A bare "key", "pass" or "pat" holds no credential ("key: value" tables): they need a
    # qualifier.
    rev = re.escape(word[::-1])
    return rf"(?:(?<=[\w.\-]){rev}|{rev}(?=[\w.\-]))" if word in _QUALIFIED else rev


def _run_alternatives(run: list[str]) -> list[str]:
    """The alternatives of name-character words in any order: one trie for the plain ones,
    one group for the qualified ones."""
    plain = [w[::-1] for w in run if w not in _QUALIFIED]
    qualified = "|".join(re.escape(w[::-1]) for w in run if w in _QUALIFIED)
    out = [any_word_pattern(plain)] if plain else []
    if qualified:
        out.append(rf"(?<=[\w.\-])(?:{qualified})|(?:{qualified})(?=[\w.\-])")
    return out


_QUALIFIED = frozenset({"key", "pass", "pat"})
_ESCAPE_LETTER = lazy_compile(r"[nrtbf]|u[0-9A-Fa-f]{4}")


def _name_start(text: str, start: int, end: int) -> int:
    """A scanned name's start: past an escape's letter (``\\npassword``) and non-ASCII ones."""
    escape = _ESCAPE_LETTER.match(text, start, end) if text[start - 1 : start] == "\\" else None
    start = escape.end() if escape is not None else start
    while start < end and not (text[start] == "_" or text[start].isalpha()):
        start += 1
    return start


class _Lines:
    """End-of-line positions, found once each while candidates move forward."""

    __slots__ = ("end", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.end = -1

    def after(self, pos: int) -> int:
        if self.end < pos:
            found = _LINE_END.search(self.text, pos)
            self.end = found.start() if found is not None else len(self.text)
        return self.end


def _closing(text: str, quote: str, start: int, stop: int) -> int:
    """Where the quote opened as ``quote`` closes before ``stop``; -1 when it does not."""
    bare = quote[-1]
    slashes = len(quote) - 1
    pos = start
    while True:
        found = text.find(bare, pos, stop)
        if found < 0:
            return -1
        run = 0
        while found - run - 1 >= start and text[found - run - 1] == "\\":
            run += 1
        if run == slashes:
            return found - slashes
        pos = found + 1


def _quoted_strings(text: str, start: int, stop: int) -> list[tuple[int, int]]:
    """The spans of the quoted strings' contents in ``text[start:stop]``."""
    spans = []
    pos = start
    while pos < stop:
        m = _QUOTE.search(text, pos, stop)
        if m is None:
            break
        end = _closing(text, m.group(), m.end(), stop)
        if end < 0:
            break
        spans.append((m.end(), end))
        pos = end + len(m.group())
    return spans


def _value_span(
    text: str,
    m: re.Match[str],
    lines: _Lines,
    name_quoted: str | None,
    sep: str,
    q2: str | None,
    esc: str | None = None,
) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value after the separator, or None for no value."""
    start = m.end()
    eol = lines.after(start)
    stop = min(eol, start + MAX_VALUE)
    if esc:
        end = text.find("'", start, stop)
        if end < 0:
            found = _BARE.match(text, start, min(stop, start + BARE_VALUE))
            end = found.end() if found is not None else start
        while end > start and text[end - 1] == "\\":
            end -= 1  # the closing quote's own escape (JSON, a repr) is not the value's
        return (start, end, True)
    if q2:
        quote = q2.lstrip("fbr@") or q2
        end = _closing(text, quote, start, stop)
        while end >= 0 and text.startswith(quote + quote, end):
            # 'AKIA…''wJal…': adjacent strings are one word in a shell (and one literal in
            # SQL, 'it''s'), so the value runs on to the last closing quote
            later = _closing(text, quote, end + 2 * len(quote), stop)
            if later < 0:
                break
            end = later
        if end < 0 and quote == "'":
            # an unclosed single quote inside a JSON string ends where that string ends
            json_end = _JSON_STRING_END.search(text, start, stop)
            end = json_end.start() if json_end is not None else -1
        return (start, stop if end < 0 else end, True)
    if sep in _COMPARISONS or sep in (",", ""):
        return None  # only a quoted literal is compared or passed as a second argument
    line_value = sep == ":" or (sep not in ("==", "===", "!=", "!==") and bool(m.group("gap")))
    if line_value and eol - start <= LINE_VALUE:
        # To the end of the line; inside a string, to its closing quote.
        end = stop
        before = text[m.start("name") - 1 : m.start("name")]
        enclosing = name_quoted or (before if before in ("'", '"', "`") else "")
        if not enclosing and m.start("name") > 0:
            # -H "Authorization: Bearer …": a string opened before the name on its line
            reach = max(m.start("name") - 200, 0)
            line_start = max(text.rfind("\n", reach, m.start("name")), reach)
            opened = text[line_start : m.start("name")]
            enclosing = next((q for q in ('"', "'") if opened.count(q) % 2), "")
        if enclosing:
            closing = text.find(enclosing, start, end)
            if closing >= 0:
                end = closing
                while end > start and text[end - 1] == "\\":
                    end -= 1
        closer = _UNOPENED.match(text, start, end)  # "{ token = 3 }": the block's "}" stays
        if (
            closer is not None
            and closer.end() < end
            and _TRAILING.fullmatch(text, closer.end(), end)
        ):
            end = closer.end()  # only closers at the end: "p)ss}w0rd" keeps its brackets
        if name_quoted:  # a JSON or dict key: a scalar ends at , } ]
            scalar_end = _SCALAR_END.search(text, start, end)
            end = scalar_end.start() if scalar_end is not None else end
        while end > start and text[end - 1] in " \t":
            end -= 1
        return (start, end, False) if end > start else None
    if line_value and is_prose(text[start : min(eol, start + 200)]):
        return None  # a long line of prose: "azure_ad_token: Your Azure Active Directory token, …"
    found = _BARE.match(text, start, min(stop, start + BARE_VALUE))
    if found is None:
        return None
    end = found.end()
    scheme = _SCHEME.match(text, start, stop) if line_value else None
    if scheme is not None:
        # a long "TOKEN: FlyV1 fm2_…" line: the scheme word and the token after it
        after = _BARE.match(text, scheme.end(), stop)
        end = after.end() if after is not None else end
    return (start, end, False)


def apply_assignments(
    text: str,
    names: LazyPattern,
    is_sensitive: Callable[[str], bool],
    is_weak: Callable[[str], bool] = lambda name: False,
) -> str:
    """Replace the values of every sensitive ``name <sep> value`` in ``text``.

    A weak name (``HEROKU_KEY``, ``hubspotKey``: a key of some vendor, or of a cache) holds a
    credential only when its value looks like one (``credential_like``)."""
    size = len(text)
    backwards = text[::-1].lower()
    if len(backwards) != size:  # a few characters lowercase to two; keep offsets aligned
        backwards = "".join(c.lower() if len(c.lower()) == 1 else c for c in text[::-1])
    found: set[int] = set()
    for found_name in names.finditer(backwards):
        first, stop = size - found_name.end("name"), size - found_name.start("name")
        if text[first - 1 : first] == "\\" or not text[first].isalpha():
            first = _name_start(text, first, stop)
        # The name the separator follows decides: most candidates end here, in one lookup.
        if first < stop and (is_sensitive(text[first:stop]) or is_weak(text[first:stop])):
            found.add(first)
    starts = sorted(found)
    if len(starts) > _DENSE_MIN and len(starts) * _DENSE_SPACING > size:
        return _dense(text, starts)
    out: list[str] = []
    pos = 0
    lines = _Lines(text)
    judged: dict[tuple[str, str, bool, str, bool], int | None] = {}
    ini_from = _ini_from(text)
    for j in starts:
        if j < pos:
            continue  # inside a value already replaced
        m = _HEAD.match(text, j)
        if m is None:
            continue
        name, q1, sep, opener, q2, esc = m.group("name", "q1", "sep", "open", "q2", "esc")
        if m.group("sub") is not None and not (q1 and _subscript_key(text, j)):
            continue  # Literal["a", "client_secret_basic"] = …: only ['name'] is a key
        span = _value_span(text, m, lines, q1[-1] if q1 else None, sep, q2, esc)
        if span is None:
            continue
        start, end, quoted = span
        if opener and not quoted:
            continue  # a call: password=(...) with no string in it
        spans = [(start, end)]
        ini = j > ini_from and _starts_line(text, j)
        if opener and q2:
            # auth=("admin", "secret"): the strings after the first of the tuple
            close = text.find(")", start, lines.after(start))
            if close >= 0:
                strings = _quoted_strings(text, m.start("q2"), close)
                spans = strings[1:] if len(strings) > 1 else strings
        # the strings of a tuple are judged like a call's arguments: names stay
        judge_sep = "," if opener and q2 else sep
        if sep == "," and not (q1 and _opens_string(text, j, q1[-1])):
            # ('', Token, '#pop'): only a quoted name takes its next argument, and only a
            # whole quoted string is a name: ["… a stale token", "src/…"] is a list of lines
            continue
        if q1 and not quoted and _CODE_WORD.fullmatch(text[start:end].rstrip(",;)}]")):
            continue  # {"token": i}: JSON has no bare words, so this is code
        if sep == "" and not text.startswith((q2 or "").lstrip("fbr@"), end):
            continue  # '"Bearer " prefix': a quote that does not close on its line is no literal
        if sep == "" and _AFTER_LITERAL.match(text, min(end + len(q2 or ""), size)) is None:
            continue  # token "_open" and …: a word in prose, not 'password "…";'
        kept: list[tuple[int, int]] = []
        for a, b in spans:
            if _auth_name(name) and not is_prose(text[a:b]):
                a = _after_scheme(text, a, b)
            value = text[a:b]
            if not value or value == REDACTED or (value.startswith(REDACTED) and not quoted):
                continue
            if value.startswith(REDACTED):  # a rule took the literal's head: the rest goes too
                kept.append((a, b))
                continue
            # Repeated keys (logs, tables, hostile text) are judged once per call; a value with
            # a bracket also depends on the text after it, so it is judged each time.
            key = (
                name,
                value if len(value) <= 256 else f"{value[:256]}\x00{len(value)}",
                quoted,
                sep,
                ini,
            )
            if "(" in value or "[" in value or len(judged) > 4096:
                secret_len = _judge(name, value, quoted, text, b, judge_sep, ini)
            elif key in judged:
                secret_len = judged[key]
            else:
                secret_len = judged[key] = _judge(name, value, quoted, text, b, judge_sep, ini)
            if secret_len is None:
                continue
            if not is_sensitive(name) and not (
                credential_like(value[:secret_len], name) or short_key_like(value[:secret_len])
            ):
                continue  # a weak name's value must look like a key itself
            b = a + secret_len  # the secret part may be the first word only
            if quoted and "f" in (q2 or "")[:2].lower() and "{" in value:
                continue  # an f-string builds the value from variables
            if quoted and "r" in (q2 or "")[:2].lower() and _REGEX_SYNTAX.search(value):
                continue  # a raw string of regex syntax is a pattern (a lexer's token = r"…")
            kept.append((a, b))
        for a, b in kept:
            if a < pos:
                continue
            out.append(text[pos:a])
            out.append(REDACTED)
            pos = b
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# More than one credential name per this many characters is no prose or config a person
# wrote (a generated or hostile text): each value is then replaced by its shape alone, in one
# cheap step per name, so the time stays linear with a small constant.
_DENSE_SPACING = 48
_DENSE_MIN = 256
_DENSE = lazy_compile(
    r"""[A-Za-z_][\w.\-]*+(?:\[\w*\])?(?:\\*+["'`])?\)?[ \t]*+"""
    r"""(?::=|=>|\?=|===|!==|==|!=|[:=])[ \t]*+(?:""" + _SHELL_REQUOTE + r"""|\\*+["'`])?"""
    r"""(?P<val>[^\s"'`,;&\\)<]{1,1024})"""
)


def _dense(text: str, starts: list[int]) -> str:
    """Every sensitive name's value replaced, with no judgement of what it is."""
    out: list[str] = []
    pos = 0
    for j in starts:
        if j < pos:
            continue
        m = _DENSE.match(text, j)
        if m is None:
            continue
        a, b = m.span("val")
        if text.startswith(REDACTED, a):
            continue
        out.append(text[pos:a])
        out.append(REDACTED)
        pos = b
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# An ini section header on a line of its own ("[database]", "[client \"x\"]").
_SECTION = lazy_compile(r"""^[ \t]*\[[A-Za-z0-9_.\- :"']{1,64}\][ \t]*\r?$""", re.MULTILINE)


def _ini_from(text: str) -> int:
    """Where the first ini section header ends (past the text's end when there is none)."""
    found = _SECTION.search(text) if "[" in text else None
    return found.end() if found is not None else len(text) + 1


def _starts_line(text: str, at: int) -> bool:
    """Whether only blanks precede ``at`` on its line (looked at 200 characters back)."""
    reach = max(0, at - 200)
    newline = text.rfind("\n", reach, at)
    if newline < 0 and reach > 0:
        return False
    return not text[newline + 1 : at].strip()


def _opens_string(text: str, at: int, quote: str) -> bool:
    """Whether a string opened by ``quote`` (escaped or not) starts right at ``at``: the name is
    the whole string. At the start of the text, of a line (raw or JSON-escaped) or of the JSON
    string that holds it, a fragment such as ``sonar.login', '…`` (its opening quote cut off)
    counts too."""
    if at == 0 or text[at - 1] in (quote, "\n") or text.endswith("\\n", 0, at):
        return True
    return quote == "'" and text[at - 1] == '"'  # {"c": "sonar.login', '…"}


def _after_scheme(text: str, start: int, end: int) -> int:
    """Past an authorization value's scheme word: ``Authorization: Splunk <redacted>``."""
    scheme = _SCHEME.match(text, start, end)
    return scheme.end() if scheme is not None else start


@functools.lru_cache(maxsize=1024)
def _auth_name(name: str) -> bool:
    words = split_key(name)
    return bool(words) and words[-1] in _AUTH_WORDS


_FIRST = lazy_compile(r"\S+")
# A quoted word that names something (a header, a field) rather than holding a secret.
_LOWER_NAME = lazy_compile(r"[a-z_ \-:]+|[A-Za-z]+(?:[-_][A-Za-z0-9]+)+|[A-Z][A-Z_]*")
# What only a regular expression holds: a class, an escape class, a group's flags.
_REGEX_SYNTAX = lazy_compile(r"\\[wdsWDSbB]|\[\^|\(\?[:=!<P]|\]\+|\]\*")
_AFTER_LITERAL = lazy_compile(r"[ \t]*(?:[;,)]|$|\r|\n|\\n)")
_CODE_WORD = lazy_compile(r"[a-z_][a-z_]*")
_LITERALS = frozenset({"true", "false", "none", "null", "yes", "no", "on", "off", "required"})


def _in_call(text: str, end: int, value: str) -> bool:
    """A keyword argument: ``,`` or ``)`` follows, and a ``(`` opens before it on its line."""
    if text[end : end + 1] not in (",", ")"):
        return False
    start = end - len(value)
    line = text.rfind("\n", max(0, start - 200), start)
    return "(" in text[max(line + 1, start - 200) : start] or text[end : end + 1] == ")"


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


# Words that start an expression: "token = await fetch()", "password = new Secret(…)".
_CODE_STARTS = frozenset(
    {"await", "new", "yield", "lambda", "not", "return", "typeof", "function", "async", "if",
     "raise", "throw", "del", "print", "assert", "import", "from", "const", "let", "var"}
)  # fmt: skip
# Words that continue an expression after its first operand: "api_key or os.environ.get(…)".
_CONTINUATIONS = frozenset({"or", "and", "if", "else", "is", "in", "not", "instanceof", "as"})


def _subscript_key(text: str, start: int) -> bool:
    """Whether the quoted name at ``start`` opens right after ``[`` (``cfg['password']``)."""
    k = start - 1
    while k >= 0 and start - k <= 8 and text[k] in "\\\"'`":
        k -= 1
    return k >= 0 and text[k] == "["


def _judge(
    name: str, value: str, quoted: bool, text: str, end: int, sep: str, ini: bool = False
) -> int | None:
    """How much of the value is secret (its length, or the first word's in prose), or None
    when it only refers to a secret (an expression, a placeholder, a sentence)."""
    if quoted:
        if value.lower() in ("true", "false"):
            return None  # a boolean written as a string ("Allow-Credentials": "true")
        names_list = sep == "," or sep in _COMPARISONS
        if names_list and (_LOWER_NAME.fullmatch(value) or is_expression(value, name=name)):
            return None  # ("next_token", "position"): a tuple of names, not a name and value
        return None if is_expression(value, quoted=True, name=name) else len(value)
    if is_expression(value, quoted=True):
        return None  # a placeholder: ${{ secrets.X }}, $TOKEN, <your-token>
    if value[:1] == "#" and text[end - len(value) - 1 : end - len(value)] in (" ", "\t"):
        return None  # "access_token:  # pragma: no branch": a comment (YAML's, Python's)
    first = _FIRST.match(value)
    head = first.group() if first is not None else value
    rest = text[end : end + 400]
    if head != value and head[-1] in ",;" and _balanced(head):
        head = value = head[:-1]  # a list of parameters or fields: "password: str, token: …"
    if head == value:
        glued = text[end - len(value) - 1 : end - len(value)] in ("=", ":")
        called = ("(" in value or "[" in value) and is_expression(value, name=name, rest=rest)
        if ENV_NAME.fullmatch(name) is not None and sep in ("=", ":") and glued and not called:
            # An environment variable or YAML key in capitals holds a literal: only a
            # placeholder or a keyword refers to something (SUMO_TOKEN=supRsUZaniwltn).
            literal = is_expression(value, quoted=True) or value.lower().strip(",;") in _LITERALS
            return None if literal else len(value)
        if glued and sep == "=" and _CODE_WORD.fullmatch(value) and _in_call(text, end, value):
            return None  # f(api_key=credential,): a keyword argument's variable
        if ini and sep == "=" and not called:
            # An ini/properties line after a [section] header holds a literal too:
            # "password = sunshine" there is no variable (only placeholders stay)
            literal = is_expression(value, quoted=True) or value.lower().strip(",;") in _LITERALS
            return None if literal else len(value)
        if is_expression(value, name=name, rest=rest, annotation=sep == ":"):
            return None
        if sep in ("=", ":=") and not glued and _CODE_WORD.fullmatch(value.rstrip(",;)")):
            return None  # password = value: a variable in code ("key = value" with spaces)
        return len(value)
    after = value[len(head) :].lstrip()
    # "token: Token = Depends(get_token)": the first word is code, so the line is code.
    if sep in ("=", ":=") and _CODE_WORD.fullmatch(head) and after[:1] in ("+", "-", "*", "|"):
        return None  # userpass = username + b":" + password
    code_like = (
        after[:1] in ("=", "|", "-", "[", "(", "#", "/", "?", "&", "+", "*", "%", "<", ">", ".")
        or after.split(" ", 1)[0] in _CONTINUATIONS
    )
    called = "(" in head or "[" in head
    if (code_like or head in _CODE_STARTS or called) and is_expression(
        head.rstrip(","), name=name, rest=value[len(head) :] + rest
    ):
        return None
    if head in _CODE_STARTS:
        return None
    if is_prose(value):
        return None  # "credentials: An optional CallCredentials for the RPC."
    if is_prose(after) and not is_expression(head, name=name, rest=rest):
        return len(head)  # "X-Api-Key: 6967… in the logs, please rotate it."
    return len(value)
