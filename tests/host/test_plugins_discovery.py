"""Plugin discovery, enablement gate and loading: sources, keys, errors, tool overrides."""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wayline.host import PluginManager, discover

from .conftest import PluginWriter

Config = Callable[[str], Path]
Loader = Callable[[], PluginManager]

HOOK_PLUGIN = """
def register(ctx):
    ctx.register_hook("pre_api_request", lambda **kw: {tag!r})
"""


def hook_plugin(tag: str) -> str:
    """Plugin code whose pre_api_request callback returns ``tag``."""
    return HOOK_PLUGIN.format(tag=tag)


def keys(manager: PluginManager) -> dict[str, str]:
    """key -> source of every discovered plugin."""
    return {k: p.manifest.source for k, p in manager.plugins.items()}


def test_bundled_plugins_come_from_wayline_bundled_plugins(
    write_plugin: PluginWriter, bundled_dir: Path, write_config: Config, load: Loader
) -> None:
    """WAYLINE_BUNDLED_PLUGINS is scanned as the bundled source and its plugins load from there."""
    write_plugin("observability/tracer", hook_plugin("bundled"), root=bundled_dir)
    write_config("plugins:\n  enabled: [observability/tracer]\n")
    manager = load()
    assert keys(manager) == {"observability/tracer": "bundled"}
    plugin = manager.plugins["observability/tracer"]
    assert plugin.loaded, plugin.error
    assert manager.invoke_hook("pre_api_request") == ["bundled"]


