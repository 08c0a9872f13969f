"""The plugin manager: enablement gate, loading, and the registries plugins fill.

The runtime talks only to this object: ``hooks`` (the observer bus),
``middleware`` (the control chains) and ``tools`` (the registry).
"""

from __future__ import annotations

import atexit
import importlib
import importlib.machinery
import importlib.util
import logging
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from wayline.host.bus import HookBus
from wayline.host.config import YamlDoc, load_config, wayline_home
from wayline.host.context import PluginContext, PluginInstance
from wayline.host.manifest import (
    BUNDLED_DIR,
    ENTRY_POINT_GROUP,
    PluginManifest,
    discover,
)
from wayline.host.middleware import MiddlewareChains
from wayline.host.tools import ToolEntry, ToolRegistry

log = logging.getLogger("wayline.plugins")
_NAMESPACE = "wayline_plugins"


@dataclass(slots=True)
class LoadedPlugin:
    """A discovered plugin and what became of it."""

    manifest: PluginManifest
    enabled: bool = False
    loaded: bool = False
    error: str | None = None
    hooks: list[str] = field(default_factory=list)
    middleware: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    instance: PluginInstance | None = None
    """What the plugin's ``register(ctx)`` handed over with ``ctx.register_instance``."""

    def row(self) -> dict[str, Any]:
        """A ``wayline plugins list`` row."""
        m = self.manifest
        return {
            "key": m.key,
            "name": m.name,
            "version": m.version,
            "source": m.source,
            "enabled": self.enabled,
            "loaded": self.loaded,
            "hooks": list(self.hooks),
            "middleware": list(self.middleware),
            "tools": list(self.tools),
            "error": self.error,
        }


def _unique(names: list[str]) -> list[str]:
    """``names`` without repeats, in first-seen order (a plugin may register a hook twice)."""
    return list(dict.fromkeys(names))


