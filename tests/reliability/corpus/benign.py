"""Benign corpus: ordinary text a coding agent's sessions carry, which redaction must not alter.

Strict categories (identifiers, digests, paths, URLs) must come through byte-for-byte; the
loose ones (code, config, shell, prose, media) are held to a false-positive budget. Digests,
ids and image data are built from deterministic hash streams, so the corpus is the same on
every run and no literal random string is committed.
"""

from __future__ import annotations

import base64
import hashlib
import uuid

__all__ = ["BENIGN", "STRICT", "benign_strings"]

STRICT = ("identifiers", "digests", "paths", "urls")


def _h(seed: str, algo: str = "sha256") -> bytes:
    return hashlib.new(algo, f"wayline-benign:{seed}".encode()).digest()


def _identifiers() -> list[str]:
    words = [
        ("get", "user", "account", "settings"),
        ("parse", "http2", "frame", "header"),
        ("utf8", "to", "base64", "string"),
        ("float32", "array", "buffer", "view"),
        ("iso8601", "date", "time", "formatter"),
        ("s3", "bucket", "policy", "v2"),
        ("oauth2", "client", "credentials", "grant"),
        ("log4j", "configuration", "factory", "v2"),
        ("k8s", "pod", "spec", "v1alpha2"),
        ("proto3", "message", "to", "json"),
        ("x86", "64", "apple", "darwin"),
        ("sha256", "with", "rsa", "encryption"),
        ("vec3", "to", "vec4", "with", "alpha"),
        ("html5", "qrcode", "scanner", "config"),
        ("aws4", "hmac", "sha256", "signer"),
        ("password", "reset", "token", "expiry"),
        ("max", "tokens", "per", "request"),
        ("secret", "manager", "client", "factory"),
        ("api", "key", "header", "name"),
        ("md5", "checksum", "for", "file"),
    ]
    out: list[str] = []
    for parts in words:
        out.append(parts[0] + "".join(p.capitalize() for p in parts[1:]))  # camelCase
        out.append("".join(p.capitalize() for p in parts))  # PascalCase
        out.append("_".join(parts))  # snake_case
        out.append("_".join(parts).upper())  # CONSTANT_CASE
        out.append("-".join(parts))  # kebab-case
        out.append("test_" + "_".join(parts) + "_handles_empty_input_2")
    out += [
        "getUTF8StringFromBase64Input2",
        "AWS4HMACSHA256SignerFactory",
        "ERR_HTTP2_STREAM_CANCEL",
        "org.apache.commons.lang3.StringUtils",
        "com.google.protobuf.Int64Value",
        "java.util.concurrent.ConcurrentHashMap",
        "System.Security.Cryptography.X509Certificates",
        "std::unordered_map<std::string, int>",
        "React.useCallback",
        "torch.nn.functional.scaled_dot_product_attention",
        "tf.keras.layers.Conv2DTranspose",
        "numpy.float64",
        "call_abc123XYZ",
        "tool_call_id",
        "chatcmpl-9xYz",
        "run_2024_06_01_1200",
        "v1.2.3-rc.1+build.20240601",
        "python3.11",
        "node_modules",
        "__init__",
        "i18n",
        "a11y",
        "k8s",
        "ULID 01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "arn:aws:iam::123456789012:role/ci-deploy",
        "arn:aws:s3:::my-bucket/logs/2024/06/01",
        "projects/my-project-123/locations/us-central1/keyRings/ring/cryptoKeys/key",
        "ghcr.io/org/app:1.4.2",
        "docker.io/library/postgres:16-alpine",
        "pod/web-7d9f8b6c5-x2x4z",
        "ec2 instance i-0abcd1234efgh5678",
        "vpc-0a1b2c3d4e5f67890",
        "sg-0123456789abcdef0",
        "CVE-2024-3094",
        "RFC 7519",
        "ISO-8859-1",
        "en_US.UTF-8",
        "Content-Type",
        "X-Request-Id",
        "max_tokens",
        "prompt_tokens",
        "api_key_env",
        "password_field",
        "token_count",
        "secretName",
        "PasswordAuthentication",
        "POSTGRES_PASSWORD_FILE",
        "OLDPWD",
        "bypass_cache",
        "first_pass",
    ]
    return out


