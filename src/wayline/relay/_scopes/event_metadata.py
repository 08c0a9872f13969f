"""Global event metadata injectors (the nemo_relay ``event_metadata`` module).

``register_injector(name, priority, fn)``: ``fn(event)`` (sync or async) returns flat metadata
additions merged into every published event before sanitizers run; see
:mod:`wayline.relay._scopes.publish` for the rules. Injectors are middleware that fail open.
"""

from __future__ import annotations

from wayline.relay._scopes.publish import deregister_injector, register_injector

__all__ = ["deregister_injector", "register_injector"]
