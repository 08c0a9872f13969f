"""Regressions from ``make reliability``: shell re-quoted values and tokens before ``(``."""

from __future__ import annotations

import json

import pytest

from wayline.redaction import redact_text, sanitize

_SECRET = "zymt4lnng61jkfyftl8809e0"
# The two ways a shell word closes its single quote, quotes one and reopens it.
_REQUOTES = ["'\"'\"'", "'\\''"]


def _all_paths(text: str) -> list[str]:
    """The text as redacted directly, as JSON text, and through the sanitizer."""
    return [
        redact_text(text),
        redact_text(json.dumps(text)),
        json.dumps(sanitize({"command": text})),
    ]


@pytest.mark.parametrize("requote", _REQUOTES)
def test_a_value_after_a_shell_requote_is_redacted(requote: str) -> None:
    """'export NAME='"'"'secret'"'"'' (or '\\'') hides the secret, not an empty quoted value."""
    word = f"'export CONFLUENCE_TOKEN={requote}{_SECRET}{requote}'"
    text = f"printf '%s\\n' 'asana_token = \"x\"' {word} '{{\"AWS_token\": \"y\"}}'"
    for out in _all_paths(text):
        assert _SECRET not in out, out
    assert redact_text(word) == f"'export CONFLUENCE_TOKEN={requote}<redacted>{requote}'"


@pytest.mark.parametrize("requote", _REQUOTES)
def test_a_requoted_value_without_a_closing_quote_runs_to_the_end_of_its_word(
    requote: str,
) -> None:
    """A re-quoted value cut before its closing quote is replaced up to the next whitespace."""
    out = redact_text(f"bash -c 'KUCOIN_TOKEN={requote}d831405051908df94e38f857 next")
    assert out == f"bash -c 'KUCOIN_TOKEN={requote}<redacted> next"


def test_a_requoted_placeholder_is_kept() -> None:
    """A re-quoted variable reference refers to a secret and survives."""
    text = "sh -c 'export API_TOKEN='\"'\"'$API_TOKEN'\"'\"''"
    assert redact_text(text) == text


def test_requoted_values_in_dense_text_are_redacted() -> None:
    """Text with a credential name every few characters (the dense path) hides them too."""
    text = "".join(f"A{i}_TOKEN='\"'\"'x9{i:04d}k{_SECRET}'\"'\"'\n" for i in range(400))
    out = redact_text(text)
    assert _SECRET not in out
    assert out.count("<redacted>") == 400


@pytest.mark.parametrize("tail", ["(", "(x)", "(\n", "( x"])
def test_a_random_token_before_a_parenthesis_is_redacted(tail: str) -> None:
    """A token that is no function name, closed or not, is a value (fuzz: PGPASSWORD=…()."""
    text = f" export PGPASSWORD=nr785KauC8XuxgurEW{tail}"
    for out in _all_paths(text):
        assert "nr785KauC8XuxgurEW" not in out, out


@pytest.mark.parametrize(
    "code",
    [
        "token = getV2Client(",
        "token = parseHttp2Frame(",
        "key = getUTF8StringFromBase64(s)",
        "secret = hmac_sha256_hex(key, msg)",
        "token = attach(",
    ],
)
def test_function_names_before_a_parenthesis_are_kept(code: str) -> None:
    """Calls, also a call whose arguments continue on the next line, are no secret."""
    assert redact_text(code) == code


@pytest.mark.parametrize("requote", _REQUOTES)
def test_a_requoted_value_in_a_python_repr_is_redacted(requote: str) -> None:
    """In a log line's repr of the payload the quotes may carry backslashes; the value is
    still found and replaced."""
    word = f"'export CONFLUENCE_TOKEN={requote}{_SECRET}{requote}'"
    for shown in (repr(word), repr({"command": word}), repr({"a": json.dumps({"c": word})})):
        out = redact_text(shown)
        assert _SECRET not in out, out
        assert "<redacted>" in out, out
