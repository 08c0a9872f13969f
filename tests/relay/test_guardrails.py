"""Conditional-execution guardrails: Relay's rejection events, ordering, allow path, tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from relay_samples import GUARDRAIL_REJECTION
from test_intercepts_llm import same_as_relay

from wayline import relay
from wayline.relay._intercepts import chains as icpt
from wayline.relay._intercepts import guardrails

Agent = relay.ScopeType.Agent


@pytest.fixture(autouse=True)
def clean_registries() -> Iterator[None]:
    """Every guardrail and intercept a test registers is gone afterwards."""
    yield
    registries = (
        guardrails.LLM_CONDITIONAL,
        guardrails.TOOL_CONDITIONAL,
        icpt.LLM_REQUEST,
        icpt.TOOL_REQUEST,
    )
    for registry in registries:
        for entry in registry.chain:
            registry.deregister(entry.name)


def _request() -> relay.LLMRequest:
    return relay.LLMRequest({}, {"messages": [{"content": "hi", "role": "user"}], "model": "m"})


def test_rejection_emits_relays_events_and_raises(captured: list[relay.Event]) -> None:
    """A rejecting guardrail: guardrail scope pair, a mark named after the LLM, RuntimeError
    "guardrail rejected: …"; request intercepts and the provider never run (§6 sample)."""
    intercepted: list[Any] = []
    icpt.register_llm_request("spy", 1, False, lambda n, r, a: intercepted.append(n))
    guardrails.register_llm_conditional_execution("deny", 1, lambda request: "denied by policy")
    called: list[Any] = []
    with relay.scope.scope("agent", Agent) as agent, pytest.raises(RuntimeError) as err:
        relay.llm.execute_sync("openai", _request(), called.append)
    assert str(err.value) == "guardrail rejected: denied by policy"
    assert isinstance(err.value, guardrails.GuardrailRejected)
    assert err.value.guardrail == "deny" and err.value.reason == "denied by policy"
    times = same_as_relay([e for e in captured if e.uuid != agent.uuid], GUARDRAIL_REJECTION)
    assert times[1] >= times[0] + 1_000
    assert intercepted == [] and called == []


def test_guardrails_run_in_order_and_allowing_ones_leave_a_pair(
    captured: list[relay.Event],
) -> None:
    """Guardrails run by (priority, name) on the raw request; an allowing one emits an
    allowed pair and the call proceeds; the first rejection stops the rest."""
    seen: list[str] = []

    def allow(request: relay.LLMRequest) -> None:
        seen.append(f"allow:{request.content['model']}")

    def deny(request: relay.LLMRequest) -> str:
        seen.append("deny")
        return "nope"

    guardrails.register_llm_conditional_execution("allow", 1, allow)
    relay.llm.execute_sync("openai", _request(), lambda r: {"ok": True})
    pair = [e for e in captured if e.name == "allow"]
    assert [e.data for e in pair] == [
        {"kind": "llm_conditional_execution"},
        {"allowed": True, "rejected": False},
    ]
    assert [e.name for e in captured][2:] == ["openai", "openai"]
    guardrails.register_llm_conditional_execution("deny", 2, deny)
    guardrails.register_llm_conditional_execution("later", 3, allow)
    with pytest.raises(guardrails.GuardrailRejected):
        relay.llm.execute_sync("openai", _request(), lambda r: {"ok": True})
    assert seen == ["allow:m", "allow:m", "deny"]


def test_raising_guardrail_ends_its_scope_with_error(captured: list[relay.Event]) -> None:
    """A guardrail that raises closes its scope with the error as its outcome (as Relay)."""

    def broken(request: relay.LLMRequest) -> str:
        raise ZeroDivisionError("bad guardrail")

    guardrails.register_llm_conditional_execution("broken", 1, broken)
    with pytest.raises(ZeroDivisionError):
        relay.llm.execute_sync("openai", _request(), lambda r: {})
    assert [e.name for e in captured] == ["broken", "broken"]
    assert captured[1].data == {
        "allowed": False,
        "error": "internal error: ZeroDivisionError: bad guardrail",
    }


def test_tool_guardrail_rejects_before_the_tool_start(captured: list[relay.Event]) -> None:
    """Tool guardrails get (name, args); a rejection marks the tool name and raises."""
    guardrails.register_tool_conditional_execution(
        "no-rm", 1, lambda name, args: "rm is not allowed" if "rm" in args["command"] else None
    )
    ran: list[Any] = []
    relay.tools.execute_sync("terminal", {"command": "ls"}, lambda a: ran.append(a) or "ok")
    with pytest.raises(RuntimeError, match="guardrail rejected: rm is not allowed"):
        relay.tools.execute_sync("terminal", {"command": "rm -rf /"}, ran.append)
    assert ran == [{"command": "ls"}]
    names = [(e.name, e.kind) for e in captured]
    assert names[-3:] == [("no-rm", "scope"), ("no-rm", "scope"), ("terminal", "mark")]
    assert captured[-1].data == {"rejected": True, "rejection_reason": "rm is not allowed"}
    with pytest.raises(guardrails.GuardrailRejected):
        relay.tools.conditional_execution("terminal", {"command": "rm x"})
    relay.llm.conditional_execution("openai", _request())


def test_guardrail_must_return_none_or_str(captured: list[relay.Event]) -> None:
    """Any other verdict is a RuntimeError naming the unexpected type (as Relay), not an allow."""
    guardrails.register_llm_conditional_execution("odd", 1, lambda request: False)
    with pytest.raises(RuntimeError, match="unexpected type: TypeError: 'bool'"):
        relay.llm.execute_sync("openai", _request(), lambda r: {})
