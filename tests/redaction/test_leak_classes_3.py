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
