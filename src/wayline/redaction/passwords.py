"""Passwords where their formats put them, each rule read off a format's grammar.

The assignment rules (``assign.py``) find a password under a credential *name*; these rules
find it where the *position* says what it is, as the format's documentation defines it:

- the short names ``pass``, ``pwd``, ``pw`` as a config key or a form label (``"pwd": "…"``,
  ``pass: …``): a directory (``PWD=/home/u``) and a step (``first_pass``) stay, because a
  path is no password and a step has another word before it;
- setters and builders (``setPassword("…")``, ``withPassword("…")``, ``.password("…")``,
  ``set_token('…')``): the single literal argument of a setter named for a credential;
- the password argument of credential APIs, by their documented signatures
  (``NetworkCredential(user, pw)``, ``PasswordAuthentication(user, pw)``,
  ``HTTPBasicAuth(user, pw)``, ``….login(user, pw)``, ``DriverManager.getConnection(url, user,
  pw)``, ``mysqli_connect(host, user, pw)``, ``new PDO(dsn, user, pw)``, a key store's
  ``"…".toCharArray()``);
- command lines whose tool gives a position its meaning (``curl -uuser:pw``, ``net user u
  pw``, ``net use \\\\srv\\share pw``, ``echo pw | docker login --password-stdin``,
  ``echo pw | sudo -S``, ``sqlplus user/pw@db``, ``jdbc:oracle:thin:user/pw@``,
  ``ssh-keygen -N pw``, ``unrar -ppw``, ``lftp -u user,pw``, SNMPv3 ``-A``/``-X``,
  ``xfreerdp /p:pw``, ``rdesktop -p pw``, ``nmcli … password pw``, ``wpa_passphrase ssid
  pw``, ``rabbitmqctl add_user u pw``, ``mosquitto_pub -P pw``, ``htpasswd -b[c|n] … pw``);
- prose and logs that write the word and the value with only a blank between
  (``password Xk9#mQ2z``, ``username alice password s3cr3t``): a value with a letter and a
  digit or symbol.

Every rule is a literal-led regex or a bounded look around a literal: linear in the text.
"""

from __future__ import annotations

import re

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.redact_rules import (
    REDACTED,
    SecretPattern,
    after_lead,
    ci_word_start,
    lead_class,
    redact_spans,
    regex_rule,
    word_start,
)
from wayline.redaction.secret_names import (
    is_expression,
    name_is_sensitive,
    split_key,
)
from wayline.redaction.value_shapes import pronounceable

__all__ = ["password_rules"]

_SYMBOL = lazy_compile(r"[0-9!@#$%^&*+=?~]")
_LETTER = lazy_compile(r"[A-Za-z]")


def password_like(value: str) -> bool:
    """A word that reads as a password, not a name, a path or a number: a letter and a digit
    or symbol, or 8+ random letters in mixed case (no pronounceable name)."""
    if len(value) < 6 or len(value) > 128 or "/" in value or "\\" in value:
        return False
    if value[0] in "~.$%{<-" or is_expression(value, quoted=True):
        return False
    if _LETTER.search(value) is None:
        return False
    if _SYMBOL.search(value) is not None:
        return True
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return len(value) >= 8 and mixed and not pronounceable(value)


# ------------------------------------------------------------------ short names as keys

# "pass", "pwd" or "pw" as a whole key or label, quoted or not, then ":" "=" or "=>", then a
# quoted literal or one bare word. The boundary before the name is checked in code (a
# leading lookbehind would stop the engine's fast scan for the literal).
_SHORT_NAME = lazy_compile(
    r"(?i:passwd|pass|pwd|psw|pw)(?:\[\])?(?P<q0>\\*[\"'])?[ \t]*(?:=>|:=|:|=)(?!=)[ \t]*"
    r"(?:[\[{(][ \t]*)?"  # a one-element list, set or tuple: pwd = ['…']
    r"(?:(?:[bBrRuUfFL@]|u8)?(?P<q>\\*[\"'`])(?P<quoted>[^\"'`\\\r\n]{1,256})(?P=q)"
    r"|(?P<bare>[^\s\"'`,;\\<>(){}\[\]]{1,128}))"
)


