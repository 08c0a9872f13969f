"""PEM private keys: every block redacted between its head and foot, the same result the old
single regex gave, and found by one search for END per text (many BEGINs without an END
stay linear; the time is a figure of tests/reliability/corpus/measure.py, not asserted)."""

from __future__ import annotations

from wayline.redaction import REDACTED, redact_text

BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nq3c5Zk9PLm2Xw8RyTbVa1\n"


def test_a_terminated_block_keeps_its_head_and_foot() -> None:
    """BEGIN … END: only the body is replaced."""
    text = f"key:\n-----BEGIN RSA PRIVATE KEY-----\n{BODY}-----END RSA PRIVATE KEY-----\nafter"
    assert redact_text(text) == (
        f"key:\n-----BEGIN RSA PRIVATE KEY-----{REDACTED}-----END RSA PRIVATE KEY-----\nafter"
    )


def test_an_unterminated_block_is_redacted_to_the_end_of_its_body() -> None:
    """A block cut by a bound (no END) loses its base64 body; text after it stays."""
    text = f"-----BEGIN PRIVATE KEY-----\n{BODY}| next column"
    assert redact_text(text) == f"-----BEGIN PRIVATE KEY-----{REDACTED}| next column"


def test_two_blocks_and_a_begin_inside_a_block() -> None:
    """Each block is redacted on its own; a second BEGIN before the END belongs to the body."""
    one = f"-----BEGIN EC PRIVATE KEY-----\n{BODY}-----END EC PRIVATE KEY-----"
    nested = (
        f"-----BEGIN PRIVATE KEY-----\n{BODY}-----BEGIN PRIVATE KEY-----\n{BODY}"
        "-----END PRIVATE KEY-----"
    )
    out = redact_text(f"{one}\nand\n{nested}")
    assert out == (
        f"-----BEGIN EC PRIVATE KEY-----{REDACTED}-----END EC PRIVATE KEY-----\nand\n"
        f"-----BEGIN PRIVATE KEY-----{REDACTED}-----END PRIVATE KEY-----"
    )


def test_many_begins_with_tokens_and_no_end() -> None:
    """The hostile shape (BEGIN then a token with ``_`` or ``@``, repeated) is redacted at
    every BEGIN, and the tokens after each body survive."""
    unit = "-----BEGIN PRIVATE KEY-----\nabc_def\n"
    out = redact_text(unit * 200)
    assert out.count(f"-----BEGIN PRIVATE KEY-----{REDACTED}") == 200
    assert out.count("_def") == 200
    at_unit = "-----BEGIN PRIVATE KEY-----user@host "
    assert redact_text(at_unit * 50).count(REDACTED) == 50


def test_an_end_far_after_many_begins_closes_the_first_block() -> None:
    """When an END exists, the first BEGIN's block runs to it (as the lazy regex did)."""
    text = "-----BEGIN PRIVATE KEY-----a_b " * 5 + "-----END PRIVATE KEY----- tail"
    assert redact_text(text) == (
        f"-----BEGIN PRIVATE KEY-----{REDACTED}-----END PRIVATE KEY----- tail"
    )
