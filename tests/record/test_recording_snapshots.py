"""The hook thread's snapshots (``plugins.observability.snapshot``): a snapshot equals the
payload when it was taken and never changes afterwards, whatever the host then does to the
payload in place; a later snapshot equals the payload as it is then. Property-tested with
Hypothesis over JSON-shaped conversations and in-place edits."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wayline.plugins.observability.snapshot import Snapshots
from wayline.redaction.unsanitized import Unsanitized

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=5)
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
messages = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "tool"]), "content": values}),
    min_size=1,
    max_size=6,
)
# An edit: (message index, what to do, a new value)
edits = st.lists(
    st.tuples(st.integers(0, 10), st.sampled_from(["set", "append", "nested", "pop"]), values),
    max_size=4,
)


def _payload(history: list[dict[str, Any]]) -> dict[str, Any]:
    """What an API hook carries: the live history, a request list sharing its messages, and
    the unsanitized request holding the same list."""
    request = {"method": "POST", "body": {"messages": history, "model": "m"}}
    return {
        "conversation_history": history,
        "request_messages": list(history),
        "request": Unsanitized(request, 3),
        "n": len(history),
    }


def _plain(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.raw if isinstance(v, Unsanitized) else v) for k, v in payload.items()}


def _edit(history: list[dict[str, Any]], index: int, action: str, value: Any) -> None:
    message = history[index % len(history)]
    if action == "set":
        message["content"] = value
    elif action == "append":
        history.append({"role": "user", "content": value})
    elif action == "nested":
        content = message["content"]
        if isinstance(content, dict):
            content["edited"] = value
        elif isinstance(content, list):
            content.append(value)
        else:
            message["content"] = [content, value]
    elif len(history) > 1:
        history.pop()


@settings(max_examples=150, deadline=None)
@given(messages, edits, edits)
def test_snapshots_stay_what_the_payload_was(
    history: list[dict[str, Any]], first: list[Any], second: list[Any]
) -> None:
    """Snapshots taken call after call of a conversation edited in place between the calls
    (values replaced, nested containers changed, messages appended and dropped) each equal
    the payload at their call and stay so after later edits and snapshots."""
    snapshots = Snapshots()
    taken: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for edits_now in ([], first, second):
        for index, action, value in edits_now:
            _edit(history, index, action, value)
        payload = _payload(history)
        snap = snapshots.take(payload)
        expected = copy.deepcopy(_plain(payload))
        assert _plain(snap) == expected
        taken.append((snap, expected))
    for snap, expected in taken:
        assert _plain(snap) == expected


def test_a_payload_handed_to_two_observers_gets_one_snapshot() -> None:
    """The same payload dict taken twice in a row (the bus hands it to each queued observer)
    gives the same snapshot; once a value is replaced it gives a new one."""
    snapshots = Snapshots()
    payload: dict[str, Any] = {"args": {"path": "a"}, "tool_name": "t"}
    first = snapshots.take(payload)
    assert snapshots.take(payload) is first
    payload["args"] = {"path": "b"}
    assert snapshots.take(payload) == {"args": {"path": "b"}, "tool_name": "t"}
    assert first == {"args": {"path": "a"}, "tool_name": "t"}


def test_unchanged_messages_keep_their_copies_from_call_to_call() -> None:
    """A message that did not change is the same copy in the next call's snapshot (what lets
    the hook thread's sanitizer memo reuse its work); a message changed in place is not."""
    snapshots = Snapshots()
    history = [{"role": "user", "content": "a"}, {"role": "tool", "content": "b"}]
    one = snapshots.take(_payload(history))
    history.append({"role": "user", "content": "c"})
    history[1]["content"] = "rewritten"
    two = snapshots.take(_payload(history))
    assert two["request_messages"][0] is one["request_messages"][0]
    assert two["request_messages"][1] is not one["request_messages"][1]
    assert one["request_messages"][1] == {"role": "tool", "content": "b"}
    assert two["request"].raw["body"]["messages"][1]["content"] == "rewritten"
