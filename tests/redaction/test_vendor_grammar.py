"""Credentials found by their format's grammar (issue 36, item 3): one test per class, with
seeded random bodies (the vendors' documented structure, never a real value), and the
benign neighbours each rule must keep."""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable

import pytest

from wayline.redaction import redact_text
from wayline.redaction.vendor_rules import is_atlassian_dc_pat, vendor_key_shaped

_RNG = random.Random(36)
B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
URL = B62 + "_-"
HEX = "0123456789abcdef"


def _rand(n: int, alphabet: str = B62) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _uuid() -> str:
    return str(uuid.UUID(int=_RNG.getrandbits(128), version=4))


def _dc_pat() -> str:
    raw = f"{_RNG.randrange(10**11, 10**12)}:".encode() + _RNG.randbytes(20)
    return base64.b64encode(raw).decode()


def _hidden(text: str, value: str) -> str:
    out = redact_text(text)
    assert value not in out, (text, out)
    assert "<redacted>" in out, (text, out)
    return out


def _azure64(signature: str) -> str:
    return _rand(76, B64) + signature + _rand(5, B64) + _RNG.choice("AQgw") + "=="


def _azure32(signature: str) -> str:
    return _rand(33, B64) + signature + _RNG.choice("ABCDEFGHIJKLMNOP") + _rand(5, B64) + "="


AZURE: dict[str, Callable[[], str]] = {
    "storage +ASt": lambda: _azure64("+ASt"),
    "batch +ABa": lambda: _azure64("+ABa"),
    "cosmos ACDb": lambda: _azure64("ACDb"),
    "apim APIM": lambda: _azure64("APIM"),
    "service bus +ASb": lambda: _azure32("+ASb"),
    "event hub +AEh": lambda: _azure32("+AEh"),
    "redis AzCa": lambda: _azure32("AzCa"),
    "iot AIoT": lambda: _azure32("AIoT"),
    "function AzFu": lambda: _rand(44, URL) + "AzFu" + _rand(5, URL) + "A==",
    "search AzSe": lambda: _rand(42) + "AzSe" + "A" + _rand(5),
    "registry +ACR": lambda: _rand(42, B64) + "+ACR" + _rand(6),
    "annotated JQQJ9": lambda: _rand(52) + "JQQJ99" + _rand(1) + "A" + _rand(16) + "x" + _rand(7),
}


@pytest.mark.parametrize("kind", sorted(AZURE))
def test_azure_identifiable_keys_by_their_signature(kind: str) -> None:
    """Every Azure identifiable key is replaced whole, bare, in JSON and in a connection string;
    the signature alone in prose ("APIM policies", "+ASt") stays."""
    key = AZURE[kind]()
    assert redact_text(key) == "<redacted>"
    _hidden(json.dumps({"value": key}), key)
    _hidden(f"Endpoint=https://x.example.net/;Key={key};", key)
    for prose in ("Configure APIM policies for +ASt and AzSe.", "AzFu AIoT ACDb"):
        assert redact_text(prose) == prose


def test_atlassian_data_center_tokens_are_verified_by_decoding() -> None:
    """A Jira/Confluence/Bitbucket DC token decodes to 12 digits, ":" and 20 bytes: it is
    replaced bare, in a URL's path and in JSON-encoded lines; 44 base64 characters that
    decode to anything else are no such token."""
    token = _dc_pat()
    assert is_atlassian_dc_pat(token)
    _hidden(f"https://jira.example.com/rest/token/{token}", token)
    lines = f"wiki: https://wiki.example.com/\nconfluence_a={token}\n"
    _hidden(json.dumps({"cmd": lines}), token)
    other = base64.b64encode(b"not twelve digits and a colon!!!!").decode()
    assert len(other) == 44 and not is_atlassian_dc_pat(other)


@pytest.mark.parametrize(
    "form",
    ["[DEBUG] Using Key={v}", "key = {v}", "Using acme Key={v}", '"key": "{v}"', "KEY: {v}"],
)
@pytest.mark.parametrize(
    "make",
    [
        lambda: _rand(64, HEX),
        lambda: "-".join(_rand(8, string.ascii_uppercase + string.digits) for _ in range(4)),
        lambda: _rand(40, string.ascii_lowercase + string.digits),
        lambda: _rand(10, URL) + "7" + _rand(10, URL) + "A1b",
    ],
)
def test_bare_key_label_with_a_vendor_shaped_value(form: str, make: Callable[[], str]) -> None:
    """After the word "key" alone, a value with a vendor key's shape is replaced."""
    value = make()
    _hidden(form.format(v=value), value)


