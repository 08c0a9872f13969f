"""Secrets: fake credentials everywhere a session carries text; none may reach an output.

Each session takes a group of shapes from ``wayline.testing.secrets.SECRET_SAMPLES`` and puts
them in the user message, the system prompt (``agent.system_prompt``), tool arguments
(terminal, write_file, delegate_task), tool results (a ``.env``-style file ``read_file``
returns, the terminal's output), the child's goal and answer, provider headers (a plugin's
``extra_headers``, the API key, credentials in the base URL) and a provider error body. Then
every output is searched for the secret part of each shape: the ATOF file, the ATIF files,
the OTel span file, the session store, the log records (DEBUG and up, formatted) and the
hook payload fields marked sanitized, and the process's stderr. Half the sessions run relay's
managed mode.

Sessions also carry a spread of cases from corpora the project did not write (gitleaks'
and detect-secrets' rule tests, generated provider formats; see ``corpus/README.md``), and
the figures on the whole of those corpora are recorded by family and by source, with the
installed packages' lines as the benign side, provider tool-call ids, secrets placed across
every text bound, and the CPU time of 1 MB of adversarial text.

The hand-written side: every string of ``corpus.benign`` goes through ``sanitize`` (the one policy
behind every exporter) and must come out unchanged; a session whose user text, tool
arguments, tool output and answer carry code such as ``password_field = form.get(...)``
must show it unchanged in the ATIF. The redactor's cost per KB is reported against the
redactor of commit ``BASELINE_COMMIT`` (before issue 21), loaded with ``git show``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from corpus import heldout, measure
from corpus.benign import STRICT, benign_strings
from rel_support import (
    LEAKY_PLUGIN_DIR,
    Outputs,
    install_plugin,
    record,
    scaled,
    shutdown_exporters,
    write_config,
)

from wayline.contract.hooks import HOOK_SPECS
from wayline.redaction import redact
from wayline.redaction.sanitize import sanitize
from wayline.runtime import build_runtime
from wayline.testing.secrets import SECRET_SAMPLES, WHY_SAMPLES, SecretSample, families
from wayline.testing.server import ScriptedServer

GROUP = 4
REDACTED_MARK = "<redacted>"
ROOT = Path(__file__).resolve().parents[2]
# The last commit before issue 21's redactor: the cost figure's reference.
BASELINE_COMMIT = "57a273698c76759b2a6a7aaf717e8f59a79ac27d"


class _Capture(logging.Handler):
    """Every log record, formatted with its traceback, as text."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the formatted record (the scripted model's own log is not wayline output)."""
        if not record.name.startswith("wayline.testing"):
            self.lines.append(self.format(record))


def _script(tag: str, text: str, group: list[SecretSample]) -> dict[str, Any]:
    printf = "printf '%s\\n' " + " ".join(shlex.quote(s.secret) for s in group)
    error_body = {"error": {"message": f"invalid credentials: {text}", "type": "auth"}}
    return {
        "model": "scripted-model",
        "rules": [
            {
                "match": {"first_user_contains": f"CHILD-{tag}"},
                "turns": [{"content": f"child saw these:\n{text}"}],
            },
            {
                "match": {"first_user_contains": f"[{tag}]"},
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "terminal", "arguments": {"command": printf}},
                            {"name": "read_file", "arguments": {"path": "secrets.env"}},
                            {"name": "write_file", "arguments": {"path": "o.txt", "content": text}},
                        ],
                        "fault": {"status": 429, "retry_after": 0, "body": error_body, "times": 1},
                    },
                    {
                        "tool_calls": [
                            {
                                "name": "delegate_task",
                                "arguments": {"goal": f"CHILD-{tag} check:\n{text}"},
                            }
                        ]
                    },
                    {"content": f"final answer, with everything I found:\n{text}"},
                ],
            },
        ],
    }


def _plugins_toml(out: Outputs) -> Path:
    path = out.root / "plugins.toml"
    out.root.mkdir(parents=True, exist_ok=True)
    path.write_text(
        'version = 1\n\n[[components]]\nkind = "observability"\n\n'
        f'[components.config.atof]\nenabled = true\noutput_directory = "{out.atof.parent}"\n'
        f'filename = "{out.atof.name}"\n\n'
        f'[components.config.atif]\nenabled = true\noutput_directory = "{out.atif}"\n\n'
        '[[components]]\nkind = "adaptive"\n',
        encoding="utf-8",
    )
    return path


