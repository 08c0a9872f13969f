"""Credentials in the formats of tools and standards, each
read off the format's documentation or the scanner rule that describes it:

- **typing into a password field** in browser automation (Selenium ``send_keys``/
  ``sendKeys``, Playwright ``fill``/``type``/``press_sequentially``, Cypress ``type``), where
  the locator or the receiver names a password field;
- **libcurl's credential options** (``CURLOPT_PASSWORD``, ``CURLOPT_USERPWD`` "user:pw",
  ``CURLOPT_XOAUTH2_BEARER``, ``CURLOPT_KEYPASSWD``, … and pycurl's names);
- **JSON Web Keys' private members** (RFC 7517/7518: ``d``, ``p``, ``q``, ``dp``, ``dq``, ``qi``
  of RSA and EC keys, ``k`` of symmetric keys) in a text that holds a ``kty``;
- **TOTP/HOTP seeds**: RFC 4648 base32 of 10 or 20 bytes (16 or 32 characters) after a
  one-time-password word (``otp``, ``totp``, ``mfa``, ``authenticator``);
- **a value printed under its prompt** ("Please use the following password …:" and the
  value alone on the next line), as tools print generated credentials.

Every rule is a literal-led regex or a bounded look around a literal: linear in the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.literal_forms import QUOTED_LITERAL
from wayline.redaction.passwords import password_like
from wayline.redaction.redact_rules import (
    REDACTED,
    SecretPattern,
    after_lead,
    ci_word_start,
    lead_class,
    redact_spans,
)
from wayline.redaction.secret_names import is_expression, made_of_words
from wayline.redaction.value_shapes import credential_like, pronounceable

__all__ = ["tool_format_rules"]

_LIT = QUOTED_LITERAL

# ------------------------------------------------------------- typing into a password field

# Selenium, Playwright, Cypress, WebdriverIO: the value typed into a field whose locator or
# receiver names a password. The method's literal argument is the password (the last one:
# page.fill("#password", "…")).
_TYPED = lazy_compile(
    r"\.(?:send_keys|sendKeys|fill|type|press_sequentially|pressSequentially|setValue"
    r"|set_value|input_text|setText)[ \t]*\((?P<args>[^()\r\n]{0,256}?)"
    + _LIT
    + r"[ \t]*(?:,[ \t]*\{[^{}\r\n]{0,128}\}[ \t]*)?\)"
)
_FIELD_WORD = lazy_compile(
    r"(?i:password|passwd|passphrase|passwort|kennwort)|(?<![A-Za-z])(?i:pwd|pass|pw)(?![a-z])"
)


def _typed(text: str) -> str:
    return redact_spans(text, _typed_spans(text))


def _typed_spans(text: str) -> Iterator[tuple[int, int]]:
    lower = text.lower()
    if "pass" not in lower and "pw" not in lower:
        return  # no field is named a password ("pwd" holds "pw")
    for m in _TYPED.finditer(text):
        line = text.rfind("\n", max(0, m.start() - 200), m.start())
        locator = text[max(line + 1, m.start() - 200) : m.start()] + m.group("args")
        if _FIELD_WORD.search(locator) is None:
            continue
        value = m.group("secret")
        if len(value) < 4 or "{" in value or is_expression(value, quoted=True):
            continue  # Cypress' "{enter}", a placeholder
        if value.isalpha() and pronounceable(value):
            continue  # "secret", "TestPassword": a documentation stand-in made of words
        start, end = m.span("secret")
        yield start, end


# --------------------------------------------------------------------- libcurl's options

_CURL_OPTION = lazy_compile(
    r"(?:CURLOPT_|pycurl\.|\.)(?P<opt>PROXYUSERPWD|USERPWD|PROXYPASSWORD|PASSWORD|XOAUTH2_BEARER"
    r"|SSLKEYPASSWD|SSLCERTPASSWD|KEYPASSWD|PROXY_KEYPASSWD|TLSAUTH_PASSWORD"
    r"|PROXY_TLSAUTH_PASSWORD)[ \t]*,[ \t]*(?:L|u8)?" + _LIT
)


def _curl_options(text: str) -> str:
    return redact_spans(text, _curl_options_spans(text))


def _curl_options_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _CURL_OPTION.finditer(text):
        start, end = m.span("secret")
        if m.group("opt").endswith("USERPWD"):
            colon = text.find(":", start, end)
            if colon < 0:
                continue
            start = colon + 1  # "user:password": the user stays
        if end - start < 1 or is_expression(text[start:end], quoted=True):
            continue
        yield start, end


# ------------------------------------------------------------------- JSON Web Keys

# RFC 7518 section 6: the private members of RSA (d, p, q, dp, dq, qi) and EC (d) keys, and
# the symmetric key of an "oct" key (k): base64url, in JSON, a dict or YAML.
_JWK_MEMBER = lazy_compile(
    r"(?:(?P<q0>\\*[\"'])(?:d|p|q|dp|dq|qi|k)(?P=q0)|(?<![\w\-])(?:d|p|q|dp|dq|qi|k))"
    r"[ \t]*[:=][ \t]*(?P<q>\\*[\"']?)(?P<secret>[A-Za-z0-9_\-]{16,8000})(?P=q)(?![\w\-])"
)


def _jwk_value(value: str) -> bool:
    """Random base64url (both cases and a digit), not a function's or a variable's name."""
    return (
        any(c.isdigit() for c in value)
        and value.lower() != value
        and value.upper() != value
        and not made_of_words(value)
    )


def _jwk_members(text: str) -> str:
    if "kty" not in text:
        return text
    return _JWK_MEMBER.sub(
        lambda m: (
            m.group(0)[: m.start("secret") - m.start()]
            + REDACTED
            + m.group(0)[m.end("secret") - m.start() :]
            if _jwk_value(m.group("secret")) and not text.startswith(("(", "."), m.end())
            else m.group(0)
        ),
        text,
    )


# ------------------------------------------------------------------------- TOTP seeds

# An authenticator's seed (RFC 6238 over RFC 4226): RFC 4648 base32 of 10 or 20 bytes, after
# a one-time-password word on the same line; the seed has a digit (2-7) and a letter.
_OTP = lazy_compile(
    ci_word_start(("totp", "hotp", "otp", "2fa", "mfa", "authenticator"))
    + r"(?![a-z])[^\r\n]{0,40}?(?<![A-Za-z0-9])"
    r"(?P<secret>(?=[A-Z]*[2-7])(?=[2-7]*[A-Z])(?:[A-Z2-7]{32}|[A-Z2-7]{16}))(?![A-Za-z0-9=])"
)


_BASE32_RUN = lazy_compile(r"[A-Z2-7]{16}")


def _otp_seeds(text: str) -> str:
    if _BASE32_RUN.search(text) is None:
        return text  # no seed's characters: the words alone cost no regex over the text
    return _OTP.sub(lambda m: m.group(0)[: m.start("secret") - m.start()] + REDACTED, text)


# ------------------------------------------------------------ a value under its prompt

# A tool's output that names the credential on one line of prose, ending in ":", and prints
# it alone on the next (after a blank line at most): "Please use the following password to
# proceed to installation:", "Your API token:". The prompt holds no code punctuation (a
# signature, a call, a regex), and the value must read as a password or a key.
_PROMPT_WORDS = ("password", "passphrase", "passwort", "token", "secret", "api key")
_PROMPTED = lazy_compile(
    lead_class(_PROMPT_WORDS)
    + "(?i:"
    + after_lead(_PROMPT_WORDS)
    + r")[^\r\n:()\[\]{}=<>\"'`]{0,80}:[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*"
    r"(?P<secret>[A-Za-z0-9][A-Za-z0-9!#$%&*+,\-./;=?@^_|~]{7,127})[ \t]*(?=\r?\n|\Z)"
)


_LINE_COLON = lazy_compile(r":[ \t]*\r?\n")
_PROMPT_WORD = lazy_compile("|".join(_PROMPT_WORDS))
_DENSE_SPACING = 48  # more than one prompt word per 48 characters: generated text
_DENSE_MIN = 256


def _prompts(text: str) -> list[re.Match[str]]:
    """The prompts, found from each credential word (one regex pass) and the ":" that ends
    its line within reach: no regex runs over lines without such a word."""
    if _LINE_COLON.search(text) is None:
        return []  # no line ends in ":"
    lower = text.lower()
    starts = [w.start() for w in _PROMPT_WORD.finditer(lower)]
    if len(starts) > _DENSE_MIN and len(starts) * _DENSE_SPACING > len(lower):
        return []  # generated or hostile text: no tool prints prompts so densely
    found: list[re.Match[str]] = []
    done = 0
    for at in starts:
        if at < done:
            continue
        colon = _LINE_COLON.search(text, at, at + 96)
        if colon is None or text.find("\n", at, colon.start()) >= 0:
            continue
        m = _PROMPTED.match(text, at, colon.end() + 160)
        if m is not None:
            found.append(m)
            done = m.end()
    return found


def _prompted(text: str) -> str:
    return redact_spans(text, _prompted_spans(text))


def _prompted_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _prompts(text):
        if m.start() and text[m.start() - 1].isalpha():
            continue  # "ClientSecrets…:": the word inside a name, no prompt
        value = m.group("secret")
        if not (password_like(value) or credential_like(value)) or value.startswith(REDACTED):
            continue
        start, end = m.span("secret")
        yield start, end


@functools.cache
def tool_format_rules() -> tuple[SecretPattern, ...]:
    """The rules of this module, in the order they are applied."""
    return (
        SecretPattern(
            "password_field_typed",
            # no trigger led by "." (it would make every "." of code a candidate)
            frozenset(
                {
                    "send_keys",
                    "sendkeys",
                    "fill(",
                    "type(",
                    "sequentially",
                    "setvalue",
                    "set_value",
                    "input_text",
                    "settext",
                }
            ),
            _typed,
        ),
        SecretPattern(
            "curl_credential_option",
            frozenset({"curlopt_", "setopt"}),
            _curl_options,
        ),
        SecretPattern("jwk_private_member", frozenset({"kty"}), _jwk_members),
        SecretPattern(
            "prompted_value",
            frozenset({"password", "passphrase", "passwort", "token", "secret", "api key"}),
            _prompted,
        ),
        SecretPattern(
            "otp_seed",
            frozenset({"otp", "mfa", "authenticator"}),  # "2fa": every "2" would be a candidate
            _otp_seeds,
        ),
    )
