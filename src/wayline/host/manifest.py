"""Plugin manifests and discovery (bundled, user, project, entry points)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from wayline.host.config import ConfigError, load_yaml

__all__ = [
    "BUNDLED_DIR",
    "ENTRY_POINT_GROUP",
    "PluginManifest",
    "Source",
    "discover",
    "import_slug",
    "read_manifest",
    "scan_directory",
]

log = logging.getLogger("wayline.plugins")

ENTRY_POINT_GROUP = "wayline.plugins"
# Where a plugin came from: found by discovery (the first four), handed over in-process
# ("python", wayline.Agent(plugins=...)), or named in config.yaml and found nowhere ("config").
Source = Literal["bundled", "user", "project", "entrypoint", "python", "config"]
BUNDLED_DIR = Path(__file__).resolve().parent.parent / "plugins"


@dataclass(slots=True)
class PluginManifest:
    """What ``plugin.yaml`` (or an entry point) says about a plugin."""

    key: str
    name: str
    source: Source
    path: str
    version: str = ""
    description: str = ""
    author: str = ""
    kind: str = "standalone"
    provides_hooks: list[str] = field(default_factory=list)
    provides_tools: list[str] = field(default_factory=list)
    requires_env: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def leaf(self) -> str:
        """The last part of the key (``relay`` for ``observability/relay``)."""
        return self.key.rsplit("/", 1)[-1]


def _str_list(doc_data: dict[str, Any], key: str) -> list[str]:
    value = doc_data.get(key) or []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def read_manifest(plugin_dir: Path, key: str, source: Source) -> PluginManifest:
    """Parse ``plugin_dir/plugin.yaml``; problems are recorded on the manifest, not raised."""
    manifest_path = plugin_dir / "plugin.yaml"
    if not manifest_path.exists():
        manifest_path = plugin_dir / "plugin.yml"
    manifest = PluginManifest(key=key, name=plugin_dir.name, source=source, path=str(plugin_dir))
    try:
        doc = load_yaml(manifest_path, required=True)
        data = doc.data if doc.data is not None else {}
        if not isinstance(data, dict):
            raise doc.error("a plugin manifest must be a mapping")
        for text_field in ("name", "version", "description", "author", "kind"):
            value = data.get(text_field)
            if value is not None and not isinstance(value, str | int | float):
                raise doc.error("must be a string", text_field)
    except ConfigError as exc:
        manifest.error = str(exc)
        return manifest
    manifest.name = str(data.get("name") or plugin_dir.name)
    manifest.version = str(data.get("version") or "")
    manifest.description = str(data.get("description") or "")
    manifest.author = str(data.get("author") or "")
    manifest.kind = str(data.get("kind") or "standalone")
    manifest.provides_hooks = _str_list(data, "provides_hooks") or _str_list(data, "hooks")
    manifest.provides_tools = _str_list(data, "provides_tools")
    manifest.requires_env = _str_list(data, "requires_env")
    if not (plugin_dir / "__init__.py").exists():
        manifest.error = f"{plugin_dir}: missing __init__.py with register(ctx)"
    return manifest


def scan_directory(root: Path, source: Source) -> list[PluginManifest]:
    """Plugins under ``root``: flat ``<name>/`` (key = manifest name) or ``<category>/<name>/``."""
    found: list[PluginManifest] = []
    if not root.is_dir():
        return found
    for child in sorted(
        p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
    ):
        if (child / "plugin.yaml").exists() or (child / "plugin.yml").exists():
            manifest = read_manifest(child, child.name, source)
            if manifest.error is None:
                manifest.key = manifest.name
            found.append(manifest)
            continue
        for sub in sorted(
            p for p in child.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
        ):
            if (sub / "plugin.yaml").exists() or (sub / "plugin.yml").exists():
                found.append(read_manifest(sub, f"{child.name}/{sub.name}", source))
    return found


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def import_slug(key: str) -> str:
    """The module name a plugin directory is imported under (``wayline_plugins.<slug>``):
    two keys with one slug would share a module (the manager derives it the same way)."""
    return key.replace("/", "__").replace("-", "_")


def _claims(manifest: PluginManifest) -> set[str]:
    """What a plugin answers to: its key, its manifest name (``plugins.enabled`` matches
    either) and its import slug."""
    return {manifest.key, manifest.name, import_slug(manifest.key)}


def _refused_project_plugin(manifest: PluginManifest, owner: PluginManifest) -> PluginManifest:
    """A project plugin that claims a bundled or user plugin's key, manifest name or module,
    as an error row of its own."""
    key = manifest.key
    shown = f"{key} (project)"
    error = (
        f"{manifest.path}: refused: a project plugin may not replace the {owner.source} plugin "
        f"{owner.key!r} (whatever WAYLINE_ENABLE_PROJECT_PLUGINS says; the {owner.source} one "
        "stays); give the project plugin a key and a name of its own"
    )
    return PluginManifest(key=shown, name=shown, source="project", path=manifest.path, error=error)


def discover(home: Path, *, cwd: Path | None = None) -> list[PluginManifest]:
    """Every plugin from every source; a later source wins when keys collide, except that a
    project plugin never replaces a bundled or a user plugin: a repository someone cloned
    must not swap the redacting exporter, or a plugin the user installed, for its own code.
    A project plugin whose key, manifest name or import module is one of theirs is listed as
    a refused plugin instead."""
    by_key: dict[str, PluginManifest] = {}
    trusted: dict[str, PluginManifest] = {}  # what bundled and user plugins answer to
    sources: list[tuple[Path, Source]] = [
        (Path(os.environ.get("WAYLINE_BUNDLED_PLUGINS") or BUNDLED_DIR), "bundled"),
        (home / "plugins", "user"),
    ]
    if _truthy(os.environ.get("WAYLINE_ENABLE_PROJECT_PLUGINS")):
        sources.append(((cwd or Path.cwd()) / ".wayline" / "plugins", "project"))
    for root, source in sources:
        for manifest in scan_directory(root, source):
            if source == "project":
                owner = next((trusted[c] for c in sorted(_claims(manifest)) if c in trusted), None)
                if owner is not None:
                    refused = _refused_project_plugin(manifest, owner)
                    by_key[refused.key] = refused
                    continue
            else:
                for claim in _claims(manifest):
                    trusted[claim] = manifest  # a user plugin named as a bundled one wins
            if manifest.key in by_key:
                log.info(
                    "plugin %r from %s overrides the %s one",
                    manifest.key,
                    source,
                    by_key[manifest.key].source,
                )
            by_key[manifest.key] = manifest
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        manifest = PluginManifest(key=ep.name, name=ep.name, source="entrypoint", path=ep.value)
        by_key[ep.name] = manifest
    return list(by_key.values())
