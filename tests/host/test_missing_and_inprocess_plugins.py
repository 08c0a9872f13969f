"""Enabled plugins that do not exist are reported; hooks listed once; in-process plugins."""

from __future__ import annotations

import json
import logging
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wayline.cli.main import cli
from wayline.host import PluginContext, PluginManager

from .conftest import PluginWriter

Config = Callable[[str], Path]


def test_a_missing_enabled_plugin_warns_on_every_discovery(
    write_config: Config, load: Callable[[], PluginManager], caplog: pytest.LogCaptureFixture
) -> None:
    """Each run that reads the config warns about an enabled name that matches no plugin."""
    write_config("plugins:\n  enabled: [nosuch]\n")
    with caplog.at_level(logging.WARNING, logger="wayline.plugins"):
        first = load()
        second = load()
    warnings = [r.getMessage() for r in caplog.records if "nosuch" in r.getMessage()]
    assert len(warnings) == 2
    assert "enabled in config.yaml (plugins.enabled) but not found" in warnings[0]
    assert first.missing == second.missing == ["nosuch"]


def test_a_missing_plugin_is_a_row_in_plugins_list(
    write_plugin: PluginWriter, write_config: Config
) -> None:
    """`plugins list` shows the missing name as ``missing`` with a did-you-mean hint."""
    write_plugin("observability/relay_x", manifest="name: pretty-relay\n")  # leaf ≠ name
    write_config("plugins:\n  enabled: [relay_x, zzz]\n")
    rows = {
        r["key"]: r
        for r in json.loads(CliRunner().invoke(cli, ["plugins", "list", "--json"]).stdout)
    }
    assert rows["relay_x"]["source"] == "config"
    assert rows["relay_x"]["loaded"] is False
    assert rows["relay_x"]["error"].endswith("did you mean 'observability/relay_x'?")
    assert "known plugins: observability/relay_x" in rows["zzz"]["error"]
    table = CliRunner().invoke(cli, ["plugins", "list"]).stdout
    zzz_line = next(line for line in table.splitlines() if "zzz" in line)
    assert "missing" in zzz_line


def test_a_name_both_enabled_and_disabled_is_not_reported(
    write_config: Config, load: Callable[[], PluginManager], caplog: pytest.LogCaptureFixture
) -> None:
    """``disabled`` wins, so an enabled-and-disabled unknown name is not a missing plugin."""
    write_config("plugins:\n  enabled: [gone]\n  disabled: [gone]\n")
    with caplog.at_level(logging.WARNING, logger="wayline.plugins"):
        manager = load()
    assert manager.missing == []
    assert "gone" not in caplog.text


def test_a_hook_registered_twice_is_listed_once(
    write_plugin: PluginWriter, write_config: Config, load: Callable[[], PluginManager]
) -> None:
    """Two callbacks for one hook both run but the plugin's row names the hook once."""
    write_plugin(
        "twice",
        "def register(ctx):\n"
        "    ctx.register_hook('on_session_start', lambda **kw: None)\n"
        "    ctx.register_hook('on_session_start', lambda **kw: None)\n"
        "    ctx.register_hook('on_session_end', lambda **kw: None)\n",
    )
    write_config("plugins:\n  enabled: [twice]\n")
    manager = load()
    [row] = [r for r in manager.list_plugins() if r["key"] == "twice"]
    assert row["hooks"] == ["on_session_start", "on_session_end"]
    assert len(manager.hooks.callbacks("on_session_start")) == 2


def test_in_process_plugins_load_with_source_python(load: Callable[[], PluginManager]) -> None:
    """``add_plugin`` runs ``register(ctx)`` and lists the module with source ``python``."""
    module = types.ModuleType("my_audit")
    seen: list[Any] = []

    def register(ctx: PluginContext) -> None:
        ctx.register_hook("post_tool_call", lambda **kw: seen.append(kw))

    module.register = register  # type: ignore[attr-defined]
    manager = load()
    manager.add_plugin(module)
    row = next(r for r in manager.list_plugins() if r["key"] == "my_audit")
    assert (row["source"], row["loaded"], row["hooks"]) == ("python", True, ["post_tool_call"])
    manager.invoke_hook("post_tool_call", tool_name="x")
    assert seen[0]["tool_name"] == "x"
    with pytest.raises(ValueError, match="already loaded"):
        manager.add_plugin(module)


def test_a_failing_in_process_plugin_raises_and_registers_nothing(
    load: Callable[[], PluginManager],
) -> None:
    """A ``register`` that raises halfway leaves no hook behind (registrations are staged)."""

    class Half:
        def register(self, ctx: PluginContext) -> None:
            ctx.register_hook("post_tool_call", lambda **kw: None)
            raise RuntimeError("halfway")

    manager = load()
    with pytest.raises(RuntimeError, match="halfway"):
        manager.add_plugin(Half())
    assert not manager.has_hook("post_tool_call")
