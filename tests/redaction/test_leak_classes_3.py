"""Regressions for the third round of issue 36: a value masked wherever it repeats in a text,
printf placeholders and lists of quoted lines kept, and the classes of the held-out leaks.

Bodies are random, so no example text of a corpus is pinned here.
"""

from __future__ import annotations

import json
import random
import string
import sys
from pathlib import Path

from wayline.redaction import redact_text

_RNG = random.Random(3603)
_B62 = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = _B62) -> str:
    body = "".join(_RNG.choice(alphabet) for _ in range(n - 1))
    return body + _RNG.choice("0123456789")  # a digit, as keys have


def test_a_replaced_value_is_masked_where_it_repeats() -> None:
    """A password a rule replaced is masked at its other places in the same text too (an
    account name equal to it, an id field holding it)."""
    pw = _rand(10, _B62 + "!#")
    out = redact_text(f"account:{pw} password:{pw}")
    assert pw not in out and out.count("<redacted>") == 2
    token = _rand(18)
    out = redact_text(f"ANY_id={token} ANY_token={token}")
    assert out == "ANY_id=<redacted> ANY_token=<redacted>"


def test_a_short_replaced_value_is_not_masked_elsewhere() -> None:
    """A value under the known-value floor (8 characters) is not hunted in the rest of the
    text: it would hit ordinary words."""
    assert redact_text("password=Zq9!x7 echo Zq9!x7") == "password=<redacted> echo Zq9!x7"


def test_a_printf_placeholder_stays_whole() -> None:
    """``password=%(pw)s`` is a placeholder: it stays whole, bracket and all."""
    for text in ("password=%(pw)s", "dsn = 'host=db password=%(password)s user=app'"):
        assert redact_text(text) == text


def test_a_list_of_lines_ending_in_a_credential_word_stays() -> None:
    """In a JSON list of lines, a line that ends in "token" is no name of the next line: only a
    whole quoted string is a name (the false positive of bench/viewer.py's synthetic steps)."""
    lines = [
        "src/app/writer.py:    89|# token user are kept per parent so no hook sees a stale token",
        "src/app/writer.py:    90|    if stream is None or len(retry) > 691:",
    ]
    text = json.dumps({"matches": lines})
    assert redact_text(text) == text
    pair = '("sonar.login", "' + _rand(40, "0123456789abcdef") + '")'
    assert redact_text(pair) == '("sonar.login", "<redacted>")'