# The lead of a bare value: characters of a password written in a pair or a form.
_PW_RUN = lazy_compile(r"[^\s,;'\"\\/`()\[\]{}<>]{6,64}(?![^\s,;'\"\\/`()\[\]{}<>])")
_LEAD_OK = lazy_compile(r"(?=.*[0-9])(?=.*[A-Za-z])")


# A rejected value may hold the next name ("pw:/tmp:pwd=…"): the scan goes on from the value's
# start, this many times per text; past it (generated or hostile text) from the value's end.
_RESCANS = 4096


def _short_names(text: str) -> str:
    out: list[str] = []
    pos = at = 0
    rescans = 0
    while (m := _SHORT_NAME.search(text, at)) is not None:
        start = m.start()
        group = "quoted" if m.group("quoted") is not None else "bare"
        a, b = m.span(group)
        value = m.group(group)
        before = text[start - 1 : start]
        if (
            (before and (before.isalnum() or before in "_$"))  # "bypass:", "$PWD=", "first_pass"
            or (m.group("q0") and before != m.group("q0")[-1])  # a closing quote, none opened
            or value.startswith(REDACTED)
        ):
            b = -1
        elif not password_like(value):
            # a bare word's lead up to a path or bracket ("PW:dipPr10Gg!", "pwd=ab12cd/x"):
            # 6 to 64 characters with a letter and a digit, no path at its start
            lead = _PW_RUN.match(value) if group == "bare" else None
            if lead is None or value[0] in "/~.$%{<" or not _LEAD_OK.search(lead.group(0)):
                b = -1
            else:
                b = a + lead.end()
        if b < 0:
            rescans += 1
            at = a if rescans <= _RESCANS else m.end()
            continue
        out.append(text[pos:a])
        out.append(REDACTED)
        pos = at = b
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# ------------------------------------------------------------------ setters and builders

# A credential word, then "(" and one literal argument: setPassword("…"), .password("…"),
# with_token('…'). The word before it (set/with, or nothing) is checked in code.
_SETTER = lazy_compile(r"\([ \t]*(?P<q>\\*[\"'])(?P<val>[^\s\"'\\]{1,256})(?P=q)[ \t]*\)")
# The identifier before the "(" ends in a credential word (its own casing or lower case).
_SETTER_WORD = lazy_compile(
    r"(?:password|passwd|passphrase|pwd|secret|token|api_?key|credentials?)[ \t]*\Z",
    re.IGNORECASE,
)
_BARE_WORDS = frozenset({"password", "passwd", "passphrase"})
_SETTER_VERBS = frozenset({"set", "with"})


def _setter_name(text: str, start: int, end: int) -> str:
    """The whole identifier whose last part is ``text[start:end]`` (at most 48 more
    characters before it); "" when it is longer."""
    lo = max(0, start - 48)
    j = start
    while j > lo and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    if j == lo and lo > 0:
        return ""
    return text[j:end].rstrip(" \t")


def _setters(text: str) -> str:
    spans: list[tuple[int, int]] = []
    for m in _SETTER.finditer(text):
        word = _SETTER_WORD.search(text, max(0, m.start() - 16), m.start())
        if word is None:
            continue
        words = split_key(_setter_name(text, word.start(), m.start()))
        if not words:
            continue
        if words[0] in _SETTER_VERBS and len(words) > 1:
            ok = name_is_sensitive(words[1:])  # setDbPassword, with_token; setSecretName not
        else:
            ok = len(words) == 1 and words[0] in _BARE_WORDS  # .password("…"), a builder's
        value = m.group("val")
        if not ok or len(value) < 4 or value.startswith(REDACTED):
            continue
        if is_expression(value, quoted=True):
            continue
        spans.append(m.span("val"))
    return redact_spans(text, spans)


# ------------------------------------------------------------------ htpasswd's positions


# htpasswd -b[c|n|m|B|…] [file] user password: with "n" (print, no file) the password is the
# second word after the flags, else the third.
_WORD = lazy_compile(r"[^\s;|&\\]+")