def _outputs(out: Outputs, home: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for label, files in (
        ("ATOF", [out.atof]),
        ("ATIF", sorted(out.atif.glob("*.json"))),
        ("OTel", sorted(out.spans.parent.glob("*.jsonl"))),
        ("session store", sorted((home / "sessions").glob("*.jsonl"))),
    ):
        found[label] = b"\n".join(p.read_bytes() for p in files if p.exists())
    return found


def _run_group(
    index: int, group: list[SecretSample], managed: bool, root: Path, monkeypatch: Any
) -> tuple[dict[str, list[str]], list[str]]:
    """One session; ({output: [leaked shape names]}, [sanity problems])."""
    tag = f"G{index}"
    text = "\n".join(s.secret for s in group)
    home, work, out = root / "home", root / "work", Outputs(root / "out")
    home.mkdir(parents=True)
    work.mkdir()
    (work / "secrets.env").write_text(text + "\n", encoding="utf-8")
    install_plugin(home, LEAKY_PLUGIN_DIR, "leaky")
    # HTTP headers cannot carry line breaks: multi-line shapes travel with spaces instead.
    single = [s.secret.replace("\n", " ").strip() for s in group]
    headers = {f"X-Debug-Note-{i}": secret for i, secret in enumerate(single[1:])}
    headers["X-Api-Key"] = single[0]
    for key, value in out.env().items():
        monkeypatch.setenv(key, value)
    if managed:
        monkeypatch.setenv("WAYLINE_RELAY_PLUGINS_TOML", str(_plugins_toml(out)))
    else:
        monkeypatch.delenv("WAYLINE_RELAY_PLUGINS_TOML", raising=False)
    server = ScriptedServer(_script(tag, text, group)).start()
    # Credentials in the endpoint's URL too (a password of no known shape: only its place
    # in the URL gives it away).
    password = f"Pw{index}x" + hashlib.sha256(tag.encode()).hexdigest()[:14]
    base_url = server.base_url.replace("http://", f"http://deploy:{password}@")
    write_config(
        home,
        base_url,
        out,
        plugins=("observability/relay", "observability/otel", "leaky"),
        model={"api_key": " ".join(single), "max_retries": 2},
        agent={"system_prompt": f"You are careful. Known credentials:\n{text}"},
        approvals={"mode": "deny"},
        entries={"leaky": {"headers": headers}},
    )
    runtime = build_runtime(home)
    assert all(p.loaded for p in runtime.manager.plugins.values() if p.enabled)
    sanitized: list[str] = []

    def make(name: str) -> Any:
        fields = HOOK_SPECS[name].sanitized_fields

        def keep(**kw: Any) -> None:
            sanitized.extend(json.dumps(kw[f], default=str) for f in fields if f in kw)

        return keep

    for name, spec in HOOK_SPECS.items():
        if spec.sanitized_fields:
            runtime.manager.hooks.register(name, make(name), "secret-probe")
    agent = runtime.agent(cwd=work)
    try:
        results = [agent.run_turn(f"[{tag}] please handle these:\n{text}")]
    finally:
        agent.finalize()
        server.stop()
        shutdown_exporters(runtime)
    sanity: list[str] = []
    if not results[0].completed:
        sanity.append(f"{tag}: session did not complete: {results[0].text[:300]}")
    bodies = json.dumps([r.body for r in server.requests])
    headers_seen = json.dumps([r.headers for r in server.requests])
    for sample in group:
        if sample.needle not in bodies and json.dumps(sample.needle)[1:-1] not in bodies:
            sanity.append(f"{tag}: {sample.name} never reached the model")
    if json.dumps(single[0])[1:-1] not in headers_seen:
        sanity.append(f"{tag}: the credential header never reached the server")
    outputs = _outputs(out, home)
    outputs["sanitized hook fields"] = "\n".join(sanitized).encode()
    if not sanitized:
        sanity.append(f"{tag}: no sanitized hook field was seen")
    leaks: dict[str, list[str]] = {}
    for label, blob in outputs.items():
        for sample in group:
            if sample.needle.encode() in blob:
                leaks.setdefault(label, []).append(sample.name)
    if password.encode() in b"".join(outputs.values()):
        leaks.setdefault("base_url password", []).append(tag)
    return leaks, sanity


def _outside_samples(count: int) -> list[SecretSample]:
    """A deterministic spread of the scanners' and generated cases, as session samples."""
    cases = [
        c
        for c in [*measure.scanner_cases(), *measure.generated_cases(count=1)]
        if c.secret is not None
        and measure.excluded(c) is None
        and not measure.leaked(
            measure.needle(c.secret, c.text),
            c.text.replace(measure.needle(c.secret, c.text), "\x00"),
            measure.exported(c.text),
        )  # the known misses are counted by the corpus figures, not hidden in every session
    ]
    picked = cases[:: max(1, len(cases) // count)][:count]
    return [
        SecretSample(f"{c.source}:{c.rule}", c.text, measure.needle(c.secret or "", c.text))
        for c in picked
    ]


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_no_secret_reaches_any_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Secrets in every input position never appear in ATOF, ATIF, OTel, logs, store, payloads
    or stderr; the shapes issue 21 found leaking are in every run."""
    step = scaled(7, 1)
    samples = [*WHY_SAMPLES, *(s for s in SECRET_SAMPLES[::step] if s not in WHY_SAMPLES)]
    samples += _outside_samples(scaled(12, 96))
    groups = [samples[i : i + GROUP] for i in range(0, len(samples), GROUP)]
    capture = _Capture()
    wayline_log = logging.getLogger("wayline")
    old_level = wayline_log.level
    wayline_log.setLevel(logging.DEBUG)
    logging.getLogger().addHandler(capture)
    leaks: dict[str, set[str]] = {}
    sanity: list[str] = []
    try:
        for index, group in enumerate(groups):
            found, problems = _run_group(
                index, group, index % 2 == 1, tmp_path / f"g{index}", monkeypatch
            )
            sanity += problems
            for label, names in found.items():
                leaks.setdefault(label, set()).update(names)
    finally:
        logging.getLogger().removeHandler(capture)
        wayline_log.setLevel(old_level)
    logs = "\n".join(capture.lines)
    stderr = capfd.readouterr().err
    for sample in samples:
        for label, blob in (("logs", logs), ("stderr", stderr)):
            if sample.needle in blob:
                leaks.setdefault(label, set()).add(sample.name)
    occurrences = sum(len(v) for v in leaks.values())
    record("secrets_shapes", "secrets: secret shapes placed", len(samples), ">=", scaled(20, 150))
    figure = record(
        "secrets_leaks",
        "secrets: leaked across ATOF, ATIF, OTel, transcripts, logs and stderr",
        occurrences,
    )
    for label, names in sorted(leaks.items()):
        print(f"leaked into {label}: {sorted(names)}")
    assert not sanity, "\n".join(sanity)
    assert "CarelessError" in logs, "the careless plugin's failures were never logged"
    assert figure.ok, {k: sorted(v) for k, v in leaks.items()}


# -- what redaction must keep ------------------------------------------------------------------


def _altered(text: str) -> bool:
    return redact.redact_text(text) != text or sanitize({"text": text}) != {"text": text}


def test_benign_corpus_survives_redaction() -> None:
    """No identifier, digest, path or URL of the benign corpus changes; at most 0.5% of all."""
    items = benign_strings()
    altered = [(category, text) for category, text in items if _altered(text)]
    strict = [(c, t) for c, t in altered if c in STRICT]
    for category, text in altered:
        print(f"altered {category}: {text[:100]!r} -> {redact.redact_text(text)[:100]!r}")
    total = record("secrets_benign_strings", "benign strings", len(items), ">=", 500)
    kept = record(
        "secrets_benign_strict_altered", "benign ids/digests/paths/URLs altered", len(strict)
    )
    overall = record(
        "secrets_benign_altered", "benign strings altered", len(altered), "<=", len(items) // 200
    )
    assert total.ok and kept.ok and overall.ok, altered


def _baseline() -> ModuleType:
    """The redactor as it was at BASELINE_COMMIT, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:src/wayline/contract/redact.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # its one import of ours moved with the package (the same trie builder)
    source = source.replace("wayline.contract._trie", "wayline.redaction._trie")
    name = "wayline_redact_baseline"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    try:
        exec(compile(source, f"redact.py@{BASELINE_COMMIT[:7]}", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def _cost_per_kb(apply: Callable[[str], str], texts: list[str], rounds: int) -> float:
    """Microseconds per KB of text, the best of `rounds` passes (uncached: no result cache)."""
    size_kb = sum(len(t) for t in texts) / 1024
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            apply(text)
        best = min(best, time.perf_counter() - start)
    return best / size_kb * 1e6


def test_redaction_cost_is_reported_against_the_baseline() -> None:
    """The cost per KB of redacting the corpora, now and at BASELINE_COMMIT, is recorded."""
    try:
        old = _baseline()
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"no git history to load the baseline redactor from: {exc}")
    texts = [s.secret for s in SECRET_SAMPLES] + [t for _, t in benign_strings()]
    texts += [t.replace("\n", " ") for t in texts]  # a second, differently shaped pass
    rounds = scaled(3, 7)
    now = _cost_per_kb(lambda t: redact._redact(redact._current(), t), texts, rounds)
    before = _cost_per_kb(lambda t: old._redact(old._current(), t), texts, rounds)
    print(f"redaction cost: {now:.1f} us/KB now, {before:.1f} us/KB at {BASELINE_COMMIT[:7]}")
    figure = record(
        "secrets_cost_percent",
        "redaction cost per KB, % of before",
        round(100 * now / before),
        "report",
    )
    assert figure.value > 0


def _benign_script(text: str) -> dict[str, Any]:
    return {
        "model": "scripted-model",
        "rules": [
            {
                "match": {"first_user_contains": "[benign]"},
                "turns": [
                    {
                        "tool_calls": [
                            {
                                "name": "write_file",
                                "arguments": {"path": "app.py", "content": text},
                            },
                            {"name": "read_file", "arguments": {"path": "app.py"}},
                        ]
                    },
                    {"content": f"Here is the code again:\n{text}"},
                ],
            }
        ],
    }


BENIGN_CODE = (
    "password_field = form.get(...)",
    'password_field = form.get("password")',
    'db_password = os.environ["DB_PASSWORD"]',
    "client = OpenAI(api_key=api_key)",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "ssh -o PasswordAuthentication=no host",
    "POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password",
)


def test_code_naming_a_password_field_reaches_the_atif_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`password_field = form.get(...)` and similar code keep every character in the ATIF."""
    text = "\n".join(BENIGN_CODE)
    home, work, out = tmp_path / "home", tmp_path / "work", Outputs(tmp_path / "out")
    home.mkdir()
    work.mkdir()
    for key, value in out.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("WAYLINE_RELAY_PLUGINS_TOML", raising=False)
    server = ScriptedServer(_benign_script(text)).start()
    write_config(home, server.base_url, out, approvals={"mode": "deny"})
    runtime = build_runtime(home)
    agent = runtime.agent(cwd=work)
    try:
        result = agent.run_turn(f"[benign] please review this code:\n{text}")
    finally:
        agent.finalize()
        server.stop()
        shutdown_exporters(runtime)
    assert result.completed, result.text[:300]
    atif = "\n".join(p.read_text(encoding="utf-8") for p in sorted(out.atif.glob("*.json")))
    assert atif, "no ATIF file was written"
    for line in BENIGN_CODE:
        assert (
            json.dumps(line, ensure_ascii=False)[1:-1] in atif or json.dumps(line)[1:-1] in atif
        ), line
    assert REDACTED_MARK not in atif


# -- corpora the project did not write (tests/reliability/corpus/README.md) -------------------


def test_outside_secrets_leak_figures() -> None:
    """Every scanner test case and generated provider format, through every exported
    embedding: at most 2% leak (whole or 40%), none in the zero-leak families; by family and
    by source."""
    figures = measure.measure_secrets(
        [*measure.scanner_cases(), *measure.generated_cases(count=scaled(2, 6))]
    )
    total = sum(figures.by_family.cases.values())
    leaks = len(figures.leaks)
    for label, misses, cases in figures.by_family.rows():
        zero = label in measure.ZERO_LEAK_FAMILIES
        record(
            f"secrets_family_{label}",
            f"leaks in family {label} (of {cases})",
            misses,
            "==" if zero else "report",
        )
        print(f"family {label}: {misses} of {cases} leaked")
    for label, misses, cases in figures.by_source.rows():
        record(f"secrets_source_{label}", f"leaks from {label} (of {cases})", misses, "report")
        print(f"source {label}: {misses} of {cases} leaked")
    for label, altered, cases in figures.fp_altered.rows():
        print(f"scanner look-alikes from {label}: {altered} of {cases} altered (no goal)")
    for case in figures.leaks:
        print(f"leak {case.family} {case.rule}: {case.text[:100]!r}")
    record("secrets_outside_cases", "outside secret cases", total, ">=", scaled(450, 1800))
    rate = record(
        "secrets_outside_leak_permille",
        "outside secrets leaked, per 1000",
        1000 * leaks // total,
        "<=",
        20,
    )
    must_not = [c for c in figures.leaks if c.family in measure.ZERO_LEAK_FAMILIES]
    assert rate.ok and not must_not, [(c.family, c.rule, c.text[:80]) for c in figures.leaks]


def test_installed_packages_lines_figure() -> None:
    """Lines of the installed packages (all of them at full scale): at most 0.02% altered."""
    step, file_step = scaled(10, 1), scaled(20, 1)
    total, altered = measure.measure_benign(step, file_step)
    for where, line, out in altered:
        print(f"altered {where}: {line.strip()[:100]!r} -> {out.strip()[:100]!r}")
    record("secrets_packages_lines", "installed packages' lines checked", total, ">=", 1000)
    figure = record(
        "secrets_packages_altered",
        "installed packages' lines altered",
        len(altered),
        "<=",
        max(1, total // 5000),
    )
    assert figure.ok, altered[:20]


def test_tool_call_ids_figure() -> None:
    """Provider tool-call ids (call_, toolu_, fc_, uuid, …) in every position: none altered."""
    bad = measure.measure_ids(scaled(10, 200))
    assert record("secrets_ids_altered", "tool-call ids altered", len(bad)).ok, bad


def test_cut_in_half_figure() -> None:
    """Secrets placed across every text bound after shrinking text: none cut in half."""
    cases = [*measure.generated_cases(count=1), *measure.scanner_cases()[:: scaled(40, 4)]]
    placements, cut = measure.measure_cuts(cases)
    record("secrets_cut_placements", "secrets placed across a bound", placements, ">=", 100)
    figure = record("secrets_cut_in_half", "secrets cut in half by a bound", len(cut))
    assert figure.ok, [(c.rule, where) for c, where in cut]


def test_adversarial_time_figure() -> None:
    """CPU time of redacting 1 MB of adversarial text (repeated keys, separators, BEGIN
    without END, …) is recorded, and the ratio to 50 KB (linear: about 20)."""
    big = measure.time_adversarial(1_000_000)
    small = measure.time_adversarial(50_000)
    worst = max(big, key=lambda name: big[name])
    for name in big:
        print(f"{name}: {big[name] * 1000:.0f} ms CPU per MB, {small[name] * 1000:.1f} per 50 KB")
    record(
        "secrets_adversarial_ms",
        f"1 MB adversarial, worst ({worst}), CPU ms",
        round(big[worst] * 1000),
        "<=",
        1000,
    )
    growth = max(big[n] / max(small[n], 1e-4) for n in big)
    record(
        "secrets_adversarial_growth",
        "1 MB / 50 KB time, worst text (linear: 20)",
        round(growth),
        "report",
    )
    assert families()  # the hand-written corpus still loads beside the outside ones


# -- the second outside corpora (issue 36): Nosey Parker, secretlint, whole files ----------------


def test_heldout_secrets_leak_figures() -> None:
    """Nosey Parker's rule examples and secretlint's snapshots through every exported
    embedding: at most 5% leak, none in the zero-leak families. Kingfisher's examples (mostly
    a vendor word, a credential word and a value) are recorded without a goal."""
    cases, _ = heldout.counted(heldout.heldout_cases())
    figures = measure.measure_secrets(cases)
    for label, misses, count in figures.by_source.rows():
        record(f"secrets_heldout_{label}", f"leaks from {label} (of {count})", misses, "report")
    goal_sources = ("noseyparker", "secretlint")
    counted = [c for c in cases if c.secret is not None and c.source.startswith(goal_sources)]
    leaks = [c for c in figures.leaks if c.source.startswith(goal_sources)]
    total = sum(figures.by_source.cases[s] for s in goal_sources)
    assert total <= len(counted)
    for case in figures.leaks:
        print(f"leak {case.family} {case.source} {case.rule}: {case.text[:100]!r}")
    zero = [c for c in leaks if c.family in measure.ZERO_LEAK_FAMILIES]
    zero_figure = record(
        "secrets_heldout_zero_families",
        "Nosey Parker, secretlint leaks in private key, cloud, VCS, AI, DB URL, auth header",
        len(zero),
    )
    rate = record(
        "secrets_heldout_leak_permille",
        f"Nosey Parker, secretlint secrets leaked, per 1000 (of {total})",
        1000 * len(leaks) // total,
        "<=",
        50,
    )
    assert rate.ok and zero_figure.ok, [(c.family, c.rule, c.text[:80]) for c in leaks]


def test_installed_whole_files_figure() -> None:
    """Whole files of the installed packages, each redacted as one text: at most 1% altered."""
    files, altered = heldout.measure_files(scaled(20, 1))
    for rel in altered:
        print(f"altered file {rel}")
    record("secrets_files_checked", "installed packages' whole files checked", files, ">=", 100)
    figure = record(
        "secrets_files_altered_permille",
        "installed packages' whole files altered, per 1000",
        1000 * len(altered) // files,
        "<=",
        10,
    )
    assert figure.ok, altered
