"""Property-based fuzzing (Hypothesis) of the sanitizer, the ATOF reader and the converter.

* Sanitizer: any nested value (containers, bytes, floats, exotic objects) comes back as
  JSON within the size limit, unchanged by a second pass, and a secret hidden anywhere in
  it — in a key, a value, a JSON-encoded string — never survives.
* ATOF reader: any file (real events, mutated events, JSON of every type, random bytes,
  torn lines) either yields objects or raises ``AtofFormatError`` naming the line; the
  validator always answers with a list of problems.
* Converter: any stream of event objects (real ones shuffled and mutated) converts without
  an exception, and every trajectory it writes is valid ATIF.

The long run (``WAYLINE_RELIABILITY_SCALE=full``) explores at least 10,000 random cases; the
short one runs a fixed, derandomized sample.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rel_support import Outputs, full_scale, record, scaled, shutdown_exporters, write_config

from wayline.redaction.sanitize import sanitize
from wayline.relay.atif.convert import convert_events
from wayline.relay.atif.validate import validate_trajectory
from wayline.relay.atof import (
    AtofFormatError,
    AtofTornLineWarning,
    iter_events,
    read_events,
    validate_atof,
)
from wayline.runtime import build_runtime
from wayline.testing.secrets import SECRET_SAMPLES
from wayline.testing.server import ScriptedServer


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=not full_scale(),
        suppress_health_check=list(HealthCheck),
    )


class Opaque:
    """An object with no JSON form and a ``repr`` that says so."""

    def __repr__(self) -> str:
        return "<opaque>"


class Unprintable:
    """An object whose ``str`` and ``repr`` raise."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=60)
    | st.binary(max_size=20)
    | st.builds(Opaque)
    | st.builds(Unprintable)
    | st.sampled_from([Ellipsis, 10**400, "x" * 9_000])
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.text(max_size=12) | st.integers(), inner, max_size=6)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers(), max_size=4)
    ),
    max_leaves=30,
)
SEPARATORS = st.sampled_from([" ", "\n", "\t", ", ", "(", "'", '"', "\r\n", "; "])
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\\"), max_size=30)


@st.composite
def hidden_secret(draw: st.DrawFn) -> tuple[Any, str]:
    """(a structure hiding one secret sample somewhere, that sample's needle)."""
    sample = draw(st.sampled_from(SECRET_SAMPLES))
    text = draw(WORDS) + draw(SEPARATORS) + sample.secret + draw(SEPARATORS) + draw(WORDS)
    if draw(st.booleans()):
        text = json.dumps(text, ensure_ascii=draw(st.booleans()))
    holder: Any = text
    for _ in range(draw(st.integers(0, 4))):
        how = draw(st.sampled_from(["list", "value", "key", "tuple"]))
        if how == "list":
            holder = [draw(VALUES), holder]
        elif how == "value":
            holder = {draw(st.text(max_size=8)): holder, "n": draw(VALUES)}
        elif how == "key" and isinstance(holder, str):
            holder = {holder: draw(VALUES)}
        else:
            holder = (holder,)
    return holder, sample.needle


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_fuzz_sanitizer() -> None:
    """Sanitizing any value gives bounded JSON, is idempotent and never leaks a hidden secret."""
    seen = {"cases": 0}

    @_settings(scaled(150, 4000))
    @given(VALUES, hidden_secret(), st.integers(1000, 60_000))
    def run(value: Any, secret: tuple[Any, str], limit: int) -> None:
        seen["cases"] += 1
        out = sanitize(value, max_chars=limit)
        text = json.dumps(out, allow_nan=False)
        assert len(text) <= limit
        assert sanitize(out, max_chars=limit) == out
        holder, needle = secret
        hidden = json.dumps(sanitize([value, holder], max_chars=limit), allow_nan=False)
        assert needle not in hidden

    run()
    record("fuzz_sanitizer", "fuzz: sanitizer cases", seen["cases"], ">=", scaled(150, 4000))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """ATOF lines of a real session: tools, a parallel batch, a delegated child, a retry."""
    root = tmp_path_factory.mktemp("corpus")
    out = Outputs(root / "out")
    home = root / "home"
    home.mkdir()
    (root / "a.txt").write_text("alpha\n")
    script = {
        "model": "scripted-model",
        "rules": [
            {
                "match": {"first_user_contains": "CHILD"},
                "turns": [
                    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                    {"content": "child done"},
                ],
            },
            {
                "match": {},
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "read_file", "arguments": {"path": "a.txt"}},
                            {"name": "read_file", "arguments": {"path": "a.txt"}},
                        ],
                        "fault": {"status": 500, "times": 1},
                    },
                    {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "CHILD"}}]},
                    {"content": "done"},
                ],
            },
        ],
    }
    with pytest.MonkeyPatch.context() as mp, ScriptedServer(script) as server:
        for key, value in out.env().items():
            mp.setenv(key, value)
        write_config(home, server.base_url, plugins=("observability/relay",))
        runtime = build_runtime(home)
        agent = runtime.agent(cwd=root)
        agent.run_turn("go")
        agent.finalize()
        shutdown_exporters(runtime)
    lines = out.atof.read_bytes().splitlines()
    assert len(lines) > 30
    return lines


