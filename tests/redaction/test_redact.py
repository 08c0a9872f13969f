"""Redaction: key names, value patterns over the shipped corpus, runtime and file patterns."""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from wayline.redaction.redact import (
    REDACT_PATTERNS_ENV,
    add_secret_pattern,
    add_sensitive_key,
    reload_env_patterns,
    remove_secret_pattern,
    secret_patterns,
)
from wayline.redaction.sanitize import REDACTED, is_sensitive_key, redact_text, sanitize
from wayline.testing.secrets import (
    HARMLESS_STRINGS,
    SECRET_SAMPLES,
    SecretSample,
    embed_everywhere,
)

# --------------------------------------------------------------------------- the corpus


def test_corpus_has_enough_distinct_shapes() -> None:
    """At least 45 distinctly named samples, each needle inside its secret and non-trivial."""
    names = [s.name for s in SECRET_SAMPLES]
    assert len(set(names)) == len(names) >= 45
    for sample in SECRET_SAMPLES:
        assert len(sample.needle) >= 8 and sample.needle in sample.secret, sample.name


def test_corpus_is_deterministic() -> None:
    """Needles are derived from fixed seeds, so every run tests the same strings."""
    github = next(s for s in SECRET_SAMPLES if s.name == "github_classic")
    assert github.secret.startswith("ghp_") and len(github.secret) == 40
    assert embed_everywhere(github)[1] == {"note": github.secret}


@pytest.mark.parametrize("sample", SECRET_SAMPLES, ids=lambda s: s.name)
def test_no_needle_survives_any_embedding(sample: SecretSample) -> None:
    """Every secret, in every nesting, is gone from the encoded sanitized payload."""
    for index, payload in enumerate(embed_everywhere(sample)):
        encoded = json.dumps(sanitize(payload), allow_nan=False)
        assert sample.needle not in encoded, (sample.name, index, encoded[:300])


@pytest.mark.parametrize("sample", SECRET_SAMPLES, ids=lambda s: s.name)
def test_redaction_is_idempotent_on_the_corpus(sample: SecretSample) -> None:
    """Sanitizing the sanitized form of every embedding changes nothing."""
    for payload in embed_everywhere(sample):
        once = sanitize(payload)
        assert sanitize(once) == once


@pytest.mark.parametrize("text", HARMLESS_STRINGS)
def test_harmless_strings_survive_unchanged(text: str) -> None:
    """Prose, ids, shas, paths and token counts are not mistaken for secrets."""
    assert redact_text(text) == text
    assert sanitize({"note": text, "list": [text]}) == {"note": text, "list": [text]}


# --------------------------------------------------------------------------- readable context


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abcDEF0123456789xyz", "Authorization: Bearer <redacted>"),
        ("authorization: Token 0123456789abcdef", "authorization: Token <redacted>"),
        ("https://user:hunter22pass@host.example/x", "https://user:<redacted>@host.example/x"),
        (
            "https://maps.example.com/geo?address=Paris&key=abc123DEF456&fmt=json",
            "https://maps.example.com/geo?address=Paris&key=<redacted>&fmt=json",
        ),
        ("/cb?code=1&access_token=zzz999yyy", "/cb?code=1&access_token=<redacted>"),
        ("export SECRET=abc123xyz", "export SECRET=<redacted>"),
        ("DB_PASSWORD: hunter2hunter2", "DB_PASSWORD: <redacted>"),
        ('{"client_secret": "abcdef123456"}', '{"client_secret": "<redacted>"}'),
        ("config: password=abc, retries=3", "config: password=<redacted>, retries=3"),
        ("mysql --password=hunter22 --host x", "mysql --password=<redacted> --host x"),
        ("tool --api-key abcdef1234 run", "tool --api-key <redacted> run"),
        ("curl -u admin:pa55word https://x", "curl -u admin:<redacted> https://x"),
        ("Cookie: theme=dark; sessionid=abc123", "Cookie: <redacted>"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\ndef==\n-----END RSA PRIVATE KEY----- tail",
            "-----BEGIN RSA PRIVATE KEY-----<redacted>-----END RSA PRIVATE KEY----- tail",
        ),
        (
            "cut: -----BEGIN PRIVATE KEY-----\nMIIEabcdef",
            "cut: -----BEGIN PRIVATE KEY-----<redacted>",
        ),
    ],
)
def test_only_the_secret_part_is_replaced(text: str, expected: str) -> None:
    """Context around a secret stays readable; only the credential becomes <redacted>."""
    assert redact_text(text) == expected