def _htpasswd(text: str) -> str:
    spans: list[tuple[int, int]] = []
    for m in _htpasswd_regex().finditer(text):
        words = list(_WORD.finditer(text, m.start(1), m.end(1)))
        flags = "".join(w.group(0)[1:] for w in words if w.group(0).startswith("-"))
        args = [w for w in words if not w.group(0).startswith("-")]
        if "b" not in flags:
            continue
        at = 1 if "n" in flags else 2
        if len(args) <= at:
            continue
        word = args[at]
        value = word.group(0).strip("\"'")
        if is_expression(value, quoted=True) or value.startswith(REDACTED):
            continue
        spans.append(word.span())
    return redact_spans(text, spans)


# ------------------------------------------------------------------ regex rules


def _htpasswd_regex() -> re.Pattern[str]:
    if not _HTPASSWD:
        _HTPASSWD.append(
            re.compile(_tool("htpasswd") + r"((?:[ \t]+(?:-[A-Za-z]+|[^\s;|&\\]+)){2,12})")
        )
    return _HTPASSWD[0]


_HTPASSWD: list[re.Pattern[str]] = []

# One command: no line break (raw or JSON-escaped) or ; | & before the flag.
_SEG = r"(?:[^\r\n;|&\\]|\\(?![nr]))" + "{0,200}?"


def _tool(name: str, before: str = "") -> str:
    """``name`` starting a word (also right after a JSON escape). The literal comes first and
    the boundary after it, so the engine scans for the literal at C speed; ``before`` is a
    fixed-width part of the name that precedes the literal (``[xw]`` of ``xfreerdp``)."""
    lit = re.escape(name)
    return (
        lit + rf"(?:(?<![\w\-]{before}{lit})|(?<=\\[nrtbf]{before}{lit})"
        rf"|(?<=\\u[0-9A-Fa-f]{{4}}{before}{lit}))"
    )


_VALUE = r"""(?:\\*["'])?(?P<secret>(?![<$%{*])[^\s"'`;&|\\]+)"""
# A literal argument, and the one before it (a literal or a variable).
_LIT = r"""\\*(?P<qa>["'])(?P<secret>(?![$<{%])[^"'\\\r\n]{1,256})\\*(?P=qa)"""
_ARG = r"""(?:\\*["'][^"'\\\r\n]{0,256}\\*["']|\$?[A-Za-z_][\w.\->\[\]'"]{0,128})"""

