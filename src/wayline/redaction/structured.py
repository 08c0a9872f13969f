"""Credentials whose name and value sit in a file format's own structure, not ``name = value``.

- XML elements and name/value attribute pairs: ``<password>…</password>``,
  ``<add key="ClearTextPassword" value="…"/>`` (NuGet, .NET config, Maven settings);
- a Kubernetes ``Secret`` manifest's ``data:`` / ``stringData:`` entries, whatever their keys;
- ``.pgpass`` lines (``host:port:db:user:password``) and ODBC ``PWD=`` in a connection string
  (a bare ``PWD`` elsewhere is the working directory).

Each rule is one regex scan; names are judged by the same ``is_sensitive`` as assignments.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.redact_rules import REDACTED, redact_spans
from wayline.redaction.secret_names import is_expression

__all__ = ["apply_pgpass", "apply_structured"]

_ELEMENT = lazy_compile(
    r"<(?P<tag>[A-Za-z_][\w:.\-]{0,64})(?:[ \t][^<>]{0,256})?>"
    r"(?P<val>[^<>\r\n]{1,4096}?)</(?P=tag)>"
)
# Patterns lead with a literal or a class, their word-boundary checks after it: one led by
# a lookbehind or a repeat is tried at every position, a literal is found at C speed.
_ATTR_PAIR = lazy_compile(
    r"""(?:key(?<!\wkey)|name(?<!\wname))[ \t]*=[ \t]*"""
    r"""(?P<q>\\*["'])(?P<name>[\w.:\-]{1,128})(?P=q)[ \t]+"""
    r"""value[ \t]*=[ \t]*(?P<q2>\\*["'])(?P<val>[^"'\\\r\n]{1,4096})(?P=q2)"""
)
# An element named by its key/name attribute, its value its text or a <value> child:
# <entry key="password">…</entry> (Java properties XML), <property name="password"><value>…
# (Spring). A self-closing element has no text.
_NAMED_ELEMENT = lazy_compile(
    r"""<[A-Za-z_][\w:.\-]{0,64}[ \t][^<>]{0,256}?\b(?:key|name)[ \t]*=[ \t]*(?P<q>["'])"""
    r"""(?P<name>[\w.:\-]{1,128})(?P=q)[^<>]{0,256}(?<!/)>[ \t]*(?:\r?\n[ \t]*)?(?:<value>)?"""
    r"""(?P<val>[^<>\r\n]{1,4096}?)<"""
)
# <name>password</name> then <value>…</value> (Hadoop, Tomcat and Jenkins configuration).
_NAME_VALUE_ELEMENTS = lazy_compile(
    r"""<name>[ \t]*(?P<name>[\w.:\-]{1,128})[ \t]*</name>[ \t\r\n]{0,64}"""
    r"""<value>(?P<val>[^<>\r\n]{1,4096}?)</value>"""
)
# An HTML password field with its value: <input type="password" value="…">.
_PASSWORD_INPUT = lazy_compile(
    r"""<input\b[^<>]{0,256}?\btype[ \t]*=[ \t]*["']?password\b[^<>]{0,256}?"""
    r"""\bvalue[ \t]*=[ \t]*(?P<q>\\*["'])(?P<val>[^"'\\\r\n]{1,256})(?P=q)""",
    re.IGNORECASE,
)
# A YAML block scalar under a name ("password: |" or ">-", the value on the next, indented
# line): the first line of the block is the value of that name.
_BLOCK_SCALAR = lazy_compile(
    r""":[ \t]*[|>][+\-]?[1-9]?[ \t]*(?:\r?\n|\\n)(?:[ \t]|\\t)+(?P<val>[^\s\\][^\r\n\\]{0,1023})"""
)
_NAME_BEFORE = lazy_compile(r"""(?P<name>[\w.\-]{1,64})\\*["']?[ \t]*\Z""")
# The short names of a password as an element (<pwd>, <pass>, <pw>): their text, unless a path.
_SHORT_TAGS = frozenset({"pwd", "pass", "pw"})
# A Kubernetes/YAML pair "- name: DB_PASSWORD" then "value: …" on the next line.
_NAME_VALUE = lazy_compile(
    r"""name:[ \t]*["']?(?P<name>[\w.\-]{1,128})["']?[ \t]*(?:\r?\n|\\n)[ \t\-]*"""
    r"""value:[ \t]*(?P<val>[^\r\n\\]{1,1024})"""
)
_K8S_SECRET = lazy_compile(r"""kind:[ \t]*["']?secret\b""", re.IGNORECASE)
# Indentation may be JSON-escaped too ("\\t") when the manifest sits in an encoded string.
_INDENT = r"(?:[ \t]|\\t)*"
_DATA_BLOCK = lazy_compile(
    r"(?:^|\n|\\n)(?P<indent>" + _INDENT + r")(?:data|stringData):[ \t]*(?=\r?\n|\\n)"
)
_BREAK = lazy_compile(r"\r?\n|\\n")
_ENTRY = lazy_compile(
    r"(?P<indent>" + _INDENT + r""")(?:#[^\r\n\\]*|["']?[\w.\-]+["']?:[ \t]*"""
    r"""(?P<val>\S[^\r\n\\]*))"""
)
_PGPASS = lazy_compile(
    r"(?m)^(?:[\w.\-]+|\*):(?:\d{1,5}|\*):(?:[\w.\-]+|\*):(?:[\w.@\-]+|\*):(?P<val>\S+)$"
)
# ODBC: "PWD=" after a ";" or followed by one (a lone PWD= is the working directory).
_ODBC_PWD = lazy_compile(r"(?i);[ \t]*pwd[ \t]*=[ \t]*(?P<val>\{[^}\r\n]*\}|[^;\s\"']+)")
_ODBC_PWD_FIRST = lazy_compile(
    r"[Pp](?<![\w$][Pp])(?i:wd[ \t]*=[ \t]*(?P<val>\{[^}\r\n]*\}|[^;\s\"'=]+)(?=;))"
)


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the spans (in any order) replaced, but none that starts at a marker."""
    return redact_spans(
        text, ((a, b) for a, b in sorted(spans) if not text.startswith(REDACTED, a))
    )


# A literal compared with a credential name, literal first: if ("…" == password).
_REVERSED = lazy_compile(
    r"""(?P<q>[\\"'](?:(?<=["'])|(?<=\\)\\*["']))(?P<val>[^"'\r\n]{1,512}?)(?P=q)"""
    r"""[ \t]*(?:===|!==|==|!=)[ \t]*"""
    r"""(?P<name>[A-Za-z_][\w.]{0,128})"""
)


def _width(indent: str) -> int:
    return len(indent.replace("\\t", "\t").expandtabs(2))


def _k8s_data(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for block in _DATA_BLOCK.finditer(text):
        indent = _width(block.group("indent"))
        pos = block.end()
        while True:
            brk = _BREAK.match(text, pos)
            if brk is None:
                break
            entry = _ENTRY.match(text, brk.end())
            if entry is None or _width(entry.group("indent")) <= indent:
                break
            if entry.group("val") is not None:
                spans.append(entry.span("val"))
            pos = entry.end()
    return spans


def apply_structured(text: str, is_sensitive: Callable[[str], bool]) -> str:
    """Replace credentials held by XML, Kubernetes, .pgpass and ODBC structure in ``text``."""
    spans: list[tuple[int, int]] = []
    lowered_has = text.lower()
    if "<" in text:
        for m in _ELEMENT.finditer(text):
            tag, value = m.group("tag", "val")
            if (
                is_sensitive(tag) or (tag.lower() in _SHORT_TAGS and "/" not in value)
            ) and not is_expression(value, quoted=True):
                spans.append(m.span("val"))
        for pattern in (_NAMED_ELEMENT, _NAME_VALUE_ELEMENTS):
            for m in pattern.finditer(text):
                value = m.group("val").strip()
                if is_sensitive(m.group("name")) and not is_expression(value, quoted=True):
                    spans.append(m.span("val"))
    if "value" in lowered_has:
        for pattern in (_ATTR_PAIR, _NAME_VALUE):
            for m in pattern.finditer(text):
                value = m.group("val").strip().strip("\"'")
                if is_sensitive(m.group("name")) and not is_expression(value, quoted=True):
                    spans.append(m.span("val"))
    if "<input" in lowered_has and "password" in lowered_has:
        spans.extend(m.span("val") for m in _PASSWORD_INPUT.finditer(text))
    if ": |" in text or ": >" in text or ":|" in text or ":>" in text:
        for m in _BLOCK_SCALAR.finditer(text):
            name = _NAME_BEFORE.search(text, max(0, m.start() - 72), m.start())
            if name is not None and is_sensitive(name.group("name")):
                spans.append(m.span("val"))
    if "==" in text or "!=" in text:
        for m in _REVERSED.finditer(text):
            if is_sensitive(m.group("name")) and not is_expression(m.group("val"), quoted=True):
                spans.append(m.span("val"))
    if "secret" in lowered_has and _K8S_SECRET.search(text) is not None:
        spans.extend(_k8s_data(text))
    if "pwd" in lowered_has:
        for pattern in (_ODBC_PWD, _ODBC_PWD_FIRST):
            spans.extend(m.span("val") for m in pattern.finditer(text))
    return _replace(text, spans)


def apply_pgpass(text: str) -> str:
    """Replace the password field of ``.pgpass`` lines (``host:port:db:user:password``)."""
    return _replace(text, [m.span("val") for m in _PGPASS.finditer(text)])
