"""YAML files parsed before come from the user cache: the same data, lines and errors, no parser.

The reference for every figure is PyYAML itself (``yaml.safe_load`` on the same text) and the
first, uncached load.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from wayline.host import ConfigError, load_config, load_yaml

CONFIG = """\
# a home's settings
model:
  name: gpt-4o
  timeout: 30.5
approvals:
  mode: "off"
plugins:
  enabled: [observability/relay, observability/otel]
  entries:
    observability/otel:
      exporter: file
      file: /tmp/spans.jsonl
"""


@pytest.fixture(autouse=True)
def cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test (and every process it starts) gets an empty ``$XDG_CACHE_HOME``."""
    path = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(path))
    return path


def _load_in_process(home: Path) -> Any:
    """``load_config`` in a fresh interpreter: its data, lines, and whether yaml was imported."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from wayline.host.config import load_config\n"
        f"doc = load_config(Path({str(home)!r}))\n"
        "lines = sorted([list(k), v] for k, v in doc.lines.items())\n"
        "print(json.dumps([doc.data, lines, 'yaml' in sys.modules]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_config_read_before_needs_no_yaml_parser(tmp_path: Path) -> None:
    """A second process reading the same config.yaml gets equal data and lines without
    importing yaml; the first one parsed it."""
    (tmp_path / "config.yaml").write_text(CONFIG)
    first = _load_in_process(tmp_path)
    second = _load_in_process(tmp_path)
    assert first[2] is True and second[2] is False
    assert second[:2] == first[:2]
    assert first[0] == yaml.safe_load(CONFIG)


def test_an_edited_file_is_parsed_again(tmp_path: Path) -> None:
    """The cache answers for the exact bytes it saw: an edit gives the edited data."""
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    load_config(tmp_path)
    path.write_text(CONFIG.replace("gpt-4o", "gpt-4.1"))
    assert load_config(tmp_path).data["model"]["name"] == "gpt-4.1"


def test_errors_and_their_lines_are_the_same_from_the_cache(tmp_path: Path) -> None:
    """A config whose YAML is fine but whose key is unknown fails with the same line when it
    comes from the cache; a syntax error is never cached and keeps its line."""
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  name: m\n  colour: blue\n")
    messages = []
    for _ in range(2):
        with pytest.raises(ConfigError) as info:
            load_config(tmp_path)
        messages.append((info.value.line, str(info.value)))
    assert messages[0] == messages[1] and messages[0][0] == 3
    path.write_text("model:\n  name: [m\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match="invalid YAML") as info:
            load_config(tmp_path)
        assert info.value.line == 3


@pytest.mark.parametrize(
    "text",
    [
        "on: 1\nno: 2\n",  # YAML 1.1 booleans as keys
        "1: one\n2: two\n",  # integer keys
        "when: 2026-11-28\n",  # a date
        "blob: !!binary aGVsbG8=\n",  # bytes
        "big: .inf\nnot: .nan\n",  # floats JSON cannot carry
    ],
    ids=["bool-keys", "int-keys", "date", "binary", "inf-nan"],
)
def test_what_json_cannot_hold_is_parsed_every_time(text: str, tmp_path: Path) -> None:
    """Documents JSON would change are not cached: every load gives PyYAML's own types."""
    path = tmp_path / "doc.yaml"
    path.write_text(text)
    expected = yaml.safe_load(text)
    for _ in range(2):
        data = load_yaml(path).data
        assert repr(data) == repr(expected)
    cached = Path(os.environ["XDG_CACHE_HOME"]) / "wayline" / "yaml.json"
    assert not cached.exists() or json.loads(cached.read_text())["documents"] == {}
    if "when" in text:
        assert data == {"when": date(2026, 11, 28)}


def test_the_cache_file_is_private_and_a_damaged_one_is_ignored(tmp_path: Path) -> None:
    """The cache is 0600 in a 0700 directory; garbage in it gives way to a fresh parse."""
    (tmp_path / "config.yaml").write_text(CONFIG)
    load_config(tmp_path)
    cached = Path(os.environ["XDG_CACHE_HOME"]) / "wayline" / "yaml.json"
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert stat.S_IMODE(cached.parent.stat().st_mode) == 0o700
    for garbage in (b"{broken", b'{"format": 1, "documents": {"x": 1}}', b"[]"):
        cached.write_bytes(garbage)
        assert load_config(tmp_path).data == yaml.safe_load(CONFIG)
    doc = json.loads(cached.read_text())
    key = next(iter(doc["documents"]))
    doc["documents"][key]["lines"] = "not lines"
    cached.write_text(json.dumps(doc))
    assert load_config(tmp_path).data == yaml.safe_load(CONFIG)
