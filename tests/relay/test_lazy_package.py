"""``wayline.relay`` loads its names on first use, and every one is still there for ported code.

Each check runs in a fresh interpreter, so what another test imported does not hide an eager
import or a name that no longer resolves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from wayline import relay


def _run(code: str) -> Any:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_importing_the_package_loads_none_of_its_modules() -> None:
    """``import wayline.relay`` imports no relay submodule; a submodule import brings only what
    that module needs (not guardrails, intercepts or the OpenTelemetry stand-ins)."""
    loaded = _run(
        "import json, sys\n"
        "import wayline.relay\n"
        "bare = sorted(m for m in sys.modules if m.startswith('wayline.relay.'))\n"
        "import wayline.relay.events\n"
        "events = sorted(m for m in sys.modules if m.startswith('wayline.relay.'))\n"
        "print(json.dumps([bare, events]))\n"
    )
    assert loaded[0] == []
    assert "wayline.relay.guardrails" not in loaded[1]
    assert "wayline.relay._not_ported" not in loaded[1]


def test_every_public_name_resolves_in_a_fresh_process() -> None:
    """Each name of ``__all__`` (and ``dir()``) is reachable as an attribute, ported code's
    ``from wayline import relay as nemo_relay`` included, and aliases are the same object."""
    missing = _run(
        "import json\n"
        "from wayline import relay as nemo_relay\n"
        "names = set(nemo_relay.__all__) | set(dir(nemo_relay))\n"
        "missing = sorted(n for n in names if not hasattr(nemo_relay, n))\n"
        "same = nemo_relay.LlmExecutionContext is nemo_relay.LLMExecutionContext\n"
        "var = nemo_relay._scope_stack_var is nemo_relay._scope_stack_var\n"
        "print(json.dumps([missing, same, var]))\n"
    )
    assert missing == [[], True, True]


def test_star_import_gives_every_public_name() -> None:
    """``from wayline.relay import *`` binds every name of ``__all__``."""
    got = _run(
        "import json\n"
        "from wayline.relay import *\n"
        "import wayline.relay as r\n"
        "print(json.dumps(sorted(n for n in r.__all__ if n not in globals())))\n"
    )
    assert got == []


def test_ported_relay_code_runs_unchanged() -> None:
    """The module docstring's port (scope + event through ``nemo_relay``) records its event."""
    events = _run(
        "import json\n"
        "from wayline import relay as nemo_relay\n"
        "seen = []\n"
        "nemo_relay.subscribers.register('lazy-test', lambda e: seen.append(e.name))\n"
        "with nemo_relay.scope.scope('agent', nemo_relay.ScopeType.Agent):\n"
        "    nemo_relay.scope.event('checkpoint', data={'step': 1})\n"
        "print(json.dumps(seen))\n"
    )
    assert "checkpoint" in events and "agent" in events


def test_an_unknown_name_is_an_attribute_error() -> None:
    """A name the package does not define raises AttributeError, as a module must."""
    try:
        relay.NoSuchName  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchName" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_the_toml_parser_loads_only_with_a_plugins_toml(tmp_path: Any) -> None:
    """``wayline.relay.plugin`` imports no TOML parser until a plugins.toml is read."""
    toml = tmp_path / "plugins.toml"
    toml.write_text("version = 1\n")
    loaded = _run(
        "import json, sys\n"
        "from wayline.relay.plugin import load_plugins_toml\n"
        "before = 'tomllib' in sys.modules\n"
        f"load_plugins_toml({str(toml)!r})\n"
        "print(json.dumps([before, 'tomllib' in sys.modules]))\n"
    )
    assert loaded == [False, True]


def test_the_atif_package_loads_its_names_on_use() -> None:
    """``wayline.relay.atif`` imports no module of its own until a name is used; the live
    exporter needs neither the converter nor the validator; every public name resolves."""
    loaded = _run(
        "import json, sys\n"
        "import wayline.relay.atif as atif\n"
        "own = lambda: sorted(m for m in sys.modules if m.startswith('wayline.relay.atif.'))\n"
        "bare = own()\n"
        "atif.AtifExporter\n"
        "live = own()\n"
        "missing = [n for n in atif.__all__ if not hasattr(atif, n)]\n"
        "print(json.dumps([bare, live, missing]))\n"
    )
    bare, live, missing = loaded
    assert bare == [] and missing == []
    assert "wayline.relay.atif.exporter" in live
    assert "wayline.relay.atif.convert" not in live
    assert "wayline.relay.atif.validate" not in live
