"""Regressions for the fifth round of issue 36: leak classes written from each format's
grammar (the vendor's documented token layout, or the scanner rule that describes it).

Bodies are random, so no example text of a corpus is pinned here; each test also keeps the
benign look-alike of its class.
"""

from __future__ import annotations

import random
import string

from wayline.redaction import redact_text

_RNG = random.Random(3605)
_B62 = string.ascii_letters + string.digits
_LOWER36 = string.ascii_lowercase + string.digits
_HEX = "0123456789abcdef"
_B64 = _B62 + "+/"


def _rand(n: int, alphabet: str = _B62) -> str:
    body = "".join(_RNG.choice(alphabet) for _ in range(n - 2))
    letters = [c for c in alphabet if c.isalpha()] or list(alphabet)
    return _RNG.choice(letters) + body + _RNG.choice("23456789")  # a letter and a digit


def _uuid_layout(alphabet: str = _HEX) -> str:
    return "-".join(_rand(n, alphabet) for n in (8, 4, 4, 4, 12))


# ------------------------------------------------------------------- self-identifying prefixes


def test_cloudflare_prefixed_tokens() -> None:
    """Cloudflare's user and account API tokens and global keys: cfut_/cfat_/cfk_, 40
    alphanumerics and an 8-hex checksum."""
    for prefix in ("cfut_", "cfat_", "cfk_"):
        # a body of letters (the grammar allows any alphanumerics) has no random look
        token = prefix + _rand(40, string.ascii_lowercase)[:-1] + "a" + _rand(8, _HEX)
        assert redact_text(f"CLOUDFLARE={token}") == "CLOUDFLARE=<redacted>"
        assert token not in redact_text(f"using {token} for dns")
    assert redact_text("cfut_tests and cfk_names") == "cfut_tests and cfk_names"


def test_pulumi_and_scrapfly_bodies_of_lower_alphanumerics() -> None:
    """Pulumi's pul- and Scrapfly's scp-live- bodies are lower-case alphanumerics, not only
    hex."""
    pul = "pul-" + _rand(40, _LOWER36)
    scp = "scp-live-" + _rand(32, _LOWER36)
    assert redact_text(f"token {pul}") == "token <redacted>"
    assert pul not in redact_text(pul) and scp not in redact_text(scp)


def test_launchdarkly_keys_with_the_uuid_layout() -> None:
    """LaunchDarkly api-/sdk-/mob- keys: a UUID's 8-4-4-4-12 layout in lower-case
    alphanumerics; other api-names stay."""
    for kind in ("api-", "sdk-", "mob-"):
        key = kind + _uuid_layout(_LOWER36)
        assert redact_text(key) == "<redacted>"
    assert redact_text("api-gateway-v2 and sdk-python-3") == "api-gateway-v2 and sdk-python-3"


# --------------------------------------------------------------- a vendor's unprefixed value


def test_vendor_value_after_a_credential_label() -> None:
    """A VCS or cloud vendor's name with a credential label (``gitlab token``,
    ``SCALEWAY_SECRET``) before a value of that vendor's format."""
    gitlab = _rand(20, _B62 + "_-")
    assert gitlab not in redact_text(f"gitlab token {gitlab}")
    scw = _uuid_layout(_LOWER36)
    assert scw not in redact_text(f"SCALEWAY_SECRET {scw}")
    gitter = _rand(40, _LOWER36 + "-")
    assert gitter not in redact_text(f"gitter: {gitter}")
    alien = _rand(64, _LOWER36)
    assert alien not in redact_text(f"alienvault {alien}")


def test_azure_key_formats_after_the_vendor_name() -> None:
    """Azure's unprefixed key formats after its name: 32 or 52 alphanumerics (subscription and
    search keys), 52 lower-case alphanumerics (legacy DevOps tokens)."""
    few_digits = "".join(_RNG.choice(string.ascii_lowercase) for _ in range(48)) + "1234"
    for body in (_rand(32), _rand(52), few_digits):
        assert body not in redact_text(f'azure = "{body}"'), body
    assert redact_text("azure-storage-blob==12.19.0") == "azure-storage-blob==12.19.0"


