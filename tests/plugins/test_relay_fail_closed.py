"""Adaptive mode: a relay guardrail or codec refusal fails closed — nothing reaches the provider."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wayline import relay
from wayline.contract.errors import ControlRejected
from wayline.host.middleware import MiddlewareChains
from wayline.relay.atof import read_events
from wayline.runtime import build_runtime

TOML = """version = 1

[[components]]
kind = "observability"
enabled = true

[components.config.atof]
enabled = true
output_directory = "{out}"
filename = "events.jsonl"
mode = "overwrite"

[[components]]
kind = "adaptive"
enabled = true
"""


def test_control_rejected_propagates_instead_of_failing_open() -> None:
    """Rule (f): ControlRejected before next_call reaches the caller; the base never runs."""
    chains = MiddlewareChains()
    ran: list[str] = []

    def refuse(**kw: Any) -> Any:
        raise ControlRejected("no") from ValueError("policy")

    chains.register("llm_execution", refuse, "policy")
    with pytest.raises(ControlRejected) as info:
        chains.execute("llm_execution", {"m": 1}, lambda p: ran.append("base"))
    assert ran == [] and isinstance(info.value.__cause__, ValueError)


@pytest.fixture
def adaptive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """observability/relay enabled with an adaptive plugins.toml; torn down after."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("plugins:\n  enabled: [observability/relay]\n")
    toml = tmp_path / "plugins.toml"
    toml.write_text(TOML.format(out=tmp_path / "atof"))
    monkeypatch.setenv("WAYLINE_HOME", str(home))
    monkeypatch.setenv("WAYLINE_RELAY_PLUGINS_TOML", str(toml))
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_ENABLED", "0")
    yield home
    relay.guardrails.deregister_llm_conditional_execution("deny-all")


def test_guardrail_rejection_sends_nothing_and_ends_turn(
    scripted_server: Any, adaptive: Path, tmp_path: Path
) -> None:
    """A rejecting LLM guardrail: no HTTP request, a clear turn error, no llm span in ATOF."""
    srv = scripted_server({"default": {"content": "should never be sent"}})
    runtime = build_runtime(adaptive, base_url=srv.base_url, model="m")
    try:
        errors: list[dict[str, Any]] = []
        runtime.manager.hooks.register("api_request_error", lambda **kw: errors.append(kw), "test")
        relay.guardrails.register_llm_conditional_execution(
            "deny-all", 1, lambda req: "blocked by policy"
        )
        agent = runtime.agent(cwd=tmp_path)
        result = agent.run_turn("hello")
        agent.finalize()
        assert srv.requests == []
        assert not result.completed and "rejected" in result.text
        assert len(errors) == 1 and errors[0]["reason"] == "rejected"
        assert errors[0]["retryable"] is False
    finally:
        runtime.manager.close_instances()
    events = read_events(tmp_path / "atof" / "events.jsonl", sort=False)
    assert not [e for e in events if e.get("category") == "llm"]
    assert any(e["kind"] == "mark" and "guardrail" in str(e.get("name")) for e in events) or any(
        e.get("category") == "guardrail" for e in events
    )