def _digests() -> list[str]:
    out: list[str] = []
    for i in range(12):
        seed = f"d{i}"
        out.append(_h(seed, "sha1").hex())  # git SHA
        out.append(_h(seed, "sha1").hex()[:7])  # short SHA
        out.append(_h(seed).hex())  # sha256 hex
        out.append("sha256:" + _h(seed).hex())  # OCI digest
        out.append("sha512-" + base64.b64encode(_h(seed, "sha512")).decode())  # npm integrity
        out.append("sha384-" + base64.b64encode(_h(seed, "sha384")).decode())  # SRI
        out.append("h1:" + base64.b64encode(_h(seed)).decode())  # go.sum
        out.append(str(uuid.UUID(bytes=_h(seed, "md5"), version=4)))
    out += [
        "commit " + _h("c1", "sha1").hex(),
        f"Merge: {_h('m1', 'sha1').hex()[:7]} {_h('m2', 'sha1').hex()[:7]}",
        f"git checkout {_h('co', 'sha1').hex()}",
        f"golang.org/x/net v0.24.0 h1:{base64.b64encode(_h('gosum')).decode()}",
        f'"integrity": "sha512-{base64.b64encode(_h("lock", "sha512")).decode()}"',
        f"{_h('sum').hex()}  dist/wayline-0.1.0.tar.gz",
        f"md5: {_h('md5', 'md5').hex()}",
        f"SHA512 ({_h('bsd', 'sha512').hex()})",
        f"image@sha256:{_h('img').hex()}",
        f'ETag: "{_h("etag", "md5").hex()}"',
        f"request id {uuid.UUID(bytes=_h('req', 'md5'), version=4)}",
        f"object id {_h('oid', 'sha1').hex()[:24]}",
    ]
    return out


def _paths() -> list[str]:
    out = [
        "/home/alice/projects/wayline/src/wayline/contract/sanitize.py",
        "/usr/lib/x86_64-linux-gnu/libssl.so.3",
        "/var/lib/docker/overlay2/l/ABCDEFGHIJKLMNOPQRSTUV1234",
        "/tmp/pytest-of-root/pytest-12/test_redaction0/work/secrets.env",
        "/run/secrets/postgres_password",
        "~/.config/gcloud/application_default_credentials.json",
        "~/.aws/credentials",
        "~/.ssh/id_ed25519.pub",
        "C:\\Users\\alice\\AppData\\Local\\Temp\\out.txt",
        "C:\\Program Files\\Git\\bin\\git.exe",
        "./node_modules/.pnpm/@babel+core@7.24.0/node_modules/@babel/core/lib/index.js",
        "src/components/PasswordResetForm.tsx",
        "tests/reliability/corpus/benign.py",
        "../../fixtures/Http2ClientTest/response_body_3.json",
        "/opt/homebrew/Cellar/python@3.11/3.11.9/Frameworks/Python.framework",
        "/etc/nginx/sites-available/default",
        "/proc/self/fd/3",
        "docs/redaction.md#31-by-key-name",
        "Library/Caches/com.apple.Safari/Cache.db",
        "build/intermediates/merged_res/release/values-v21/values-v21.xml",
    ]
    for i in range(20):
        digest = _h(f"p{i}", "sha1").hex()
        out.append(f"/home/bob/.cache/pip/wheels/{digest[:2]}/{digest[2:4]}/{digest[4:]}")
        out.append(f".git/objects/{digest[:2]}/{digest[2:]}")
    return out


def _urls() -> list[str]:
    out = [
        "https://example.com/search?q=wayline&page=2&sort=desc",
        "http://localhost:8080/v1/chat/completions",
        "ssh://git@github.com/org/repo.git",
        "git@github.com:org/repo.git",
        "https://github.com/org/repo/pull/123/files#diff-5f3a",
        "https://docs.python.org/3/library/re.html#module-re",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
        "https://drive.google.com/file/d/1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV/view",
        "https://pypi.org/project/detect-secrets/1.5.0/",
        "https://registry.npmjs.org/@types/node/-/node-20.12.7.tgz",
        "https://api.github.com/repos/org/repo/commits?per_page=100",
        "https://en.wikipedia.org/wiki/Base64",
        "https://stackoverflow.com/questions/12345678/how-to-parse-json",
        "https://s3.amazonaws.com/my-bucket/logs/2024/06/01/app.log",
        "postgresql://db.internal:5432/app",
        "redis://cache.internal:6379/0",
        "mailto:alice@example.com",
        "file:///home/alice/report.pdf",
        "https://user@example.com/path",
        "https://example.com/reset-password?step=2",
        "https://auth.example.com/.well-known/openid-configuration",
        "wss://stream.example.com/v1/events",
    ]
    for i in range(20):
        digest = _h(f"u{i}", "sha1").hex()
        out.append(f"https://github.com/org/repo/commit/{digest}")
        out.append(f"https://cdn.example.com/assets/app.{digest[:8]}.js")
    return out