def _where(exc: BaseException, plugin_dir: str) -> str | None:
    """``file:line`` inside the plugin's directory where ``exc`` was raised (innermost)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    try:
        root = Path(plugin_dir).resolve()
    except (OSError, RuntimeError):
        return None
    where = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if Path(filename).resolve().is_relative_to(root):
            where = f"{filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


class PluginManager:
    """Finds, gates and loads plugins; owns the hook bus, middleware chains and tools."""

    def __init__(
        self,
        home: Path | None = None,
        *,
        config: YamlDoc | None = None,
        record_home: Path | None = None,
    ) -> None:
        self.home = home or wayline_home()
        self.record_home = record_home or self.home
        """The home plugins are handed (``ctx.home``): where their records go. The home's own
        unless a caller records elsewhere (a replay must not add to the user's records)."""
        self.config_doc = config if config is not None else load_config(self.home)
        self.config: dict[str, Any] = self.config_doc.data or {}
        self.middleware = MiddlewareChains()
        self.hooks = HookBus(self.middleware)
        self.tools = ToolRegistry()
        self.plugins: dict[str, LoadedPlugin] = {}
        self.missing: list[str] = []
        """Enabled names (config or caller) that matched no discovered plugin, sorted."""
        self._discovered = False
        self._instances: list[tuple[str, PluginInstance]] = []

    # -- convenience passthroughs (the Hermes manager's names) ----------------------
    def has_hook(self, name: str) -> bool:
        """True when ``name`` has a subscriber."""
        return self.hooks.has_hook(name)

    def invoke_hook(self, name: str, **payload: Any) -> list[Any]:
        """Fail-open dispatch of an observer hook."""
        return self.hooks.invoke_hook(name, **payload)

    def has_middleware(self, kind: str) -> bool:
        """True when middleware ``kind`` has a callback."""
        return self.middleware.has_middleware(kind)

    # -- discovery and loading -------------------------------------------------------
    def _lists(self) -> tuple[set[str], set[str]]:
        section = self.config.get("plugins") or {}
        return set(section.get("enabled") or []), set(section.get("disabled") or [])

    def discover_and_load(
        self, *, force: bool = False, extra_enabled: tuple[str, ...] = ()
    ) -> None:
        """Discover every plugin and load the enabled ones (once unless ``force``).

        ``force`` first forgets every plugin's hooks, middleware and tools (a built-in tool a
        plugin replaced comes back), so a plugin disabled meanwhile leaves nothing behind.
        """
        if self._discovered and not force:
            return
        if force:
            self.close_instances()
            self.hooks.clear()
            self.middleware.clear()
            self.tools.drop_plugin_tools()
            self.plugins.clear()
            self.missing = []
        self._discovered = True
        enabled, disabled = self._lists()
        enabled |= set(extra_enabled)
        manifests = discover(self.home)
        for manifest in manifests:
            plugin = LoadedPlugin(manifest)
            self.plugins[manifest.key] = plugin
            names = {manifest.key, manifest.name}
            if manifest.error:
                plugin.error = manifest.error
                log.warning("plugin %r: %s", manifest.key, manifest.error)
                continue
            if names & disabled:
                plugin.error = "disabled via config"
                continue
            if not names & enabled:
                plugin.error = (
                    "not enabled in config "
                    f"(run `wayline plugins enable {manifest.key}` to activate)"
                )
                continue
            plugin.enabled = True
            self._load(plugin)
        self._report_missing(enabled - disabled, manifests, set(extra_enabled))

    def _report_missing(
        self, wanted: set[str], manifests: list[PluginManifest], from_caller: set[str]
    ) -> None:
        """Warn about every enabled name that matched no plugin, and give it a row.

        Called on every discovery, so each run that reads the config says it again: a typo in
        ``plugins.enabled`` must not silently turn an exporter off.
        """
        known = {n for m in manifests for n in (m.key, m.name)}
        self.missing = sorted(wanted - known)
        for name in self.missing:
            where = (
                "requested by the caller"
                if name in from_caller
                else "enabled in config.yaml (plugins.enabled)"
            )
            error = f"{where} but not found{_suggest(name, manifests)}"
            log.warning("plugin %r: %s", name, error)
            manifest = PluginManifest(key=name, name=name, source="config", path="", error=error)
            self.plugins.setdefault(name, LoadedPlugin(manifest, enabled=True, error=error))

    def add_plugin(self, plugin_object: Any, key: str | None = None) -> LoadedPlugin:
        """Load an in-process plugin: a module or object with ``register(ctx)``.

        Unlike a discovered plugin (third-party code found on disk, which fails open), this
        one was handed over by the caller's own code, so a mistake raises: ``TypeError`` when
        there is no ``register``, ``ValueError`` when the key is taken, and whatever
        ``register(ctx)`` raised. Nothing is registered unless ``register`` returns.
        """
        register = getattr(plugin_object, "register", None)
        if not callable(register):
            raise TypeError(f"plugin {plugin_object!r} has no register(ctx) function")
        name = key or _object_key(plugin_object)
        if name in self.plugins and self.plugins[name].loaded:
            raise ValueError(f"a plugin with key {name!r} is already loaded; pass another key")
        where = getattr(plugin_object, "__file__", None) or type(plugin_object).__module__
        manifest = PluginManifest(key=name, name=name, source="python", path=str(where))
        plugin = LoadedPlugin(manifest, enabled=True)
        ctx = PluginContext(manifest, self.entry_config(name), home=self.record_home)
        register(ctx)
        self.apply(ctx, plugin)
        plugin.loaded = True
        self.plugins[name] = plugin
        return plugin

    def _import(self, manifest: PluginManifest) -> Any:
        if manifest.source == "entrypoint":
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
                if ep.name == manifest.key:
                    return ep.load()
            raise ImportError(f"entry point {manifest.key!r} vanished")
        plugin_dir = Path(manifest.path)
        if manifest.source == "bundled" and plugin_dir.resolve().is_relative_to(BUNDLED_DIR):
            # Shipped plugins are real subpackages, importable by their dotted name (from the
            # directory, not the key: a flat plugin's key is its manifest name). A
            # WAYLINE_BUNDLED_PLUGINS directory elsewhere is imported from its files below.
            rel = plugin_dir.resolve().relative_to(BUNDLED_DIR)
            return importlib.import_module(".".join(("wayline", "plugins", *rel.parts)))
        slug = manifest.key.replace("/", "__").replace("-", "_")
        module_name = f"{_NAMESPACE}.{slug}"
        if _NAMESPACE not in sys.modules:
            sys.modules[_NAMESPACE] = importlib.util.module_from_spec(
                importlib.machinery.ModuleSpec(_NAMESPACE, None, is_package=True)
            )
        spec = importlib.util.spec_from_file_location(
            module_name, plugin_dir / "__init__.py", submodule_search_locations=[str(plugin_dir)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import plugin from {plugin_dir}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return module

    def entry_config(self, key: str) -> dict[str, Any]:
        """``plugins.entries.<key>`` from config.yaml, or {}."""
        entries = (self.config.get("plugins") or {}).get("entries") or {}
        value = entries.get(key) if isinstance(entries, dict) else None
        return value if isinstance(value, dict) else {}

    def _load(self, plugin: LoadedPlugin) -> None:
        manifest = plugin.manifest
        ctx = PluginContext(manifest, self.entry_config(manifest.key), home=self.record_home)
        try:
            module = self._import(manifest)
            register = getattr(module, "register", None)
            if not callable(register):
                raise TypeError("no register(ctx) function")
            register(ctx)
            self.apply(ctx, plugin)
        except Exception as exc:
            plugin.error = f"{type(exc).__name__}: {exc}"
            plugin.loaded = False
            where = _where(exc, manifest.path)
            log.warning(
                "Failed to load plugin %r: %s%s",
                manifest.key,
                f"{where}: " if where else "",
                plugin.error,
            )
            return
        plugin.loaded = True

    def apply(self, ctx: PluginContext, plugin: LoadedPlugin | None = None) -> None:
        """Commit a context's staged registrations (tools first: they may be refused)."""
        key = ctx.manifest.key
        allow = bool(self.entry_config(key).get("allow_tool_override"))
        replaced: list[tuple[str, ToolEntry | None]] = []
        try:
            for tool in ctx.staged.tools:
                previous = self.tools.get(tool["name"])
                self.tools.register(
                    tool["name"],
                    tool["toolset"],
                    tool["schema"],
                    tool["handler"],
                    parallel_safe=tool["parallel_safe"],
                    plugin=key,
                    allow_override=allow and tool["override"],
                )
                replaced.append((tool["name"], previous))
        except Exception:
            # A refused tool fails the whole plugin: undo its earlier tools too.
            for name, previous in reversed(replaced):
                self.tools.restore(name, previous)
            raise
        for name, callback in ctx.staged.hooks:
            self.hooks.register(name, callback, key)
        for kind, callback in ctx.staged.middleware:
            self.middleware.register(kind, callback, key)
        instance = ctx.staged.instance
        if instance is not None:
            if not self._instances:
                atexit.register(self.close_instances)  # a host its caller never closed
            self._instances.append((key, instance))
        if plugin is not None:
            plugin.instance = instance
            plugin.tools = [t["name"] for t in ctx.staged.tools]
            plugin.hooks = _unique([h for h, _ in ctx.staged.hooks])
            plugin.middleware = _unique([k for k, _ in ctx.staged.middleware])

    def instance(self, key: str) -> PluginInstance | None:
        """The instance plugin ``key`` registered for this host, if any (and still open)."""
        return next((obj for name, obj in self._instances if name == key), None)

    def close_instances(self) -> None:
        """Close every plugin instance of this host, last loaded first; idempotent.

        An instance's ``close()`` is an observer's work: an ``Exception`` is logged and the
        next instance still closes; ``BaseException`` propagates.
        """
        instances, self._instances = self._instances, []
        if not instances:
            return
        atexit.unregister(self.close_instances)
        for key, instance in reversed(instances):
            try:
                instance.close()
            except Exception as exc:
                log.warning("plugin %r: closing it failed: %r", key, exc, exc_info=exc)

    def list_plugins(self) -> list[dict[str, Any]]:
        """One row per discovered plugin."""
        self.discover_and_load()
        return [p.row() for p in self.plugins.values()]

    def resolve(self, name: str) -> PluginManifest:
        """A plugin by key, manifest name or unique leaf name; LookupError lists the known ones."""
        self.discover_and_load()
        manifests = [p.manifest for p in self.plugins.values()]
        for attr in ("key", "name", "leaf"):
            hits = [m for m in manifests if getattr(m, attr) == name]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                raise LookupError(
                    f"{name!r} is ambiguous: " + ", ".join(sorted(m.key for m in hits))
                )
        known = ", ".join(sorted(m.key for m in manifests)) or "(none)"
        raise LookupError(f"no plugin named {name!r}; known plugins: {known}")


def _object_key(plugin_object: Any) -> str:
    """A key for an in-process plugin: its module name, ``name`` attribute or class name."""
    for attr in ("__name__", "name"):
        value = getattr(plugin_object, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(plugin_object).__name__


def _suggest(name: str, manifests: list[PluginManifest]) -> str:
    """``; did you mean 'x'?`` for a near or leaf-name match, else the known keys; a plugin of
    the project directory that was skipped for want of the opt-in is named as such."""
    import difflib

    if (Path.cwd() / ".wayline" / "plugins" / name / "plugin.yaml").is_file():
        return (
            f" (./.wayline/plugins/{name} is a project plugin: project plugins load only with "
            "WAYLINE_ENABLE_PROJECT_PLUGINS=1)"
        )

    keys = sorted(m.key for m in manifests)
    leaf = [m.key for m in manifests if m.leaf == name]
    close = leaf or difflib.get_close_matches(name, keys, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; known plugins: {', '.join(keys) or '(none)'}"
