"""Arguments stay JSON: redacting inside a JSON text leaves valid JSON of the same structure,
so a trajectory keeps the arguments as an object and a replay sends the same shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wayline.redaction import REDACTED, redact_text, sanitize
from wayline.redaction.jsontext import keep_json, replaced_spans
from wayline.relay.atif.payloads import parse_arguments
from wayline.testing.secrets import SECRET_SAMPLES

NETRC = "machine api.example.com login bob password yM5D0CLWkZ4eb1XAjFHw"


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__ if not isinstance(value, int | float) else "number"


def _arguments(args: dict[str, Any]) -> str:
    payload = {"tool_calls": [{"function": {"name": "terminal", "arguments": json.dumps(args)}}]}
    out: str = sanitize(payload)["tool_calls"][0]["function"]["arguments"]
    return out


def test_a_value_redacted_to_the_end_of_its_line_keeps_the_quote_and_brace() -> None:
    """The netrc rule replaces to the end of the line; inside JSON arguments the closing quote,
    the comma and the next key stay."""
    out = _arguments({"content": NETRC, "path": "x"})
    assert json.loads(out) == {
        "content": f"machine api.example.com login bob password {REDACTED}",
        "path": "x",
    }
    alone = _arguments({"command": NETRC})
    assert json.loads(alone) == {
        "command": f"machine api.example.com login bob password {REDACTED}"
    }


@pytest.mark.parametrize("sample", SECRET_SAMPLES, ids=lambda s: s.name)
def test_every_secret_shape_in_arguments_keeps_valid_json(sample: Any) -> None:
    """Each secret shape in a command, a file's content, a nested env mapping and an
    ``export`` line: the sanitized arguments parse, with the same keys and nesting, and the
    trajectory's converter reads them as an object, not ``raw_arguments``."""
    for args in (
        {"command": sample.secret},
        {"content": sample.secret, "path": "notes.txt"},
        {"env": {"K": sample.secret}, "n": 3},
        {"command": f"export T={sample.secret} && echo $T"},
    ):
        out = _arguments(args)
        assert _shape(json.loads(out)) == _shape(args), out
        assert "raw_arguments" not in parse_arguments(out)


def test_replaced_spans_recovers_what_was_replaced() -> None:
    """The spans are the replaced parts of the input, a marker the input held included."""
    before = f"a=SECRET1 b {REDACTED} c=SECRET2"
    after = f"a={REDACTED} b {REDACTED} c={REDACTED}"
    spans = replaced_spans(before, after)
    assert spans is not None
    assert [before[x:y] for x, y in spans] == ["SECRET1", REDACTED, "SECRET2"]
    assert replaced_spans("abc", "abd") is None
    assert replaced_spans("same", "same") == []


def test_keep_json_moves_a_span_back_inside_the_strings() -> None:
    """A span that ran over a quote, a comma and a key is cut back to the string parts; an
    escape is never split; a number a span covers becomes the marker as a string."""
    before = '{"a": "x secretvalue", "b": "yy\\"zz", "n": 123456}'
    eaten = before.replace('secretvalue", "b": "yy\\"', REDACTED)
    fixed = json.loads(keep_json(before, eaten))
    assert list(fixed) == ["a", "b", "n"]
    assert fixed["a"] == f"x {REDACTED}" and fixed["b"].startswith(REDACTED)
    number = before.replace("123456}", REDACTED)
    assert json.loads(keep_json(before, number))["n"] == REDACTED
    split_escape = before.replace('yy\\"z', f"yy\\{REDACTED}")
    assert json.loads(keep_json(before, split_escape))["b"] == f"yy{REDACTED}z"


def test_text_that_is_not_json_is_left_as_redacted() -> None:
    """Prose starting with a brace, or JSON redacted into valid JSON, is returned as is."""
    assert keep_json("{not json password=x", f"{{not json password={REDACTED}") == (
        f"{{not json password={REDACTED}"
    )
    text = json.dumps({"password": "hunter2hunter2"})
    assert json.loads(redact_text(text)) == {"password": REDACTED}
