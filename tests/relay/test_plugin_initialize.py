"""``wayline.relay.plugin.activate_exporters``: a config dict, a plugins.toml, or both merged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wayline import relay
from wayline.relay.plugin import PluginsTomlError, activate_exporters, merge_layers


def _observability(**config: Any) -> dict[str, Any]:
    return {"version": 1, "components": [{"kind": "observability", "config": config}]}


def _mark_into(activation: Any, name: str) -> list[str]:
    """Emit one mark, close the activation, return the names of the ATOF file's events."""
    relay.scope.event(name)
    path = Path(activation.atof_exporter.path)
    activation.close()
    return [json.loads(line)["name"] for line in path.read_text().splitlines()]


def test_a_config_dict_alone_starts_the_atof_file(tmp_path: Path) -> None:
    """No plugins.toml: the dict is the whole configuration (as Relay's activate_exporters(cfg))."""
    activation = activate_exporters(
        _observability(atof={"enabled": True, "output_directory": str(tmp_path), "filename": "a"})
    )
    assert activation.config.path == "<config>"
    assert _mark_into(activation, "only-config") == ["only-config"]
    assert (tmp_path / "a").exists()


def test_the_config_dict_is_merged_over_the_file(tmp_path: Path) -> None:
    """Tables merge key by key (the file's ``atof.enabled`` stays), ``atof.sinks``
    concatenate with the dict's first (the first file sink is used), and a component the
    dict disables is left as the file has it."""
    toml = tmp_path / "plugins.toml"
    toml.write_text(
        'version = 1\n[[components]]\nkind = "observability"\n'
        "[components.config.atof]\nenabled = true\n"
        '[[components.config.atof.sinks]]\ntype = "file"\noutput_directory = "from-file"\n'
        'filename = "file.jsonl"\n'
        '[[components]]\nkind = "adaptive"\n[components.config.tool_parallelism]\n'
        'mode = "inject_hints"\n'
    )
    override = {
        "components": [
            {
                "kind": "observability",
                "config": {
                    "atof": {
                        "sinks": [{"output_directory": "x", "filename": "c", "mode": "overwrite"}],
                    }
                },
            },
            {"kind": "adaptive", "enabled": False, "config": {"mode": "schedule"}},
        ]
    }
    activation = activate_exporters(override, toml)
    atof = activation.config.atof
    assert atof is not None and (Path(atof.output_directory), atof.filename, atof.mode) == (
        tmp_path / "x",
        "c",
        "overwrite",
    )
    assert activation.config.adaptive_mode == "inject_hints"
    assert _mark_into(activation, "merged") == ["merged"]
    sinks = activation.config.raw["components"][0]["config"]["atof"]["sinks"]
    assert [s["filename"] for s in sinks] == ["c", "file.jsonl"]


def test_merge_replaces_nested_lists_and_skips_disabled_destinations() -> None:
    """A list below a component's top level that is not a destination is replaced; a
    destination entry with ``enabled = false`` is dropped."""
    low = _observability(atif={"tags": ["a"], "storage": [{"name": "s1"}]})
    high = _observability(atif={"tags": ["b"], "storage": [{"name": "s2", "enabled": False}]})
    merged = merge_layers(low, high)["components"][0]["config"]["atif"]
    assert merged == {"tags": ["b"], "storage": [{"name": "s1"}]}


def test_activate_exporters_without_config_or_file_is_a_clear_error() -> None:
    """Neither a dict nor a path: PluginsTomlError naming the config."""
    with pytest.raises(PluginsTomlError, match="<config>: activate_exporters needs"):
        activate_exporters()


def test_a_bad_value_in_the_config_dict_names_the_field() -> None:
    """Errors in the dict layer name ``<config>`` and the field."""
    with pytest.raises(PluginsTomlError, match=r"<config>: atof.mode: must be append or"):
        activate_exporters(_observability(atof={"enabled": True, "mode": "sideways"}))
