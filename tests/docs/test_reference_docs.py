"""The reference pages agree with the code: hooks and CLI (generated), configuration (checked)."""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path
from typing import Any

import pytest
import yaml

from wayline.contract.hooks import HOOK_SPECS
from wayline.host.config import YamlDoc, load_config
from wayline.host.manager import PluginManager
from wayline.plugins.observability.otel.settings import OtelSettings
from wayline.runtime.known_values import agent_known_values
from wayline.runtime.settings import load_settings

from . import gen_docs

ROOT = gen_docs.ROOT
CONFIG_MD = ROOT / "docs" / "configuration.md"
ENV_NAME = re.compile(r"^(WAYLINE|HERMES|OTEL|OPENAI)_[A-Z0-9_]*[A-Z0-9]$|^TRACEPARENT$")
ENV_IN_TEXT = re.compile(r"\b(?:WAYLINE|HERMES|OTEL|OPENAI)_[A-Z0-9_]*[A-Z0-9]\b|\bTRACEPARENT\b")
#: Upper-case constants in src/ that look like variables but are not read from the environment.
NOT_ENV = {"HERMES_ONLY_HOOKS", "OTEL_HOOKS", "OPENAI_RESPONSES"}  # hook sets; a relay codec
#: Documented variables the OpenTelemetry SDK reads itself (no wayline code reads them).
READ_BY_OTEL_SDK = {"OTEL_TRACES_SAMPLER_ARG", "OTEL_EXPORTER_OTLP_HEADERS"}
RELAY_PREFIXES = ("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_")


@pytest.mark.parametrize("page", sorted(gen_docs.PAGES))
def test_generated_page_is_up_to_date(page: str) -> None:
    """docs/hooks.md and docs/cli.md equal what gen_docs.py builds from the code today."""
    expected = gen_docs.PAGES[page]()
    current = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert current == expected, f"docs/{page} is stale: run .venv/bin/python tests/docs/gen_docs.py"


def test_every_hook_field_has_a_description_and_example() -> None:
    """Each field of every hook spec is described, so a new field fails here until documented."""
    page = gen_docs.hooks_page()
    for name, spec in HOOK_SPECS.items():
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for field in spec.fields:
            assert f"| `{field}` |" in section, (name, field)
            assert f'"{field}":' in section, (name, field)


def _config_example() -> dict[str, Any]:
    text = CONFIG_MD.read_text(encoding="utf-8")
    block = text.split("## config.yaml", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


class _Probe(dict[str, Any]):
    """A config mapping that records the dotted path of every key the code reads."""

    def __init__(self, data: dict[str, Any], path: tuple[str, ...], seen: set[tuple[str, ...]]):
        super().__init__({k: _wrap(v, (*path, str(k)), seen) for k, v in data.items()})
        self._path = path
        self._seen = seen

    def get(self, key: Any, default: Any = None) -> Any:  # type: ignore[override]
        self._seen.add((*self._path, str(key)))
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self._seen.add((*self._path, str(key)))
        return super().__getitem__(key)


def _wrap(value: Any, path: tuple[str, ...], seen: set[tuple[str, ...]]) -> Any:
    return _Probe(value, path, seen) if isinstance(value, dict) else value


def _leaves(data: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    if not isinstance(data, dict):
        return {path}
    out: set[tuple[str, ...]] = set()
    for key, value in data.items():
        out |= _leaves(value, (*path, str(key)))
    return out


def _read_keys(data: dict[str, Any], tmp: Path) -> set[tuple[str, ...]]:
    """Every config path the settings loader and the plugin manager read from ``data``."""
    seen: set[tuple[str, ...]] = set()
    probe = _Probe(data, (), seen)
    load_settings(YamlDoc(tmp / "config.yaml", probe))
    (tmp / "bundled").mkdir(exist_ok=True)
    manager = PluginManager(tmp, config=YamlDoc(tmp / "config.yaml", probe))
    manager.discover_and_load()
    plugin = types.SimpleNamespace(register=lambda ctx: None)
    for key in (data.get("plugins") or {}).get("entries") or {}:
        manager.add_plugin(plugin, key=key)  # apply() reads the entry's allow_tool_override
    doc = YamlDoc(tmp / "config.yaml", probe)
    agent_known_values(doc, load_settings(doc), environ={}, cwd=tmp)  # the redaction section
    return seen


def test_configuration_lists_exactly_the_keys_the_code_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The config.yaml example has every key the loaders read and no key they ignore."""
    monkeypatch.setenv("WAYLINE_BUNDLED_PLUGINS", str(tmp_path / "bundled"))
    for var in ("WAYLINE_API_KEY", "OPENAI_API_KEY", "WAYLINE_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    example = _config_example()
    documented = _leaves(example)
    variant = {**example, "model": {"name": "m", "base_url": "http://127.0.0.1:1/v1"}}
    read = _read_keys(example, tmp_path) | _read_keys(variant, tmp_path)
    # Sections and lists are read as a whole: compare leaves (a list is a leaf).
    read_leaves = {p for p in read if not any(q[: len(p)] == p and q != p for q in read)}
    assert sorted(documented - read_leaves) == [], "documented but never read"
    assert sorted(read_leaves - documented - {("model", "name")}) == [], "read but undocumented"
    assert ("model", "name") in read_leaves  # documented in the comment of model.default
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(example))
    load_settings(load_config(tmp_path))  # the example itself is valid


def test_configuration_lists_every_otel_setting() -> None:
    """The observability/otel table names every field of OtelSettings, and only those."""
    text = CONFIG_MD.read_text(encoding="utf-8")
    table = text.split("## observability/otel settings", 1)[1].split("\n## ", 1)[0]
    keys = set(re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M))
    assert keys == set(OtelSettings.__dataclass_fields__)


def _env_vars_in_source() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "src" / "wayline").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        relay_settings = path.match("*/observability/relay/settings.py")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and ENV_NAME.match(node.value)
                and node.value not in NOT_ENV
            ):
                found.add(node.value)
            if (
                relay_settings
                and isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("env", "_flag", "_choice")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(f"WAYLINE_RELAY_{node.args[0].value}")
    return found


def test_configuration_documents_every_environment_variable() -> None:
    """Every variable the code reads is documented, and every documented one is still read."""
    text = CONFIG_MD.read_text(encoding="utf-8")
    documented = set(ENV_IN_TEXT.findall(text))
    in_code = _env_vars_in_source()
    assert sorted(in_code - documented) == [], "read by src/ but not in docs/configuration.md"
    stale = documented - in_code - READ_BY_OTEL_SDK
    stale = {v for v in stale if not v.startswith(RELAY_PREFIXES[1])}  # the prefix itself
    assert sorted(stale) == [], "in docs/configuration.md but no code reads it"


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_relative_links_point_to_files_that_exist() -> None:
    """Every relative link in README.md and docs/*.md names a file in the repository."""
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []
