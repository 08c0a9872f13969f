"""``wayline mcp``: the session index as an MCP server, for coding agents to query.

Six read-only tools (``list_sessions``, ``search``, ``get_session``, ``get_step``,
``diff_sessions``, ``stats``) over the index of :mod:`wayline.store`, every answer bounded
(:mod:`wayline.mcp.paging`). :mod:`wayline.mcp.tools` answers without the SDK;
:mod:`wayline.mcp.server` serves them on the official ``mcp`` SDK (the ``mcp`` extra), which
this package does not import until a server is built. docs/mcp.md shows how to configure a
client.
"""

from wayline.mcp.paging import CHARS_PER_TOKEN, RESULT_CHARS, tokens
from wayline.mcp.tools import Refused, SessionTools

__all__ = ["CHARS_PER_TOKEN", "RESULT_CHARS", "Refused", "SessionTools", "tokens"]