def test_flat_layout_key_is_manifest_name(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """A flat ``plugins/<dir>/`` plugin is keyed by its manifest name, not its directory."""
    write_plugin("some_dir", hook_plugin("flat"), manifest="name: real-name\nversion: 2\n")
    write_config("plugins:\n  enabled: [real-name]\n")
    manager = load()
    assert list(manager.plugins) == ["real-name"]
    plugin = manager.plugins["real-name"]
    assert plugin.loaded and plugin.manifest.version == "2"
    assert manager.invoke_hook("pre_api_request") == ["flat"]


def test_category_layout_key_is_category_slash_dir(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """``plugins/<category>/<dir>/`` gets key ``category/dir`` whatever the manifest name says."""
    write_plugin("observability/exporter", hook_plugin("cat"), manifest="name: fancy_exporter\n")
    write_config("plugins:\n  enabled: [observability/exporter]\n")
    manager = load()
    plugin = manager.plugins["observability/exporter"]
    assert plugin.manifest.name == "fancy_exporter" and plugin.manifest.leaf == "exporter"
    assert plugin.loaded


def test_bare_manifest_name_enables_a_category_plugin(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """plugins.enabled may name the manifest name instead of the key."""
    write_plugin("observability/exporter", hook_plugin("cat"), manifest="name: fancy_exporter\n")
    write_config("plugins:\n  enabled: [fancy_exporter]\n")
    assert load().plugins["observability/exporter"].loaded


def test_depth_is_capped_and_hidden_dirs_skipped(
    write_plugin: PluginWriter, home: Path, load: Loader
) -> None:
    """Manifests deeper than category/name, and dirs starting with . or _, are not plugins."""
    write_plugin("a/b/c")
    write_plugin(".hidden")
    write_plugin("_private")
    write_plugin("cat/.hidden")
    (home / "plugins" / "empty_category").mkdir()
    assert load().plugins == {}


def test_plugin_yml_extension_is_accepted(home: Path, load: Loader) -> None:
    """A manifest called plugin.yml is found too."""
    plugin_dir = home / "plugins" / "yml_plugin"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "plugin.yml").write_text("name: yml_plugin\n")
    (plugin_dir / "__init__.py").write_text("def register(ctx):\n    pass\n")
    assert "yml_plugin" in load().plugins


def test_user_source_is_scanned_and_manifest_parsed(write_plugin: PluginWriter, home: Path) -> None:
    """discover() reads $WAYLINE_HOME/plugins and parses every manifest field."""
    write_plugin(
        "full",
        manifest="""
        name: full
        version: 1.5
        description: does things
        author: someone
        provides_hooks: [pre_api_request, post_api_request]
        provides_tools: mytool
        requires_env: [API_KEY]
        """,
    )
    [manifest] = discover(home)
    assert (manifest.key, manifest.source, manifest.version) == ("full", "user", "1.5")
    assert (manifest.description, manifest.author, manifest.kind) == (
        "does things",
        "someone",
        "standalone",
    )
    assert manifest.provides_hooks == ["pre_api_request", "post_api_request"]
    assert manifest.provides_tools == ["mytool"]
    assert manifest.requires_env == ["API_KEY"]
    assert manifest.error is None


def test_later_source_wins_on_key_collision(
    write_plugin: PluginWriter, bundled_dir: Path, write_config: Config, load: Loader
) -> None:
    """A user plugin with a bundled plugin's key replaces it (bundled < user)."""
    write_plugin("dup", hook_plugin("from-bundled"), root=bundled_dir)
    write_plugin("dup", hook_plugin("from-user"))
    write_config("plugins:\n  enabled: [dup]\n")
    manager = load()
    assert keys(manager) == {"dup": "user"}
    assert manager.invoke_hook("pre_api_request") == ["from-user"]


def test_project_plugins_only_when_enabled_by_env(
    write_plugin: PluginWriter,
    tmp_path: Path,
    write_config: Config,
    load: Loader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """./.wayline/plugins is scanned only if WAYLINE_ENABLE_PROJECT_PLUGINS=1, and then a
    project plugin with a user plugin's key is refused: the user one stays."""
    project = tmp_path / "project"
    write_plugin("dup", hook_plugin("from-project"), root=project / ".wayline" / "plugins")
    write_plugin("dup", hook_plugin("from-user"))
    write_config("plugins:\n  enabled: [dup]\n")
    monkeypatch.chdir(project)
    assert keys(load()) == {"dup": "user"}
    monkeypatch.setenv("WAYLINE_ENABLE_PROJECT_PLUGINS", "0")
    assert keys(load()) == {"dup": "user"}
    monkeypatch.setenv("WAYLINE_ENABLE_PROJECT_PLUGINS", "1")
    manager = load()
    assert keys(manager) == {"dup": "user", "dup (project)": "project"}
    assert manager.plugins["dup (project)"].error is not None
    assert manager.invoke_hook("pre_api_request") == ["from-user"]


def make_dist(site: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    """Write a minimal installed distribution (dist-info + modules) into ``site``."""
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for name, code in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(code))


def test_entry_point_plugins_are_discovered_and_loaded(
    tmp_path: Path, write_config: Config, load: Loader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A distribution with a ``wayline.plugins`` entry point is a plugin keyed by the ep name."""
    site = tmp_path / "site"
    make_dist(
        site,
        "wl_ep_dist",
        "[wayline.plugins]\nep_tracer = wl_ep_tracer\n[other.group]\nignored = wl_ep_tracer\n",
        {"wl_ep_tracer": hook_plugin("from-entry-point")},
    )
    monkeypatch.syspath_prepend(str(site))
    write_config("plugins:\n  enabled: [ep_tracer]\n")
    manager = load()
    assert keys(manager) == {"ep_tracer": "entrypoint"}
    assert manager.plugins["ep_tracer"].manifest.path == "wl_ep_tracer"
    assert manager.plugins["ep_tracer"].loaded
    assert manager.invoke_hook("pre_api_request") == ["from-entry-point"]


def test_entry_point_to_a_function_has_no_register(
    tmp_path: Path, write_config: Config, load: Loader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry point resolving to a function (not a module with register) is a load error."""
    site = tmp_path / "site"
    make_dist(
        site,
        "wl_ep_fn",
        "[wayline.plugins]\nfn_plugin = wl_ep_fn:register\n",
        {"wl_ep_fn": "def register(ctx):\n    pass\n"},
    )
    monkeypatch.syspath_prepend(str(site))
    write_config("plugins:\n  enabled: [fn_plugin]\n")
    plugin = load().plugins["fn_plugin"]
    assert not plugin.loaded
    assert plugin.error is not None and "register" in plugin.error


def test_not_enabled_plugins_are_listed_but_not_loaded(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """A plugin missing from plugins.enabled is recorded with a hint and registers nothing."""
    write_plugin("idle", hook_plugin("idle"))
    write_config("plugins:\n  enabled: []\n")
    manager = load()
    plugin = manager.plugins["idle"]
    assert not plugin.enabled and not plugin.loaded
    assert plugin.error is not None and "wayline plugins enable idle" in plugin.error
    assert not manager.has_hook("pre_api_request")
    assert "wayline_plugins.idle" not in sys.modules


def test_missing_config_enables_nothing(write_plugin: PluginWriter, load: Loader) -> None:
    """Without config.yaml no opt-in plugin loads."""
    write_plugin("idle", hook_plugin("idle"))
    assert not load().plugins["idle"].loaded


@pytest.mark.parametrize(
    "disabled", ["observability/exporter", "fancy_exporter"], ids=["by-key", "by-name"]
)
def test_disabled_wins_over_enabled(
    disabled: str, write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """A plugin both enabled and disabled (by key or manifest name) is not loaded."""
    write_plugin("observability/exporter", hook_plugin("x"), manifest="name: fancy_exporter\n")
    write_config(f"plugins:\n  enabled: [observability/exporter]\n  disabled: [{disabled}]\n")
    manager = load()
    plugin = manager.plugins["observability/exporter"]
    assert not plugin.loaded and plugin.error == "disabled via config"
    assert not manager.has_hook("pre_api_request")


FAILING_PLUGINS = {
    "import_error": "raise ImportError('optional dependency nemo missing')\n",
    "syntax_error": "def register(ctx)\n    pass\n",
    "no_register": "X = 1\n",
    "register_raises": """
        def register(ctx):
            ctx.register_hook("pre_api_request", lambda **kw: "half")
            ctx.register_middleware("llm_request", lambda **kw: None)
            ctx.register_tool("half_tool", "demo", {"name": "half_tool"}, lambda args, **kw: "{}")
            raise RuntimeError("register failed halfway")
        """,
    "bad_callback": """
        def register(ctx):
            ctx.register_hook("pre_api_request", lambda **kw: "half")
            ctx.register_hook("post_api_request", "not callable")
        """,
}


@pytest.mark.parametrize("name", sorted(FAILING_PLUGINS))
def test_failing_plugin_is_skipped_and_host_keeps_loading(
    name: str,
    write_plugin: PluginWriter,
    write_config: Config,
    load: Loader,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Import/register failures are recorded and logged; nothing is half-registered; others load."""
    write_plugin(name, FAILING_PLUGINS[name])
    write_plugin("zz_healthy", hook_plugin("healthy"))
    write_config(f"plugins:\n  enabled: [{name}, zz_healthy]\n")
    with caplog.at_level(logging.WARNING, logger="wayline.plugins"):
        manager = load()
    broken = manager.plugins[name]
    assert broken.enabled and not broken.loaded
    assert broken.error and broken.hooks == [] and broken.middleware == []
    assert manager.plugins["zz_healthy"].loaded
    assert manager.invoke_hook("pre_api_request") == ["healthy"]
    assert not manager.has_middleware("llm_request")
    assert manager.tools.names() == []
    if name.endswith("_error"):  # a module that failed to import is not left half-imported
        assert f"wayline_plugins.{name}" not in sys.modules
    assert any(name in r.getMessage() and broken.error in r.getMessage() for r in caplog.records)


def test_register_error_message_is_recorded(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """The recorded error names the exception type and message."""
    write_plugin("register_raises", FAILING_PLUGINS["register_raises"])
    write_config("plugins:\n  enabled: [register_raises]\n")
    error = load().plugins["register_raises"].error
    assert error == "RuntimeError: register failed halfway"


def test_keyboard_interrupt_in_register_propagates(
    write_plugin: PluginWriter, write_config: Config, home: Path
) -> None:
    """A BaseException raised by register(ctx) is not swallowed by the loader."""
    write_plugin("interrupting", "def register(ctx):\n    raise KeyboardInterrupt\n")
    write_config("plugins:\n  enabled: [interrupting]\n")
    with pytest.raises(KeyboardInterrupt):
        PluginManager(home).discover_and_load()


def test_plugin_with_broken_manifest_is_recorded_not_loaded(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """A malformed plugin.yaml records an error with file and line; the plugin keeps its dir key."""
    plugin_dir = write_plugin("broken", hook_plugin("x"), manifest="name: broken\n  version: [1\n")
    write_config("plugins:\n  enabled: [broken]\n")
    plugin = load().plugins["broken"]
    assert not plugin.loaded
    assert plugin.error is not None
    assert plugin.error.startswith(f"{plugin_dir / 'plugin.yaml'}:2: invalid YAML")


def test_discover_and_load_runs_once_unless_forced(
    write_plugin: PluginWriter, write_config: Config, home: Path
) -> None:
    """A second discover_and_load is a no-op; force=True rebuilds hooks without duplicates."""
    write_plugin("once", hook_plugin("once"))
    write_config("plugins:\n  enabled: [once]\n")
    manager = PluginManager(home)
    manager.discover_and_load()
    manager.discover_and_load()
    assert manager.invoke_hook("pre_api_request") == ["once"]
    manager.discover_and_load(force=True)
    assert manager.invoke_hook("pre_api_request") == ["once"]


def test_registrations_are_attributed_to_the_plugin(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """list_plugins rows show each plugin's hooks, middleware and tools."""
    write_plugin(
        "busy",
        """
        def register(ctx):
            ctx.register_hook("pre_tool_call", lambda **kw: None)
            ctx.register_hook("post_tool_call", lambda **kw: None)
            ctx.register_middleware("tool_request", lambda **kw: None)
            ctx.register_tool("busy_tool", "busy", {"name": "busy_tool"}, lambda a, **kw: "{}")
        """,
    )
    write_config("plugins:\n  enabled: [busy]\n")
    [row] = load().list_plugins()
    assert row["loaded"] and row["source"] == "user"
    assert row["hooks"] == ["pre_tool_call", "post_tool_call"]
    assert row["middleware"] == ["tool_request"]
    assert row["tools"] == ["busy_tool"]


OVERRIDE_PLUGIN = """
def _terminal(args, **kw):
    return '{"output": "plugin terminal"}'

def register(ctx):
    ctx.register_hook("pre_tool_call", lambda **kw: None)
    ctx.register_tool("extra_tool", "extra", {"name": "extra_tool"}, lambda a, **kw: "{}")
    ctx.register_tool("terminal", "terminal", {"name": "terminal"}, _terminal, override=True)
"""


def manager_with_builtin_terminal(home: Path) -> PluginManager:
    """A manager whose registry already holds a built-in ``terminal`` tool."""
    manager = PluginManager(home)
    manager.tools.register(
        "terminal", "terminal", {"name": "terminal"}, lambda a, **kw: "builtin", builtin=True
    )
    return manager


def test_plugin_may_not_replace_builtin_tool_by_default(
    write_plugin: PluginWriter, write_config: Config, home: Path
) -> None:
    """Overriding a built-in without allow_tool_override fails the plugin and leaves no trace."""
    write_plugin("overrider", OVERRIDE_PLUGIN)
    write_config("plugins:\n  enabled: [overrider]\n")
    manager = manager_with_builtin_terminal(home)
    manager.discover_and_load()
    plugin = manager.plugins["overrider"]
    assert not plugin.loaded
    assert plugin.error is not None and "ToolOverrideError" in plugin.error
    assert "allow_tool_override" in plugin.error
    entry = manager.tools.get("terminal")
    assert entry is not None and entry.builtin and entry.handler({}) == "builtin"
    assert manager.tools.names() == ["terminal"]
    assert not manager.has_hook("pre_tool_call")


def test_allow_tool_override_lets_plugin_replace_builtin(
    write_plugin: PluginWriter, write_config: Config, home: Path
) -> None:
    """plugins.entries.<key>.allow_tool_override: true permits replacing a built-in tool."""
    write_plugin("overrider", OVERRIDE_PLUGIN)
    write_config(
        """
        plugins:
          enabled: [overrider]
          entries:
            overrider:
              allow_tool_override: true
        """
    )
    manager = manager_with_builtin_terminal(home)
    manager.discover_and_load()
    assert manager.plugins["overrider"].loaded
    entry = manager.tools.get("terminal")
    assert entry is not None and entry.plugin == "overrider" and not entry.builtin
    assert entry.handler({}) == '{"output": "plugin terminal"}'
    assert manager.tools.names() == ["extra_tool", "terminal"]


def test_forced_reload_drops_the_tools_of_plugins_disabled_meanwhile(
    write_plugin: PluginWriter, write_config: Config, home: Path
) -> None:
    """``discover_and_load(force=True)`` after disabling a plugin removes its tools and puts
    back the built-in it replaced; re-enabling it brings its tools back."""
    write_plugin("overrider", OVERRIDE_PLUGIN)
    write_config(
        "plugins:\n  enabled: [overrider]\n  entries:\n    overrider:\n"
        "      allow_tool_override: true\n"
    )
    manager = manager_with_builtin_terminal(home)
    manager.discover_and_load()
    assert manager.tools.names() == ["extra_tool", "terminal"]
    plugins = manager.config["plugins"]
    plugins["enabled"] = []
    manager.discover_and_load(force=True)
    entry = manager.tools.get("terminal")
    assert entry is not None and entry.builtin and entry.handler({}) == "builtin"
    assert manager.tools.names() == ["terminal"]
    plugins["enabled"] = ["overrider"]
    manager.discover_and_load(force=True)
    entry = manager.tools.get("terminal")
    assert entry is not None and entry.plugin == "overrider"
    assert manager.tools.names() == ["extra_tool", "terminal"]


def test_allow_tool_override_still_needs_override_flag(
    write_plugin: PluginWriter, write_config: Config, home: Path
) -> None:
    """Even when allowed, a plugin must ask for override=True to replace a built-in."""
    write_plugin(
        "sneaky",
        """
        def register(ctx):
            ctx.register_tool("terminal", "terminal", {"name": "terminal"}, lambda a, **kw: "x")
        """,
    )
    write_config(
        "plugins:\n  enabled: [sneaky]\n  entries:\n    sneaky:\n      allow_tool_override: true\n"
    )
    manager = manager_with_builtin_terminal(home)
    manager.discover_and_load()
    assert not manager.plugins["sneaky"].loaded
    entry = manager.tools.get("terminal")
    assert entry is not None and entry.builtin


def test_plugin_context_exposes_manifest_and_entry_config(
    write_plugin: PluginWriter, write_config: Config, load: Loader
) -> None:
    """register(ctx) sees its manifest and its plugins.entries.<key> section."""
    write_plugin(
        "cfg/reader",
        """
        SEEN = {}

        def register(ctx):
            SEEN.update(key=ctx.manifest.key, name=ctx.manifest.name, config=ctx.config)
        """,
        manifest="name: reader\n",
    )
    write_config("plugins:\n  enabled: [cfg/reader]\n  entries:\n    cfg/reader:\n      level: 3\n")
    load()
    seen: dict[str, Any] = sys.modules["wayline_plugins.cfg__reader"].SEEN
    assert seen == {"key": "cfg/reader", "name": "reader", "config": {"level": 3}}
