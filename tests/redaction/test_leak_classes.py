"""Regressions for the leak classes of issue 36, item 3: each rule follows its format's grammar.

The figures come from the outside corpora (tests/reliability/corpus/heldout.py); these cases
only pin each class and the text around it that must stay.
"""

from __future__ import annotations

import json
import random
import string

import pytest

from wayline.redaction import redact_text

_RNG = random.Random(36)
_B62 = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = _B62) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _hex(n: int) -> str:
    return _rand(n, "0123456789abcdef")


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        ("postgres://admin:p#ss?w@rd9@db.example.com:5432/app", "p#ss?w@rd9", "@db.example.com"),
        ("https://bob:Zx#9q@Wq?7@git.example.com/r.git", "Zx#9q@Wq?7", "https://bob:"),
        ("redis://:s3cr#t@cache:6379/0", "s3cr#t", "@cache:6379/0"),
        ("?next=https://al:Oo06XDT@github.com&page=2", "Oo06XDT", "&page=2"),
    ],
)
def test_url_password_runs_to_the_last_at_before_host(text: str, secret: str, kept: str) -> None:
    """A URL password with '#', '?' or '@' is replaced up to the last '@' a host follows."""
    out = redact_text(text)
    assert secret not in out and "<redacted>" in out and kept in out


@pytest.mark.parametrize(
    "text",
    [
        "password = CfTDKSBAzacQzLfH",
        "  db_password: CfTDKSBAzacQzLfH",
        "db_password=CfTDKSBAzacQzLfH",
        "SENDGRID_KEY=AbcdefGhijkLmnopQrstUvwx",
        "MAPBOX_KEY = 'pkAbcdefghijklmnopqrstuvwxyZ'",
        "STRIPE_KEY: abcdefghijKLMNOPqrstuv1x",
    ],
)
def test_letters_only_values_of_credential_names_are_secrets(text: str) -> None:
    """A value assigned to a credential name is a secret whatever its alphabet."""
    value = text.split()[-1].split("=")[-1].strip("'")
    assert value not in redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "password = ${DB_PASSWORD}",
        "password = <your password>",
        "password = get_password()",
        "token: Token",
        "api_key: SecretStr",
        "password: PasswordField",
        "HEROKU_KEY=$HEROKU_API_KEY",
    ],
)
def test_code_and_placeholders_after_credential_names_stay(text: str) -> None:
    """Expressions, type names and placeholders are not secrets (principle 4)."""
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("ALTER USER app IDENTIFIED BY 'CfTDKSBAzacQzLfH';", "CfTDKSBAzacQzLfH"),
        ("CREATE USER 'bob'@'%' IDENTIFIED BY 'lettersOnlyPw';", "lettersOnlyPw"),
        ("CREATE USER u IDENTIFIED WITH mysql_native_password BY 'abcdefgh';", "abcdefgh"),
        ("ALTER USER scott IDENTIFIED BY tigerTiger;", "tigerTiger"),
        ("SET PASSWORD FOR 'bob'@'%' = PASSWORD('abcdefgh');", "abcdefgh"),
        ("CREATE ROLE app WITH LOGIN PASSWORD 'lettersOnlyPw';", "lettersOnlyPw"),
        ("define('DB_PASSWORD','lettersonlypw');", "lettersonlypw"),
        ("define( 'AUTH_KEY', 'abcDefGhiJklMno' );", "abcDefGhiJklMno"),
    ],
)
def test_sql_and_php_passwords_are_redacted(text: str, secret: str) -> None:
    """SQL user statements and PHP define() of a credential constant lose their literal."""
    assert secret not in redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "users are identified by their email",
        "ALTER USER x IDENTIFIED BY :pw",
        "define('DB_NAME', 'wordpress');",
    ],
)
def test_sql_and_php_look_alikes_stay(text: str) -> None:
    """Prose, bind parameters and constants that name no credential are kept."""
    assert redact_text(text) == text


