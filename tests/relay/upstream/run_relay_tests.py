"""Run NeMo Relay's own Python tests against ``wayline.relay`` (and against Relay itself).

A developer tool and the measurement behind ``docs/relay-porting.md``; not a pytest test (CI
cannot fetch Relay's repository). Usage::

    python tests/relay/upstream/run_relay_tests.py RELAY_TESTS_DIR \
        --python VENV/bin/python [--relay-python RELAYVENV/bin/python] [--json OUT]

``RELAY_TESTS_DIR`` is Relay's ``python/tests`` directory from a checkout. ``--python`` must have
pytest, pytest-asyncio and pytest-timeout; the tests run there with ``nemo_relay`` resolved to
``wayline.relay`` through a shim package on ``sys.path``. ``--relay-python`` has nemo-relay
0.10.4 installed (plus the same pytest plugins): its run is the baseline, the in-scope tests
that pass on Relay. The table counts, per module, how many of those pass on wayline.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# Whole modules outside the port's scope (issue 31): model pricing, PII redaction, typed codecs,
# the native dynamic plugin host, logging.
EXCLUDED_MODULES = frozenset(
    {
        "test_model_pricing_plugin",
        "test_pii_redaction_plugin",
        "test_typed",
        "test_typed_codec_name",
        "test_dynamic_plugin_host",
        "test_logging",
    }
)
# Tests elsewhere whose source uses those features or the OTel/OpenInference subscriber types.
EXCLUDED_SOURCE = (
    "OpenTelemetry",
    "OpenInference",
    "model_pricing",
    "pii_redaction",
    "nemo_relay.typed",
    "import typed",
    "nemo_relay.log(",
    "_native.log(",
)
EXCLUDED_WORDS = (
    "otel",
    "opentelemetry",
    "openinference",
    "pricing",
    "pii",
    "redact",
    "typed",
    "dynamic_plugin",
    "logging",
)

SHIM = '''"""``nemo_relay`` resolved to ``wayline.relay`` (the porting shim)."""
import importlib
import importlib.abc
import importlib.util
import sys

import wayline.relay as _target


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("nemo_relay."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("wayline.relay" + spec.name[len("nemo_relay"):])

    def exec_module(self, module):
        return None


sys.meta_path.insert(0, _Alias())
sys.modules["nemo_relay"] = _target
'''


def out_of_scope_tests(tests_dir: Path) -> set[str]:
    """``module::[Class::]function`` of the tests whose source uses an excluded feature."""
    found: set[str] = set()
    for test_file in tests_dir.glob("test_*.py"):
        source = test_file.read_text()
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            nodes = node.body if isinstance(node, ast.ClassDef) else [node]
            for fn in nodes:
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                text = ast.get_source_segment(source, fn) or ""
                if any(word in text for word in EXCLUDED_SOURCE):
                    prefix = f"{node.name}::" if isinstance(node, ast.ClassDef) else ""
                    found.add(f"{test_file.stem}::{prefix}{fn.name}")
    return found


def in_scope(module: str, test: str, excluded: set[str] = frozenset()) -> bool:  # type: ignore[assignment]
    """Whether one Relay test belongs to the ported scope."""
    if module in EXCLUDED_MODULES or f"{module}::{test.split('[')[0]}" in excluded:
        return False
    lowered = test.lower()
    return not any(word in lowered for word in EXCLUDED_WORDS)


def run(
    python: str, tests_dir: Path, shim: bool, timeout_s: int, only: list[str]
) -> dict[str, str]:
    """Run the suite once; each test id (``module::name``) with passed/failed/skipped."""
    with tempfile.TemporaryDirectory(prefix="relay-upstream-") as tmp:
        env = dict(os.environ)
        paths = []
        if shim:
            pkg = Path(tmp) / "shim" / "nemo_relay"
            pkg.mkdir(parents=True)
            (pkg / "__init__.py").write_text(SHIM)
            paths = [str(pkg.parent), str(ROOT / "src")]
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(":")
        outcomes: dict[str, str] = {}
        # One pytest process per module: a crash or a hang in one cannot hide the others.
        for test_file in sorted(tests_dir.glob("test_*.py")):
            if only and test_file.stem not in only:
                continue
            report = Path(tmp) / f"{test_file.stem}.xml"
            cmd = [
                python,
                "-m",
                "pytest",
                str(test_file),
                "-q",
                "--tb=no",
                "-p",
                "no:cacheprovider",
                "-o",
                "asyncio_mode=auto",
                "-o",
                "addopts=",
                f"--timeout={timeout_s}",
                f"--junitxml={report}",
                f"--rootdir={tests_dir}",
            ]
            subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, check=False)
            if report.exists():
                outcomes.update(parse_junit(report))
        return outcomes


def parse_junit(report: Path) -> dict[str, str]:
    """Outcomes by ``module::test`` from a JUnit XML report."""
    outcomes: dict[str, str] = {}
    seen: dict[str, int] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")[-1]
        if not module.startswith("test_"):
            parts = case.get("classname", "").split(".")
            module = next((p for p in parts if p.startswith("test_")), module)
            name = f"{parts[-1]}::{case.get('name')}"
        else:
            name = str(case.get("name"))
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed"
            elif child.tag == "skipped":
                status = "skipped"
        # Parameter ids depend on the implementation (an Enum shows its member, a native
        # type its index): key a parametrized case by its position instead.
        base, bracket, _ = name.partition("[")
        if bracket:
            seen[base] = seen.get(base, -1) + 1
            name = f"{base}[#{seen[base]}]"
        outcomes[f"{module}::{name}"] = status
    return outcomes


def table(
    baseline: dict[str, str], ours: dict[str, str], excluded: set[str]
) -> tuple[list[str], int, int]:
    """Per-module rows of in-scope Relay-passing tests and how many pass on wayline."""
    per: dict[str, list[int]] = {}
    for test_id, status in baseline.items():
        module, _, name = test_id.partition("::")
        if status != "passed" or not in_scope(module, name, excluded):
            continue
        row = per.setdefault(module, [0, 0])
        row[0] += 1
        row[1] += ours.get(test_id) == "passed"
    lines = [
        f"| {'module':<34} | relay | wayline | share |",
        f"|{'-' * 36}|-------|---------|-------|",
    ]
    total = passed = 0
    for module in sorted(per):
        n, ok = per[module]
        total, passed = total + n, passed + ok
        lines.append(f"| {module:<34} | {n:>5} | {ok:>7} | {100 * ok / n:>4.0f}% |")
    share = 100 * passed / total if total else 0.0
    lines.append(f"| {'total':<34} | {total:>5} | {passed:>7} | {share:>4.0f}% |")
    return lines, total, passed


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: run, compare, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests_dir", type=Path)
    parser.add_argument("--python", required=True, help="interpreter for the wayline run")
    parser.add_argument("--relay-python", help="interpreter with nemo-relay 0.10.4 installed")
    parser.add_argument("--baseline", type=Path, help="a saved --json result to reuse")
    parser.add_argument("--json", type=Path, help="write both runs' outcomes here")
    parser.add_argument("--only", nargs="*", default=[], help="run only these modules (stems)")
    parser.add_argument("--timeout", type=int, default=30, help="per-test timeout (s)")
    args = parser.parse_args(argv)
    if args.baseline:
        baseline = json.loads(args.baseline.read_text())["relay"]
    elif args.relay_python:
        baseline = run(
            args.relay_python, args.tests_dir, shim=False, timeout_s=args.timeout, only=[]
        )
    else:
        parser.error("give --relay-python or --baseline")
    ours = run(args.python, args.tests_dir, shim=True, timeout_s=args.timeout, only=args.only)
    if args.only:
        baseline = {k: v for k, v in baseline.items() if k.split("::")[0] in args.only}
    if args.json:
        args.json.write_text(json.dumps({"relay": baseline, "wayline": ours}, indent=1))
    lines, total, passed = table(baseline, ours, out_of_scope_tests(args.tests_dir))
    print("\n".join(lines))
    print(f"in scope and passing on Relay: {total}; passing on wayline: {passed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
