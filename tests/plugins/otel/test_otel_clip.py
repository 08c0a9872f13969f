"""No fragment at any clip: OpenTelemetry attributes are redacted before they are cut, and
the cut leaves no part of a secret, wherever the secret sits relative to the limit."""

from __future__ import annotations

from typing import Any

import pytest
from otel_support import attrs

from wayline.plugins.observability.otel.attributes import Cleaner, redact_clip
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.redaction import redact_text
from wayline.testing.secrets import SECRET_SAMPLES, SecretSample

FRAGMENT = 8  # a run this long of a secret's characters counts as a fragment of it


def _whole(sample: SecretSample) -> bool:
    """A single-token secret that redaction removes whole when it sees all of it."""
    return (
        len(sample.needle) >= 24
        and sample.needle in sample.secret
        and " " not in sample.secret
        and sample.needle not in redact_text(f"see {sample.secret} here")
    )


SECRETS = [s for s in SECRET_SAMPLES if _whole(s)][:12]


def fragment(needle: str, text: str) -> str | None:
    """The first ``FRAGMENT``-long piece of ``needle`` found in ``text``, if any."""
    for i in range(len(needle) - FRAGMENT + 1):
        if needle[i : i + FRAGMENT] in text:
            return needle[i : i + FRAGMENT]
    return None


def test_the_corpus_has_secrets_to_place() -> None:
    """The sweep below runs over several secret shapes, not none."""
    assert len(SECRETS) >= 6


@pytest.mark.parametrize("sample", SECRETS, ids=lambda s: s.name)
def test_a_secret_straddling_the_limit_leaves_no_fragment(sample: SecretSample) -> None:
    """A secret placed at every offset across the cut of text and JSON values (the cut
    falling before, inside and after it) is either whole-redacted or absent, never cut."""
    cleaner = Cleaner(OtelSettings(content_max_chars=300))
    size = len(sample.secret)
    for limit in (120, 300):
        for offset in range(limit - size - 2, limit + 3):
            text = ("w " * offset)[: offset - 1] + " " + sample.secret + " tail" * 600
            for out in (
                cleaner.text(text, limit),
                cleaner.json({"result": text}, limit),
                redact_clip(text, limit),
            ):
                assert fragment(sample.needle, out) is None, (offset, limit, out[-80:])


@pytest.mark.parametrize("sample", SECRETS, ids=lambda s: s.name)
def test_secrets_redacted_before_the_limit_do_not_pull_a_cut_secret_in(
    sample: SecretSample,
) -> None:
    """Many secrets before the limit shrink when redacted; the text that moves up to the
    limit never holds a secret that the redaction window's edge cut in two."""
    limit, size = 500, len(sample.secret) + 1
    # As many secrets as fit before the limit plus the redaction window (1,024 characters),
    # then one more that the gap moves across where that window ends.
    many = " ".join([sample.secret] * ((limit + 1024) // size - 1))
    for gap in range(0, 2 * size + 2):
        text = f"{many} {'a' * gap} {sample.secret} {'end ' * 400}"
        out = redact_clip(text, limit)
        assert fragment(sample.needle, out) is None, (gap, out[-120:])


def test_a_cut_never_splits_a_redaction_marker() -> None:
    """Wherever the limit falls on a ``<redacted>`` marker, the kept text ends before it."""
    text = "ab " * 15 + SECRETS[0].secret + " and more"
    whole = redact_text(text)
    assert "<redacted>" in whole
    for limit in range(40, 60):
        kept = redact_clip(text, limit).split("...[truncated", 1)[0]
        assert whole.startswith(kept) and len(kept) <= limit
        assert not any(kept.endswith("<redacted>"[:i]) for i in range(1, len("<redacted>")))


def test_long_plain_text_keeps_the_limits_worth() -> None:
    """A long run that is no secret (9,000 x) keeps its first `limit` characters; a single
    word too long to redact as a whole is left out whole."""
    assert redact_clip("x" * 9000, 1000) == "x" * 1000 + "...[truncated 8000 chars]"
    huge = "k" * 200_000
    assert redact_clip(f"start {huge}", 100) == "start ...[truncated 200000 chars]"


def test_the_plugin_sets_no_fragment_on_a_span(make_otel: Any) -> None:
    """Through the plugin: a user message whose secret straddles content_max_chars puts no
    piece of it on the span."""
    sample = SECRETS[0]
    otel = make_otel(content_max_chars=1000)
    message = "w " * 495 + sample.secret + " tail" * 500
    otel.observer.pre_llm_call(session_id="s", turn_id="s:t", model="m", user_message=message)
    otel.observer.on_session_end(session_id="s", turn_id="s:t", completed=True)
    value = str(attrs(otel.spans().one("llm.m"))["input.value"])
    assert value.startswith("w w ") and "...[truncated" in value
    assert fragment(sample.needle, value) is None
