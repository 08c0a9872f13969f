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

from wayline.redaction.redact_rules import REDACTED
from wayline.redaction.secret_names import is_expression

__all__ = ["apply_pgpass", "apply_structured"]

_ELEMENT = re.compile(
    r"<(?P<tag>[A-Za-z_][\w:.\-]{0,64})(?:[ \t][^<>]{0,256})?>"
    r"(?P<val>[^<>\r\n]{1,4096}?)</(?P=tag)>"
)
_ATTR_PAIR = re.compile(
    r"""\b(?:key|name)[ \t]*=[ \t]*(?P<q>\\*["'])(?P<name>[\w.:\-]{1,128})(?P=q)[ \t]+"""
    r"""value[ \t]*=[ \t]*(?P<q2>\\*["'])(?P<val>[^"'\\\r\n]{1,4096})(?P=q2)"""
)
# A Kubernetes/YAML pair "- name: DB_PASSWORD" then "value: …" on the next line.
_NAME_VALUE = re.compile(
    r"""name:[ \t]*["']?(?P<name>[\w.\-]{1,128})["']?[ \t]*(?:\r?\n|\\n)[ \t\-]*"""
    r"""value:[ \t]*(?P<val>[^\r\n\\]{1,1024})"""
)
_K8S_SECRET = re.compile(r"""kind:[ \t]*["']?secret\b""", re.IGNORECASE)
# Indentation may be JSON-escaped too ("\\t") when the manifest sits in an encoded string.
_INDENT = r"(?:[ \t]|\\t)*"
_DATA_BLOCK = re.compile(
    r"(?:^|\n|\\n)(?P<indent>" + _INDENT + r")(?:data|stringData):[ \t]*(?=\r?\n|\\n)"
)
_BREAK = re.compile(r"\r?\n|\\n")
_ENTRY = re.compile(
    r"(?P<indent>" + _INDENT + r""")(?:#[^\r\n\\]*|["']?[\w.\-]+["']?:[ \t]*"""
    r"""(?P<val>\S[^\r\n\\]*))"""
)
_PGPASS = re.compile(
    r"(?m)^(?:[\w.\-]+|\*):(?:\d{1,5}|\*):(?:[\w.\-]+|\*):(?:[\w.@\-]+|\*):(?P<val>\S+)$"
)
# ODBC: "PWD=" after a ";" or followed by one (a lone PWD= is the working directory).
_ODBC_PWD = re.compile(r"(?i);[ \t]*pwd[ \t]*=[ \t]*(?P<val>\{[^}\r\n]*\}|[^;\s\"']+)")
_ODBC_PWD_FIRST = re.compile(
    r"(?i)(?<![\w$])pwd[ \t]*=[ \t]*(?P<val>\{[^}\r\n]*\}|[^;\s\"'=]+)(?=;)"
)


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        if a < pos or text.startswith(REDACTED, a):
            continue
        out.append(text[pos:a])
        out.append(REDACTED)
        pos = b
    out.append(text[pos:])
    return "".join(out)


# A literal compared with a credential name, literal first: if ("…" == password).
_REVERSED = re.compile(
    r"""(?P<q>\\*["'])(?P<val>[^"'\r\n]{1,512}?)(?P=q)[ \t]*(?:===|!==|==|!=)[ \t]*"""
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
            if is_sensitive(m.group("tag")) and not is_expression(m.group("val"), quoted=True):
                spans.append(m.span("val"))
    if "value" in lowered_has:
        for pattern in (_ATTR_PAIR, _NAME_VALUE):
            for m in pattern.finditer(text):
                value = m.group("val").strip().strip("\"'")
                if is_sensitive(m.group("name")) and not is_expression(value, quoted=True):
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