def test_bench_synthetic_session_is_not_altered() -> None:
    """bench/viewer.py's 2,000-step synthetic coding session (code listings, search results,
    no credentials) comes out of redact_text unchanged."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        import viewer  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    doc = viewer.trajectory(2000)
    altered = [
        step["step_id"]
        for step in doc["steps"]
        for result in step.get("observation", {}).get("results", [])
        if redact_text(result["content"]) != result["content"]
    ]
    assert altered == []


def _hex(n: int) -> str:
    return _rand(n, "0123456789abcdef")


def test_a_terminal_colour_code_written_as_an_escape() -> None:
    """A key after a colour code written as an escape (JSON's \\u001b, C's \\033) is a key."""
    key = "sk-" + _hex(32)
    out = redact_text(json.dumps({"c": f">>>\x1b[93m{key}\x1b[0m<<<"}))
    assert key not in out and "\\u001b[93m<redacted>" in out
    assert redact_text(f"\\033[1;32m{key}") == "\\033[1;32m<redacted>"


def test_a_key_of_snake_case_pieces_is_no_name() -> None:
    """A token of ``_``-joined pieces with a random piece of 16+ characters after a credential
    word is a key (``sk_<n>_<n>_<hex>``); a snake_case name of short words stays."""
    key = f"sk_{_rand(4, string.digits)}_{_rand(6, string.digits)}_{_hex(32)}"
    assert redact_text(f"acme secret {key}") == "acme secret <redacted>"
    assert redact_text("the secret key_derivation_function_v2") == (
        "the secret key_derivation_function_v2"
    )


def test_two_credential_words_take_a_shorter_token() -> None:
    """After two credential words (``private token``, ``secret key=`` glued to a vendor's name)
    a token of 10+ characters with a letter and a digit is the secret; versions and dates stay."""
    value = _rand(14, string.ascii_lowercase + string.digits)
    assert redact_text(f"acme private token {value}") == "acme private token <redacted>"
    assert redact_text(f"acme_secret key={value}") == "acme_secret key=<redacted>"
    for text in ("use the access token v1.2.3.4567 now", "access token 2024-01-01T10:00"):
        assert redact_text(text) == text


def test_vendor_key_names_take_short_and_letter_heavy_keys() -> None:
    """Under ``<vendor>_key``: a 10-15 character key of letters and digits, a 16+ character
    mixed-case key with a digit, and random letters (no pronounceable words) are keys; names
    made of words stay."""
    short = _rand(12, string.ascii_uppercase + string.digits)
    short = short[:3] + "ABC" + short[6:9] + "123"
    assert redact_text(f"acme_key = {short}") == "acme_key = <redacted>"
    mixed = "yhTFulkELh3-jC6oudRX"
    assert redact_text(f"acme_key = {mixed}") == "acme_key = <redacted>"
    letters = "DjayBenyJrtpvydFCzAphcqc"
    assert redact_text(f'Acme_key = "{letters}"') == 'Acme_key = "<redacted>"'
    for text in ("HEROKU_KEY=DefaultKeyName", "cache_key = layer12norm3", "sort_key = abc123de"):
        assert redact_text(text) == text


def test_personal_access_token_names_judge_their_value() -> None:
    """``<vendor>_PAT`` holds a personal access token when its value looks like one; in code a
    ``_PAT`` constant is a pattern and stays."""
    token = _rand(34, "0123456789abcdef")
    assert redact_text(f"ACME_PAT = {token}") == "ACME_PAT = <redacted>"
    for text in ('_HEX_PAT = "[0-9A-Fa-f]{1,4}"', '_INIT_FACTORY_PAT = "__attr_factory_%s"'):
        assert redact_text(text) == text


def test_framework_session_cookies() -> None:
    """A web framework's session cookie (Rails' ``_<app>_session``, PHPSESSID, JSESSIONID) holds
    a bearer credential; ``self._session`` in code stays."""
    value = _hex(32)
    assert redact_text(f"_acme_session={value} # cookie") == "_acme_session=<redacted> # cookie"
    assert redact_text(f"JSESSIONID={value.upper()}") == "JSESSIONID=<redacted>"
    assert redact_text("self._session = Session()") == "self._session = Session()"


def test_nats_seeds_and_alibaba_key_ids() -> None:
    """A NATS nkey seed (``S`` + type + base32, 58 characters) and an Alibaba Cloud AccessKey id
    (``LTAI``…) are replaced whole."""
    seed = "SU" + "".join(_RNG.choice(string.ascii_uppercase + "234567") for _ in range(56))
    assert redact_text(f"// {seed}") == "// <redacted>"
    key_id = "LTAI" + _rand(20)
    assert redact_text(f"id {key_id} here") == "id <redacted> here"


def test_long_runs_of_a_smaller_alphabet() -> None:
    """A long run of hex in both cases with a few other letters is judged against the symbols
    it uses; upper-case hex after ``0x`` (a curve constant) stays."""
    body = "".join(_RNG.choice("0123456789abcdefABCDEF") for _ in range(300))
    run = body[:100] + "N" + body[100:200] + "n" + body[200:]
    assert redact_text(f'{{"url":{run}}}') == '{"url":<redacted>}'
    const = "group_order = 0x" + "".join(_RNG.choice("0123456789ABCDEF") for _ in range(80))
    assert redact_text(const) == const


def test_a_vendor_key_glued_to_its_name_and_access_codes() -> None:
    """``acmekey=`` (a vendor's name with ``key`` glued on) holds a key when its value looks like
    one (``monkey`` and ``hotkey`` are words); a token after ``access code`` is a secret."""
    value = "MNO" + _rand(3, string.digits) + "STU" + _rand(3, string.digits)
    assert redact_text(f"acmekey={value}") == "acmekey=<redacted>"
    for text in ("monkey=abc123def456", "hotkey = Ctrl1234Shift5"):
        assert redact_text(text) == text
    code = _hex(32)
    assert redact_text(f"acme ACCESS code {code}") == "acme ACCESS code <redacted>"