_PASSWORD_REGEXES: tuple[tuple[str, str, tuple[str, ...], int], ...] = (
    # curl -uuser:pw (glued; "-u user:pw" is the flag rule's)
    ("curl_glued_user",
     _tool("curl") + r"\b" + _SEG + r"[ \t]-u(?![ \t])\\*[\"']?[^\s:\"'\\]{1,128}:" + _VALUE,
     ("curl",), 0),
    # net user NAME PASSWORD [/add]; net use [X:] \\srv\share PASSWORD | /user:U PASSWORD
    ("net_user_password",
     ci_word_start(
         ("net",),
         r"[ \t]+user[ \t]+(?:\"[^\"\r\n]{1,64}\"|[^\s/\"]{1,64})[ \t]+"
         r"(?P<secret>(?![/*$%<])[^\s\"]+)"),
     ("net user",), 0),
    ("net_use_password",
     ci_word_start(
         ("net",),
         r"[ \t]+use\b[^\r\n;|&]{0,200}?(?:\\\\[^\s\\]+\\[^\s]+|/u(?:ser)?:[^\s]+)[ \t]+"
         r"(?P<secret>(?![/*$%<])[^\s\"]+)"),
     ("net use",), 0),
    # A password piped to a command that reads it from stdin.
    ("stdin_password",
     word_start("echo", "printf")
     + r"[ \t]+(?:-[neE]+[ \t]+)?(?P<q>\\*[\"']?)(?P<secret>(?![$%<{\-])[^\s\"'|]{4,256})"
     r"(?P=q)[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\w+[ \t]+)*-\w*S\b"
     r"|[^|\r\n;]{0,200}?--password-stdin|passwd\b[^|\r\n;]{0,100}--stdin)",
     ("password-stdin", "sudo -s", "--stdin"), 0),
    ("chpasswd_pair",
     word_start("echo", "printf") + r"[ \t]+(?P<q>\\*[\"']?)[^\s:\"'|]{1,64}:(?P<secret>(?![$%<{])"
     r"[^\s\"'|]{1,256})(?P=q)[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b",
     ("chpasswd",), 0),
    # Oracle: sqlplus user/pw[@db], jdbc:oracle:thin:user/pw@host
    ("oracle_user_password",
     r"(?:\bsqlplus(?:[ \t]+-\w+)*[ \t]+|jdbc:oracle:(?:thin|oci):)(?:\\*[\"'])?"
     r"[A-Za-z_][\w$#]{0,63}/(?P<secret>(?![$%<{])[^\s@\"'/]+)",
     ("sqlplus", "jdbc:oracle"), re.IGNORECASE),
    ("ssh_keygen_new_passphrase",  # -N new, -P old: each its own rule, both may be given
     _tool("ssh-keygen") + r"\b" + _SEG + r"[ \t]-N[ \t]+" + _VALUE, ("ssh-keygen",), 0),
    ("ssh_keygen_old_passphrase",
     _tool("ssh-keygen") + r"\b" + _SEG + r"[ \t]-P[ \t]+" + _VALUE, ("ssh-keygen",), 0),
    ("rar_password", _tool("rar") + r"\b" + _SEG + r"[ \t]-p(?!-)" + _VALUE, ("rar",), 0),
    ("unrar_password", _tool("unrar") + r"\b" + _SEG + r"[ \t]-p(?!-)" + _VALUE, ("unrar",), 0),
    ("lftp_user_password",
     _tool("lftp") + r"\b" + _SEG + r"[ \t]-u[ \t]+[^\s,]+," + _VALUE, ("lftp",), 0),
    ("snmp_v3_passphrase",
     _tool("snmp") + r"\w+\b" + _SEG + r"[ \t]-[AX][ \t]+" + _VALUE, ("snmp",), 0),
    ("freerdp_password",
     _tool("freerdp", "[xw]") + r"\b" + _SEG + r"[ \t][/+]p:" + _VALUE, ("freerdp",), 0),
    ("rdesktop_password",
     _tool("rdesktop") + r"\b" + _SEG + r"[ \t]-p[ \t]+" + _VALUE, ("rdesktop",), 0),
    ("nmcli_password",
     _tool("nmcli") + r"\b" + _SEG + r"[ \t](?:password|wifi-sec\.psk)[ \t]+" + _VALUE,
     ("nmcli",), 0),
    ("wpa_passphrase_password",
     _tool("wpa_passphrase") + r"[ \t]+(?:\"[^\"\r\n]{1,64}\"|\S+)[ \t]+" + _VALUE,
     ("wpa_passphrase",), 0),
    ("rabbitmq_user_password",
     _tool("rabbitmqctl") + r"\b" + _SEG + r"\b(?:add_user|change_password)[ \t]+\S+[ \t]+"
     + _VALUE,
     ("rabbitmqctl",), 0),
    ("mqtt_password", _tool("mosquitto_") + r"\w+\b" + _SEG + r"[ \t]-P[ \t]+" + _VALUE,
     ("mosquitto",), 0),
    ("user_hash_password",
     _tool("user") + r"(?:mod|add)\b" + _SEG + r"[ \t]-p[ \t]+" + _VALUE,
     ("usermod", "useradd"), 0),
    # Credential APIs, by their documented signatures: the password is the literal after the
    # user (and, for connections, after the URL or host).
    ("credential_constructor_password",
     word_start(
         "PasswordAuthentication", "NetworkCredential", "UsernamePasswordCredentials",
         "UsernamePasswordAuthenticationToken", "PSCredential", "HTTPBasicAuth", "HTTPDigestAuth",
         "HttpBasicAuth", "BasicAuth", ".login", ".simple_bind_s", ".simple_bind", ".bind_s",
         ".ValidateCredentials",
     ) + r"[ \t]*\([ \t]*" + _ARG + r"[ \t]*,[ \t]*" + _LIT,
     ("passwordauthentication", "networkcredential", "usernamepassword", "pscredential",
      "basicauth", "digestauth", ".login", "simple_bind", ".bind_s", "validatecredentials"), 0),
    # Three-argument signatures whose third is the password: .NET's DirectoryEntry(path,
    # user, password), Python's ftplib FTP(host, user, passwd), pymysql's and MySQLdb's
    # connect(host, user, passwd, …); the arguments may be on lines of their own.
    ("third_argument_password",
     word_start("DirectoryEntry", "FTP", "FTP_TLS", "pymysql.connect", "MySQLdb.connect")
     + r"[ \t]*\(\s{0,40}" + _ARG + r"\s{0,40},\s{0,40}" + _ARG + r"\s{0,40},\s{0,40}" + _LIT,
     ("directoryentry", "ftp(", "ftp_tls(", "pymysql.connect", "mysqldb.connect"), 0),
    ("connection_call_password",
     r"(?:" + word_start("getConnection") + r"[ \t]*\([^,()\r\n]{1,256}"
     + r"|" + word_start("mysql") + r"i?_connect[ \t]*\([ \t]*" + _ARG
     + r"|" + word_start("new") + r"[ \t]+(?:mysqli|PDO)[ \t]*\([^,()\r\n]{1,256})[ \t]*,[ \t]*"
     + _ARG
     + r"[ \t]*,[ \t]*" + _LIT,
     ("getconnection", "_connect", "mysqli", "pdo"), 0),
    ("keystore_password_chars",
     word_start(
         "load", "init", "getKey", "setKeyEntry", "store", "getEntry", "PasswordProtection",
         "PBEKeySpec",
     ) + r"[ \t]*\([^()\r\n]{0,256}?" + _LIT + r"\.toCharArray\(\)",
     ("tochararray",), 0),
)  # fmt: skip


