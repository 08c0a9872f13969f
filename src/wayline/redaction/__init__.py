"""Redaction and payload sanitizing: the one policy every hook payload and exporter shares.

`sanitize` turns any value into a JSON-compatible, redacted copy; `redact_text` replaces the
secret part of secret-looking text, after masking every known value (`mask`, `KnownValues`).
The package imports nothing of wayline's: the hook contract's users (host, runtime, relay,
plugins) may all import it. docs/redaction.md states its principles.
"""

from wayline.redaction.known import MIN_LENGTH, KnownValues, mask, process_values
from wayline.redaction.redact import (
    REDACT_PATTERNS_ENV,
    REDACTED,
    SecretPattern,
    add_secret_pattern,
    add_sensitive_key,
    is_identifier_key,
    is_sensitive_key,
    is_weak_key,
    redact_text,
    redact_text_learning,
    reload_env_patterns,
    remove_secret_pattern,
    secret_patterns,
)
from wayline.redaction.sanitize import (
    PAYLOAD_MAX_CHARS_ENV,
    SanitizeMemo,
    payload_max_chars,
    redact_bounded,
    redact_value,
    sanitize,
    sanitize_headers,
    to_jsonable,
)

__all__ = [
    "MIN_LENGTH",
    "PAYLOAD_MAX_CHARS_ENV",
    "REDACTED",
    "REDACT_PATTERNS_ENV",
    "KnownValues",
    "SanitizeMemo",
    "SecretPattern",
    "add_secret_pattern",
    "add_sensitive_key",
    "is_identifier_key",
    "is_sensitive_key",
    "is_weak_key",
    "mask",
    "payload_max_chars",
    "process_values",
    "redact_bounded",
    "redact_text",
    "redact_text_learning",
    "redact_value",
    "reload_env_patterns",
    "remove_secret_pattern",
    "sanitize",
    "sanitize_headers",
    "secret_patterns",
    "to_jsonable",
]