def test_secret_straddling_the_string_bound_leaks_nothing() -> None:
    """A secret cut by the 8000-char bound is redacted whole before the cut, not half-kept."""
    url = next(s for s in SECRET_SAMPLES if s.name == "postgres_url_password")
    pem = next(s for s in SECRET_SAMPLES if s.name == "pem_rsa")
    # The cut lands mid-password (the URL rule needs the '@' after it) and mid-key-block.
    url_pad = 8_000 - 12 - url.secret.index(url.needle) - 1
    cases = ((url, url_pad, url.needle[:8]), (pem, 7_900, pem.secret.splitlines()[1][:8]))
    for sample, pad, fragment in cases:
        out = sanitize("a" * pad + " " + sample.secret + " tail" * 400)
        assert out.endswith("chars]") and out.startswith("a" * pad)
        assert fragment not in out


# --------------------------------------------------------------------------- key names


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "API-KEY",
        "apiKey",
        "x-api-key",
        "X_API_KEY",
        "openai_api_key",
        "OPENAI_API_KEY",
        "Authorization",
        "proxy-authorization",
        "cookie",
        "Set-Cookie",
        "password",
        "passwd",
        "DB_PASSWORD",
        "db_pwd",
        "secret",
        "client_secret",
        "clientSecret",
        "aws_secret_access_key",
        "token",
        "access_token",
        "refreshToken",
        "id_token",
        "auth_token",
        "session_token",
        "X-Amz-Security-Token",
        "github_token",
        "private_key",
        "privateKey",
        "AccountKey",
        "auth",
        "basic_auth",
        "credentials",
        "passphrase",
    ],
)
def test_sensitive_keys(key: str) -> None:
    """Credential key spellings (case, '-', camelCase) are recognised."""
    assert is_sensitive_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "max_tokens",
        "input_tokens",
        "output_tokens",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "cache_read_tokens",
        "token_count",
        "max_token",
        "tokenizer",
        "token_type",
        "key",
        "keys",
        "primary_key",
        "pattern_key",
        "pattern_keys",
        "session_key",
        "session_id",
        "api_request_id",
        "tool_call_id",
        "author",
        "PWD",
        "api_key_env",
        "monkey",
        "",
    ],
)
def test_harmless_keys(key: str) -> None:
    """Token counts, ids and look-alike names are not credential keys."""
    assert not is_sensitive_key(key)


