"""The package's public names: the Python API is importable from ``wayline`` itself."""

from __future__ import annotations

import subprocess
import sys

import wayline


def test_every_name_in_all_resolves() -> None:
    """Each name in ``wayline.__all__`` is an attribute, the lazily loaded API included."""
    missing = [name for name in wayline.__all__ if not hasattr(wayline, name)]
    assert missing == []
    assert {"Agent", "TurnResult", "Tool", "tool"} <= set(wayline.__all__)
    assert wayline.TurnResult is wayline.api.TurnResult


def test_importing_wayline_does_not_load_the_runtime() -> None:
    """``import wayline`` (what every CLI command pays) leaves the agent runtime unloaded."""
    code = "import sys, wayline; print('wayline.runtime' in sys.modules, 'pydantic' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["False", "False"]
