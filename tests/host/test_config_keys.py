"""Unknown config.yaml keys are refused: file, line, did-you-mean and the known keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from wayline.host import ConfigError, load_config
from wayline.host.config import CONFIG_KEYS


@pytest.mark.parametrize(
    ("text", "line", "field", "suggestion"),
    [
        ("modle:\n  default: m\n", 1, "modle", "model"),
        (
            "model:\n  default: m\nagent:\n  max_turns: 3\n  toolset: [file]\n",
            5,
            "agent.toolset",
            "toolsets",
        ),
        ("model:\n  base_url: http://x/v1\n  timout: 3\n", 3, "model.timout", "timeout"),
        ("approvals:\n  mod: deny\n", 2, "approvals.mod", "mode"),
        ("delegation:\n  max_iteration: 3\n", 2, "delegation.max_iteration", "max_iterations"),
        ("plugins:\n  enable: [x]\n", 2, "plugins.enable", "enabled"),
    ],
    ids=["top", "agent", "model", "approvals", "delegation", "plugins"],
)
def test_a_misspelt_key_names_file_line_and_the_near_key(
    tmp_path: Path, text: str, line: int, field: str, suggestion: str
) -> None:
    """Each section's misspelt key is a ConfigError (a ValueError) at its own line, with the
    closest known key and the list of known keys."""
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(ValueError) as info:
        load_config(tmp_path)
    error = info.value
    assert isinstance(error, ConfigError)
    assert error.line == line
    assert str(error).startswith(f"{tmp_path / 'config.yaml'}:{line}: {field}: unknown key")
    assert f"did you mean {suggestion!r}?" in str(error)
    section = field.split(".")[0] if "." in field else ""
    assert ", ".join(sorted(CONFIG_KEYS[section])) in str(error)


def test_a_key_unlike_any_lists_the_known_keys_without_a_guess(tmp_path: Path) -> None:
    """With no close match the error still lists every known key."""
    (tmp_path / "config.yaml").write_text("zzz: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert "did you mean" not in str(info.value)
    assert "known keys: agent, approvals, delegation, model, plugins" in str(info.value)


def test_plugin_entries_are_the_plugins_own(tmp_path: Path) -> None:
    """Settings under ``plugins.entries.<key>`` are read by each plugin, so any key passes."""
    (tmp_path / "config.yaml").write_text(
        "plugins:\n  entries:\n    my/plugin:\n      anything: 1\n      goes: [2]\n"
    )
    assert load_config(tmp_path).data["plugins"]["entries"]["my/plugin"]["goes"] == [2]


def test_every_documented_key_is_accepted(tmp_path: Path) -> None:
    """The full example of docs/configuration.md loads: the schema knows every key it shows."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    text = docs.read_text(encoding="utf-8")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "config.yaml").write_text(block)
    load_config(tmp_path)
