"""Request bodies encoded from cached per-message texts are byte-identical to a full encode."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wayline import relay
from wayline.relay.jsonfmt import ItemTextCache, JsonText, dumps, with_text

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_messages = st.lists(st.dictionaries(st.text(max_size=8), _values, max_size=5), max_size=6)


@settings(max_examples=150, deadline=None)
@given(
    messages=_messages,
    extra=st.dictionaries(st.text(max_size=8), _values, max_size=4),
    strings=st.lists(st.text(max_size=5), max_size=3),
)
def test_with_text_equals_the_full_encoding(
    messages: list[dict[str, Any]], extra: dict[str, Any], strings: list[str]
) -> None:
    """Any body (lists of objects, lists of strings, small floats, unicode keys) gets the text
    dumps() gives the plain dict, and it still compares equal to that dict."""
    body = {**extra, "messages": messages, "stop": strings}
    cache = ItemTextCache()
    wrapped = with_text(body, cache)
    assert wrapped is not None and wrapped == body
    assert dumps(wrapped) == dumps(dict(body))
    grown = {**body, "messages": [*messages, {"role": "user", "content": "more"}]}
    again = with_text(grown, cache)
    assert again is not None and dumps(again) == dumps(dict(grown))


def test_unchanged_messages_are_encoded_once() -> None:
    """A second request that repeats the conversation encodes only its new message."""
    first = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
    cache = ItemTextCache()
    with_text({"model": "m", "messages": first}, cache)
    assert len(cache._texts) == 2
    body = with_text({"model": "m", "messages": [*first, {"role": "user", "content": "x"}]}, cache)
    assert len(cache._texts) == 3
    assert body is not None
    assert json.loads(dumps(body))["messages"][2] == {"role": "user", "content": "x"}


def test_non_string_keys_fall_back_to_the_plain_object() -> None:
    """A body with a non-string key is not wrapped (the normal encoder's rules apply)."""
    assert with_text({1: "a"}, ItemTextCache()) is None  # type: ignore[dict-item]


def test_llm_start_line_uses_the_body_text(tmp_path: Any) -> None:
    """An LLMRequest whose content is a JsonText keeps it, and the llm start ATOF line holds
    exactly the body's text (the same bytes as an ordinary dict body)."""
    body = {"model": "m", "messages": [{"role": "user", "content": "tiny 1e-06 ü"}], "t": 2e-05}
    wrapped = with_text(body, ItemTextCache())
    assert isinstance(wrapped, JsonText)
    lines: list[str] = []
    relay.subscribers.register("item-texts", lambda event: lines.append(event.to_json()))
    try:
        for content in (body, wrapped):
            request = relay.LLMRequest({"authorization": "x", "x-a": "b"}, content)
            handle = relay.llm.call("p", request, model_name="m")
            relay.llm.call_end(handle, {"ok": True})
    finally:
        relay.subscribers.deregister("item-texts")
    plain_start, wrapped_start = json.loads(lines[0]), json.loads(lines[2])
    assert plain_start["data"] == wrapped_start["data"]
    assert plain_start["data"]["content"]["t"] == 2e-05
    assert lines[2].count('"t":0.00002') == 1 and '"headers":{"x-a":"b"}' in lines[2]


def test_a_replaced_earlier_message_is_not_served_from_the_joined_prefix() -> None:
    """When an earlier member is a different object (history rewritten, e.g. compressed),
    the joined text is rebuilt, so the line shows the new history, not the old one."""
    cache = ItemTextCache()
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    with_text({"messages": history}, cache)
    summary, later = {"role": "user", "content": "summary"}, {"role": "user", "content": "c"}
    rewritten = [summary, history[1], later]
    body = with_text({"messages": rewritten}, cache)
    assert body is not None and dumps(body) == dumps({"messages": rewritten})
    shorter = with_text({"messages": rewritten[:1]}, cache)
    assert shorter is not None and dumps(shorter) == dumps({"messages": rewritten[:1]})


def test_atif_maps_a_read_only_body_like_a_plain_one() -> None:
    """An llm start whose body is a JsonText (queued without a text snapshot) yields the same
    ATIF user step, llm_request included, as the same body given as a plain dict."""
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hello ü"}],
        "tools": [{"type": "function", "function": {"name": "read_file"}}],
    }
    steps = []
    for content in (body, with_text(body, ItemTextCache())):
        assert content is not None
        exporter = relay.AtifExporter("s", "agent", "1")
        exporter.register("atif-read-only")
        try:
            handle = relay.llm.call("p", relay.LLMRequest({}, content), model_name="m")
            relay.llm.call_end(handle, {"choices": [{"message": {"content": "hi"}}]})
            doc = json.loads(exporter.export_json())
        finally:
            exporter.deregister("atif-read-only")
        user = doc["steps"][0]
        steps.append((user["source"], user["message"], user["extra"]["llm_request"]))
    assert steps[0] == steps[1] and steps[0][1] == "hello ü"


def test_atif_keeps_read_only_tool_and_response_data_without_parsing_lines() -> None:
    """Tool and llm events whose data is read-only (``JsonText``, a str, None) are queued for
    the ATIF mapping as that data itself, with flat metadata copied and nested metadata
    snapshotted; a plain dict is still queued as the text of its line."""
    from wayline.relay.atif.exporter import _queued

    seen: list[Any] = []
    relay.subscribers.register("atif-queued", lambda event: seen.append((event, _queued(event))))
    try:
        args = {"path": "a.txt"}
        read_only = JsonText(args, dumps(args))
        meta = {"session_id": "s", "nested": {"k": "v"}}
        handle = relay.tools.call("read_file", read_only, metadata={"session_id": "s"})
        relay.tools.call_end(handle, relay.ToolExecutionResult("text"), metadata=meta)
        plain = relay.tools.call("read_file", {"path": "b.txt"})
        relay.tools.call_end(plain, relay.ToolExecutionResult(None))
    finally:
        relay.subscribers.deregister("atif-queued")
    (start, q_start), (end, q_end), (p_start, q_plain), (_, q_none) = seen
    assert isinstance(q_start, dict) and q_start["data"] is start.data is read_only
    assert q_start["metadata"] == start.metadata and q_start["metadata"] is not start.metadata
    assert isinstance(q_end, dict) and q_end["data"] == "text"
    assert q_end["metadata"] == end.metadata and q_end["metadata"]["nested"] is not meta["nested"]
    assert isinstance(q_plain, str) and json.loads(q_plain) == p_start.to_dict()
    assert isinstance(q_none, dict) and q_none["data"] is None