def test_vendor_named_on_the_line_before_its_value() -> None:
    """The vendor named in a comment or a log line, its value on the next line under a
    label; a label naming a digest (commit, sha) keeps its value."""
    secret = _rand(20, string.ascii_letters + "_-") + "7"
    assert secret not in redact_text(f"# gitlab\nvalue = {secret}")
    assert secret not in redact_text(f"[INFO] calling gitlab API\n[DEBUG] Using Key={secret}")
    sha = _rand(40, _HEX)
    kept = f"# github\ncommit = {sha}"
    assert redact_text(kept) == kept
    kept = f"see github.com/org/repo/commit/{sha}"
    assert redact_text(kept) == kept


def test_legacy_vault_tokens_of_the_scanners_length() -> None:
    """Legacy Vault service tokens (s. and 18 to 40 characters) where Vault is named, with a
    digit and a letter; an s. attribute in other text stays."""
    token = "s." + _rand(20, string.ascii_lowercase + string.digits)
    out = redact_text(f"export VAULT_ADDR=https://vault.example:8200\nuse {token} now")
    assert token not in out
    assert redact_text("x = s.strip() and s.lower()") == "x = s.strip() and s.lower()"


def test_approle_secret_id_after_a_blank() -> None:
    """A Vault AppRole secret_id written with a blank as its separator."""
    sid = _uuid_layout()
    assert sid not in redact_text(f"vault write auth/approle/login role_id=x secret_id {sid}")


# ------------------------------------------------------------------- base64 and SAS tokens


def test_padded_base64_with_slashes_is_no_path() -> None:
    """An 88-character base64 key (Azure storage, API Management) with several "/" is a key:
    a path never ends in "=" padding."""
    for _ in range(20):
        body = _rand(86, _B64)
        body = "/".join((body[:10], body[11:30], body[31:50], body[51:70], body[71:]))
        key = body + "=="
        assert key[:-2] not in redact_text(f"stored:\n{key}\n")
    path = "/usr/lib/python3/dist-packages/some/module/data/file_name_here.py"
    assert redact_text(path) == path


def test_azure_sas_token_replaced_whole() -> None:
    """An Azure shared access signature is the whole query string (sv, sp, se, sr, sig …),
    not its sig alone; a query with sig but no SAS version keeps its other parameters."""
    sig = _rand(43, _B64).replace("/", "%2F").replace("+", "%2B") + "%3D"
    times = "st=2024-01-01T00:00:00Z&se=2024-02-01T00:00:00Z"
    sas = f"sp=r&{times}&spr=https&sv=2022-11-02&sr=b&sig={sig}"
    url = f"https://acct.blob.core.windows.net/c/f.txt?{sas}"
    out = redact_text(url)
    assert out == "https://acct.blob.core.windows.net/c/f.txt?<redacted>"
    assert redact_text(f'export AZURE_SAS="{sas}"') == 'export AZURE_SAS="<redacted>"'
    out = redact_text("https://cdn.example.com/i.png?w=100&sig=deadbeef01&h=3")
    assert out == "https://cdn.example.com/i.png?w=100&sig=<redacted>&h=3"


# ------------------------------------------------------------------------- password names


def test_password_abbreviation_psw() -> None:
    """``psw`` (``pswd``, ``pswrd``) names a password, as ``pwd`` does."""
    pw = _rand(12, _B62 + "!#%")
    for form in ('psw = "{v}"', "PSW={v} ./run.sh", '"pswd": "{v}"', "<psw>{v}</psw>"):
        assert pw not in redact_text(form.format(v=pw)), form
    assert redact_text("PSW_FILE=/etc/app/psw.txt") == "PSW_FILE=/etc/app/psw.txt"


# ------------------------------------------------------------ literals in expression forms


def _password() -> str:
    return _rand(5) + _RNG.choice("!#%*") + _rand(7)


def test_literal_through_a_conversion_or_container() -> None:
    """A credential name's literal passed through a string or bytes conversion, a secret
    wrapper or a one-element container is the value; a call on a variable stays."""
    forms = (
        'String password = new String("{v}");',
        'char *password = strdup("{v}");',
        'password := []byte("{v}")',
        'let password = String::from("{v}");',
        'password = SecretStr("{v}")',
        "const password = Buffer.from('{v}');",
        'let password = "{v}".to_string();',
        "password = ['{v}']",
        'pwd = new String("{v}");',
    )
    for form in forms:
        pw = _password()
        assert pw not in redact_text(form.format(v=pw)), form
    kept = 'password = new String(chars)\nsecret = str(value)\npassword_field = String("pw_input")'
    assert redact_text(kept) == kept


