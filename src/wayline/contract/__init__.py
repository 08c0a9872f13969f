"""What plugins may rely on: hook names and payload fields, schema versions, ids.

Redaction and sanitizing live in :mod:`wayline.redaction`.
"""

from wayline.contract.errors import ControlRejected
from wayline.contract.hooks import (
    EMITTED_HOOKS,
    HERMES_ONLY_HOOKS,
    HOOK_SPECS,
    MIDDLEWARE_KINDS,
    MIDDLEWARE_SCHEMA_VERSION,
    TELEMETRY_SCHEMA_VERSION,
    TOOL_STATUSES,
    VALID_HOOKS,
    HookSpec,
    TraceEntry,
    missing_fields,
)
from wayline.contract.ids import RunContext

__all__ = [
    "EMITTED_HOOKS",
    "HERMES_ONLY_HOOKS",
    "HOOK_SPECS",
    "MIDDLEWARE_KINDS",
    "MIDDLEWARE_SCHEMA_VERSION",
    "TELEMETRY_SCHEMA_VERSION",
    "TOOL_STATUSES",
    "VALID_HOOKS",
    "ControlRejected",
    "HookSpec",
    "RunContext",
    "TraceEntry",
    "missing_fields",
]