def test_lower_case_random_keys_are_not_taken_for_words() -> None:
    """Random lower-case base36 keys after a bare "key" are mostly replaced: a run of letters
    with vowels is no word while it holds five consonants in a row (random text usually does)."""
    alphabet = string.ascii_lowercase + string.digits
    values = [_rand(40, alphabet) for _ in range(400)]
    hidden = sum(v not in redact_text(f'"key": "{v}"') for v in values)
    assert hidden >= 0.94 * len(values), hidden


@pytest.mark.parametrize(
    "text",
    [
        "cache key: 0123456789abcdef0123456789abcdef",
        "primary key = 3f2a9c8b7d6e5f4a3b2c1d0e9f8a7b6c",
        '"key": "ubuntu-2204-amd64"',
        "key: build-linux-python-cache",
        "key = some_config_value_name_here_v2",
        "sort key: user-name-and-created-at",
    ],
)
def test_bare_key_label_keeps_names_and_non_secret_keys(text: str) -> None:
    """A cache, sort or primary key's digest and a key that reads as words stay."""
    assert redact_text(text) == text


def test_vendor_key_shape() -> None:
    """Hex with a digit and a letter, mixed groups, or a long run with digits and no words."""
    assert vendor_key_shaped("0123456789abcdef0123456789abcdef")
    assert vendor_key_shaped("2FTJTA1C-BXO0DV4J-HGTP9E62-QHQSILY1")
    assert not vendor_key_shaped("ubuntu-2204-amd64")
    assert not vendor_key_shaped("thisisaverylongidentifierwithoutdigits12")


@pytest.mark.parametrize("separator", ["-", "->", "=>"])
def test_credential_word_dash_literal(separator: str) -> None:
    """ "token - '…'", "key -> '…'", "secret => '…'" hide a literal with a digit; words stay."""
    for word in ("token", "key", "secret", "password"):
        value = _rand(24)
        _hidden(f"acme {word} {separator} '{value}'", value)
    prose = "token - 'the value'"
    assert redact_text(prose) == prose


@pytest.mark.parametrize(
    ("vendor", "make"),
    [
        ("github", lambda: _rand(40, HEX)),
        ("gitter", lambda: _rand(40, HEX)),
        ("sourcegraph", lambda: _rand(40, HEX)),
        ("gitlab", lambda: _rand(17, URL) + "a1B"),
        ("cloudflare", lambda: _rand(37, HEX)),
        ("heroku", _uuid),
        ("scaleway", _uuid),
        ("vultr", lambda: _rand(34, string.ascii_uppercase) + "9Z"),
        ("azure", lambda: _rand(32, HEX)),
        ("alienvault", lambda: _rand(64, HEX)),
    ],
)
def test_vcs_and_cloud_vendor_before_its_unprefixed_format(
    vendor: str, make: Callable[[], str]
) -> None:
    """A vendor's name alone, then a value of that vendor's format, is replaced; in a pair of
    an id and a secret, the secret; another shape after the name stays."""
    value = make()
    _hidden(f"{vendor}: {value}", value)
    _hidden(f"{vendor} {value}", value)
    out = _hidden(f"{vendor} = 'Ov23liAbCdEfGhIjKlMn', '{value}'", value)
    assert ("Ov23liAbCdEfGhIjKlMn" in out) is (vendor != "gitlab")  # a GitLab token's shape
    assert redact_text(f"{vendor}: actions/checkout-v4") == f"{vendor}: actions/checkout-v4"


def test_vendor_names_in_urls_and_commit_hashes_stay() -> None:
    """A commit in a GitHub URL and GITHUB_SHA-like names are no vendor value."""
    sha = _rand(40, HEX)
    for text in (f"https://github.com/o/r/commit/{sha}", f"github.sha={sha}", f"GITHUB_SHA={sha}"):
        assert redact_text(text) == text


@pytest.mark.parametrize(
    "make",
    [
        lambda: "v1.0-" + _rand(24, HEX) + "-" + _rand(146, HEX),
        lambda: "SCW" + _rand(17, string.ascii_uppercase + string.digits),
        lambda: "AKID" + _rand(32),
        lambda: _RNG.choice(["api-", "sdk-", "mob-"]) + _uuid(),
        lambda: "ATBB" + _rand(28) + _rand(8, "0123456789ABCDEF"),
        lambda: "BBDC-" + _rand(44, B64),
        lambda: "ATCTT3xFfGN0" + _rand(120, URL),
        lambda: "1//0" + _rand(60, URL),
        lambda: "AKCp" + _rand(69),
        lambda: "cmVmdGtuOjAxOj" + _rand(50, B64),
        lambda: "nfp_" + _rand(36),
        lambda: "AQVN" + _rand(36, URL),
        lambda: "glpat-" + _rand(27, URL) + ".01." + _rand(9, string.ascii_lowercase + HEX),
    ],
)
def test_prefixed_shapes_are_replaced_whole(make: Callable[[], str]) -> None:
    """Documented prefixes with their length and alphabet: nothing of the token survives."""
    token = make()
    out = _hidden(f"export X={token}", token)
    assert token[-12:] not in out


