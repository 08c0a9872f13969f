"""Issue 21's rules: command-line credentials, glued names, bare tokens, and what is kept."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from wayline.redaction.entropy import looks_random
from wayline.redaction.redact import is_sensitive_key, redact_text
from wayline.redaction.sanitize import sanitize
from wayline.testing.secrets import SECRET_SAMPLES, WHY_SAMPLES, families


def _benign() -> ModuleType:
    """tests/reliability/corpus/benign.py, loaded by path (it lives beside the e2e suite)."""
    path = Path(__file__).resolve().parents[1] / "reliability" / "corpus" / "benign.py"
    spec = importlib.util.spec_from_file_location("wayline_benign_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BENIGN = _benign()


def test_secret_corpus_has_150_shapes_in_12_families() -> None:
    """The secret corpus holds at least 150 distinct shapes in at least 12 families."""
    assert len({s.name for s in SECRET_SAMPLES}) >= 150
    assert len([f for f, members in families().items() if f and members]) >= 12


def test_the_three_shapes_of_the_issue_are_in_the_corpus() -> None:
    """A registry login's -p, an inline PGPASSWORD=, a bare secret key on its own line."""
    by_name = {s.name: s for s in WHY_SAMPLES}
    assert by_name["why_registry_login_p"].secret.startswith("docker login ")
    assert " -p " in by_name["why_registry_login_p"].secret
    assert by_name["why_inline_pgpassword"].secret.startswith("PGPASSWORD=")
    bare = by_name["why_bare_aws_secret"]
    assert bare.secret == bare.needle and len(bare.needle) == 40


