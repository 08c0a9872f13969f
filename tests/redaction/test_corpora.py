"""The redaction goals on corpora the project did not write, a fast deterministic subset.

``make reliability`` runs the full corpora (tests/reliability/test_secrets.py); here every
fourth scanner case, the generated provider formats, a deterministic sample of the installed
packages' lines, provider tool-call ids and bound placements keep ``make test`` honest.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _measure() -> ModuleType:
    """tests/reliability/corpus/measure.py, loaded by path (it lives beside the e2e suite)."""
    path = Path(__file__).resolve().parents[1] / "reliability" / "corpus" / "measure.py"
    spec = importlib.util.spec_from_file_location("wayline_redaction_measure", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


M = _measure()


def test_scanner_and_generated_secrets_leak_at_most_2_percent() -> None:
    """At most 2% of the scanners' true positives leak (whole or 40%), none in private keys,
    cloud, VCS, AI-provider keys, database URLs or auth headers."""
    cases = [*M.scanner_cases()[::4], *M.generated_cases(count=2)]
    figures = M.measure_secrets(cases)
    total = sum(figures.by_family.cases.values())
    assert total >= 450
    leaks = [(c.family, c.rule, c.text[:80]) for c in figures.leaks]
    assert len(leaks) <= 0.02 * total, leaks
    assert not [leak for leak in leaks if leak[0] in M.ZERO_LEAK_FAMILIES], leaks


def test_installed_packages_lines_are_altered_at_most_a_tenth_of_a_percent() -> None:
    """One line in 10 of one file in 20 of the site-packages' .py/.md/.toml/.yaml/.json
    files: at most 0.1% change under redaction."""
    total, altered = M.measure_benign(10, file_step=20)
    if total < 1_000:
        pytest.skip(f"only {total} lines of installed packages found")
    assert len(altered) <= total // 1000, altered[:20]


def test_no_provider_tool_call_id_is_altered() -> None:
    """call_…, toolu_…, fc_…, uuid and other provider ids survive in every position."""
    assert M.measure_ids(10) == []


def test_no_bound_cuts_a_secret_in_half() -> None:
    """Secrets placed across the string bounds and the redaction window, after text that
    redaction shrinks, never leave a fragment."""
    cases = [*M.generated_cases(count=1)[::4], *M.scanner_cases()[::60]]
    placements, cut = M.measure_cuts(cases)
    assert placements >= 100
    assert cut == []


def test_the_corpus_names_its_sources() -> None:
    """Every scanner case names the scanner and the file it was read from."""
    sources = {case.source.split(":")[0] for case in M.scanner_cases()}
    assert sources == {"gitleaks", "detect-secrets"}
    assert all(":" in case.source for case in M.scanner_cases())
