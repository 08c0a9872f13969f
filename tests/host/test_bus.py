"""HookBus: observer dispatch, fail-open errors, schema version, behaviour-hook helpers."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import pytest

from wayline.contract.hooks import TELEMETRY_SCHEMA_VERSION, VALID_HOOKS
from wayline.host import HookBus, PluginManager, QueuedObserver

from .conftest import PluginWriter


def returning(value: Any) -> Callable[..., Any]:
    """A hook callback that returns ``value``."""

    def callback(**_: Any) -> Any:
        return value

    return callback


def test_results_are_non_none_returns_in_registration_order() -> None:
    """invoke_hook calls callbacks in registration order and drops None returns."""
    bus = HookBus()
    calls: list[str] = []
    for tag, value in (("a", 1), ("b", None), ("c", "x")):
        bus.register("post_tool_call", lambda tag=tag, value=value, **_: calls.append(tag) or value)
    assert bus.invoke_hook("post_tool_call", tool_name="t") == [1, "x"]
    assert calls == ["a", "b", "c"]


def test_has_hook_is_exact_and_unsubscribed_invoke_does_nothing() -> None:
    """has_hook is true only for hooks with a callback; invoking an empty hook returns []."""
    bus = HookBus()
    assert not bus.has_hook("pre_api_request")
    assert bus.invoke_hook("pre_api_request", request={}) == []
    bus.register("post_api_request", returning(1))
    assert bus.has_hook("post_api_request")
    assert not bus.has_hook("pre_api_request")
    bus.clear()
    assert not bus.has_hook("post_api_request")


def test_telemetry_schema_version_is_injected() -> None:
    """Every callback receives telemetry_schema_version = hermes.observer.v1 plus the payload."""
    bus = HookBus()
    seen: list[dict[str, Any]] = []
    bus.register("on_session_start", lambda **kw: seen.append(kw))
    bus.invoke_hook("on_session_start", session_id="s1", model="m", platform="cli")
    assert seen == [
        {
            "session_id": "s1",
            "model": "m",
            "platform": "cli",
            "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
        }
    ]
    assert TELEMETRY_SCHEMA_VERSION == "hermes.observer.v1"


def test_caller_supplied_telemetry_schema_version_is_kept() -> None:
    """A telemetry_schema_version set by the caller is not overwritten."""
    bus = HookBus()
    seen: list[str] = []
    bus.register("on_session_end", lambda **kw: seen.append(kw["telemetry_schema_version"]))
    bus.invoke_hook("on_session_end", session_id="s", telemetry_schema_version="custom.v9")
    assert seen == ["custom.v9"]


def test_raising_callback_is_skipped_and_warning_names_plugin_hook_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A callback raising Exception is logged (plugin, hook, exception) and the next one runs."""
    bus = HookBus()

    def boom(**_: Any) -> None:
        raise ValueError("kaboom")

    bus.register("pre_tool_call", boom, plugin="bad_plugin")
    bus.register("pre_tool_call", returning("ok"), plugin="good_plugin")
    with caplog.at_level(logging.WARNING, logger="wayline.hooks"):
        assert bus.invoke_hook("pre_tool_call", tool_name="terminal") == ["ok"]
    [record] = caplog.records
    message = record.getMessage()
    for part in ("bad_plugin", "pre_tool_call", "ValueError", "kaboom"):
        assert part in message
    assert bus.failures.total() == 1


def test_repeated_failures_warn_once_and_are_counted(caplog: pytest.LogCaptureFixture) -> None:
    """The same (plugin, hook, exception type) warns once; every failure is counted."""
    bus = HookBus()

    def boom(**_: Any) -> None:
        raise RuntimeError("again")

    bus.register("post_tool_call", boom, plugin="noisy")
    with caplog.at_level(logging.WARNING, logger="wayline.hooks"):
        for _ in range(5):
            bus.invoke_hook("post_tool_call")
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert bus.failures.counts == {("noisy", "post_tool_call", "RuntimeError"): 5}


def test_keyboard_interrupt_propagates_and_stops_dispatch() -> None:
    """A BaseException from a callback is not swallowed; later callbacks do not run."""
    bus = HookBus()
    later: list[int] = []

    def interrupt(**_: Any) -> None:
        raise KeyboardInterrupt

    bus.register("pre_llm_call", interrupt)
    bus.register("pre_llm_call", lambda **_: later.append(1))
    with pytest.raises(KeyboardInterrupt):
        bus.invoke_hook("pre_llm_call", session_id="s")
    assert later == []