JSONS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def mutated_event(draw: st.DrawFn, corpus: list[bytes]) -> dict[str, Any]:
    """A real event with some fields deleted or replaced by arbitrary JSON."""
    event: dict[str, Any] = json.loads(draw(st.sampled_from(corpus)))
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.sampled_from([*sorted(event), "data", "metadata", "category_profile"]))
        if draw(st.booleans()):
            event.pop(key, None)
        else:
            event[key] = draw(JSONS)
    return event


@st.composite
def atof_file(draw: st.DrawFn, corpus: list[bytes]) -> bytes:
    """The bytes of an ATOF-ish file: real, mutated, odd and broken lines."""
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["real", "mutated", "json", "bytes", "torn", "blank"]))
        if kind == "real":
            lines.append(draw(st.sampled_from(corpus)))
        elif kind == "mutated":
            lines.append(json.dumps(draw(mutated_event(corpus))).encode())
        elif kind == "json":
            lines.append(json.dumps(draw(JSONS)).encode())
        elif kind == "bytes":
            lines.append(draw(st.binary(max_size=40)).replace(b"\n", b" "))
        elif kind == "torn":
            line = draw(st.sampled_from(corpus))
            lines.append(line[: draw(st.integers(1, max(1, len(line) - 1)))])
        else:
            lines.append(b"   ")
    text = b"\n".join(lines)
    return text + (b"\n" if draw(st.booleans()) else b"")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_fuzz_atof_reader(corpus: list[bytes]) -> None:
    """Any file: the reader yields objects or raises AtofFormatError; validation never raises."""
    seen = {"cases": 0}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.jsonl"

        @_settings(scaled(150, 3000))
        @given(atof_file(corpus))
        def run(data: bytes) -> None:
            seen["cases"] += 1
            path.write_bytes(data)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AtofTornLineWarning)
                for reader in (lambda: list(iter_events(path)), lambda: read_events(path)):
                    try:
                        events = reader()
                    except AtofFormatError as exc:
                        assert f"{path}:" in str(exc)
                    else:
                        assert all(isinstance(e, dict) for e in events)
            problems = validate_atof(path)
            assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)

        run()
    record("fuzz_reader", "fuzz: ATOF reader cases", seen["cases"], ">=", scaled(150, 3000))


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_fuzz_converter(corpus: list[bytes]) -> None:
    """Any event stream converts without an exception; every file written is valid ATIF."""
    seen = {"cases": 0, "written": 0}
    real = [json.loads(line) for line in corpus]

    @st.composite
    def stream(draw: st.DrawFn) -> list[Any]:
        events = list(real) if draw(st.booleans()) else []
        for _ in range(draw(st.integers(0, 8))):
            how = draw(st.sampled_from(["mutate", "drop", "insert", "junk", "swap"]))
            if how == "mutate" and events:
                i = draw(st.integers(0, len(events) - 1))
                if isinstance(events[i], dict):
                    events[i] = draw(mutated_event([json.dumps(events[i]).encode()]))
            elif how == "drop" and events:
                events.pop(draw(st.integers(0, len(events) - 1)))
            elif how == "insert":
                events.insert(draw(st.integers(0, len(events))), draw(mutated_event(corpus)))
            elif how == "junk":
                events.insert(draw(st.integers(0, len(events))), draw(JSONS))
            elif how == "swap" and len(events) > 1:
                i = draw(st.integers(0, len(events) - 2))
                events[i], events[i + 1] = events[i + 1], events[i]
        return events

    with tempfile.TemporaryDirectory() as tmp:

        @_settings(scaled(100, 3000))
        @given(stream())
        def run(events: list[Any]) -> None:
            seen["cases"] += 1
            out = Path(tempfile.mkdtemp(dir=tmp))
            report = convert_events(events, out)
            for path in report.written:
                document = json.loads(path.read_text(encoding="utf-8"))
                assert validate_trajectory(document) == [], path.name
                seen["written"] += 1

        run()
    assert seen["written"] > 0, "no case produced a trajectory"
    record("fuzz_converter", "fuzz: converter cases", seen["cases"], ">=", scaled(100, 3000))


