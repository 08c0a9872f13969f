"""A shipped corpus of fake secret shapes and of harmless look-alikes, for redaction tests.

Every sample is built at import time from a deterministic hash stream, so no literal
credential appears in the source (secret scanners stay quiet) and the corpus is the same
on every run. `needle` is the part that must never survive sanitizing: the token body,
the password, the signature. `embed_everywhere` hides a secret in the places payloads
really carry them: nested dicts, lists, header pairs, URLs, prose, JSON-encoded strings,
env lines, chat messages, tool-call arguments, exceptions and plain objects.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shlex
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

__all__ = [
    "HARMLESS_STRINGS",
    "SECRET_SAMPLES",
    "WHY_SAMPLES",
    "SecretSample",
    "embed_everywhere",
    "families",
]

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_B64URL = _ALNUM + "-_"


@dataclass(frozen=True, slots=True)
class SecretSample:
    """One fake secret: a shape name, the text that carries it, and the part that must vanish."""

    name: str
    secret: str
    needle: str
    family: str = ""


def _rand(seed: str, n: int, alphabet: str = _ALNUM) -> str:
    """`n` deterministic pseudo-random characters of `alphabet`, with a digit near the front."""
    chars: list[str] = []
    counter = 0
    while len(chars) < n:
        digest = hashlib.sha256(f"wayline-fake:{seed}:{counter}".encode()).digest()
        chars.extend(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    digits = [c for c in alphabet if c.isdigit()]
    if digits and n > 4:
        # Real tokens nearly always hold a digit; pinning one keeps the corpus honest
        # about the heuristics instead of passing by luck.
        chars[2] = digits[len(seed) % len(digits)]
    return "".join(chars[:n])


def _pem(kind: str, seed: str, block: bool = False) -> SecretSample:
    lines = [_rand(f"{seed}:{i}", 64, _B64) for i in range(6)]
    label = f"{kind}PRIVATE KEY{' BLOCK' if block else ''}"
    body = "\n".join(lines)
    text = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
    return SecretSample(f"pem_{seed}", text, lines[3])


def _jwt() -> SecretSample:
    def seg(obj: dict[str, Any]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    signature = _rand("jwt-sig", 43, _B64URL)
    token = ".".join(
        [
            seg({"alg": "HS256", "typ": "JWT"}),
            seg({"sub": "user-4711", "iat": 1700000000}),
            signature,
        ]
    )
    return SecretSample("jwt", token, signature)


def _token(
    name: str, prefix: str, n: int, alphabet: str = _ALNUM, suffix: str = ""
) -> SecretSample:
    body = _rand(name, n, alphabet)
    return SecretSample(name, prefix + body + suffix, body)


def _ctx(name: str, template: str, n: int = 32, alphabet: str = _ALNUM) -> SecretSample:
    """A secret that needs its context to be recognised; `{}` in `template` is the needle."""
    needle = _rand(name, n, alphabet)
    return SecretSample(name, template.format(needle), needle)


def _basic_header() -> SecretSample:
    password = _rand("basic-pw", 20)
    creds = base64.b64encode(f"deploy:{password}".encode()).decode()
    return SecretSample("authorization_basic", f"Authorization: Basic {creds}", creds)


def _legacy_samples() -> tuple[SecretSample, ...]:
    return (
        # provider keys with a recognisable prefix
        _token("openai_legacy", "sk-", 48),
        _token("openai_project", "sk-proj-", 120, _B64URL),
        _token("openai_service_account", "sk-svcacct-", 100, _B64URL),
        _token("anthropic_api", "sk-ant-api03-", 93, _B64URL, "AA"),
        _token("anthropic_admin", "sk-ant-admin01-", 93, _B64URL, "AA"),
        _token("openrouter", "sk-or-v1-", 64, _HEX),
        _token("langfuse_secret", "sk-lf-", 32, _HEX),
        _token("stripe_live", "sk_live_", 99),
        _token("stripe_restricted", "rk_live_", 99),
        _token("stripe_test", "sk_test_", 24),
        _token("stripe_webhook", "whsec_", 32),
        _token("aws_access_key_id", "AKIA", 16, _UPPER_DIGITS),
        _token("aws_sts_key_id", "ASIA", 16, _UPPER_DIGITS),
        _token("github_classic", "ghp_", 36),
        _token("github_oauth", "gho_", 36),
        _token("github_user_to_server", "ghu_", 36),
        _token("github_server_to_server", "ghs_", 36),
        _token("github_refresh", "ghr_", 76),
        _token("github_fine_grained", "github_pat_11ABCDEFG0", 70, _ALNUM + "_"),
        _token("gitlab_pat", "glpat-", 20, _B64URL),
        _token("slack_bot", "xoxb-1234567890-9876543210-", 24),
        _token("slack_user", "xoxp-1234567890-9876543210-1122334455-", 32, _HEX),
        _token("slack_app", "xapp-1-A0123BCDE-1234567890-", 64, _HEX),
        _token("slack_webhook", "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/", 24),
        _token("discord_webhook", "https://discord.com/api/webhooks/112233445566778899/", 68),
        _jwt(),
        _token("google_api_key", "AIza", 35, _B64URL),
        _token("google_oauth_client_secret", "GOCSPX-", 28, _B64URL),
        _token("google_oauth_access_token", "ya29.a0Af", 120, _B64URL),
        _token("huggingface", "hf_", 34),
        _token("npm", "npm_", 36),
        _token("pypi", "pypi-AgEIcHlwaS5vcmc", 70, _B64URL),
        _token("sendgrid", "SG.abcdEFGHijklMNOPqrstuv.", 43, _B64URL),
        _token("twilio_api_key", "SK", 32, _HEX),
        _token("mailgun", "key-", 32, _HEX),
        _token("digitalocean", "dop_v1_", 64, _HEX),
        _token("shopify", "shpat_", 32, _HEX),
        _token("databricks", "dapi", 32, _HEX),
        _token("telegram_bot", "7123456789:AA", 33, _B64URL),
        _token("groq", "gsk_", 52),
        _token("replicate", "r8_", 37),
        _token("perplexity", "pplx-", 48),
        _token("xai", "xai-", 80),
        _token("nvidia", "nvapi-", 64, _B64URL),
        _token("langsmith", "lsv2_pt_", 32, _HEX, "_0a1b2c3d4e"),
        _token("tavily", "tvly-dev-", 32),
        _token("notion", "ntn_", 46),
        _token("linear", "lin_api_", 40),
        _token("hashicorp_vault", "hvs.", 90, _B64URL),
        _token("square", "sq0atp-", 22, _B64URL),
        _token("postman", "PMAK-0123456789abcdef01234567-", 34, _HEX),
        _token("age_identity", "AGE-SECRET-KEY-1", 58, _UPPER_DIGITS),
        _token("sentry_org_token", "sntrys_", 80),
        _token("grafana_service_account", "glsa_", 32, _ALNUM, "_0a1b2c3d"),
        _token("figma", "figd_", 40, _B64URL),
        # private key blocks
        _pem("RSA ", "rsa"),
        _pem("OPENSSH ", "openssh"),
        _pem("EC ", "ec"),
        _pem("", "pkcs8"),
        _pem("ENCRYPTED ", "encrypted"),
        _pem("PGP ", "pgp", block=True),
        # secrets recognised by their context
        _ctx("authorization_bearer_opaque", "Authorization: Bearer {}", 40),
        _basic_header(),
        _ctx("bearer_lowercase", "bearer {}", 40),
        _ctx("proxy_authorization", "Proxy-Authorization: {}", 40),
        _ctx("x_api_key_header", "X-Api-Key: {}", 32, _HEX),
        _ctx("azure_api_key_header", "api-key: {}", 32, _HEX),
        _ctx("cookie_header", "Cookie: theme=dark; sessionid={}", 32),
        _ctx("set_cookie_header", "Set-Cookie: __Host-session={}; Path=/; Secure; HttpOnly"),
        _ctx("postgres_url_password", "postgresql://app_user:{}@db.internal:5432/app", 24),
        _ctx("redis_url_password", "redis://:{}@cache.internal:6379/0", 24),
        _ctx("https_url_password", "https://deploy:{}@git.example.com/org/repo.git", 24),
        _ctx("git_token_url", "https://x-access-token:{}@github.com/org/repo.git", 40),
        _ctx("url_token_userinfo", "https://{}@gitlab.example.com/org/repo.git", 40),
        _ctx("query_key", "https://api.example.com/v1/search?q=maps&key={}", 39),
        _ctx("query_token", "https://files.example.com/download?file=a.zip&token={}", 40),
        _ctx("query_access_token", "https://graph.example.com/me?access_token={}&fields=id", 60),
        _ctx("query_password", "https://legacy.example.com/login?user=bob&password={}", 16),
        _ctx("query_api_key", "https://api.example.com/v2/data?api_key={}&fmt=json", 32),
        _ctx(
            "aws_presigned_url",
            "https://bucket.s3.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Security-Token={}&X-Amz-Expires=300",
            180,
        ),
        _ctx(
            "azure_sas_url", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sig={}", 43
        ),
        _ctx(
            "azure_connection_string",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={}==;"
            "EndpointSuffix=core.windows.net",
            86,
            _B64,
        ),
        _ctx("sqlserver_connection", "Server=tcp:db,1433;User ID=sa;Password={};Encrypt=true", 20),
        _ctx("aws_secret_access_key", "aws_secret_access_key = {}", 40, _B64),
        _ctx("env_openai_api_key", "OPENAI_API_KEY={}", 40),
        _ctx("export_secret", "export SECRET={}", 32),
        _ctx("yaml_db_password", "DB_PASSWORD: {}", 20),
        _ctx("json_client_secret", '{{"client_id": "app-123", "client_secret": "{}"}}', 40),
        _ctx("python_kwarg", "client = Client(api_key='{}', timeout=30)", 40),
        _ctx("docker_env_flag", "docker run -e GITHUB_TOKEN={} ghcr.io/org/tool", 40),
        _ctx("cli_password_flag", "mysql --host db.internal --password={} app", 20),
        _ctx("cli_api_key_flag", "wayline-tool --api-key {} --verbose", 40),
        _ctx("curl_user_password", "curl -u admin:{} https://api.example.com/v1/me", 20),
        _ctx("netrc", "machine api.example.com login bob password {}", 20),
        _ctx("npmrc_auth_token", "//registry.npmjs.org/:_authToken={}", 36),
        _ctx("docker_config_auth", '{{"auths": {{"registry.example.com": {{"auth": "{}"}}}}}}', 40),
        _ctx("kubeconfig_token", "users:\n- name: ci\n  user:\n    token: {}", 60),
        _ctx("heroku_api_key_env", "HEROKU_API_KEY={}", 36, _HEX + "-"),
    )


# Families of the older shapes, by name prefix (first match wins).
_FAMILY_OF = (
    ("pem_", "private_key_block"),
    ("jwt", "jwt"),
    (("slack_webhook", "discord_webhook"), "webhook_url"),
    (
        (
            "openai",
            "anthropic",
            "openrouter",
            "langfuse",
            "groq",
            "replicate",
            "perplexity",
            "xai",
            "nvidia",
            "langsmith",
            "tavily",
            "huggingface",
        ),
        "ai_provider_key",
    ),
    (
        ("aws_access", "aws_sts", "github", "gitlab", "google", "digitalocean", "databricks"),
        "cloud_vcs_token",
    ),
    ("hashicorp", "cloud_vcs_token"),
    (("authorization", "bearer", "proxy", "x_api", "azure_api", "cookie", "set_cookie"), "header"),
    (("postgres_url", "redis_url", "https_url", "git_token", "url_token"), "url_userinfo"),
    (("query_", "aws_presigned", "azure_sas"), "url_query"),
    (("azure_connection", "sqlserver"), "connection_string"),
    (
        (
            "aws_secret",
            "env_",
            "export_",
            "yaml_",
            "json_",
            "python_",
            "npmrc",
            "docker_config",
            "kubeconfig",
            "heroku",
            "netrc",
        ),
        "named_assignment",
    ),
    (("docker_env", "cli_", "curl_"), "command_line"),
)


def _family(name: str) -> str:
    for prefixes, family in _FAMILY_OF:
        if name.startswith(prefixes):
            return family
    return "saas_token"


_PW = 18  # human-chosen passwords are short: entropy alone would not catch these


def _command_line() -> tuple[SecretSample, ...]:
    return (
        _ctx("why_registry_login_p", "docker login -u ci-bot -p {} registry.example.com", _PW),
        _ctx("podman_login_p", "podman login --username ci -p {} quay.io", _PW),
        _ctx("helm_registry_login_p", "helm registry login registry.example.com -u ci -p {}", _PW),
        _ctx("docker_login_password_eq", "docker login --password={} ghcr.io", _PW),
        _ctx("az_login_sp", "az login --service-principal -u 0f1e2d3c -p {} --tenant contoso", _PW),
        _ctx("oc_login_p", "oc login https://api.ocp.example.com:6443 -u admin -p {}", _PW),
        _ctx("mysql_glued_p", "mysql -h db.internal -u root -p{} app_production", _PW),
        _ctx("mysqldump_glued_quoted", "mysqldump -u backup -p'{}' --all-databases > d.sql", _PW),
        _ctx("mariadb_password_space", "mariadb --user=app --password {} -e 'select 1'", _PW),
        _ctx("sshpass_p_quoted", "sshpass -p '{}' ssh deploy@10.0.0.5 uptime", _PW),
        _ctx("sshpass_p_glued", "sshpass -p{} scp build.tar deploy@web1:/srv", _PW),
        _ctx("plink_pw", "plink -ssh admin@router.lan -pw {} show version", _PW),
        _ctx("redis_cli_a", "redis-cli -h cache.internal -a {} INFO", _PW),
        _ctx("redis_cli_pass", "redis-cli --user app --pass {} ping", _PW),
        _ctx("mongosh_p", "mongosh --host mongo.internal -u admin -p {} --quiet", _PW),
        _ctx("mongodump_uri", "mongodump --uri mongodb://backup:{}@mongo.internal:27017/app", _PW),
        _ctx("psql_conninfo", 'psql "host=db.internal user=app password={} dbname=app"', _PW),
        _ctx("sqlcmd_P", 'sqlcmd -S tcp:sql.internal,1433 -U sa -P {} -Q "SELECT 1"', _PW),
        _ctx("curl_user_long", "curl --user admin:{} https://jenkins.example.com/api/json", _PW),
        _ctx("curl_proxy_user", "curl -x http://proxy:3128 --proxy-user ops:{} https://a.io", _PW),
        _ctx("wget_password", "wget --user=ftp --password={} ftp://files.example.com/a.tgz", _PW),
        _ctx("wget_http_password", "wget --http-user=ci --http-password {} https://x.io/b", _PW),
        _ctx("git_clone_oauth2", "git clone https://oauth2:{}@gitlab.example.com/g/p.git", _PW),
        _ctx(
            "git_remote_set_url", "git remote set-url origin https://bot:{}@bitbucket.org/t/r", _PW
        ),
        _ctx("generic_token_eq", "kubectl --token={} get pods -A", _PW),
        _ctx("generic_secret_space", "vault-agent --secret {} --addr https://vault.internal", _PW),
        _ctx("generic_api_key_quoted", 'ollama-cli --api-key "{}" pull llama3', _PW),
        _ctx("zip_P", "zip -r -P {} backup.zip ./data", _PW),
        _ctx("sevenzip_p", "7z a -p{} -mhe=on secrets.7z ./vault", _PW),
        _ctx(
            "ldapsearch_w", "ldapsearch -x -H ldap://ldap.internal -D cn=admin -w {} -b dc=x", _PW
        ),
        _ctx("openssl_passin", "openssl pkcs12 -in cert.p12 -passin pass:{} -nokeys", _PW),
        _ctx("smbclient_user_pct", "smbclient //fileserver/share -U corp/alice%{} -c ls", _PW),
        _ctx("htpasswd_batch", "htpasswd -bc /etc/nginx/.htpasswd admin {}", _PW),
        _ctx("java_keystore_prop", "java -Djavax.net.ssl.keyStorePassword={} -jar app.jar", _PW),
    )


def _glued_names() -> tuple[SecretSample, ...]:
    return (
        _ctx(
            "why_inline_pgpassword", "PGPASSWORD={} psql -h db.internal -U app -c 'select 1'", _PW
        ),
        _ctx("mysql_pwd_inline", "MYSQL_PWD={} mysql -u root -e 'show databases'", _PW),
        _ctx("export_pgpassword", "export PGPASSWORD={}", _PW),
        _ctx("env_dbpass", "env DBPASS={} ./migrate.sh", _PW),
        _ctx("apikey_inline", "APIKEY={} node server.js", _PW),
        _ctx("sshpass_env", "SSHPASS={} sshpass -e ssh deploy@web1", _PW),
        _ctx("redispassword_env", "REDISPASSWORD={}", _PW),
        _ctx("windows_set_adminpass", "set ADMINPASS={}", _PW),
        _ctx("smtppass_inline", "SMTPPASS={} ./send-report", _PW),
        _ctx("awssecret_env", "AWSSECRET={}", _PW),
        _ctx("mongopwd_inline", "MONGOPWD={} ./seed.sh", _PW),
        _ctx("npmauthtoken_env", "NPMAUTHTOKEN={}", _PW),
        _ctx("docker_e_pgpassword", "docker run -e PGPASSWORD={} postgres:16 psql", _PW),
        _ctx("powershell_env_dbpassword", '$env:DBPASSWORD = "{}"', _PW),
        _ctx("dotnet_double_underscore", "ConnectionStrings__DbPassword={}", _PW),
        _ctx("env_prefix_two_vars", "DB_USER=app DBPASSWD={} ./run", _PW),
    )


def _config_files() -> tuple[SecretSample, ...]:
    return (
        _ctx("dotenv_dbpass", "# .env\nAPP_ENV=production\nDBPASS={}\nDEBUG=false", _PW),
        _ctx("yaml_glued", "database:\n  host: db.internal\n  dbpassword: {}\n  port: 5432", _PW),
        _ctx("toml_glued", '[database]\nhost = "db.internal"\npgpassword = "{}"', _PW),
        _ctx("ini_glued", "[client]\nuser=app\nmysqlpwd={}\n", _PW),
        _ctx("json_camel_pass", '{{"user": "app", "adminPass": "{}"}}', _PW),
        _ctx("json_apikey", '{{"apikey": "{}", "region": "eu"}}', _PW),
        _ctx("java_properties", "spring.datasource.password={}", _PW),
        _ctx("compose_environment", "environment:\n  - POSTGRES_PASSWORD={}", _PW),
        _ctx("npmrc_password", "//registry.example.com/:_password={}", _PW),
        _ctx(
            "pip_conf_index_url", "[global]\nindex-url = https://u:{}@pypi.example.com/simple", _PW
        ),
        _ctx("git_credentials_file", "https://alice:{}@github.com", _PW),
        _ctx("pgpass_line", "db.internal:5432:app:app_user:{}", 32),
        _ctx("tfvars_password", 'db_password = "{}"', _PW),
    )


def _bare_tokens() -> tuple[SecretSample, ...]:
    return (
        _ctx("why_bare_aws_secret", "{}", 40, _B64),
        _ctx("aws_secret_after_label", "Secret access key:\n{}", 40, _B64),
        _ctx("azure_storage_key_bare", "{}==", 86, _B64),
        _ctx("gcp_hmac_secret_bare", "  {}  (store it safely)", 40, _B64),
        _ctx("random_token_32", "Your new token is {} - it will not be shown again.", 32),
        _ctx("random_token_48", "{}", 48),
        _ctx("random_b64url_64", "{}", 64, _B64URL),
        _ctx("cloudflare_style_token", "{}", 40, _B64URL),
        _ctx("bare_token_table_cell", "| prod | {} | active |", 40),
        _ctx("bare_token_json_value", '{{"value": "{}"}}', 44),
        _ctx("bare_token_csv", "id,label\n17,{}", 36),
    )


def _samples() -> tuple[SecretSample, ...]:
    legacy = tuple(replace(s, family=_family(s.name)) for s in _legacy_samples())
    groups = (
        ("command_line", _command_line()),
        ("glued_name", _glued_names()),
        ("config_file", _config_files()),
        ("bare_token", _bare_tokens()),
    )
    return legacy + tuple(replace(s, family=f) for f, group in groups for s in group)


SECRET_SAMPLES: tuple[SecretSample, ...] = _samples()
# Three shapes that once leaked: a registry login's -p, an inline PGPASSWORD=, and
# a bare cloud secret key on its own line.
WHY_SAMPLES: tuple[SecretSample, ...] = tuple(
    s for s in SECRET_SAMPLES if s.name.startswith("why_")
)


def families() -> dict[str, list[SecretSample]]:
    """The corpus grouped by family (provider keys, headers, command lines, bare tokens, …)."""
    out: dict[str, list[SecretSample]] = {}
    for sample in SECRET_SAMPLES:
        out.setdefault(sample.family, []).append(sample)
    return out


HARMLESS_STRINGS: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog.",
    "Please summarise the attached quarterly report in three bullet points.",
    "123e4567-e89b-12d3-a456-426614174000",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "/home/alice/projects/wayline/src/wayline/contract/sanitize.py",
    "C:\\Users\\alice\\AppData\\Local\\Temp\\out.txt",
    "max_tokens: 100",
    "input_tokens=1234, output_tokens=56, total_tokens=1290",
    '{"prompt_tokens": 12, "completion_tokens": 34, "cache_read_tokens": 0}',
    "token_count: 5",
    "The tokenizer splits text into tokens.",
    "key: value",
    "primary_key=id",
    "pattern_key: recursive delete",
    "session_key: cli:20261121_204400_005564",
    "session_id: 20261121_204400_005564",
    "tool_call_id=call_abc123XYZ",
    "api_key_env: OPENAI_API_KEY",
    "https://example.com/search?q=wayline&page=2&sort=desc",
    "http://localhost:8080/v1/chat/completions",
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "alice@example.com",
    "Use the Authorization header to authenticate.",
    "Reset your password from the account settings page.",
    "The secret to good bread is patience.",
    "A bearer of good news arrived.",
    "Basic arithmetic is easy.",
    "scikit-learn (sk-learn) is a machine learning library.",
    "task-1234567890abcdefghijklmnop",
    "Asia/Tokyo",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIB\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "temperature=0.7 top_p=0.9 max_tokens=256",
    "Monkey: banana",
    "The keyboard shortcut is Ctrl+K.",
    "author: Jane Doe",
    "--verbose --max-tokens 100",
    "PWD=/home/alice",
    "Got 401 Unauthorized from the API",
    "https://docs.python.org/3/library/re.html#module-re",
    "deadbeef",
    "def get_api_key(env):",
    "",
)


@dataclass
class _Carrier:
    """A plain dataclass payload, as tools and providers hand them over."""

    label: str
    detail: str


def embed_everywhere(secret: str | SecretSample) -> list[Any]:
    """`secret` hidden under innocent names in every nesting a hook payload may have."""
    s = secret.secret if isinstance(secret, SecretSample) else secret
    return [
        s,
        {"note": s},
        {"outer": {"inner": [{"deep": s}]}},
        ["first", s, 3],
        (s,),
        [("User-Agent", "wayline/0.1"), ("X-Debug-Note", s)],
        f"https://api.example.com/v1/items?q={s}&page=2",
        f"While debugging I found {s} in the logs, please rotate it.",
        json.dumps({"config": s, "retries": 3}),
        json.dumps(json.dumps({"nested": s})),
        f"export DEBUG_VALUE={s}",
        {
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": f"Why does this fail? {s}"},
            ],
            "max_tokens": 100,
        },
        {
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "terminal",
                        "arguments": json.dumps({"command": f"echo '{s}' | tee out.txt"}),
                    },
                }
            ]
        },
        {"error": RuntimeError(f"request failed: {s}")},
        SimpleNamespace(status="ok", output=s),
        _Carrier(label="cfg", detail=s),
        {s: "as a key"},
        # JSON escapes glued to the secret: its own line in a file, tab-indented output, a
        # non-ASCII letter before it (``\u00e9``). The escape's letter is no part of the token.
        json.dumps(f"# exported config\n{s}\n"),
        json.dumps({"output": f"\t{s}"}),
        json.dumps(f"café{s}"),
        # two on consecutive lines (the first value must end at the escaped line break), and
        # shell-quoted in a command (a quote inside becomes '"'"')
        json.dumps(f"{s}\n{s}"),
        f"Error code: 401 - invalid credentials: {s}",  # after another credential name
        json.dumps({"command": "printf '%s\\n' " + shlex.quote(s)}),
    ]