# "password Xk9#mQ2z", "password\tCfTDKSBAzacQzLfH": the word and the value with only blanks
# between (prose, logs, nmcli, a .properties line, whose grammar allows a blank as the
# separator); the value must read as a password (``password_like``), not a word or a path.
_WORD_VALUE_WORDS = ("passwor[dt]", "passwd", "passphrase", "kennwort")
_WORD_VALUE = lazy_compile(
    lead_class(_WORD_VALUE_WORDS) + "(?i:" + after_lead(_WORD_VALUE_WORDS) + ")"
    r"[ \t]+(?:\\*[\"'])?"
    r"(?P<val>(?![$%{<\-])[^\s\"'`/\\()]{6,64})(?=[.,;:!?)]*(?:[\s\"'`\\]|$))"
)


def _word_values(text: str) -> str:
    out: list[str] = []
    pos = 0
    for m in _WORD_VALUE.finditer(text):
        value = m.group("val").rstrip(".,;:!?")
        if value.startswith(REDACTED) or not password_like(value):
            continue
        a = m.start("val")
        out.append(text[pos:a])
        out.append(REDACTED)
        pos = a + len(value)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def password_rules() -> list[SecretPattern]:
    """The rules of this module, in the order they are applied."""
    rules = [
        SecretPattern(
            "password_short_name",
            frozenset({"pass", "pwd", "pw:", "pw=", "pw :", "pw =", 'pw"', "pw'"}),
            _short_names,
        ),
        SecretPattern(
            "password_setter",
            frozenset(
                {
                    "password(",
                    "passwd(",
                    "passphrase(",
                    "pwd(",
                    "secret(",
                    "token(",
                    "key(",
                    "credential",
                    "password (",
                    "secret (",
                    "token (",
                }
            ),
            _setters,
        ),
        SecretPattern("htpasswd_password", frozenset({"htpasswd"}), _htpasswd),
        SecretPattern(
            "password_word_value",
            frozenset(
                {
                    "password ",
                    "password\t",
                    "passwort ",
                    "passwort\t",
                    "passwd ",
                    "passwd\t",
                    "passphrase ",
                    "passphrase\t",
                    "kennwort ",
                    "kennwort\t",
                }
            ),
            _word_values,
        ),
    ]
    for name, pattern, triggers, flags in _PASSWORD_REGEXES:
        rules.append(_lazy(name, pattern, flags, triggers))
    return rules


def _lazy(name: str, pattern: str, flags: int, triggers: tuple[str, ...]) -> SecretPattern:
    made: list[SecretPattern] = []

    def apply(text: str) -> str:
        if not made:
            made.append(regex_rule(name, re.compile(pattern, flags), ()))
        return made[0].apply(text)

    return SecretPattern(name, frozenset(t.lower() for t in triggers), apply)