def test_default_of_an_environment_lookup() -> None:
    """The default literal of an environment or config lookup under a credential name; a
    path default (a key file, a working directory) stays."""
    forms = (
        'db_password = os.environ.get("DB_PASSWORD", "{v}")',
        'password = os.getenv("X") or "{v}"',
        'const password = process.env.DB_PASS ?? "{v}";',
        'password = ENV.fetch("DB_PASSWORD") {{ "{v}" }}',
        'String password = System.getenv().getOrDefault("PW", "{v}");',
    )
    for form in forms:
        pw = _password()
        assert pw not in redact_text(form.format(v=pw)), form
    kept = 'pwd = os.getenv("PWD", "/home/app")\npassword = os.environ.get("DB_PASSWORD")'
    assert redact_text(kept) == kept


def test_html_entity_quotes_and_percent_encoded_separator() -> None:
    """``password=&quot;…&quot;`` (HTML-escaped quotes) and ``password%3D…`` (a form encoded
    once more)."""
    pw = _password()
    assert pw not in redact_text(f'<x data-cfg="password=&quot;{pw}&quot;">')
    pw = _rand(12)
    assert (
        redact_text(f"next=%2Flogin%3Fpassword%3D{pw}%26x")
        != f"next=%2Flogin%3Fpassword%3D{pw}%26x"
    )
    assert redact_text("title=&quot;Forgot password&quot;") == "title=&quot;Forgot password&quot;"


def test_typing_into_a_password_field() -> None:
    """Browser automation typing a literal into a field its locator names a password
    (Selenium, Playwright, Cypress); other fields, key names and stand-in words stay."""
    forms = (
        'driver.find_element(By.ID, "password").send_keys("{v}")',
        'driver.findElement(By.name("passwd")).sendKeys("{v}");',
        'page.fill("#password", "{v}")',
        'await page.locator("input[name=password]").fill("{v}");',
        "cy.get('#password').type('{v}')",
        'passwordField.sendKeys("{v}");',
    )
    for form in forms:
        pw = _password()
        assert pw not in redact_text(form.format(v=pw)), form
    kept = (
        'page.fill("#username", "alice2024")\n'
        "cy.get('#password').type('{enter}')\n"
        'page.get_by_label("Password").fill("secret")'
    )
    assert redact_text(kept) == kept


def test_libcurl_credential_options() -> None:
    """libcurl's credential options (C, PHP, pycurl): the password, the bearer token, the
    key's passphrase; in ``USERPWD`` the part after the user."""
    pw = _password()
    assert pw not in redact_text(f'curl_easy_setopt(curl, CURLOPT_PASSWORD, "{pw}");')
    out = redact_text(f'curl_setopt($ch, CURLOPT_USERPWD, "admin:{pw}");')
    assert out == 'curl_setopt($ch, CURLOPT_USERPWD, "admin:<redacted>");'
    assert pw not in redact_text(f"c.setopt(pycurl.USERPWD, 'bob:{pw}')")
    assert pw not in redact_text(f'curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, "{pw}");')
    kept = 'curl_easy_setopt(curl, CURLOPT_URL, "https://example.com/login");'
    assert redact_text(kept) == kept


def test_jwk_private_members() -> None:
    """A JSON Web Key's private members (RFC 7518: d, p, q, dp, dq, qi; k of an oct key);
    its public members and code that builds a key stay."""
    d = _rand(86, _B62 + "_-")
    n = _rand(120, _B62 + "_-")
    out = redact_text(f'{{"kty":"RSA","n":"{n}","e":"AQAB","d":"{d}"}}')
    assert d not in out
    k = _rand(22, _B62 + "_-")  # a 128-bit key: under the bare-token pass's 24 characters
    assert k not in redact_text(f"{{'kty': 'oct', 'k': '{k}'}}")
    code = '{"kty": "RSA", "d": to_base64url_uint(numbers.d).decode()}'
    assert redact_text(code) == code


