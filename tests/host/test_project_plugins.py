"""A project plugin (``./.wayline/plugins``) never replaces a bundled or a user plugin."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wayline.host import PluginManager

from .conftest import PluginWriter

HOOK_PLUGIN = """
def register(ctx):
    ctx.register_hook("pre_api_request", lambda **kw: {tag!r})
"""


def test_a_project_plugin_with_a_bundled_key_is_refused_even_when_opted_in(
    write_plugin: PluginWriter,
    bundled_dir: Path,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """With WAYLINE_ENABLE_PROJECT_PLUGINS=1, ``.wayline/plugins/observability/recorder``
    does not replace the bundled plugin of that key: the bundled one loads, and the project
    one is a row of its own with an error naming its path and the bundled key, warned about
    on every run."""
    write_plugin("observability/recorder", HOOK_PLUGIN.format(tag="bundled"), root=bundled_dir)
    project = tmp_path / "project"
    impostor = write_plugin(
        "observability/recorder",
        HOOK_PLUGIN.format(tag="project"),
        root=project / ".wayline" / "plugins",
    )
    (home / "config.yaml").write_text("plugins:\n  enabled: [observability/recorder]\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("WAYLINE_ENABLE_PROJECT_PLUGINS", "1")
    manager = PluginManager(home)
    with caplog.at_level(logging.WARNING, logger="wayline.plugins"):
        manager.discover_and_load()
    assert manager.plugins["observability/recorder"].manifest.source == "bundled"
    assert manager.invoke_hook("pre_api_request") == ["bundled"]
    refused = manager.plugins["observability/recorder (project)"]
    assert not refused.loaded and refused.error is not None
    assert str(impostor) in refused.error
    assert "may not replace the bundled plugin 'observability/recorder'" in refused.error
    assert "refused" in caplog.text


def test_a_project_plugin_with_a_key_of_its_own_still_loads(
    write_plugin: PluginWriter,
    bundled_dir: Path,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The refusal is about the key: a differently named project plugin loads as before."""
    write_plugin("observability/recorder", HOOK_PLUGIN.format(tag="bundled"), root=bundled_dir)
    project = tmp_path / "project"
    write_plugin(
        "observability/mine", HOOK_PLUGIN.format(tag="mine"), root=project / ".wayline" / "plugins"
    )
    (home / "config.yaml").write_text("plugins:\n  enabled: [observability/mine]\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("WAYLINE_ENABLE_PROJECT_PLUGINS", "1")
    manager = PluginManager(home)
    manager.discover_and_load()
    assert manager.plugins["observability/mine"].manifest.source == "project"
    assert manager.invoke_hook("pre_api_request") == ["mine"]


def test_the_real_relay_plugin_cannot_be_replaced_from_a_repository(
    tmp_path: Path, write_plugin: PluginWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the CLI, with the real bundled plugins: a repository's
    ``.wayline/plugins/observability/relay`` shows up refused in ``wayline plugins list`` and
    the bundled relay plugin stays."""
    monkeypatch.delenv("WAYLINE_BUNDLED_PLUGINS")
    project = tmp_path / "repo"
    write_plugin(
        "observability/relay",
        "def register(ctx):\n    raise SystemExit(3)\n",
        root=project / ".wayline" / "plugins",
    )
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("wayline")), "plugins", "list", "--json"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "WAYLINE_ENABLE_PROJECT_PLUGINS": "1"},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {row["key"]: row for row in json.loads(proc.stdout)}
    assert rows["observability/relay"]["source"] == "bundled"
    refused = rows["observability/relay (project)"]
    assert "may not replace the bundled plugin 'observability/relay'" in refused["error"]


@pytest.mark.parametrize(
    ("rel", "manifest"),
    [
        ("tools/recorder", None),  # the user plugin's key
        ("other/impostor", "name: recorder\nversion: 1\n"),  # its manifest name
        ("tools__recorder", "name: tools__recorder\nversion: 1\n"),  # its import module
    ],
)
def test_a_project_plugin_never_shadows_a_user_plugin(
    write_plugin: PluginWriter,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rel: str,
    manifest: str | None,
) -> None:
    """A project plugin that takes a user plugin's key, its manifest name (which
    ``plugins.enabled`` matches too) or its import module is refused: only the user plugin
    loads, and the refused row names the project plugin's path and the user plugin."""
    write_plugin("tools/recorder", HOOK_PLUGIN.format(tag="user"))
    project = tmp_path / "project"
    impostor = write_plugin(
        rel,
        HOOK_PLUGIN.format(tag="project"),
        manifest=manifest,
        root=project / ".wayline" / "plugins",
    )
    (home / "config.yaml").write_text("plugins:\n  enabled: [recorder, tools/recorder]\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("WAYLINE_ENABLE_PROJECT_PLUGINS", "1")
    manager = PluginManager(home)
    manager.discover_and_load()
    assert manager.invoke_hook("pre_api_request") == ["user"]
    loaded = [p.manifest for p in manager.plugins.values() if p.loaded]
    assert [(m.key, m.source) for m in loaded] == [("tools/recorder", "user")]
    refused = manager.plugins[f"{rel} (project)"]
    assert not refused.loaded and refused.error is not None
    assert str(impostor) in refused.error
    assert "may not replace the user plugin 'tools/recorder'" in refused.error
