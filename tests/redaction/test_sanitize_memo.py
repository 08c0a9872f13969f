"""The sanitizer's fast paths: a memo for repeated payloads and the skipped size check."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wayline.redaction.redact import redact_text
from wayline.redaction.sanitize import (
    DEFAULT_MAX_SEQUENCE,
    SanitizeMemo,
    _encoded_length,
    sanitize,
)


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(["password=hunter2", "Bearer abcDEF1234567890xyz", "--token s3cretVALUE9"])
)
_values = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.sampled_from(["role", "content", "api_key", "n", "é"]), inner, max_size=4
        )
    ),
    max_leaves=30,
)


def _conversation(size: int, text: str = "x") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for i in range(size):
        messages.append({"role": "user", "content": f"{text} {i} api_key=abc{i}def"})
        call = {"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": text * 50})
    return messages


@settings(max_examples=200, deadline=None)
@given(_values)
def test_memo_gives_the_same_output_first_time_and_when_reused(value: Any) -> None:
    """Through a memo (a miss, then a hit) the result equals a memo-less sanitize."""
    payload = {"method": "POST", "body": {"messages": [value, value]}}
    memo = SanitizeMemo(3)
    plain = sanitize(payload, max_chars=2000)
    assert sanitize(payload, max_chars=2000, memo=memo) == plain
    assert sanitize(payload, max_chars=2000, memo=memo) == plain


def test_growing_conversation_through_memo_matches_every_stage() -> None:
    """A history growing past each stage (full, cut items, preview) sanitizes like no memo."""
    memo = SanitizeMemo(3)
    for size in (1, 5, 40, 80, 300):
        history = _conversation(size)
        body = {"method": "POST", "body": {"model": "m", "messages": history}}
        expected = sanitize(body)
        assert sanitize(body, memo=memo) == expected
        assert "abc0def" not in json.dumps(expected)


def test_memo_keeps_containers_alive_and_starts_over_past_its_limit() -> None:
    """Entries pin their containers (ids stay unique); past ``limit`` the memo is emptied."""
    memo = SanitizeMemo(1, limit=5)
    for i in range(12):
        sanitize([{"n": i}], memo=memo)
    assert 0 < len(memo.entries) <= 5


@settings(max_examples=200, deadline=None)
@given(_values)
def test_structural_length_is_the_encoded_length(value: Any) -> None:
    """The length computed from memoized parts equals len(json.dumps(...)) of the output."""
    memo = SanitizeMemo(1)
    out = sanitize([value, {"k": value}], memo=memo)
    assert _encoded_length(out, memo.lengths) == len(_dumps(out))
    again = sanitize([value, {"k": value}], memo=memo)
    assert _encoded_length(again, memo.lengths) == len(_dumps(again))


@settings(max_examples=200, deadline=None)
@given(_values)
def test_small_payloads_skip_the_size_check_and_still_fit(value: Any) -> None:
    """Whatever path a payload takes, its encoding never exceeds the limit."""
    for limit in (1000, 3000):
        assert len(_dumps(sanitize(value, max_chars=limit))) <= limit


def test_short_strings_are_redacted_from_the_cache_like_the_first_time() -> None:
    """A short string's cached redaction is the redaction itself, call after call."""
    first = redact_text("password=hunter2")
    assert first == redact_text("password=hunter2") != "password=hunter2"
    assert redact_text("total_tokens") == "total_tokens"


@settings(max_examples=100, deadline=None)
@given(st.lists(_values, min_size=1, max_size=12), st.sampled_from([1000, 2000, 50_000]))
def test_a_list_resent_with_items_appended_sanitizes_like_no_memo(items: Any, limit: int) -> None:
    """Each longer copy of one history (a model call's messages) matches a memo-less sanitize."""
    memo = SanitizeMemo(3)
    for n in range(1, len(items) + 1):
        payload = {"method": "POST", "body": {"messages": items[:n], "tools": items}}
        assert sanitize(payload, max_chars=limit, memo=memo) == sanitize(payload, max_chars=limit)


def test_a_grown_history_finds_the_last_one_as_its_prefix() -> None:
    """The walked list is kept per first item, so the next, longer call starts from it."""
    memo = SanitizeMemo(3)
    history = _conversation(3)
    for extra in range(3):
        history = [*history, {"role": "user", "content": f"more {extra}"}]
        out = sanitize({"method": "POST", "body": {"messages": history}}, memo=memo)
    ((items, outputs, _share),) = memo.prefixes.values()
    assert items == history
    assert outputs == out["body"]["messages"]


@settings(max_examples=100, deadline=None)
@given(st.lists(_values, min_size=32, max_size=40), st.integers(0, 6), st.booleans())
def test_measuring_a_grown_or_recut_list_reuses_its_prefix_exactly(
    items: list[Any], grow: int, recut: bool
) -> None:
    """The prefix-reusing length of a list that grew, or whose last item (a cut marker) was
    replaced, is still len(json.dumps(...)) of that list."""
    lengths: dict[int, Any] = {}
    prefixes: dict[int, Any] = {}
    first = sanitize(items, max_chars=10**7)  # measured values are sanitized ones
    assert isinstance(first, list) and len(first) == len(items)
    assert _encoded_length(first, lengths, prefixes) == len(_dumps(first))
    if recut:
        second = [*first[:-1], {"_truncated_items": len(first) + grow}]
    else:
        second = [*first, *({"n": i} for i in range(grow))]
    assert _encoded_length(second, lengths, prefixes) == len(_dumps(second))
    third = [*second, "tail"]
    assert _encoded_length(third, lengths, prefixes) == len(_dumps(third))


def test_a_history_over_the_limit_remembers_how_far_the_first_stage_got() -> None:
    """A conversation too long for the first stage leaves that stage's walked prefix in the
    memo (the next call overflows after one new item, not after one lookup per message),
    and each longer call still sanitizes exactly like no memo (cut to the fallback stage)."""
    memo = SanitizeMemo(3)
    history = [{"role": "user", "content": f"message {i} " + "x" * 400} for i in range(600)]
    for extra in range(3):
        history = [*history, {"role": "assistant", "content": f"reply {extra}"}]
        payload = {"method": "POST", "body": {"messages": history}}
        out = sanitize(payload, memo=memo)
        assert out == sanitize(payload)
        assert out["body"]["messages"][-1] == {"_truncated_items": len(history) - 50}
    first_stage = [v for k, v in memo.prefixes.items() if k[1:] == (8_000, DEFAULT_MAX_SEQUENCE)]
    assert len(first_stage) == 1
    items, outputs, share = first_stage[0]
    assert 0 < len(items) < len(history) and items == history[: len(items)]
    assert len(outputs) == len(items) and share > 0
