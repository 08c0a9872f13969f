"""``$WAYLINE_HOME`` and ``config.yaml``: loading with line-accurate errors, editing in place.

A YAML file parsed once is remembered in the user cache (:mod:`wayline.usercache`), keyed by
its bytes and the installed PyYAML, so a start-up that reads the same ``config.yaml`` and
plugin manifests as the last one neither imports nor runs the YAML parser. Only documents
JSON holds exactly (string keys, no dates, sets or binary) are kept; the checks of what was
read run on every load either way.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml


class ConfigError(ValueError):
    """Bad user input in a file (or a flag): carries the file, line and field it is about.

    A ``ValueError``, so code that builds an agent from Python can catch it as one.
    """

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        self.path = Path(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line else str(self.path)
        super().__init__(f"{where}: {message}")


#: The keys config.yaml may hold, per section: a misspelt key is an error, not silence.
#: ``plugins.entries.<key>`` belongs to each plugin and is not checked here.
CONFIG_KEYS: dict[str, frozenset[str]] = {
    "": frozenset({"model", "agent", "approvals", "delegation", "plugins", "redaction"}),
    "model": frozenset(
        {"provider", "default", "name", "base_url", "api_key", "max_retries", "timeout", "stream"}
    ),
    "agent": frozenset({"max_turns", "toolsets", "system_prompt"}),
    "approvals": frozenset({"mode", "timeout"}),
    "delegation": frozenset(
        {
            "max_spawn_depth",
            "max_concurrent_children",
            "child_timeout_seconds",
            "max_iterations",
            "model",
            "provider",
            "base_url",
            "api_key",
        }
    ),
    "plugins": frozenset({"enabled", "disabled", "entries"}),
    "redaction": frozenset({"env", "files"}),
}


def did_you_mean(name: str, known: Iterable[str], what: str) -> str:
    """``; did you mean 'x'? known <what>: a, b, c`` for an unknown ``name``."""
    import difflib

    names = sorted(set(known))
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    return f"{hint} known {what}: {', '.join(names) or '(none)'}"


def _check_keys(doc: YamlDoc) -> None:
    """Refuse a key config.yaml does not define, at the first one in file order."""
    data = doc.data
    assert isinstance(data, dict)
    for section, known in CONFIG_KEYS.items():
        mapping = data if not section else data.get(section)
        if not isinstance(mapping, dict):
            continue
        keys = (section,) if section else ()
        for key in mapping:
            if key not in known:
                hint = did_you_mean(str(key), known, "keys")
                raise doc.error(f"unknown key{hint}", *keys, key)


def wayline_home() -> Path:
    """``$WAYLINE_HOME``, else ``~/.wayline``."""
    env = os.environ.get("WAYLINE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".wayline"


def config_path(home: Path | None = None) -> Path:
    """Where ``config.yaml`` lives."""
    return (home or wayline_home()) / "config.yaml"


@dataclass(slots=True)
class YamlDoc:
    """Parsed YAML plus the line of every mapping key and sequence item (1-based)."""

    path: Path
    data: Any
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict)

    def line_of(self, *keys: Any) -> int | None:
        """Line of the node at ``keys`` or of its nearest ancestor."""
        for end in range(len(keys), -1, -1):
            line = self.lines.get(tuple(keys[:end]))
            if line is not None:
                return line
        return None

    def error(self, message: str, *keys: Any) -> ConfigError:
        """A ConfigError pointing at ``keys``, naming the field as a dotted path."""
        name = ".".join(str(k) for k in keys)
        return ConfigError(
            self.path, self.line_of(*keys), f"{name}: {message}" if name else message
        )


def load_yaml(path: Path, *, required: bool = False) -> YamlDoc:
    """Parse ``path``; a syntax error becomes a ConfigError with its line, no traceback."""
    if not path.exists():
        if required:
            raise ConfigError(path, None, "file not found")
        return YamlDoc(path, None)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, None, f"cannot read: {exc}") from None
    cache = _ParsedCache(text)
    found = cache.get()
    if found is not None:
        return YamlDoc(path, found[0], found[1])
    import yaml

    loader = yaml.SafeLoader(text)
    try:  # what yaml.safe_load does, keeping the node tree for the lines
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(path, line, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(path, None, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    doc = YamlDoc(path, data)
    if node is not None:
        _index_lines(node, (), doc.lines)
    cache.put(doc)
    return doc


_CACHE_FORMAT = 1
_CACHE_ENTRIES = 64  # documents kept: a home's config and its plugins' manifests, with history


class _ParsedCache:
    """The user cache's entry for one YAML text: its data and lines, or nothing."""

    def __init__(self, text: str) -> None:
        from wayline.usercache import cache_dir

        directory = cache_dir()
        self._path = directory / "yaml.json" if directory is not None else None
        parser = _parser_stamp()
        digest = hashlib.sha256(f"{_CACHE_FORMAT}\0{parser}\0".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
        self._key = digest.hexdigest() if parser is not None else None

    def _entries(self) -> dict[str, Any]:
        from wayline.usercache import read_json

        if self._path is None or self._key is None:
            return {}
        doc = read_json(self._path)
        if not isinstance(doc, dict) or doc.get("format") != _CACHE_FORMAT:
            return {}
        entries = doc.get("documents")
        return entries if isinstance(entries, dict) else {}

    def get(self) -> tuple[Any, dict[tuple[Any, ...], int]] | None:
        """``(data, lines)`` parsed from this very text before, else None."""
        entry = self._entries().get(self._key or "")
        if not isinstance(entry, dict) or not isinstance(entry.get("lines"), list):
            return None
        try:
            lines = {tuple(keys): int(line) for keys, line in entry["lines"]}
        except (TypeError, ValueError):
            return None
        return entry.get("data"), lines

    def put(self, doc: YamlDoc) -> None:
        """Keep ``doc``'s data and lines, when JSON holds them exactly."""
        from wayline.usercache import write_json

        if self._path is None or self._key is None or not _json_exact(doc.data):
            return
        lines = [[list(keys), line] for keys, line in doc.lines.items()]
        if not all(_json_exact(keys) for keys, _ in lines):
            return
        entries = self._entries()
        entries.pop(self._key, None)
        entries[self._key] = {"data": doc.data, "lines": lines}
        while len(entries) > _CACHE_ENTRIES:
            del entries[next(iter(entries))]
        try:
            write_json(self._path, {"format": _CACHE_FORMAT, "documents": entries})
        except OSError:
            pass  # a read-only or full cache directory: parsed again next time


def _parser_stamp() -> str | None:
    """What names the installed PyYAML: its package file's size and time (None: no cache)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("yaml")
        origin = spec.origin if spec is not None else None
        st = os.stat(origin) if origin else None
    except (ImportError, OSError, ValueError):
        return None
    return f"{origin}:{st.st_size}:{st.st_mtime_ns}" if st is not None else None


def _json_exact(value: Any) -> bool:
    """True when JSON gives ``value`` back equal and of the same types."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_json_exact(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_exact(v) for k, v in value.items())
    return False


def _index_lines(node: yaml.Node, prefix: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    import yaml

    out.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            out[(*prefix, key)] = key_node.start_mark.line + 1
            _index_lines(value_node, (*prefix, key), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*prefix, i), out)


def load_config(home: Path | None = None) -> YamlDoc:
    """Load ``config.yaml`` (missing file = empty config) and check the parts wayline reads."""
    doc = load_yaml(config_path(home))
    if doc.data is None:
        doc.data = {}
    if not isinstance(doc.data, dict):
        raise doc.error(f"top level must be a mapping, got {type(doc.data).__name__}")
    plugins = doc.data.get("plugins")
    if plugins is not None:
        if not isinstance(plugins, dict):
            raise doc.error("must be a mapping with enabled/disabled lists", "plugins")
        for key in ("enabled", "disabled"):
            value = plugins.get(key)
            if value is None:
                continue
            if not isinstance(value, list):
                raise doc.error(f"must be a list of plugin names, got {value!r}", "plugins", key)
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    raise doc.error(f"must be a plugin name, got {item!r}", "plugins", key, i)
        entries = plugins.get("entries")
        if entries is not None and not isinstance(entries, dict):
            raise doc.error("must be a mapping of plugin names to settings", "plugins", "entries")
        for name, value in (entries or {}).items():
            if value is not None and not isinstance(value, dict):
                raise doc.error("must be a mapping of settings", "plugins", "entries", name)
    for section in ("model", "delegation", "approvals", "agent"):
        value = doc.data.get(section)
        if value is not None and not isinstance(value, dict) and section != "model":
            raise doc.error("must be a mapping", section)
    _check_keys(doc)
    return doc


def _plain_string(name: str) -> Any:
    """``name`` as a YAML scalar that reads back as this string, quoted only when needed.

    ruamel writes YAML 1.2 but config.yaml is read with PyYAML (YAML 1.1), where a bare
    ``on``/``no``/``1.0`` would come back as a bool or number.
    """
    import yaml
    from ruamel.yaml.scalarstring import SingleQuotedScalarString

    try:
        plain = yaml.safe_load(name) == name
    except yaml.YAMLError:
        plain = False
    return name if plain else SingleQuotedScalarString(name)


def update_plugin_lists(
    home: Path | None,
    *,
    enable: str | None = None,
    disable: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Path:
    """Add a key to ``plugins.enabled`` or ``plugins.disabled``, preserving comments.

    ``aliases`` (manifest name, leaf name) are removed from the opposite list too.
    Uses ruamel's round-trip mode so the user's other keys and comments survive.
    """
    from ruamel.yaml import YAML

    from wayline.contract.private import PrivatePaths

    path = config_path(home)
    private = PrivatePaths()
    private.directory(path.parent)
    load_config(home)  # refuse to rewrite a file we could not read correctly
    rt = YAML()
    rt.preserve_quotes = True
    data = rt.load(path.read_text(encoding="utf-8")) if path.exists() else None
    if data is None:
        data = {}
    plugins = data.setdefault("plugins", {})
    if plugins is None:
        plugins = data["plugins"] = {}
    for list_name in ("enabled", "disabled"):
        if plugins.get(list_name) is None:
            plugins[list_name] = []
    key, add_to, remove_from = (
        (enable, "enabled", "disabled") if enable else (disable, "disabled", "enabled")
    )
    assert key is not None
    names = {key, *aliases}
    target = plugins[add_to]
    if key not in target:
        target.append(_plain_string(key))
    source = plugins[remove_from]
    for i in reversed(range(len(source))):
        if source[i] in names:
            del source[i]
    tmp = path.with_suffix(".yaml.tmp")
    with private.open(tmp, "w", encoding="utf-8") as fh:
        rt.dump(data, fh)
    private.replace(tmp, path)  # 0600, or the mode the user gave the file
    return path
