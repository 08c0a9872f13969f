"""Issue 29's principles, each pinned by the examples of its Why list and a few more.

Identifiers are structure; keys are names; a value is replaced to its natural end;
expressions and placeholders are kept; no bound leaves a fragment of a secret; structure a
user or model wrote is never cut below hostile depth.
"""

from __future__ import annotations

import base64
import json
import random
import string
from typing import Any

import pytest

from wayline.redaction import REDACTED, redact_text, sanitize
from wayline.redaction._walk import DEFAULT_MAX_DEPTH

_RNG = random.Random(29)


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


# -- a detected value is replaced to its natural end -------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password: correct horse battery staple", "password: <redacted>"),
        ("Authorization: Splunk 1f2e3d4c-aaaa-bbbb-cccc-0123456789ab", "Authorization: Splunk"),
        ("Maven: <password>S3cret!pw</password>", "<password><redacted></password>"),
        ("define('DB_PASSWORD', 'S3cr3t-pw!x');", "define('DB_PASSWORD', '<redacted>');"),
        ('requests.get(url, auth=("admin", "Sup3rS3cret"))', 'auth=("admin", "<redacted>")'),
        ("Driver={ODBC};Server=db;UID=sa;PWD=Hunter2xyz;", "PWD=<redacted>;"),
        ("db.example.com:5432:app:bob:Hunter2Secret", "db.example.com:5432:app:bob:<redacted>"),
        ("machine api.example.com login bob password Hunter2Secret", "password <redacted>"),
        ('{"password": "p4ss word", "user": "bob"}', '{"password": "<redacted>", "user": "bob"}'),
        ("my password is hunter2, keep it safe", "my password is <redacted>, keep it safe"),
        ("openssl enc -aes256 -k s3cretPass -in a.txt", "-k <redacted> -in a.txt"),
        ("curl --user kevin:'pRf7vG2h1L8nQkW9' -X PATCH", "--user kevin:'<redacted>' -X PATCH"),
        ("curl -u sk_test_4eC39HqLyjWDarjtT1zdp7dc: https://api.stripe.com", "-u <redacted>:"),
    ],
)
def test_values_are_replaced_to_their_natural_end(text: str, expected: str) -> None:
    """The Why list's leaks: prose passphrases, scheme headers, XML, PHP, tuples, ODBC,
    .pgpass and .netrc lose the whole secret and keep the text around it."""
    out = redact_text(text)
    assert expected in out, out
    assert REDACTED in out


def test_kubeconfig_private_key_data_is_redacted_and_certificates_kept() -> None:
    """A base64 PEM private key (kubeconfig client-key-data, over 256 chars) is replaced;
    the certificate beside it is public and stays."""
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + _rand(900) + "\n-----END RSA PRIVATE KEY-----\n"
    key = base64.b64encode(pem.encode()).decode()
    cert = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + _rand(300).encode()).decode()
    text = f"users:\n- user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\n"
    out = redact_text(text)
    assert key[20:80] not in out and cert in out


@pytest.mark.parametrize(
    "text",
    [
        f"HMAC_KEY={_rand(64, '0123456789abcdef')}",
        f"AES_KEY={_rand(64, '0123456789abcdef')}",
        f"sbp_{_rand(40, '0123456789abcdef')}",
        f"sk_{_rand(48, '0123456789abcdef')}",
        f"export HEROKU_API_KEY={_rand(8, 'abcdef0123456789')}-aaaa-bbbb-cccc-{_rand(12, '0123')}",
    ],
)
def test_lowercase_hex_keys_are_redacted(text: str) -> None:
    """Vendor keys in lower-case hex (Supabase sbp_, sk_ keys, HMAC/AES keys) never survive."""
    secret = text.split("=", 1)[-1]
    assert secret[-20:] not in redact_text(text)


# -- expressions and placeholders are kept, ids are structure --------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "def me(token: Token = Depends(get_token)) -> User:",
        "client.login(password=password)",
        'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com',
        "permissions:\n  id-token: write\n  contents: read",
        "jobs:\n  call:\n    secrets: inherit",
        "SESSION_COOKIE_AGE = 1209600",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "api_key = API_KEY_SENTINEL",
        "auth: AuthTypes | None = None,",
        "token = state.push('link_close', 'a', -1)",
        '__slots__ = ("next_token", "position", "rules")',
        "    credentials: An optional CallCredentials for the RPC. Only valid for",
        "cache_key = 'user:1234567890123456'",
        "Use the --password flag to set it",
        "the password is required",
        "cookie_consent: accepted",
        "def set_cookie(self, cookie: Cookie, *args: Any) -> None:",
        '_AUTHORIZATION = "authorization"',
    ],
)
def test_code_config_and_placeholders_are_kept(text: str) -> None:
    """Code that names a credential, CI config words and placeholders keep every character."""
    assert redact_text(text) == text