CONFIG_KEYS = {
    "model": ["default", "base_url", "api_key", "max_retries", "timeout", "stream", "provider"],
    "agent": ["max_turns", "toolsets", "system_prompt"],
    "approvals": ["mode", "timeout"],
    "delegation": ["max_spawn_depth", "max_concurrent_children", "child_timeout_seconds", "model"],
    "plugins": ["enabled", "disabled", "entries"],
}
SCRIPT_KEYS = ["model", "default", "rules", "chunk_chars", "description"]
RESPONSE_KEYS = ["content", "tool_calls", "fault", "delay", "usage", "finish_reason", "turns"]


def _toml(value: Any) -> str:
    """A small TOML writer for the fuzzed documents (inline tables and arrays)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and value == value and abs(value) != float("inf"):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


@st.composite
def config_document(draw: st.DrawFn) -> dict[str, Any]:
    """A config.yaml mapping of known sections and keys with values of any JSON type."""
    doc: dict[str, Any] = {}
    for section in draw(st.lists(st.sampled_from(sorted(CONFIG_KEYS)), max_size=5, unique=True)):
        if draw(st.integers(0, 9)) == 0:
            doc[section] = draw(JSONS)
            continue
        keys = draw(st.lists(st.sampled_from(CONFIG_KEYS[section]), max_size=4, unique=True))
        doc[section] = {k: draw(JSONS | st.just("http://127.0.0.1:9/v1")) for k in keys}
    return doc


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_fuzz_config_surfaces(tmp_path: Path) -> None:
    """config.yaml, plugins.toml and scripts: any document loads or raises its own clear error."""
    import yaml

    from wayline.host.config import ConfigError, load_config
    from wayline.relay.plugin import PluginsTomlError, load_plugins_toml
    from wayline.runtime.settings import load_settings
    from wayline.testing.script import ScriptError, parse_script_text

    seen = {"cases": 0}
    home = tmp_path / "home"
    home.mkdir()

    @_settings(scaled(100, 1500))
    @given(
        config_document(),
        st.dictionaries(st.sampled_from(SCRIPT_KEYS + RESPONSE_KEYS), JSONS, max_size=5),
        st.dictionaries(st.sampled_from(["version", "components"]), JSONS, max_size=2),
        st.lists(
            st.dictionaries(st.sampled_from(["kind", "enabled", "config"]), JSONS, max_size=3),
            max_size=3,
        ),
    )
    def run(config: Any, script: Any, toml: Any, components: Any) -> None:
        seen["cases"] += 1
        (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        try:
            load_settings(load_config(home))
        except ConfigError as exc:
            assert str(exc).startswith(str(home / "config.yaml"))
        try:
            parse_script_text(json.dumps(script), "s.json", "json")
        except ScriptError as exc:
            assert str(exc).startswith("s.json")
        lines = [f"{k} = {_toml(v)}" for k, v in toml.items()]
        lines += [
            "[[components]]\n" + "\n".join(f"{k} = {_toml(v)}" for k, v in c.items())
            for c in components
        ]
        path = tmp_path / "plugins.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        try:
            load_plugins_toml(path)
        except PluginsTomlError as exc:
            assert str(exc).startswith(str(path))

    run()
    record("fuzz_config", "fuzz: config surface cases", seen["cases"], ">=", scaled(100, 1500))
