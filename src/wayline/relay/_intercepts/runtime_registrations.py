"""Discovery and gating of global registrations (the nemo_relay ``runtime_registrations``).

``list_runtime_registrations`` lists every global subscriber, injector, guardrail and
intercept in ``RuntimeRegistrationKind`` order, then by name. A conditional middleware
guardrail (a gate) is a CONTROL callback consulted each time a matching registration is
about to run: returning a string skips that registration for that use; raising skips it too
(fail closed, logged once).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from wayline.relay._intercepts import chains as _icpt
from wayline.relay._intercepts import registrations as _reg
from wayline.relay._scopes import subscribers as _subs

__all__ = [
    "ConditionalMiddlewareGuardrail",
    "RuntimeRegistrationIdentity",
    "RuntimeRegistrationKind",
    "RuntimeRegistrationOwner",
    "RuntimeRegistrationOwnerKind",
    "deregister_conditional_middleware_guardrail",
    "list_runtime_registrations",
    "register_conditional_middleware_guardrail",
]


class RuntimeRegistrationKind(StrEnum):
    """Global registration surfaces that can be listed and gated."""

    SUBSCRIBER = "subscriber"
    EVENT_METADATA_INJECTOR = "event_metadata_injector"
    MARK_SANITIZE_GUARDRAIL = "mark_sanitize_guardrail"
    SCOPE_SANITIZE_START_GUARDRAIL = "scope_sanitize_start_guardrail"
    SCOPE_SANITIZE_END_GUARDRAIL = "scope_sanitize_end_guardrail"
    TOOL_SANITIZE_REQUEST_GUARDRAIL = "tool_sanitize_request_guardrail"
    TOOL_SANITIZE_RESPONSE_GUARDRAIL = "tool_sanitize_response_guardrail"
    TOOL_CONDITIONAL_EXECUTION_GUARDRAIL = "tool_conditional_execution_guardrail"
    TOOL_REQUEST_INTERCEPT = "tool_request_intercept"
    TOOL_EXECUTION_INTERCEPT = "tool_execution_intercept"
    LLM_SANITIZE_REQUEST_GUARDRAIL = "llm_sanitize_request_guardrail"
    LLM_SANITIZE_RESPONSE_GUARDRAIL = "llm_sanitize_response_guardrail"
    LLM_CONDITIONAL_EXECUTION_GUARDRAIL = "llm_conditional_execution_guardrail"
    LLM_REQUEST_INTERCEPT = "llm_request_intercept"
    LLM_EXECUTION_INTERCEPT = "llm_execution_intercept"
    LLM_STREAM_EXECUTION_INTERCEPT = "llm_stream_execution_intercept"


class RuntimeRegistrationOwnerKind(StrEnum):
    """Who made a registration."""

    CORE = "core"
    GLOBAL_API = "global_api"
    PLUGIN = "plugin"


@dataclass(frozen=True)
class RuntimeRegistrationOwner:
    """The owner of a listed registration."""

    kind: RuntimeRegistrationOwnerKind
    plugin_kind: str | None
    component_ordinal: int | None


@dataclass(frozen=True)
class RuntimeRegistrationIdentity:
    """One listed registration: its kind, local and effective names, and owner."""

    kind: RuntimeRegistrationKind
    local_name: str
    effective_name: str
    owner: RuntimeRegistrationOwner


ConditionalMiddlewareGuardrail = Callable[[set[RuntimeRegistrationKind], str], "str | None"]

_GLOBAL = RuntimeRegistrationOwner(RuntimeRegistrationOwnerKind.GLOBAL_API, None, None)


def register_conditional_middleware_guardrail(
    name: str,
    kinds: set[RuntimeRegistrationKind],
    registration_name: str,
    guardrail: ConditionalMiddlewareGuardrail,
) -> None:
    """Gate registrations of ``kinds`` named ``registration_name`` with ``guardrail``."""
    if not callable(guardrail):
        raise TypeError(f"registration gate {name!r}: guardrail must be callable")
    values = frozenset(RuntimeRegistrationKind(kind).value for kind in kinds)

    def gate(received: set[str], effective_name: str) -> str | None:
        return guardrail({RuntimeRegistrationKind(k) for k in received}, effective_name)

    _reg.set_gate(name, values, registration_name, gate)


def deregister_conditional_middleware_guardrail(name: str) -> bool:
    """Remove a gate; ``True`` if it existed."""
    return _reg.remove_gate(name)


def _names(kind: RuntimeRegistrationKind) -> list[str]:
    if kind is RuntimeRegistrationKind.SUBSCRIBER:
        return sorted(_subs.registered())
    for registry in _icpt.REGISTRIES:
        if registry.reg_kind == kind.value:
            return sorted(registry.names())
    return []


def list_runtime_registrations(
    kinds: Iterable[RuntimeRegistrationKind] | None = None,
) -> list[RuntimeRegistrationIdentity]:
    """A snapshot of the global registrations (all kinds, or only ``kinds``)."""
    selected = None if kinds is None else {RuntimeRegistrationKind(k) for k in kinds}
    found: list[RuntimeRegistrationIdentity] = []
    for kind in RuntimeRegistrationKind:
        if selected is not None and kind not in selected:
            continue
        found.extend(RuntimeRegistrationIdentity(kind, n, n, _GLOBAL) for n in _names(kind))
    return found
