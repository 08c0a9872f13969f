"""``make reliability``: run the long reliability variants and print every figure with its goal.

Runs ``tests/reliability`` at ``WAYLINE_RELIABILITY_SCALE=full`` in two parallel pytest
processes (the chaos sessions, and everything else), collects the figures the tests record,
and prints ``figure | value | goal | result``. Exits non-zero when a figure misses its goal,
a figure is missing (its test failed before recording it) or a pytest run failed.
``--small`` runs the short variants instead (what ``make test`` runs), for a quick look.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

FAULTS = (
    "http_429_retry_after",
    "http_500",
    "http_503",
    "connect_refused",
    "read_timeout",
    "reset_mid_body",
    "reset_no_response",
    "malformed_json",
    "sse_cut_midway",
    "empty_choices",
    "http_400_not_retried",
)


@dataclass(frozen=True)
class Row:
    """One printed figure: a recorded key (its own goal), or a sum over keys or a key prefix."""

    label: str
    key: str = ""
    keys: tuple[str, ...] = ()
    prefix: str = ""
    expect: int = 1  # sub-figures a prefix row must find
    op: str = "=="
    goal: int = 0


# Families whose goal is no leak at all (tests/reliability/corpus/measure.py).
_ZERO_FAMILIES = ("private_key", "cloud", "vcs", "ai_provider", "database_url", "auth_header")


def _concurrency(kind: str) -> tuple[str, ...]:
    return tuple(f"concurrency_{mode}_{kind}" for mode in ("observers", "managed"))


def _rows(full: bool) -> list[Row]:
    rows = [
        Row("1 chaos: randomized sessions (hostile plugins everywhere)", "chaos_sessions"),
        Row("1 chaos: crashed or hung sessions", "chaos_crashed"),
        Row("1 chaos: tool results lost or duplicated", "chaos_tool_results"),
        Row("1 chaos: unbalanced session/API lifecycle hooks", "chaos_lifecycle"),
        Row("1 chaos: ATOF scope starts without ends", "chaos_atof_unclosed"),
        Row("1 chaos: ATOF validation problems", "chaos_atof_invalid"),
        Row("1 chaos: ATIF files failing validation", "chaos_atif_invalid"),
        Row("1 chaos: OTel spans orphaned or unfinished", "chaos_otel_orphans"),
        Row("1 chaos: log records that fail to format", "chaos_log_format"),
        Row(
            "1 BaseException from a plugin (11 points x 3 kinds): unclean stops",
            prefix="base_exception_",
            expect=33,
        ),
    ]
    rows += [
        Row(
            f"2 provider fault {name}: deviations (transient+persistent)",
            prefix=f"fault_{name}_",
            expect=2,
        )
        for name in FAULTS
    ]
    rows += [
        Row("3 crash: SIGKILLed runs of a long session", "crash_runs"),
        Row("3 crash: ATOF files with broken lines (beyond one torn tail)", "crash_bad_atof"),
        Row("3 crash: conversions failing or invalid", "crash_bad_convert"),
        Row("3 crash: half-written ATIF files seen", "crash_half_atif"),
        Row("3 crash: failed next runs, resumes or session stores", "crash_next_run"),
        Row("4 secrets: secret shapes placed (every input position)", "secrets_shapes"),
        Row(
            "4 secrets: leaked across ATOF, ATIF, OTel, transcripts, logs and stderr",
            "secrets_leaks",
        ),
        Row("4 secrets: benign strings checked", "secrets_benign_strings"),
        Row(
            "4 secrets: benign identifiers, digests, paths, URLs altered",
            "secrets_benign_strict_altered",
        ),
        Row("4 secrets: benign strings altered overall (goal 0.5%)", "secrets_benign_altered"),
        Row(
            "4 secrets: redaction cost per KB, % of the baseline redactor",
            "secrets_cost_percent",
        ),
        Row(
            "4 secrets (outside corpora): scanner + generated cases",
            "secrets_outside_cases",
        ),
        Row(
            "4 secrets (outside corpora): leaked per 1000 cases (whole or 40%)",
            "secrets_outside_leak_permille",
        ),
        Row(
            "4 secrets: leaks in private key, cloud, VCS, AI, DB URL, auth header families",
            keys=tuple(f"secrets_family_{f}" for f in _ZERO_FAMILIES),
        ),
        Row("4 secrets: leaks from gitleaks' rule tests", "secrets_source_gitleaks"),
        Row("4 secrets: leaks from detect-secrets' plugin tests", "secrets_source_detect-secrets"),
        Row("4 secrets: leaks from generated provider formats", "secrets_source_generated"),
        Row(
            "4 secrets (Nosey Parker, secretlint): leaked per 1000 cases (goal 50)",
            "secrets_heldout_leak_permille",
        ),
        Row(
            "4 secrets (Nosey Parker, secretlint): leaks in the zero-leak families",
            "secrets_heldout_zero_families",
        ),
        Row("4 secrets: leaks from Nosey Parker's rule examples", "secrets_heldout_noseyparker"),
        Row("4 secrets: leaks from secretlint's snapshots", "secrets_heldout_secretlint"),
        Row(
            "4 secrets: leaks from Kingfisher's rule examples (no goal)",
            "secrets_heldout_kingfisher",
        ),
        Row("4 secrets: installed packages' whole files checked", "secrets_files_checked"),
        Row(
            "4 secrets: installed packages' whole files altered, per 1000 (goal 10)",
            "secrets_files_altered_permille",
        ),
        Row("4 secrets: installed packages' lines checked", "secrets_packages_lines"),
        Row(
            "4 secrets: installed packages' lines altered (goal 0.02%)", "secrets_packages_altered"
        ),
        Row("4 secrets: tool-call ids altered (call_, toolu_, uuid, ...)", "secrets_ids_altered"),
        Row("4 secrets: secrets placed across a text bound", "secrets_cut_placements"),
        Row("4 secrets: secrets cut in half by a bound", "secrets_cut_in_half"),
        Row("4 secrets: 1 MB adversarial text, worst CPU ms", "secrets_adversarial_ms"),
        Row("4 secrets: 1 MB / 50 KB time (linear: 20)", "secrets_adversarial_growth"),
        Row(
            "4 secrets: 1 MB of each rule trigger / known-value text, worst CPU ms",
            "secrets_trigger_ms",
        ),
        Row("4 secrets: its 1 MB / 50 KB time (linear: 20)", "secrets_trigger_growth"),
        Row(
            "4 secrets: known values planted (env + .env, printed every way)",
            "secrets_known_planted",
        ),
        Row(
            "4 secrets: known values in ATOF, ATIF, OTel, store, view page, stderr",
            "secrets_known_leaks",
        ),
        Row("5 malformed input: hand-written cases", "malformed_cases"),
        Row("5 malformed input: cases without one clear error", "malformed_bad"),
        Row(
            "5 fuzz: cases run (sanitizer, ATOF reader, converter, config surfaces)",
            prefix="fuzz_",
            expect=4,
            op=">=",
            goal=10_000 if full else 400,
        ),
        Row("6 concurrency (64 calls, 16 subagents): deadlocks", keys=_concurrency("deadlock")),
        Row("6 concurrency: lost events", keys=_concurrency("lost")),
        Row("6 concurrency: misparented events (ATOF + OTel)", keys=_concurrency("misparented")),
        *(
            Row(
                f"8 many agents, {n} {mode}: sessions lost, misrouted, in the default home",
                keys=tuple(
                    f"many_agents_{mode}_{n}_{k}" for k in ("lost", "misrouted", "default_home")
                ),
            )
            for mode in ("threads", "asyncio")
            for n in ((2, 16, 64) if full else (2, 16))
        ),
        Row("8 many agents: threads left after agents closed in turn", "many_agents_threads_left"),
        Row("8 many agents: open files left after agents closed in turn", "many_agents_files_left"),
        Row("7 security: plugins imported without being enabled", "security_not_enabled"),
        Row("7 security: project plugins loaded without the opt-in", "security_project"),
        Row(
            "7 security: built-in tool overrides (refused/allowed) deviations",
            prefix="security_override_",
            expect=3,
        ),
        Row("7 security: approvals not judging the final arguments", "security_approval_args"),
        Row("7 security: approvals decided by observer returns", "security_observer_vote"),
    ]
    return rows


def _value(row: Row, figures: dict[str, dict[str, Any]]) -> tuple[str, str, bool]:
    """(value text, goal text, ok) for one row."""
    if row.key:
        fig = figures.get(row.key)
        if fig is None:
            return "missing", "-", False
        if fig["op"] == "report":  # a measurement without a goal
            return str(fig["value"]), "reported", True
        return str(fig["value"]), f"{fig['op']} {fig['goal']:,}", bool(fig["ok"])
    if row.keys:
        found = {k: figures[k] for k in row.keys if k in figures}
        expect = len(row.keys)
    else:
        found = {k: f for k, f in figures.items() if k.startswith(row.prefix)}
        expect = row.expect
    if len(found) < expect:
        return f"missing {expect - len(found)} of {expect}", "-", False
    total = sum(int(f["value"]) for f in found.values())
    if row.op == ">=":
        return f"{total:,}", f">= {row.goal:,}", total >= row.goal
    return str(total), f"== {row.goal}", total == row.goal and all(f["ok"] for f in found.values())


def _run(label: str, targets: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    print(f"running {label}: pytest {' '.join(targets)}  (log: {log})", flush=True)
    handle = log.open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", *targets, "-p", "no:cacheprovider", "-q", "-rfE"],
        cwd=ROOT,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the suite, print the table; 0 when every figure meets its goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="run the short variants")
    args = parser.parse_args(argv)
    full = not args.small
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="wayline-reliability-"))
    figures_dir = work / "figures"
    env = {
        **os.environ,
        "WAYLINE_RELIABILITY_SCALE": "full" if full else "small",
        "WAYLINE_RELIABILITY_FIGURES": str(figures_dir),
    }
    rest = sorted(
        str(p.relative_to(ROOT)) for p in HERE.glob("test_*.py") if p.name != "test_chaos.py"
    )
    runs = [
        (
            "chaos",
            _run(
                "chaos", [str((HERE / "test_chaos.py").relative_to(ROOT))], env, work / "chaos.log"
            ),
        ),
        ("the rest", _run("the rest", rest, env, work / "rest.log")),
    ]
    codes = {label: proc.wait() for label, proc in runs}
    figures: dict[str, dict[str, Any]] = {}
    for path in sorted(figures_dir.glob("*.json")):
        figures[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    rows = _rows(full)
    table = [("figure", "value", "goal", "result")]
    failed = 0
    for row in rows:
        value, goal, ok = _value(row, figures)
        failed += not ok
        table.append((row.label, value, goal, "pass" if ok else "FAIL"))
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    print()
    for i, line in enumerate(table):
        print("| " + " | ".join(cell.ljust(widths[j]) for j, cell in enumerate(line)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    minutes = (time.monotonic() - started) / 60
    scale = "long (WAYLINE_RELIABILITY_SCALE=full)" if full else "short"
    print(f"\n{scale} run, {minutes:.1f} min; pytest exit codes: {codes}; logs in {work}")
    bad_runs = [label for label, code in codes.items() if code != 0]
    if failed or bad_runs:
        print(f"FAILED: {failed} figure(s) missed their goal; failing pytest runs: {bad_runs}")
        return 1
    print(f"all {len(rows)} figures meet their goals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
