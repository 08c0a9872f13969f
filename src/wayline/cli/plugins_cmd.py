"""``wayline plugins list|enable|disable``."""

from __future__ import annotations

import json

import click

from wayline.cli.errors import fail
from wayline.contract.private import private_directory
from wayline.host.config import ConfigError, update_plugin_lists, wayline_home
from wayline.host.manager import PluginManager


def load_manager() -> PluginManager:
    """A manager over ``$WAYLINE_HOME``; a bad config.yaml exits with file:line."""
    try:
        return PluginManager(wayline_home())
    except ConfigError as exc:
        fail(str(exc))
    except (RecursionError, ValueError) as exc:  # YAML nested too deeply, a huge integer
        fail(f"{wayline_home() / 'config.yaml'}: cannot read: {type(exc).__name__}: {exc}")


@click.group()
def plugins() -> None:
    """List, enable and disable plugins."""


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print rows as JSON.")
def list_cmd(as_json: bool) -> None:
    """Show every discovered plugin: key, source, enabled, hooks, middleware, error."""
    rows = load_manager().list_plugins()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"plugins ({wayline_home()})")
    for column in ("key", "source", "enabled", "hooks", "middleware", "error"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["key"],
            row["source"],
            _state(row),
            ", ".join(row["hooks"]) or "-",
            ", ".join(row["middleware"]) or "-",
            row["error"] or "",
        )
    Console(width=160).print(table)


def _state(row: dict[str, object]) -> str:
    """The ``enabled`` column: yes, no, failed (did not load) or missing (not found)."""
    if row["loaded"]:
        return "yes"
    if not row["enabled"]:
        return "no"
    return "missing" if row["source"] == "config" else "failed"


def _switch(name: str, *, enable: bool) -> None:
    manager = load_manager()
    try:
        manifest = manager.resolve(name)
    except LookupError as exc:
        fail(str(exc.args[0]))  # an unknown name is bad input: exit 2
    aliases = (manifest.name, manifest.leaf)
    # A home made here is 0700, so the config.yaml written into it is the user's alone.
    private_directory(manager.home)
    try:
        path = update_plugin_lists(
            manager.home,
            enable=manifest.key if enable else None,
            disable=None if enable else manifest.key,
            aliases=aliases,
        )
    except ConfigError as exc:
        fail(str(exc))
    verb = "enabled" if enable else "disabled"
    click.echo(f"✓ Plugin {manifest.key} {verb} in {path}. Takes effect on next session.")


@plugins.command("enable")
@click.argument("name")
def enable_cmd(name: str) -> None:
    """Enable NAME (key, manifest name or unique leaf name)."""
    _switch(name, enable=True)


@plugins.command("disable")
@click.argument("name")
def disable_cmd(name: str) -> None:
    """Disable NAME (key, manifest name or unique leaf name)."""
    _switch(name, enable=False)