def test_vault_legacy_tokens_where_vault_is_named() -> None:
    """ "s." and 24 random characters is a Vault token in a text that names Vault (code such
    as "s.replace(…)" stays); an AppRole secret_id is a credential."""
    body = _rand(21) + "a1B"
    _hidden(f"vault login s.{body}", body)
    _hidden(f'{{"role_id": "{_uuid()}", "secret_id": "{(sid := _uuid())}"}}', sid)
    code = "vault: s.endswith(suffix) or s.replace(old, new)"
    assert redact_text(code) == code


def test_index_after_a_name_and_repeats() -> None:
    """token2 := "…" is a token; a value found once is masked at every repeat, whole, even where
    another rule took part of it first."""
    value = _rand(30)
    _hidden(f'sheet_token2 := "{value}"', value)
    pair = f"{_rand(30)}:{_rand(15)}"
    out = redact_text(f"acme token = '{pair}' | '{pair}'")
    assert pair.split(":")[1] not in out and pair.split(":")[0] not in out
    assert redact_text('{"auth0": "types-auth0-python"}') == '{"auth0": "types-auth0-python"}'


def test_a_service_name_before_a_hex_or_base36_key() -> None:
    """ "<service> <hex key>" and "{svc <key>}" hide the key; digests, commits, ids, versions and
    URL query values after their own words stay."""
    key = _rand(64, HEX)
    _hidden(f"<id>{{acme {key}}}</id>", key)
    _hidden(f"acmeapi {key} acmeapi 622ac3b6f4fce35975d66841", key)
    base36 = "e2rgfqdg7xpzbq0nmj8l68gmuz"
    _hidden(f"acme '{base36}'", base36)
    for text in (
        f"commit {key[:40]}",
        f"sha256: {key}",
        f"checksum = {key}",
        f"request_id: {key[:32]}",
        f"version {key[:32]}",
        f"https://example.com/f.txt?rcl={key[:40]}",
        "fixturedef = name2directparamfixturedef[argname]",
    ):
        assert redact_text(text) == text


def test_padded_base64_key_after_a_service_and_query_codes() -> None:
    """32 bytes in padded base64 after a service's name, an Azure Functions key in "?code=",
    and a Beamer key are hidden; a short OAuth placeholder code and snake_case names stay."""
    key = _rand(20, B64) + "7" + _rand(20, B64) + "aZ="
    _hidden(f"acmecanvas: {key} / user@example.com", key[:-1])
    code = _rand(30, URL) + "9" + _rand(23, URL) + "=="
    _hidden(f"https://fn.example.net/api/run?code={code}&x=1", code[:-2])
    beamer = "b_" + _rand(20, string.ascii_letters) + "Q" + _rand(23, string.ascii_letters)
    _hidden(f"beamer = {beamer}", beamer)
    for text in ("https://example.com/cb?code=AUTH_CODE&state=xyz", "x = b_" + "word_" * 9):
        assert redact_text(text) == text


def test_duo_secret_key_and_a_cut_pair_at_a_line_start() -> None:
    """Duo's "skey" is a secret key ("ikey" is its public id); a "name', 'value" fragment whose
    opening quote was cut off counts at a line's start as at the text's."""
    skey = _rand(40)
    _hidden(f"DUO_IKEY=DI{_rand(18, string.ascii_uppercase)}\nDUO_SKEY={skey}", skey)
    _hidden(f'{{"duo": {{"skey": "{skey}"}}}}', skey)
    token = _rand(40, HEX)
    _hidden(f"$ cat build.gradle\nsonar.login', '{token}", token)
    assert redact_text("skey = lambda item: item[1]") == "skey = lambda item: item[1]"


def test_an_unclosed_single_quote_ends_with_its_json_string() -> None:
    """Inside JSON-encoded tool arguments, a cut "name', 'value" ends at the JSON string's end:
    the value is hidden and the arguments stay JSON."""
    token = _rand(40, HEX)
    out = _hidden(json.dumps({"c": f"$ cat f\nsonar.login', '{token}"}), token)
    assert json.loads(out)["c"].endswith("<redacted>")
