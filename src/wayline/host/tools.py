"""The tool registry: JSON-schema definitions grouped into toolsets.

Built-in tools register with ``builtin=True``; a plugin may add tools but may
replace a built-in only when its config entry says
``plugins.entries.<key>.allow_tool_override: true``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

ToolHandler = Callable[..., str]


class ToolOverrideError(PermissionError):
    """A plugin tried to replace a built-in tool without permission."""


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One registered tool.

    ``handler(args: dict, **context) -> str`` returns a JSON string; it runs on a
    worker thread when ``parallel_safe`` and several calls arrive in one batch.
    """

    name: str
    toolset: str
    schema: dict[str, Any]
    handler: ToolHandler
    parallel_safe: bool = False
    builtin: bool = False
    plugin: str | None = None

    def definition(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this tool."""
        schema = dict(self.schema)
        schema.setdefault("name", self.name)
        return {"type": "function", "function": schema}


class ToolRegistry:
    """Name → tool, thread-safe for registration; reads take a snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, ToolEntry] = {}
        # Built-ins a plugin replaced (allow_tool_override): back when plugins are dropped.
        self._shadowed: dict[str, ToolEntry] = {}

    def register(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: ToolHandler,
        *,
        parallel_safe: bool = False,
        builtin: bool = False,
        plugin: str | None = None,
        allow_override: bool = False,
    ) -> ToolEntry:
        """Add a tool; refuses to let a plugin shadow a built-in unless allowed."""
        if not isinstance(name, str) or not name:
            raise ValueError("tool name must be a non-empty string")
        if not callable(handler):
            raise TypeError(f"tool {name!r}: handler is not callable")
        if not isinstance(schema, dict):
            raise TypeError(f"tool {name!r}: schema must be a dict (an OpenAI function schema)")
        entry = ToolEntry(name, toolset, schema, handler, parallel_safe, builtin, plugin)
        with self._lock:
            existing = self._tools.get(name)
            if (
                existing is not None
                and existing.builtin
                and plugin is not None
                and not allow_override
            ):
                raise ToolOverrideError(
                    f"plugin {plugin!r} may not replace built-in tool {name!r}; set "
                    f"plugins.entries.{plugin}.allow_tool_override: true in config.yaml to allow it"
                )
            if existing is not None and existing.plugin is None and plugin is not None:
                self._shadowed.setdefault(name, existing)
            self._tools[name] = entry
        return entry

    def drop_plugin_tools(self) -> list[str]:
        """Remove every plugin's tools, putting back the built-ins they replaced."""
        with self._lock:
            names = sorted(n for n, e in self._tools.items() if e.plugin is not None)
            for name in names:
                shadowed = self._shadowed.pop(name, None)
                if shadowed is None:
                    del self._tools[name]
                else:
                    self._tools[name] = shadowed
            return names

    def restore(self, name: str, previous: ToolEntry | None) -> None:
        """Put back what ``name`` was before a registration (``None``: remove it)."""
        with self._lock:
            if previous is None:
                self._tools.pop(name, None)
            else:
                self._tools[name] = previous
            if previous is None or previous.plugin is None:
                self._shadowed.pop(name, None)

    def get(self, name: str) -> ToolEntry | None:
        """The tool called ``name``, if any."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """All tool names, sorted."""
        return sorted(self._tools)

    def toolsets(self) -> dict[str, list[str]]:
        """Toolset → tool names."""
        out: dict[str, list[str]] = {}
        for entry in self._tools.values():
            out.setdefault(entry.toolset, []).append(entry.name)
        return {k: sorted(v) for k, v in sorted(out.items())}

    def select(self, toolsets: Iterable[str] | None) -> list[ToolEntry]:
        """Tools in the given toolsets (all when None), in name order."""
        wanted = None if toolsets is None else set(toolsets)
        return [
            e
            for _, e in sorted(self._tools.items())
            if wanted is None or e.toolset in wanted or e.name in wanted
        ]