def _tool_call_payload(ident: str) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "assistant", "tool_calls": [{"id": ident, "function": {"name": "f"}}]},
            {"role": "tool", "tool_call_id": ident, "content": f"done {ident}"},
            {"type": "tool_result", "tool_use_id": ident, "sessionId": ident},
        ]
    }


@pytest.mark.parametrize(
    "ident",
    [
        "call_" + _rand(24),
        "toolu_01" + _rand(22),
        "srvtoolu_01" + _rand(22),
        "fc_" + _rand(48, "0123456789abcdef"),
        "chatcmpl-" + _rand(29),
        "resp_" + _rand(48, "0123456789abcdef"),
    ],
)
def test_provider_ids_survive_in_id_fields_and_text(ident: str) -> None:
    """OpenAI and Anthropic tool-call ids come through sanitizing whole, fields and text."""
    assert json.dumps(sanitize(_tool_call_payload(ident))).count(ident) == 5


def test_an_id_field_keeps_even_a_random_looking_value() -> None:
    """Fields that hold ids (id, tool_call_id, session_id) are never redacted; a credential
    field beside them still is."""
    value = _rand(40)
    out = sanitize({"id": value, "session_id": value, "api_key": value, "run_id": value})
    assert out == {"id": value, "session_id": value, "api_key": REDACTED, "run_id": value}


# -- keys are names; structure is not cut -------------------------------------------------------


def _nested_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": "leaf"}
    for level in range(depth):
        schema = {
            "type": "object",
            "properties": {f"level{level}": schema, "password": {"type": "string"}},
            "required": ["password"],
        }
    return schema


def test_a_32_level_schema_with_password_properties_survives_whole() -> None:
    """A tool schema nested 32 levels, with a property named password at each, is unchanged:
    no depth marker, no "<redacted>" for a property's schema."""
    tool = {"type": "function", "function": {"name": "t", "parameters": _nested_schema(32)}}
    assert sanitize({"tools": [tool]}) == {"tools": [tool]}


def test_hostile_depth_ends_in_a_marker_far_beyond_real_use() -> None:
    """10 000 levels of nesting come out as valid JSON with a marker past the documented bound,
    without a RecursionError."""
    deep: list[Any] = []
    cursor = deep
    for _ in range(10_000):
        cursor.append([])
        cursor = cursor[0]
    out = sanitize({"args": deep})
    text = json.dumps(out)
    assert json.loads(text) == out and "<list depth limit>" in text
    assert text.count("[") > DEFAULT_MAX_DEPTH - 2


def test_a_credential_key_over_a_structure_hides_scalars_and_keeps_names() -> None:
    """{"password": {...}} that is no schema keeps its keys and hides every value in it."""
    out = sanitize({"password": {"value": "hunter2x", "n": 3, "list": ["a1b2c3d4"]}})
    assert out == {"password": {"value": REDACTED, "n": REDACTED, "list": [REDACTED]}}


# -- no bound leaves a fragment of a secret -----------------------------------------------------


@pytest.mark.parametrize("share", [0.2, 0.5, 0.8])
def test_a_secret_straddling_the_string_bound_leaves_no_fragment(share: float) -> None:
    """Text shrunk by earlier redaction moves the 8 000-char cut onto a database password:
    no part of it (40% or more) reaches the output."""
    password = _rand(24)
    url = f"postgresql://app:{password}@db.internal:5432/app"
    shrinking = "password=" + _rand(40) + "\n"
    lead = 8_000 + 16_384 - url.index(password) - int(len(password) * share)
    text = (shrinking * (lead // len(shrinking) + 1))[:lead] + "\n" + url + "\nrest"
    out = json.dumps(sanitize({"output": text}, max_chars=200_000))
    window = int(len(password) * 0.4)
    assert not any(password[i : i + window] in out for i in range(len(password) - window + 1))


def test_size_bounds_cut_text_only_and_keep_valid_json() -> None:
    """A payload over the size limit keeps all of its keys and items; only its strings shrink."""
    payload = {"messages": [{"role": "user", "content": "x" * 5_000} for _ in range(40)]}
    out = sanitize(payload, max_chars=20_000)
    assert len(out["messages"]) == 40 and all(m["role"] == "user" for m in out["messages"])
    assert len(json.dumps(out)) <= 20_000