def test_webhook_urls_lose_their_credential_path() -> None:
    """Teams and Power Automate webhook URLs keep their host and lose the rest."""
    teams = (
        "https://contoso.webhook.office.com/webhookb2/"
        f"{_hex(8)}-1111-2222-3333-{_hex(12)}@{_hex(8)}-1111-2222-3333-{_hex(12)}"
        f"/IncomingWebhook/{_hex(32)}/{_hex(8)}-1111-2222-3333-{_hex(12)}"
    )
    flow = (
        f"https://prod-12.westus.logic.azure.com:443/workflows/{_hex(32)}/triggers/manual/"
        f"paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={_rand(43)}"
    )
    assert redact_text(teams) == "https://contoso.webhook.office.com/webhookb2/<redacted>"
    assert redact_text(flow) == "https://prod-12.westus.logic.azure.com:443/workflows/<redacted>"


@pytest.mark.parametrize(
    "token",
    [
        f"xkeysib-{_hex(64)}-{_rand(16)}",
        f"pul-{_hex(40)}",
        f"da2-{_rand(26, string.ascii_lowercase + string.digits)}",
        f"NRAK-{_rand(27, string.ascii_uppercase + string.digits)}",
        f"tfp_{_rand(44)}_{_rand(14)}",
        f"bkua_{_hex(40)}",
        f"slk_{_rand(40)}",
        f"rootly_{_hex(64)}",
        f"dapi{_hex(32).upper()}",
        f"{_rand(76)}AZDO{_rand(4)}",
    ],
)
def test_vendor_prefixes_are_redacted_anywhere(token: str) -> None:
    """Tokens with a vendor prefix are replaced whole, also alone in prose."""
    assert redact_text(f"the key {token} works") == "the key <redacted> works"


@pytest.mark.parametrize(
    "text",
    [
        "Das Passwort: Sonnenschein",
        "Kennwort ist Sonnenschein",
        "Das Kennwort lautet sonnenschein",
        "Das Passwort für den Server ist Geheim123!",
        "le mot de passe : soleilbleu",
        "la contraseña: solazul",
        "Senha: abcdefgh",
    ],
)
def test_passwords_in_german_french_spanish_prose(text: str) -> None:
    """A password after its word in German, French, Spanish or Portuguese is redacted."""
    out = redact_text(text)
    assert "<redacted>" in out
    words = ("Sonnenschein", "sonnenschein", "Geheim", "soleil", "solazul", "abcdefgh")
    assert not any(w in out for w in words)


@pytest.mark.parametrize(
    "text",
    ["Das Passwort ist falsch.", "le mot de passe est incorrect", 'label = "Passwort:"'],
)
def test_foreign_prose_about_passwords_stays(text: str) -> None:
    """A sentence about a password, or a label, is no password."""
    assert redact_text(text) == text


def test_long_and_split_tokens_are_redacted_whole() -> None:
    """A token over 256 characters, dotted or split by '=', leaves no fragment."""
    long = _rand(300, _B62 + "+/")
    dotted = ".".join(_rand(20) for _ in range(4))
    split = f"{_rand(30)}=={_rand(30)}="
    assert redact_text(f"here {long} end") == "here <redacted> end"
    assert redact_text(f"sig {dotted}") == "sig <redacted>"
    assert redact_text(f"x {split} y") == "x <redacted> y"
    assert redact_text("x=AbCdEf0123456789xYz=QwErTy0123456789=LmNoPq") == "x=<redacted>"


