"""Regressions for the second round of issue 36's leak classes, and the benign text they keep.

Each class is a format's grammar (a credential word before a value, a label of two words,
a password's short name, SQL role options, PowerShell's SecureString, vendor prefixes and
suffixes); the figures come from tests/reliability/corpus/heldout.py. Bodies are random, so
no example text of a corpus is pinned here.
"""

from __future__ import annotations

import random
import string
import uuid

import pytest

from wayline.redaction import redact_text

_RNG = random.Random(3602)
_B62 = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = _B62) -> str:
    body = "".join(_RNG.choice(alphabet) for _ in range(n - 1))
    return body + _RNG.choice("0123456789")  # a digit, as keys have


def _hex(n: int) -> str:
    return _rand(n, "0123456789abcdef")


_UUID = str(uuid.UUID(int=_RNG.getrandbits(128), version=4))
_DIGITS = "".join(_RNG.choice(string.digits) for _ in range(24))


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"acmePRIVATE {_hex(32)}", None),
        (f"acmeSECRETkey-{_hex(40)}", None),
        (f"acmetoken-{_UUID}", _UUID),
        (f"acmeToken {_rand(32)}", None),
        (f"acme ACCESS TOKEN {_rand(24)}", None),
        (f"acme SECRET {_DIGITS}", _DIGITS),
        (f"acmePRIVATE:{_hex(40)}", None),
        (f"acmeKEY={_DIGITS}", _DIGITS),
    ],
)
def test_token_after_credential_words(text: str, secret: str | None) -> None:
    """A token (hex, a uuid, 20+ digits) after one or two credential words, spaced or glued
    to a vendor's name, is replaced; the words stay."""
    value = secret or text.split(" ")[-1].split(":")[-1].split("-", 1)[-1]
    out = redact_text(text)
    assert value not in out, out
    assert "<redacted>" in out


@pytest.mark.parametrize(
    "text",
    [
        "RegEnumKey = win32api.RegEnumKey",
        "public key AAAAB3NzaC1yc2EAAAADAQABAAAB",
        "the token abc_def_ghi is a name",
        "token = 1234",
    ],
)
def test_credential_words_before_code_stay(text: str) -> None:
    """Code after a credential word (an attribute chain, a snake_case name), a public key and
    a short number are kept."""
    assert redact_text(text) == text


@pytest.mark.parametrize("label", ["Secret Key", "access key", "API token", "Client Secret"])
def test_two_word_labels_take_their_value(label: str) -> None:
    """'<qualifier> key: value' (a label of two words) takes a value of 8+ characters."""
    value = _rand(14)
    assert redact_text(f"{label}: {value}") == f"{label}: <redacted>"
    assert redact_text(f"{label}: the key your account was given") == (
        f"{label}: the key your account was given"
    )


@pytest.mark.parametrize("pair", ["ID:admin PW:{v}", "user=admin,pwd={v}", "login:admin/pass:{v}"])
def test_short_password_names_in_pairs(pair: str) -> None:
    """PW, PWD and PASS glued to a separator hold a password; a path after PWD stays."""
    value = "dq" + _rand(9) + "!"
    out = redact_text(pair.format(v=value))
    assert value not in out and "admin" in out
    assert redact_text("PWD=/home/u1/src") == "PWD=/home/u1/src"
    assert redact_text("you pass :data:`x.CLIENT1`") == "you pass :data:`x.CLIENT1`"


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE USER app WITH ENCRYPTED PASSWORD '{v}' CREATEDB;",
        "ALTER ROLE app LOGIN PASSWORD {v};",
        "ALTER USER 'a'@'%' IDENTIFIED WITH 'mysql_native_password' AS '{v}' REQUIRE NONE;",
        'ConvertTo-SecureString -String "{v}" -AsPlainText -Force',
    ],
)
def test_sql_role_options_and_secure_strings(statement: str) -> None:
    """PostgreSQL's role PASSWORD option, MySQL's IDENTIFIED … AS and PowerShell's
    ConvertTo-SecureString argument are secrets."""
    value = _rand(12)
    out = redact_text(statement.format(v=value))
    assert value not in out and "<redacted>" in out