def test_mailgun_key_layouts() -> None:
    """Mailgun's private keys: ``key-`` and 32 lower-case alphanumerics, and the newer
    32-8-8 hex layout, bare."""
    old = "key-" + _rand(32, _LOWER36)
    assert old[4:] not in redact_text(f"MAILGUN = '{old}'")
    new = "-".join((_rand(32, _HEX), _rand(8, _HEX), _rand(8, _HEX)))
    assert redact_text(f"mg {new}") == "mg <redacted>"
    uuid = _uuid_layout()
    assert redact_text(f"id {uuid}") == f"id {uuid}"


def test_totp_seeds() -> None:
    """A TOTP seed (base32 of 10 or 20 bytes) after a one-time-password word, and a bare one
    of 20 bytes; an upper-case name stays."""
    b32 = string.ascii_uppercase + "234567"
    seed = "".join(_RNG.choice(b32) for _ in range(13)) + "K2Q"
    assert seed not in redact_text(f"mfa: {seed}")
    assert seed not in redact_text(f"pyotp.TOTP('{seed}').now()")
    long_seed = "".join(_RNG.choice(b32) for _ in range(28)) + "2K7Q"
    assert long_seed not in redact_text(f"seed {long_seed}")
    name = "HTTPPROXYAUTHORIZATIONHEADERNAME"
    assert redact_text(name) == name


# ------------------------------------------------------------------- more vendor grammars


def test_asana_personal_access_tokens() -> None:
    """Asana's PATs: "1/<user gid>:" or "2/<user gid>/<app gid>:" before 32 hex; 32 hex after
    another label stays a digest."""
    old = f"1/{_rand(16, '0123456789')}:{_rand(32, _HEX)}"
    new = f"2/{_rand(16, '0123456789')}/{_rand(16, '0123456789')}:{_rand(32, _HEX)}"
    for token in (old, new):
        assert token.rsplit(":", 1)[1] not in redact_text(f"asana token {token}")
    digest = _rand(32, _HEX)
    assert redact_text(f"md5: {digest}") == f"md5: {digest}"


def test_webex_bot_tokens() -> None:
    """A Webex bot token: 64 alphanumerics, "_", 4, "_", then a UUID's layout, whatever the
    look of its 64 characters."""
    head = "".join(_RNG.choice(string.ascii_lowercase) for _ in range(60)) + "9090"
    token = f"{head}_{_rand(4)}_{_uuid_layout(_LOWER36)}"
    assert redact_text(f'webexbot = "{token}"') == 'webexbot = "<redacted>"'


def test_token_where_a_url_port_stands() -> None:
    """A notification URL whose authority is "<id>:<token>" (Apprise's tgram://): a port is
    digits, so a token there is a credential; ports and userinfo URLs keep their form."""
    token = _rand(35, _B62 + "_-")
    assert redact_text(f"tgram://{_rand(8, '0123456789')}:{token}/").count(token) == 0
    for kept in (
        "http://localhost:8080/x",
        "redis://cache:6379/0",
        "ssh://git@host.example:repo/x",
    ):
        assert redact_text(kept) == kept


def test_value_printed_under_its_prompt() -> None:
    """A tool's output that names the credential on a line of prose ending in ":" and prints
    it alone on the next; a signature or a call before a decorator stays."""
    pw = _rand(32, _HEX)
    text = f"Please use the following password to proceed to installation:\n\n{pw}\n\nThen log in."
    assert pw not in redact_text(text)
    code = "def secrets(self) -> ClientSecrets:\n    @cached_property\n"
    assert redact_text(code) == code


def test_third_argument_password_apis() -> None:
    """Credential APIs whose third positional argument is the password (DirectoryEntry,
    ftplib's FTP, pymysql.connect), arguments on lines of their own too."""
    pw = _password()
    text = f'new DirectoryEntry("LDAP://corp.example",\n    "svc@corp.example",\n    "{pw}");'
    assert pw not in redact_text(text)
    assert pw not in redact_text(f'FTP("ftp.example.com", "bob", "{pw}")')
    assert pw not in redact_text(f'pymysql.connect("db", "root", "{pw}", "app")')
    assert pw not in redact_text(f'conn.simple_bind_s("cn=admin,dc=example", "{pw}")')