_CODE = [
    'password_field = form.get("password")',
    "password_field = form.get(...)",
    'password = request.form["password"]',
    'db_password = os.environ["DB_PASSWORD"]',
    'api_key = os.getenv("OPENAI_API_KEY")',
    "token = self.token",
    "client = OpenAI(api_key=api_key)",
    "client = Client(api_key=settings.OPENAI_API_KEY, timeout=30)",
    "def login(username: str, password: str) -> Session:",
    "def connect(token: Optional[str] = None) -> None:",
    "secret_key = get_secret_key()",
    "if password == confirm_password:",
    "hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
    "const password = req.body.password;",
    "const token = await getAccessToken(clientId);",
    "const { apiKey } = useConfig();",
    "headers: { Authorization: `Bearer ${token}` },",
    "password: process.env.DB_PASSWORD,",
    'password := os.Getenv("DB_PASSWORD")',
    'let token = env::var("GITHUB_TOKEN")?;',
    'String password = System.getenv("DB_PASSWORD");',
    '@Value("${spring.datasource.password}") private String password;',
    "$password = $_POST['password'];",
    "password = params[:password]",
    "@password = user_params[:password]",
    'var apiKey = Configuration["ApiKey"];',
    'api_key: str = Field(default=None, env="API_KEY")',
    'SECRET_KEY = env("DJANGO_SECRET_KEY")',
    'self.api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")',
    "token_type = 'bearer'",
    "max_tokens = 4096",
    "for token in tokenizer.encode(text):",
    "if not secret: raise ValueError('missing secret')",
    "assert response.status_code == 401",
    "SELECT id, email FROM users WHERE password_hash IS NULL;",
    "UPDATE users SET password_reset_at = NOW() WHERE id = $1;",
    'fn main() { println!("hello, world"); }',
    "func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {",
    "public static void main(String[] args) throws Exception {",
    "#include <openssl/evp.h>",
    "import { createHash } from 'node:crypto';",
    "from wayline.redaction.redact import redact_text",
    "x = base64.b64encode(data).decode('ascii')",
    "return hashlib.sha256(payload).hexdigest()",
    "logger.info('token refreshed for %s', user_id)",
    "except AuthenticationError as exc:",
    "password = getpass.getpass('Password: ')",
    "token = jwt.encode(payload, key, algorithm='HS256')",
    "creds = Credentials.from_service_account_file(path)",
    "client_secret = config.oauth.client_secret",
]
_CONFIG = [
    "password: ${DB_PASSWORD}",
    'password: "${DB_PASSWORD}"',
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "api_key: {{ .Values.apiKey }}",
    "DB_PASSWORD=<your-password>",
    "OPENAI_API_KEY=<redacted>",
    "PASSWORD=",
    "detect-secrets==1.5.0",
    "password: '********'",
    "secretName: db-credentials",
    "secretKeyRef:",
    "PasswordAuthentication no",
    "ssh -o PasswordAuthentication=no -o BatchMode=yes host",
    "POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password",
    "password_file = /etc/app/password.txt",
    "token_url = https://oauth2.googleapis.com/token",
    "auth_type: oauth2",
    "max_tokens: 100",
    "input_tokens=1234, output_tokens=56, total_tokens=1290",
    '{"prompt_tokens": 12, "completion_tokens": 34, "cache_read_tokens": 0}',
    "key: value",
    "primary_key=id",
    "session_key: cli:20261121_204400_005564",
    "api_key_env: OPENAI_API_KEY",
    "temperature=0.7 top_p=0.9 max_tokens=256",
    "bypass: true",
    "first_pass: 3",
    "PWD=/home/alice",
    "OLDPWD=/home/alice/projects",
    "[tool.ruff]\nline-length = 100",
    "version: '3.9'\nservices:\n  db:\n    image: postgres:16",
]
_SHELL = [
    "docker run -p 8080:80 nginx",
    "docker login ghcr.io --username ci --password-stdin < token.txt",
    "docker login -u ci --password-stdin",
    "mysql -u root -p app_production",
    "mysql -h db.internal -P 3306 -u app -p",
    "psql -h db.internal -U app -d app -c 'select 1'",
    "ssh -i ~/.ssh/id_ed25519 deploy@10.0.0.5",
    "ssh-keygen -t ed25519 -C alice@example.com",
    "redis-cli -h cache.internal ping",
    "curl -H 'Accept: application/json' https://api.example.com/v1/items",
    "curl -u alice https://example.com",
    "wget -O- https://example.com/install.sh | sh",
    "git clone https://github.com/org/repo.git",
    "git log --oneline -n 20",
    "kubectl get secret db-credentials -o yaml",
    "export PATH=$HOME/.local/bin:$PATH",
    "export DB_PASSWORD=$(cat /run/secrets/db_password)",
    "PGPASSWORD=$PGPASSWORD psql -h db",
    "mytool --password $DB_PASSWORD --host db",
    "mytool --token-file ~/.config/tool/token",
    "mytool --password-file /run/secrets/pw",
    "zip -r backup.zip ./data",
    "7z x archive.7z -o./out",
    "openssl req -new -key server.key -out server.csr",
    "openssl pkcs12 -in cert.p12 -passin env:P12_PASSWORD -nokeys",
    "pip install detect-secrets==1.5.0",
    "npm ci --ignore-scripts",
    "pytest tests/contract -q -k redact",
    "ls -la /var/log",
    "grep -rn 'password' src/",
]
_PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "Please summarise the attached quarterly report in three bullet points.",
    "Reset your password from the account settings page.",
    "The secret to good bread is patience.",
    "A bearer of good news arrived.",
    "Basic arithmetic is easy.",
    "Use the Authorization header to authenticate.",
    "Got 401 Unauthorized from the API; the token had expired.",
    "Rotate the API key every 90 days and store it in the vault.",
    "I bypassed the cache and the compass pointed north.",
    "Das Passwort muss mindestens zwölf Zeichen lang sein.",
    "Bitte geben Sie Ihr Token nicht weiter.",
    "Le mot de passe a expiré ; veuillez le réinitialiser.",
    "La clé d'API est stockée dans le coffre-fort.",
    "La contraseña debe tener al menos doce caracteres.",
    "El secreto está en la masa madre.",
    "A senha foi redefinida com sucesso.",
    "La password è scaduta, cambiala dalle impostazioni.",
    "Hasło musi zawierać co najmniej jedną cyfrę.",
    "Het wachtwoord is gewijzigd.",
    "パスワードは12文字以上にしてください。",
    "トークンの有効期限が切れました。",
    "密码必须至少包含一个数字。",
    "请不要分享您的访问令牌。",
    "Пароль должен содержать не менее двенадцати символов.",
    "Токен доступа истёк, войдите снова.",
    "비밀번호를 재설정했습니다.",
    "كلمة المرور غير صحيحة.",
    "Το συνθηματικό άλλαξε.",
    "Parola en az on iki karakter olmalıdır.",
    "Meeting notes: ship v2.3 on Friday; Alice owns the migration.",
    "Tested on Python 3.11 and 3.12 with 1,234 cases in 5.6 s.",
    "Error: connection refused (os error 111) while contacting db.internal:5432",
    'Traceback (most recent call last):\n  File "app.py", line 3, in <module>',
    "The keyboard shortcut is Ctrl+K.",
    "scikit-learn (sk-learn) is a machine learning library.",
    "Asia/Tokyo",
    "alice@example.com",
    "Monkey: banana",
    "author: Jane Doe",
]


def _media() -> list[str]:
    raw = b"".join(_h(f"img{i}") for i in range(48))
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + raw).decode()
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0" + raw).decode()
    return [
        f"data:image/png;base64,{png}",
        f"data:image/jpeg;base64,{jpeg}",
        f'{{"type": "image_url", "image_url": {{"url": "data:image/png;base64,{png}"}}}}',
        base64.encodebytes(b"\x89PNG\r\n\x1a\n" + raw).decode(),  # `base64 image.png`
        base64.encodebytes(b"GIF89a" + raw).decode(),
        png,
        base64.b64encode(b"%PDF-1.7\n" + raw).decode(),
    ]


BENIGN: dict[str, tuple[str, ...]] = {
    "identifiers": tuple(_identifiers()),
    "digests": tuple(_digests()),
    "paths": tuple(_paths()),
    "urls": tuple(_urls()),
    "code": tuple(_CODE),
    "config": tuple(_CONFIG),
    "shell": tuple(_SHELL),
    "prose": tuple(_PROSE),
    "media": tuple(_media()),
}


def benign_strings() -> list[tuple[str, str]]:
    """Every (category, string) of the corpus."""
    return [(category, text) for category, texts in BENIGN.items() for text in texts]