def test_key_redaction_keeps_counts_and_flags() -> None:
    """Credential values vanish (a list under a credential key keeps its shape, every item
    hidden); token counts and None/bool credential values survive."""
    payload = {
        "api_key": "opaque-value-1",
        "Authorization": ["Bearer", "x"],
        "headers": {"X-Api-Key": 12345, "Accept": "application/json"},
        "usage": {"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46},
        "max_tokens": 100,
        "password": None,
        "has_token": True,
        "token": False,
    }
    assert sanitize(payload) == {
        "api_key": REDACTED,
        "Authorization": [REDACTED, REDACTED],
        "headers": {"X-Api-Key": REDACTED, "Accept": "application/json"},
        "usage": {"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46},
        "max_tokens": 100,
        "password": None,
        "has_token": True,
        "token": False,
    }


def test_header_pairs_and_argv_flags() -> None:
    """("Authorization", v) pairs and ["--token", v] argv entries hide the value."""
    payload = {
        "headers": [("Authorization", "opaque"), ("Accept", "text/plain")],
        "argv": ["gh", "auth", "login", "--with-token", "opaque2", "--verbose"],
    }
    assert sanitize(payload) == {
        "headers": [["Authorization", REDACTED], ["Accept", "text/plain"]],
        "argv": ["gh", "auth", "login", "--with-token", REDACTED, "--verbose"],
    }


def test_secrets_in_dict_keys_are_redacted() -> None:
    """A secret used as a mapping key is redacted in the key too."""
    sample = next(s for s in SECRET_SAMPLES if s.name == "slack_bot")
    out = sanitize({sample.secret: 1})
    assert out == {REDACTED: 1}


# --------------------------------------------------------------------------- extension


def test_add_secret_pattern_whole_match_and_group() -> None:
    """A runtime pattern replaces its whole match, or only its `secret` group."""
    try:
        add_secret_pattern("acme_token", r"acme_[0-9a-f]{16}")
        add_secret_pattern("acme_pin", re.compile(r"PIN (?P<secret>[0-9]{6})\b"), triggers=["pin "])
        assert "acme_token" in secret_patterns()
        text = "use acme_0123456789abcdef with PIN 123456 today"
        assert redact_text(text) == "use <redacted> with PIN <redacted> today"
        assert sanitize({"note": text})["note"] == "use <redacted> with PIN <redacted> today"
    finally:
        assert remove_secret_pattern("acme_token")
        assert remove_secret_pattern("acme_pin")
    assert not remove_secret_pattern("acme_pin")
    assert redact_text("acme_0123456789abcdef") == "acme_0123456789abcdef"


def test_add_secret_pattern_rejects_bad_regexes() -> None:
    """Invalid or empty-matching regexes fail with an error naming the pattern."""
    with pytest.raises(ValueError, match=r"'broken'.*invalid regex"):
        add_secret_pattern("broken", "([a-z")
    with pytest.raises(ValueError, match=r"'greedy'.*empty string"):
        add_secret_pattern("greedy", "x*")
    assert "broken" not in secret_patterns() and "greedy" not in secret_patterns()


def test_add_sensitive_key_extends_keys_and_text() -> None:
    """A key added at runtime is redacted as a mapping key (even one sanitized, and so cached,
    before) and in NAME=value text."""
    before = sanitize({"wayline_test_sesame": "open"})  # the key's result is cached now
    assert before == {"wayline_test_sesame": "open"}
    add_sensitive_key("wayline-test-sesame")
    assert is_sensitive_key("WAYLINE_TEST_SESAME") and is_sensitive_key("waylineTestSesame")
    assert sanitize({"wayline_test_sesame": "open"}) == {"wayline_test_sesame": REDACTED}
    assert redact_text("WAYLINE_TEST_SESAME=open123") == "WAYLINE_TEST_SESAME=<redacted>"
    with pytest.raises(ValueError, match="no letters"):
        add_sensitive_key("--")


def test_patterns_file_from_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """WAYLINE_REDACT_PATTERNS names a file of regexes; bad lines are skipped with a warning."""
    patterns = tmp_path / "patterns.txt"
    patterns.write_text(
        "# internal ticket tokens\n\nTKT-[0-9]{8}\nemployee=(?P<secret>\\w+)\n([unclosed\n",
        encoding="utf-8",
    )
    monkeypatch.setenv(REDACT_PATTERNS_ENV, str(patterns))
    try:
        with caplog.at_level(logging.WARNING, logger="wayline.redaction.redact"):
            names = reload_env_patterns()
        assert names == (f"{patterns}:3", f"{patterns}:4")
        assert any(
            f"{patterns}:5" in r.getMessage() and REDACT_PATTERNS_ENV in r.getMessage()
            for r in caplog.records
        )
        redacted = redact_text("see TKT-12345678, employee=bob")
        assert redacted == "see <redacted>, employee=<redacted>"
    finally:
        monkeypatch.delenv(REDACT_PATTERNS_ENV)
        assert reload_env_patterns() == ()
    assert redact_text("TKT-12345678") == "TKT-12345678"


def test_missing_patterns_file_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A patterns file that cannot be read is reported and ignored."""
    monkeypatch.setenv(REDACT_PATTERNS_ENV, str(tmp_path / "absent.txt"))
    try:
        with caplog.at_level(logging.WARNING, logger="wayline.redaction.redact"):
            assert reload_env_patterns() == ()
        assert any("absent.txt" in r.getMessage() for r in caplog.records)
    finally:
        monkeypatch.delenv(REDACT_PATTERNS_ENV)
        reload_env_patterns()


# --------------------------------------------------------------------------- threads


def test_concurrent_sanitize_matches_serial_results() -> None:
    """Worker threads sanitizing while patterns change get the same results as one thread."""
    payloads = [p for s in SECRET_SAMPLES[:30] for p in embed_everywhere(s)[:8]]
    expected = [sanitize(p) for p in payloads]
    results: dict[int, list[Any]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(5)

    def work(slot: int) -> None:
        try:
            start.wait()
            results[slot] = [sanitize(p) for p in payloads]
        except BaseException as exc:  # reported below, not swallowed
            errors.append(exc)

    def churn() -> None:
        start.wait()
        for i in range(200):
            add_secret_pattern("churn", rf"zz-never-{i}-zz")
        remove_secret_pattern("churn")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    threads.append(threading.Thread(target=churn))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(results[i] == expected for i in range(4))


def test_cached_long_text_follows_rule_changes() -> None:
    """A long text redacted before (and cached) is redacted by a pattern added afterwards,
    and left alone again once the pattern is removed; texts past the cache bound still are."""
    text = "tool output " * 20 + "zz-internal-4f9a-token " + "more output " * 20
    assert redact_text(text) == text
    assert redact_text(text) == text  # served from the cache
    add_secret_pattern("test-internal", r"zz-internal-[0-9a-f]{4}-token")
    try:
        assert "zz-internal" not in redact_text(text)
        huge = "x" * 20_000 + " zz-internal-1234-token"
        assert "zz-internal" not in redact_text(huge)
    finally:
        remove_secret_pattern("test-internal")
    assert redact_text(text) == text
