"""``nemo_relay.llm`` (Relay 0.10.4's module path): re-exports the LLM call functions.

Manual spans and managed execution live in :mod:`wayline.relay._calls.llm`, streaming in
:mod:`wayline.relay._calls.llm_stream` (which builds on the former, never the reverse).
"""

from __future__ import annotations

from wayline.relay._calls.llm import (
    CREDENTIAL_HEADERS,
    call,
    call_end,
    call_fail,
    conditional_execution,
    execute,
    execute_sync,
    request_intercepts,
)
from wayline.relay._calls.llm_stream import LLMStream, stream_execute, stream_execute_sync

__all__ = [
    "CREDENTIAL_HEADERS",
    "LLMStream",
    "call",
    "call_end",
    "call_fail",
    "conditional_execution",
    "execute",
    "execute_sync",
    "request_intercepts",
    "stream_execute",
    "stream_execute_sync",
]
