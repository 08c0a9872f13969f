"""Known values: masked exactly, whatever their shape, in every encoding, by one automaton;
owned by an instance; learned from what rules redact."""

from __future__ import annotations

import base64
import gc
import json
import random
import re
import string
import sys
from urllib.parse import quote, quote_plus

import pytest

from wayline.redaction import (
    MIN_LENGTH,
    REDACTED,
    KnownValues,
    mask,
    process_values,
    redact_text,
    redact_text_learning,
    redact_value,
    sanitize,
)
from wayline.redaction.automaton import Automaton
from wayline.redaction.known import MAX_LEARNED, encodings


def _token(rng: random.Random, n: int, alphabet: str = string.ascii_letters) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _naive(text: str, patterns: list[str]) -> list[tuple[int, int]]:
    covered = [False] * len(text)
    for p in patterns:
        at = text.find(p)
        while at >= 0:
            covered[at : at + len(p)] = [True] * len(p)
            at = text.find(p, at + 1)
    spans, i = [], 0
    while i < len(text):
        if covered[i]:
            j = i
            while j < len(text) and covered[j]:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def test_automaton_finds_what_a_naive_search_finds() -> None:
    """On random texts over small alphabets (many overlaps, shared prefixes and suffixes),
    the automaton's merged spans equal those of searching each pattern on its own."""
    rng = random.Random(5)
    for _ in range(3000):
        alphabet = rng.choice(["ab", "abc", "abcde"])
        patterns = [_token(rng, rng.randint(4, 12), alphabet) for _ in range(rng.randint(1, 6))]
        text = _token(rng, rng.randint(0, 300), alphabet)
        assert Automaton(patterns).spans(text) == _naive(text, patterns), (patterns, text)


def test_automaton_reads_line_breaks_as_absent() -> None:
    """A value wrapped over lines is found and replaced whole, breaks inside included; text
    around it keeps its breaks."""
    automaton = Automaton(["ABCDEFGHIJKL"])
    assert automaton.mask("x\nABCD\nEFGH\r\nIJKL\ny", REDACTED) == f"x\n{REDACTED}\ny"
    assert automaton.mask("ABCDEFGHIJK\n", REDACTED) == "ABCDEFGHIJK\n"


