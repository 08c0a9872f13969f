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