def test_benign_corpus_has_500_strings_and_strict_ones_survive() -> None:
    """At least 500 benign strings; no identifier, digest, path or URL is altered."""
    items = BENIGN.benign_strings()
    assert len(items) >= 500
    altered = [t for c, t in items if c in BENIGN.STRICT and redact_text(t) != t]
    assert altered == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "docker login -u ci -p Pw0rdValue123 registry.io",
            "docker login -u ci -p <redacted> registry.io",
        ),
        (
            "helm registry login r.io -u ci -p Pw0rdValue123",
            "helm registry login r.io -u ci -p <redacted>",
        ),
        ("mysql -u root -pPw0rdValue123 app", "mysql -u root -p<redacted> app"),
        ("sshpass -p 'Pw0rdValue123' ssh h", "sshpass -p '<redacted>' ssh h"),
        ("redis-cli -h c -a Pw0rdValue123 ping", "redis-cli -h c -a <redacted> ping"),
        ("mongosh -u admin -p Pw0rdValue123", "mongosh -u admin -p <redacted>"),
        ("plink -ssh a@h -pw Pw0rdValue123 ls", "plink -ssh a@h -pw <redacted> ls"),
        ("sqlcmd -S db -U sa -P Pw0rdValue123", "sqlcmd -S db -U sa -P <redacted>"),
        (
            "curl --proxy-user ops:Pw0rdValue123 https://a.io",
            "curl --proxy-user ops:<redacted> https://a.io",
        ),
        (
            "wget --http-password Pw0rdValue123 https://a.io",
            "wget --http-password <redacted> https://a.io",
        ),
        ("tool --pass Pw0rdValue123 --v", "tool --pass <redacted> --v"),
        ("kubectl --token=Pw0rdValue123 get pods", "kubectl --token=<redacted> get pods"),
        (
            "smbclient //f/s -U corp/al%Pw0rdValue123 -c ls",
            "smbclient //f/s -U corp/al%<redacted> -c ls",
        ),
    ],
)
def test_command_line_credentials(text: str, expected: str) -> None:
    """Passwords given to common tools on the command line are replaced, the command kept."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "docker run -p 8080:80 nginx",
        "mysql -u root -p app_production",
        "docker login -u ci --password-stdin",
        "mytool --password $DB_PASSWORD --host db",
        "mytool --password-file /run/secrets/pw",
        "ssh -o PasswordAuthentication=no host",
        "openssl pkcs12 -in c.p12 -passin env:P12_PASSWORD",
    ],
)
def test_command_lines_without_a_credential_are_kept(text: str) -> None:
    """Port maps, prompts, placeholders and file paths after credential flags stay intact."""
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "name", ["PGPASSWORD", "MYSQL_PWD", "DBPASS", "APIKEY", "SSHPASS", "smtp_pass", "adminPass"]
)
def test_glued_credential_names_are_sensitive(name: str) -> None:
    """Names with a credential word glued on, or ending in one, hold credentials."""
    assert is_sensitive_key(name)
    assert redact_text(f"{name}=Pw0rdValue123 ./run") == f"{name}=<redacted> ./run"


@pytest.mark.parametrize(
    "name",
    ["password_field", "POSTGRES_PASSWORD_FILE", "PasswordAuthentication", "secretName", "bypass"],
)
def test_names_that_describe_a_credential_are_not_sensitive(name: str) -> None:
    """A field, file, switch or object name about a credential, or a look-alike, holds none."""
    assert not is_sensitive_key(name)


@pytest.mark.parametrize(
    "text",
    [
        "password_field = form.get(...)",
        "password = request.form['password']",
        "client = OpenAI(api_key=api_key)",
        "token = await getAccessToken(clientId)",
        "password: ${DB_PASSWORD}",
        'password: "${DB_PASSWORD}"',
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "OPENAI_API_KEY=<redacted>",
        "def f(password: str, token: Optional[str] = None):",
        "secret_key = settings.SECRET_KEY",
    ],
)
def test_expressions_are_not_secrets(text: str) -> None:
    """Calls, attribute access, variables, types and placeholders after a credential name stay."""
    assert redact_text(text) == text


def test_a_quoted_literal_after_a_credential_name_is_redacted() -> None:
    """Quoting makes a value a literal, however much it looks like code."""
    assert redact_text('password = "form.get(x)"') == 'password = "<redacted>"'


def test_bare_cloud_key_on_its_own_line_is_redacted_also_json_escaped() -> None:
    """A bare 40-char secret key is replaced raw, in JSON and JSON-in-JSON, escapes intact."""
    key = next(s for s in WHY_SAMPLES if s.name == "why_bare_aws_secret").needle
    text = f"$ aws configure get aws_secret_access_key\n{key}\n"
    assert redact_text(text) == "$ aws configure get aws_secret_access_key\n<redacted>\n"
    for encoded in (json.dumps(text), json.dumps(json.dumps(text))):
        out = redact_text(encoded)
        assert key not in out and json.loads(out) is not None


def test_entropy_separates_random_keys_from_identifiers() -> None:
    """Random base64 keys look random; camelCase identifiers with digits do not."""
    keys = [s.needle for s in SECRET_SAMPLES if s.family == "bare_token"]
    assert all(looks_random(k) for k in keys)
    for ident in ("getUTF8StringFromBase64Input2", "AWS4HMACSHA256SignerFactory", "Float32Array2D"):
        assert not looks_random(ident)


def test_digests_uuids_and_image_data_are_kept() -> None:
    """Hex digests, SRI/go.sum digests, UUIDs and wrapped or data-URI base64 images survive."""
    raw = b"".join(hashlib.sha256(bytes([i])).digest() for i in range(40))
    wrapped = base64.encodebytes(b"\x89PNG\r\n\x1a\n" + raw).decode()
    texts = [
        "sha512-" + base64.b64encode(hashlib.sha512(b"x").digest()).decode(),
        "h1:" + base64.b64encode(hashlib.sha256(b"x").digest()).decode(),
        hashlib.sha256(b"x").hexdigest(),
        "123e4567-e89b-12d3-a456-426614174000",
        "data:image/png;base64," + base64.b64encode(raw).decode(),
        wrapped,
        json.dumps(wrapped),
    ]
    for text in texts:
        assert redact_text(text) == text
        assert sanitize({"t": text}) == {"t": text}


def test_random_token_in_a_url_query_is_redacted_but_path_ids_are_kept() -> None:
    """Document ids in a URL path stay; a random value in the query is a credential."""
    doc = "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit"
    assert redact_text(doc) == doc
    key = next(s for s in SECRET_SAMPLES if s.name == "random_token_48").needle
    assert redact_text(f"https://a.io/x?q={key}&p=2") == "https://a.io/x?q=<redacted>&p=2"


def test_tool_rules_stay_within_one_command_line() -> None:
    """A mysql -p rule does not reach into the next line's plink -pw or openssl -passin."""
    text = (
        "mysql -u root -pAbc123Secret app\n"
        "plink -ssh a@h -pw Def456Secret ls\n"
        "openssl pkcs12 -in c.p12 -passin pass:Ghi789Secret"
    )
    for encoded in (text, json.dumps(text), text.replace("\n", " ")):
        out = redact_text(encoded)
        assert not any(p in out for p in ("Abc123Secret", "Def456Secret", "Ghi789Secret")), out


def test_keys_on_consecutive_lines_are_no_base64_block() -> None:
    """Two 64-character keys, or a key after one, are redacted, unlike a wrapped image."""
    keys = [s.needle for s in SECRET_SAMPLES if s.name in ("random_b64url_64", "random_token_48")]
    for text in ("\n".join(keys), "\n".join(reversed(keys)), f"{keys[0]}\n{keys[0]}"):
        out = redact_text(text)
        assert not any(k in out for k in keys), out


def test_a_random_token_followed_by_a_parenthesis_is_no_call() -> None:
    """A credential value that happens to be followed by "(" is still redacted (fuzz findings:
    no closing bracket follows, or the name is no word); calls stay untouched."""
    from wayline.redaction.sanitize import redact_text

    assert "Hn7fAD5qBrRovWGsdm" not in redact_text(" REDISPASSWORD=Hn7fAD5qBrRovWGsdm(")
    assert "tf5pt3hrPqjtkmWWAT" not in redact_text(" db.password=tf5pt3hrPqjtkmWWAT(")
    assert "nr785KauC8XuxgurEW" not in redact_text(" export PGPASSWORD=nr785KauC8XuxgurEW( x")
    for code in (
        "token = getV2Client(x)",
        "key = sha256(data)",
        "secret = base64.b64decode(s)",
        "key = getUTF8StringFromBase64(s)",
        'password = getpass(\n  "Password: ")',
    ):
        assert redact_text(code) == code
