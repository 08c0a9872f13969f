"""``nemo_relay.runtime_registrations`` (Relay 0.10.4's module path), re-exported.

The implementation is :mod:`wayline.relay._intercepts.runtime_registrations`.
"""

from __future__ import annotations

from wayline.relay._intercepts.runtime_registrations import (
    ConditionalMiddlewareGuardrail,
    RuntimeRegistrationIdentity,
    RuntimeRegistrationKind,
    RuntimeRegistrationOwner,
    RuntimeRegistrationOwnerKind,
    deregister_conditional_middleware_guardrail,
    list_runtime_registrations,
    register_conditional_middleware_guardrail,
)

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
