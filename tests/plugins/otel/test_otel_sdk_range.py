"""The otel plugin on the lower bound of its supported OpenTelemetry range.

The development environment has the latest release (the ``otel`` extra's ``>=``), so every
other test in this directory covers the upper end. This one builds ``.venv-otel-min`` (at the
repository root, reused while its marker matches) with the lowest versions the extra admits
and runs the plugin's mapping, parenting and export tests there.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from side_venv import make_venv, pip_install

ROOT = Path(__file__).resolve().parents[3]
VENV = ROOT / ".venv-otel-min"
LOWEST = "1.30.0"
PINS = (
    f"opentelemetry-api=={LOWEST}",
    f"opentelemetry-sdk=={LOWEST}",
    f"opentelemetry-exporter-otlp-proto-http=={LOWEST}",
)
TESTS = ("test_otel_mapping.py", "test_otel_parenting.py", "test_otel_export.py")
MARKER = ".wayline-otel-min.json"


def _venv() -> Path:
    """``.venv-otel-min``'s python: the lowest OpenTelemetry pins plus this checkout."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    wanted = {"pins": list(PINS), "pyproject": digest}
    python = VENV / "bin" / "python"
    try:
        current = json.loads((VENV / MARKER).read_text())
    except (OSError, ValueError):
        current = None
    if current == wanted and python.exists():
        return python
    make_venv(VENV)
    # The pins go in together with the checkout, so pip cannot lift them to a newer release.
    pip_install(python, *PINS, "-e", f"{ROOT}[otel]", "pytest>=8.0", "pytest-timeout>=2.3")
    (VENV / MARKER).write_text(json.dumps(wanted))
    return python


def test_plugin_tests_pass_on_the_lowest_supported_sdk() -> None:
    """The mapping, parenting and export tests pass with opentelemetry-sdk 1.30.0."""
    python = _venv()
    version = subprocess.run(
        [
            str(python),
            "-c",
            "from importlib.metadata import version; print(version('opentelemetry-sdk'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == LOWEST
    here = Path(__file__).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WAYLINE_"))}
    proc = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *(str(here / t) for t in TESTS),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