def test_plugin_raising_in_every_hook_does_not_stop_next_plugin(
    write_plugin: PluginWriter,
    write_config: Callable[[str], Any],
    load: Callable[[], PluginManager],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A loaded plugin that raises in every valid hook never stops the plugin after it."""
    names = sorted(VALID_HOOKS)
    write_plugin(
        "aaa_bad",
        f"""
        def _boom(**kwargs):
            raise ValueError("bad plugin " + kwargs["hook"])

        def register(ctx):
            for name in {names!r}:
                ctx.register_hook(name, _boom)
        """,
    )
    write_plugin(
        "zzz_good",
        f"""
        SEEN = []

        def register(ctx):
            for name in {names!r}:
                ctx.register_hook(name, lambda **kw: SEEN.append(kw["hook"]))
        """,
    )
    write_config("plugins:\n  enabled: [aaa_bad, zzz_good]\n")
    with caplog.at_level(logging.WARNING, logger="wayline.hooks"):
        manager = load()
        for name in names:
            assert manager.invoke_hook(name, hook=name) == []
    assert names == sys.modules["wayline_plugins.zzz_good"].SEEN
    warnings = [r.getMessage() for r in caplog.records if r.name == "wayline.hooks"]
    assert len(warnings) == len(names)
    for name, message in zip(names, warnings, strict=True):
        assert "'aaa_bad'" in message and repr(name) in message and "ValueError" in message


def test_unknown_hook_warns_once_naming_plugin_and_valid_names_and_is_stored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An unknown hook name logs one warning (plugin + valid names) and still dispatches."""
    bus = HookBus()
    with caplog.at_level(logging.WARNING, logger="wayline.hooks"):
        bus.register("on_future_event", returning("later"), plugin="forward_plugin")
    [record] = caplog.records
    message = record.getMessage()
    assert "forward_plugin" in message and "on_future_event" in message
    for name in VALID_HOOKS:
        assert name in message
    assert bus.has_hook("on_future_event")
    assert bus.invoke_hook("on_future_event") == ["later"]


def test_known_hook_registration_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    """Registering any valid hook name logs nothing."""
    bus = HookBus()
    with caplog.at_level(logging.DEBUG, logger="wayline.hooks"):
        for name in VALID_HOOKS:
            bus.register(name, returning(None), plugin="p")
    assert caplog.records == []


def test_non_callable_callback_is_rejected() -> None:
    """Registering something that is not callable raises TypeError naming plugin and hook."""
    with pytest.raises(TypeError, match=r"'p'.*'pre_tool_call'"):
        HookBus().register("pre_tool_call", "not a function", plugin="p")  # type: ignore[arg-type]


# -- behaviour helpers: seed 000's return-value table ------------------------------------


def bus_returning(hook: str, *values: Any) -> HookBus:
    """A bus whose ``hook`` callbacks return ``values`` in order."""
    bus = HookBus()
    for value in values:
        bus.register(hook, returning(value))
    return bus


def test_pre_llm_call_joins_strings_and_context_dicts() -> None:
    """pre_llm_call: str or {"context": ...} returns are joined with blank lines; others ignored."""
    bus = bus_returning(
        "pre_llm_call",
        "first",
        {"context": "second"},
        {"context": ""},
        {"other": "x"},
        "   ",
        42,
        None,
        {"context": 3},
    )
    assert bus.pre_llm_context(session_id="s", user_message="hi") == "first\n\nsecond\n\n3"


def test_pre_llm_call_without_subscriber_gives_empty_context() -> None:
    """pre_llm_context with no subscriber is the empty string."""
    assert HookBus().pre_llm_context(session_id="s") == ""


def test_pre_tool_call_first_valid_block_wins() -> None:
    """pre_tool_call: invalid directives are skipped; the first valid block message is used."""
    bus = bus_returning(
        "pre_tool_call",
        "block",
        {"action": "block"},
        {"action": "block", "message": ""},
        {"action": "block", "message": 7},
        {"action": "allow", "message": "nope"},
        {"action": "block", "message": "first valid"},
        {"action": "block", "message": "second valid"},
    )
    assert bus.pre_tool_block(tool_name="terminal", args={}) == "first valid"


def test_pre_tool_call_block_without_message_is_ignored() -> None:
    """A block directive with no message blocks nothing."""
    bus = bus_returning("pre_tool_call", {"action": "block"}, None, {"message": "x"})
    assert bus.pre_tool_block(tool_name="terminal") is None
    assert HookBus().pre_tool_block(tool_name="terminal") is None


def test_transform_tool_result_first_str_even_empty() -> None:
    """transform_tool_result: the first str return wins, even an empty one; non-str ignored."""
    bus = bus_returning("transform_tool_result", {"result": "x"}, 5, "", "later")
    assert bus.transform_tool_result(result='{"ok": 1}') == ""
    assert bus_returning("transform_tool_result", None, b"x").transform_tool_result() is None


def test_transform_llm_output_first_non_empty_str() -> None:
    """transform_llm_output: the first non-empty str wins; "" and non-str are skipped."""
    bus = bus_returning("transform_llm_output", "", 3, {"text": "x"}, "rewritten", "later")
    assert bus.transform_llm_output(response_text="orig") == "rewritten"
    assert bus_returning("transform_llm_output", "", None).transform_llm_output() is None


def test_behaviour_helpers_fail_open() -> None:
    """A raising behaviour-hook callback is skipped; the next callback's directive still applies."""
    bus = HookBus()

    def boom(**_: Any) -> None:
        raise ValueError("x")

    for hook in ("pre_tool_call", "transform_llm_output"):
        bus.register(hook, boom, plugin="bad")
    bus.register("pre_tool_call", returning({"action": "block", "message": "stop"}))
    bus.register("transform_llm_output", returning("new"))
    assert bus.pre_tool_block(tool_name="t") == "stop"
    assert bus.transform_llm_output(response_text="old") == "new"


def _unsanitized_request() -> Any:
    from wayline.redaction.unsanitized import Unsanitized

    return Unsanitized({"method": "POST", "body": {"api_key": "k", "messages": []}}, 3)


class _Queued(QueuedObserver):
    """A queued observer for the bus tests: it keeps the payload dicts it is handed."""

    def __init__(self, fail: bool = False) -> None:
        self.payloads: list[dict[str, Any]] = []
        self.fail = fail

    def enqueue(self, payload: dict[str, Any]) -> None:
        """Keep ``payload`` (or fail, for the fail-open case)."""
        if self.fail:
            raise RuntimeError("enqueue failed")
        self.payloads.append(payload)


def test_queued_observers_get_unsanitized_values_when_they_are_the_only_callbacks() -> None:
    """When every callback of a hook is a QueuedObserver, ``queued_only`` is true and they get
    the Unsanitized value itself (sanitized later, on their own thread)."""
    from wayline.redaction.unsanitized import Unsanitized

    bus = HookBus()
    first, second = _Queued(), _Queued()
    assert not bus.queued_only("pre_api_request")
    bus.register("pre_api_request", first, "a")
    bus.register("pre_api_request", second, "b")
    assert bus.queued_only("pre_api_request")
    bus.invoke_hook("pre_api_request", request=_unsanitized_request())
    seen = [q.payloads[0]["request"] for q in (first, second)]
    assert [type(v) for v in seen] == [Unsanitized, Unsanitized] and seen[0] is seen[1]


def test_a_plain_callback_among_queued_ones_gets_sanitized_values_and_so_do_the_others() -> None:
    """One plain callback (a Hermes plugin, say) among queued ones: ``queued_only`` turns false
    and every callback gets the sanitized value, resolved once; ``clear`` forgets it."""
    from wayline.redaction.sanitize import REDACTED

    bus = HookBus()
    queued, seen = _Queued(), []
    bus.register("pre_api_request", queued, "a")
    bus.register("pre_api_request", lambda **kw: seen.append(kw["request"]), "hermes-style")
    assert not bus.queued_only("pre_api_request")
    bus.invoke_hook("pre_api_request", request=_unsanitized_request())
    expected = {"method": "POST", "body": {"api_key": REDACTED, "messages": []}}
    assert queued.payloads[0]["request"] == seen[0] == expected
    assert queued.payloads[0]["request"] is seen[0]
    bus.register("pre_llm_call", queued, "a")
    bus.clear()
    assert not bus.queued_only("pre_llm_call")


def test_queued_observers_get_the_payload_dict_and_plain_callbacks_keywords() -> None:
    """A QueuedObserver's ``enqueue`` is called with the bus's payload dict itself (the same
    dict for every queued observer of one call); a raising one fails open like a raising
    callback, and a host that does not know the class calls it with keywords."""
    bus = HookBus()
    queued, broken, seen = _Queued(), _Queued(fail=True), []
    bus.register("post_tool_call", queued, "a")
    bus.register("post_tool_call", broken, "b")
    bus.register("post_tool_call", lambda **kw: seen.append(kw), "c")
    bus.register("post_tool_call", queued, "d")
    assert bus.invoke_hook("post_tool_call", tool_name="t") == []
    sunk = queued.payloads
    assert len(sunk) == 2 and sunk[0] is sunk[1]
    assert (
        sunk[0]
        == seen[0]
        == {"tool_name": "t", "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION}
    )
    assert seen[0] is not sunk[0]
    assert bus.failures.counts == {("b", "post_tool_call", "RuntimeError"): 1}
    queued(tool_name="hermes")  # a foreign host's call
    assert sunk[-1] == {"tool_name": "hermes"}