def test_each_encoding_of_a_known_value_is_masked() -> None:
    """Raw, JSON-escaped, URL-encoded and base64 (both alphabets, every byte alignment, and
    wrapped at 76 columns as ``base64`` prints it) are all masked."""
    rng = random.Random(11)
    known = KnownValues()
    value = "Pw/" + _token(rng, 14) + '"+?& é'
    known.add(value, "test")
    raw = value.encode()
    cases = [
        f"echo {value} done",
        json.dumps({"cmd": f"echo {value}"}),
        json.dumps({"cmd": json.dumps({"inner": value})}),
        json.dumps(value, ensure_ascii=False),
        f"https://host/?q={quote(value, safe='')}&x=1",
        f"form={quote_plus(value)}",
        f"path/{quote(value)}",
        re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quote(value, safe="")),
    ]
    for lead in (b"", b"K", b"KE", b"KEY=", b"some longer prefix: "):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(lead + raw + b"\ntail").decode()
            cases.append(f"data {encoded} end")
            cases.append("\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76)))
    for text in cases:
        out = redact_text(text)
        assert REDACTED in out, text
        assert not any(form in out for form in encodings(value)), (text, out)


def test_letters_only_values_of_no_shape_are_masked() -> None:
    """A value no rule would catch (letters only, in prose) is masked once known."""
    value = "CfTDKSBAzacQzLfH"
    text = f"the deploy password is {value}, keep it safe"
    assert redact_text(text) == text
    known = KnownValues()
    known.add(value)
    assert redact_text(text) == f"the deploy password is {REDACTED}, keep it safe"
    del known


def test_short_values_are_not_masked() -> None:
    """Below the length floor a value is refused: it would hit ordinary words."""
    known = KnownValues()
    short = "x" * (MIN_LENGTH - 1)
    assert not known.add(short)
    assert not known.add("   \n  ")
    assert known.add("abcdefgh" + "1")
    assert redact_text(f"say {short} now") == f"say {short} now"


def test_mask_registers_process_wide() -> None:
    """``wayline.redaction.mask(value)`` masks the value everywhere, in sanitize too."""
    value = "mask-api-" + _token(random.Random(3), 12, string.ascii_lowercase)
    assert mask(value)
    assert value in process_values()
    out = sanitize({"note": f"use {value}", "b64": base64.b64encode(value.encode()).decode()})
    assert value not in json.dumps(out)
    assert out == {"note": f"use {REDACTED}", "b64": REDACTED}
    assert not mask("short")
    with pytest.raises(TypeError):
        mask(b"bytes-are-not-text")  # type: ignore[arg-type]


def test_values_belong_to_their_instance() -> None:
    """Two agents' sets hold only their own keys (a child sees its parent's too); a set that
    is garbage collected stops masking its values."""
    rng = random.Random(8)
    first, second = _token(rng, 20), _token(rng, 20)
    a, b = KnownValues(), KnownValues()
    a.add(first)
    b.add(second)
    child = a.child()
    assert first in a and first not in b and second not in a
    assert first in child and second not in child
    assert a.mask(f"{first} {second}") == f"{REDACTED} {second}"
    assert redact_text(f"{first} {second}") == f"{REDACTED} {REDACTED}"
    del a, child
    gc.collect()
    assert redact_text(f"{first} {second}") == f"{first} {REDACTED}"
    del b
    gc.collect()
    assert redact_text(f"{first} {second}") == f"{first} {second}"


def test_a_value_redacted_once_is_learned() -> None:
    """``export T=V`` redacted by a rule teaches V to the session: ``echo $T``'s output (V
    alone, no shape, no name) is masked afterwards, also JSON-escaped and in base64."""
    value = "qwertyASDFGHzxcvbn"
    session = KnownValues()
    command = json.dumps({"command": f"export DEPLOY_TOKEN={value} && ./deploy"})
    assert redact_text(value) == value
    out = redact_text_learning(command, session)
    assert value not in out
    assert value in session
    assert redact_text(f"output:\n{value}\n") == f"output:\n{REDACTED}\n"
    assert base64.b64encode(value.encode()).decode()[:20] not in redact_text(
        base64.b64encode(value.encode()).decode()
    )
    del session
    gc.collect()


def test_a_value_learned_masks_its_other_occurrences_in_the_same_text() -> None:
    """The text that teaches a value is redacted again, so an occurrence no rule saw goes too."""
    value = "zxcvbnmLKJHGFDSA"
    session = KnownValues()
    out = redact_text_learning(f"export API_TOKEN={value}; curl -d {value} host", session)
    assert out == f"export API_TOKEN={REDACTED}; curl -d {REDACTED} host"
    del session
    gc.collect()


def test_learning_in_redact_value_and_markers_are_not_learned() -> None:
    """``redact_value(..., learn=)`` learns from every string of a message; the marker itself
    and values below the floor are never learned."""
    session = KnownValues()
    message = {
        "role": "assistant",
        "content": f"password: {REDACTED} and token=abc",
        "tool_calls": [{"function": {"arguments": '{"c": "export SECRET=plm0KNijbUHB"}'}}],
    }
    redact_value(message, learn=session)
    assert session.values() == {"plm0KNijbUHB"}
    del session
    gc.collect()


def test_the_known_pass_runs_before_the_rules() -> None:
    """A known value inside a credential assignment is masked once, not split by a rule."""
    value = "Zq8-vW3_xY5.uT7~sR1"
    known = KnownValues()
    known.add(value)
    assert redact_text(f"API_KEY={value}\n") == f"API_KEY={REDACTED}\n"
    del known
    gc.collect()


def test_add_environment_takes_credential_names_and_named_ones() -> None:
    """Credential-like names (by the redaction rules' judgement) and names asked for are
    masked; ordinary variables, short values and paths of existing files are not."""
    known = KnownValues()
    env = {
        "STRIPE_API_KEY": "sk_live_" + "a1" * 12,
        "DB_PASSWORD": "lettersOnlyPassword",
        "HEROKU_KEY": "abcdefghijklmn",
        "DEPLOY_HOOK": "hook-value-12345",
        "HOME": "/home/someone/far/away",
        "GITHUB_TOKEN": "short",
        "GIT_ASKPASS": sys.executable,  # a credential-like name holding a path
    }
    known.add_environment(env, ["DEPLOY_HOOK"])
    assert known.values() == {
        env["STRIPE_API_KEY"],
        env["DB_PASSWORD"],
        env["HEROKU_KEY"],
        env["DEPLOY_HOOK"],
    }
    assert known.sources() == {
        "STRIPE_API_KEY": 1,
        "DB_PASSWORD": 1,
        "HEROKU_KEY": 1,
        "DEPLOY_HOOK": 1,
    }


def test_multi_line_values_mask_each_line() -> None:
    """A PEM key registered whole is masked whole and line by line."""
    lines = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7q3c5Zk9PLm2X"]
    known = KnownValues()
    known.add("\n".join(lines))
    assert redact_text(f"second line: {lines[1]}") == f"second line: {REDACTED}"
    del known
    gc.collect()


def test_a_session_learns_a_bounded_number_of_values() -> None:
    """A hostile session cannot grow its set (and the automaton) without bound."""
    session = KnownValues()
    rng = random.Random(4)
    learned = session.learn(_token(rng, 16) for _ in range(MAX_LEARNED + 50))
    assert learned == MAX_LEARNED == len(session)
    assert session.learn([_token(rng, 16)]) == 0
    assert session.add(_token(rng, 16), "registered")  # registered values are not capped
    del session
    gc.collect()