def test_sql_and_powershell_references_stay() -> None:
    """PASSWORD NULL, a variable and a word in prose after 'identified by' are kept."""
    for text in (
        "ALTER ROLE app PASSWORD NULL;",
        "ConvertTo-SecureString $plain -AsPlainText -Force",
        "a dynamic library identified by 'name'.",
    ):
        assert redact_text(text) == text


@pytest.mark.parametrize(
    "token",
    [
        "EZAK" + _rand(54),
        "NF-" + _rand(32),
        "pub-c-" + str(uuid.UUID(int=_RNG.getrandbits(128))),
        "EAAA" + _rand(60),
        "VF.DM." + _rand(24) + "." + _rand(16),
        "1000." + _hex(32) + "." + _hex(32),
        "CLOJARS_" + _hex(60),
        "SWMTKN-1-" + _rand(50, "abcdefghijklmnopqrstuvwxyz0123456789") + "-" + _hex(25),
        "HRKU-" + str(uuid.UUID(int=_RNG.getrandbits(128))),
        "PMAT-" + _rand(26),
        "cosmo_" + _hex(32),
        "tskey-api-" + _rand(12) + "-" + _rand(30),
        _rand(6) + "_" + _rand(29) + "_mmk",
        _hex(36) + "NRAL",
        "bkua_" + _rand(40),
    ],
)
def test_vendor_prefixes_and_suffixes(token: str) -> None:
    """Vendor formats known by a literal prefix or suffix are replaced whole, in prose too."""
    assert redact_text(f"use {token} here") == "use <redacted> here"


def test_token_after_a_terminal_colour_code() -> None:
    """A key printed in colour (an ANSI code's 'm' right before it) is still a key."""
    key = "sk-" + _hex(32)
    assert redact_text(f"\x1b[93m{key}\x1b[0m") == "\x1b[93m<redacted>\x1b[0m"


@pytest.mark.parametrize(
    "text",
    [
        "private_key: PKCS7PrivateKeyTypes,",
        "private_key: Ed25519PrivateKey | Ed448PrivateKey",
        "def update(self, token: OAuthToken) -> None:",
        "auth: httpx2.Auth | None = None,",
        "key = rust_openssl.hpke.MLKEM768X25519PrivateKey",
        "if self.settings.auth:  # pragma: no cover",
        "token = -1",
        "client = f(api_key=credential, base_url=url)",
        "password:%s",
        ":param auth: Auth handler or (user, pass) tuple.",
        "credentials: ChannelCredentials object for server authentication",
        "Colon-separated username:password string for 'authorization: basic ...'",
        'token = auth_header[7:]  # Remove "Bearer " prefix',
        "jsonnet_token = r'[^\\W\\d]\\w*'",
        '("authorization", "x-amz-content-sha256", "x-amz-date")',
        "'ATOMIC', 'AUTHORIZATION', 'AVG', 'BACKWARD',",
        '["refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"]',
        '"password": "string",',
        'SUBSCRIPTION_META_KEY = "io.example/subscriptionId"',
        "the --username and --password options",
        '_S = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_E = b"-----END OPENSSH PRIVATE KEY-----"',
    ],
)
def test_code_and_documentation_stay(text: str) -> None:
    """Type names, module paths, comments, printf placeholders, header and keyword lists, a
    schema's type names and PEM markers in documentation are not secrets."""
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "url",
    ["https://username:password@www.example.com/", "http://admin:changeme@127.0.0.1:8080/a"],
)
def test_a_url_password_made_of_words_is_redacted(url: str) -> None:
    """Words like "password" or "changeme" in a URL's userinfo are what default credentials
    are made of: redacted like any other password (only x's, stars or a redaction stay)."""
    assert "<redacted>" in redact_text(url)
    assert redact_text("https://user:xxxx@example.com/") == "https://user:xxxx@example.com/"


def test_a_yaml_password_shaped_like_a_name_is_still_a_password() -> None:
    """A PascalCase value standing alone on its line is a literal, not a type."""
    assert redact_text("password: Summer2024Password") == "password: <redacted>"