@pytest.mark.parametrize(
    "text",
    [
        "SpanKind.SERVER: PB2SPan.SpanKind.SPAN_KIND_SERVER,",
        "import os.path; a.b.c = 1.2.3; www.example.com",
        "version 2.31.0.dev20240101",
    ],
)
def test_dotted_names_and_versions_stay(text: str) -> None:
    """Attribute chains, hosts and versions are no split tokens."""
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "$1$OKgLCmVl$d02jECa4DXn/oXX0R.MoQ/",
        "$2y$12$atWJ1Nx6ep65tNx0YIJ4I.jzgI86znQbNRI3lF0qIt/XCYnEPxSc2",
        "$5$rounds=5000$GX7BopJZJxPc/KEK$le16UF8I2Anb.rOrn22AUPWvzUETDGefUmAV8AZkGcD",
    ],
)
def test_password_hashes_are_redacted(text: str) -> None:
    """A modular-crypt password hash is replaced whole; a shell's $1 stays."""
    assert redact_text(f"root:{text}:19000") == "root:<redacted>:19000"
    assert redact_text("echo $1 $2 costs $5$") == "echo $1 $2 costs $5$"


def test_adjacent_quoted_strings_are_one_value() -> None:
    """'a''b' is one shell word (and one SQL literal): the whole value is replaced."""
    text = f"export AWS_API_KEY='AKIA{_rand(16).upper()}''{_hex(40)}'"
    assert redact_text(text) == "export AWS_API_KEY='<redacted>'"
    assert redact_text("password='it''s mine' and x='a'") == "password='<redacted>' and x='a'"


def test_hex_private_key_after_0x_is_redacted() -> None:
    """A 32-byte 0x hex key (secp256k1) is replaced; short hex literals stay."""
    key = _hex(64)
    assert redact_text(f"forgot 0x{key}!") == "forgot 0x<redacted>!"
    assert redact_text("mask = 0xffffffff") == "mask = 0xffffffff"


def test_foreign_prose_password_in_json_arguments() -> None:
    """A quoted password in German prose is redacted inside JSON-encoded tool arguments too."""
    out = redact_text(json.dumps({"command": 'echo "Das Passwort ist \\"Sonnenschein\\""'}))
    assert "Sonnenschein" not in out and json.loads(out)["command"].endswith('\\"<redacted>\\""')


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"bugherd access token {_hex(22)}", "bugherd access token "),
        (f"export the API key {_rand(24)} now", "export the API key "),
        (f"currencyscoopACCESS {_hex(32)}", "currencyscoopACCESS "),
        (f"weatherbitSECRET {_hex(32)}", "weatherbitSECRET "),
        (f"fileio_ACCESS-{_rand(40)}", "fileio_ACCESS-"),
        (f"dd_secret_key-{_hex(40)}", "dd_secret_key-"),
    ],
)
def test_token_right_after_a_credential_word(text: str, kept: str) -> None:
    """A token-shaped word right after a credential word (no separator) is redacted."""
    out = redact_text(text)
    token = text[len(kept) :].split()[0]
    assert out.startswith(f"{kept}<redacted>") and token not in out


@pytest.mark.parametrize(
    "text",
    [
        "see token 2024-01-01T10:00:00Z",
        "KEY v1.2.3.4.5.6.7.8.9.10",
        "the secret ingredient is love",
        "primary key constraint_name_123",
        "api-key-header-name-v2-something",
        "token_type_hint and self.secret_key_2",
    ],
)
def test_words_after_a_credential_word_stay(text: str) -> None:
    """Dates, versions, words and identifiers after a credential word are kept."""
    assert redact_text(text) == text


def test_compound_credential_word_alone_names_a_credential() -> None:
    """``secretkey`` or ``accesstoken`` is a credential name on its own, not only glued on."""
    value = _hex(32)
    assert redact_text(f"apimetrics_secretkey={value}") == "apimetrics_secretkey=<redacted>"
    assert redact_text(f"accesstoken: {value}") == "accesstoken: <redacted>"
    assert redact_text("pass = 2") == "pass = 2"


def test_ini_lines_after_a_section_hold_literals() -> None:
    """After an ini ``[section]`` header, ``password = sunshine`` is a literal, not a variable."""
    assert redact_text("[db]\npassword = sunshinebright\nhost = x") == (
        "[db]\npassword = <redacted>\nhost = x"
    )
    assert redact_text("[client]\npassword = ${PW}") == "[client]\npassword = ${PW}"
    assert redact_text("password = sunshinebright") == "password = sunshinebright"  # code