def test_directives_and_form_fields_by_name() -> None:
    """A directive (``#define``, CMake ``set(``) or an HTML input's ``name`` names the value
    beside it; other constants and fields stay."""
    pw = _password()
    assert pw not in redact_text(f'set(PWD "{pw}")')
    assert pw not in redact_text(f'#define DB_PASS "{pw}"')
    assert pw not in redact_text(f'<input type="text" name="pwd" value="{pw}">')
    kept = '#define PASS_MAX 128\nset(CMAKE_CXX_STANDARD 17)\n<input name="user" value="alice2024">'
    assert redact_text(kept) == kept


def test_short_password_names_in_code_forms() -> None:
    """The short names (pwd, pw, psw) before an array declarator, a one-element container, a
    template literal or a string prefix."""
    for form in ('char pwd[] = "{v}";', "pwd = ['{v}']", "var psw = `{v}`", 'pw = f"{v}"'):
        pw = _password()
        assert pw not in redact_text(form.format(v=pw)), form


def test_typed_declarations() -> None:
    """``name: type = literal`` (Python annotations and settings fields, TypeScript, Kotlin,
    Rust) under a credential name; a default that is no literal, and a constant naming a
    metric, stay."""
    forms = (
        'password: str = "{v}"',
        'db_password: Optional[str] = "{v}"',
        'val password: String = "{v}"',
        "const apiToken: string = '{v}';",
        'let pwd: &str = "{v}";',
        'def connect(password: str = "{v}"):',
    )
    for form in forms:
        pw = _password()
        assert pw not in redact_text(form.format(v=pw)), form
    kept = (
        "password: SecretStr = Field(default=None)\n"
        "api_key: Optional[str] = None\n"
        'TIME_TO_FIRST_TOKEN: Final = "gen_ai.server.time_to_first_token"'
    )
    assert redact_text(kept) == kept


def test_json_unicode_escaped_quotes() -> None:
    """A credential's value between quotes escaped as ``\\u0022`` or after ``\\u003d``, as a
    JSON text inside a string or a script writes them."""
    pw = _password()
    assert pw not in redact_text(f"password\\u003d{pw}\\u0026next=1")
    assert pw not in redact_text(f"\\u0022password\\u0022:\\u0022{pw}\\u0022")


def test_self_identifying_prefixes_of_the_scanners_grammars() -> None:
    """Formats whose prefix names them, bodies as the scanners' rule patterns give them
    (trufflehog, CredSweeper, Kingfisher); the prefix alone or with a word stays."""
    upper36 = string.ascii_uppercase + string.digits
    tokens = (
        "bb_ma_" + _rand(30, _HEX),
        "endr+" + _rand(16, _B62 + "-"),
        "API_KEY" + _rand(32, upper36),
        "master-" + "aB3" * 6 + "xY",
        "pk_" + _rand(34, _HEX),
        "pk_1234567_" + _rand(32, upper36),
        "rh-api-" + _uuid_layout(_HEX + "ABCDEF"),
        "ramp_sec_" + _rand(48),
        "sqco_" + _rand(59),
        "amzn.mws." + _uuid_layout(_LOWER36),
        "CCIPAT_" + _rand(22) + "_" + _rand(40, _LOWER36),
        "hawk." + _rand(20) + "." + _rand(20),
        "u-s4t2ud-" + _rand(64, _HEX),
        "rubygems_" + _rand(48),
        "xkeysib-" + _rand(64, _HEX) + "-" + _rand(16, _B62 + "_-"),
    )
    for token in tokens:
        assert redact_text(f"x {token}") == "x <redacted>", token
    kept = "master-branch account-settings pk_user_id API_KEY_NAME hawk.eye"
    assert redact_text(kept) == kept


def test_name_and_value_attributes_of_any_tag() -> None:
    """A tag pairing a name or key attribute with a value attribute (.NET's <add>, Spring's
    <property>, <param>), a short password name among them; other names stay."""
    pw = _password()
    for form in ('<add key="pwd" value="{v}" />', '<property name="db.password" value="{v}"/>'):
        assert pw not in redact_text(form.format(v=pw)), form
    kept = '<param name="color" value="red2024"/>'
    assert redact_text(kept) == kept


def test_r_assignment_arrow() -> None:
    """R's ``<-`` assigns a literal to a credential name as ``=`` does."""
    pw = _password()
    assert pw not in redact_text(f'db_password <- "{pw}"')
    assert redact_text('x <- "hello"') == 'x <- "hello"'
