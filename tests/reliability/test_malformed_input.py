"""Malformed input at every config surface: one clear line, the right exit code, nothing lost.

Hand-written bad ``config.yaml``, ``plugin.yaml``/``__init__.py``, ``plugins.toml``, environment
values, scripted-server scripts and ATOF files go through the real CLI. Each case names the
exit code (non-zero where the run cannot continue; zero where it runs on without the broken
part) and what stderr must say (the file, line or field). Never a traceback, and files that
were already there stay byte-identical. Intercept outcomes are checked in-process: a relay
intercept returning garbage fails its call with a message naming the intercept.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rel_support import Outputs, outputs_problems, record, write_config

from wayline.relay.atif.validate import validate_trajectory
from wayline.runtime import build_runtime
from wayline.testing.server import ScriptedServer

GOOD = "model: {default: scripted-model, base_url: '{url}'}\n"
PLUGINS = "plugins: {enabled: [observability/relay, bad]}\n"
OK_INIT = "def register(ctx):\n    pass\n"


@dataclass(frozen=True)
class Case:
    """One bad input: files to write, the command, and what must happen."""

    name: str
    argv: tuple[str, ...]
    code: int
    says: tuple[str, ...] = ()
    files: dict[str, str | bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    keep: tuple[str, ...] = ()
    stdout: str | None = None


CHAT = ("chat", "-q", "hi", "-Q")


def _config_case(name: str, text: str, code: int, *says: str) -> Case:
    return Case(f"config: {name}", CHAT, code, says, {"home/config.yaml": text})


def _plugin_case(name: str, manifest: str | bytes, init: str, code: int, *says: str) -> Case:
    files: dict[str, str | bytes] = {
        "home/config.yaml": GOOD + PLUGINS,
        "home/plugins/bad/plugin.yaml": manifest,
        "home/plugins/bad/__init__.py": init,
    }
    return Case(f"plugin: {name}", CHAT, code, says, files, stdout="ok" if code == 0 else None)


def _toml_case(name: str, text: str, *says: str) -> Case:
    files: dict[str, str | bytes] = {
        "home/config.yaml": GOOD + "plugins: {enabled: [observability/relay]}\n",
        "plugins.toml": text,
    }
    env = {"WAYLINE_RELAY_PLUGINS_TOML": "{tmp}/plugins.toml"}
    return Case(f"plugins.toml: {name}", CHAT, 0, says, files, env, stdout="ok")


def _env_case(name: str, env: dict[str, str], code: int, *says: str, **files: str) -> Case:
    all_files: dict[str, str | bytes] = {
        "home/config.yaml": GOOD
        + "plugins: {enabled: [observability/relay, observability/otel]}\n",
        **{k.replace("__", "/").replace("_dot_", "."): v for k, v in files.items()},
    }
    return Case(
        f"env: {name}", CHAT, code, says, all_files, env, stdout="ok" if code == 0 else None
    )


def _script_case(name: str, text: str | bytes, *says: str) -> Case:
    return Case(
        f"script: {name}", ("serve-model", "--script", "{tmp}/s.yaml"), 2, says, {"s.yaml": text}
    )


def _atof_case(name: str, text: str | bytes, code: int, *says: str) -> Case:
    files: dict[str, str | bytes] = {"in.jsonl": text, "out/keep.json": '{"kept": true}\n'}
    argv = ("atif", "convert", "{tmp}/in.jsonl", "-o", "{tmp}/out")
    return Case(f"atof: {name}", argv, code, says, files, keep=("out/keep.json",))


EVENT = (
    '{"atof_version":"0.1","kind":"scope","scope_category":"start",'
    '"uuid":"01a20019-9490-77b0-81be-ceee9338b6b8","parent_uuid":null,'
    '"timestamp":"2026-01-01T00:00:00Z","name":"x","category":"agent","attributes":[]}\n'
)

CASES: list[Case] = [
    _config_case("invalid YAML", "model: [unclosed\n", 2, r"config\.yaml:2: invalid YAML"),
    _config_case("top-level list", "- a\n- b\n", 2, r"config\.yaml:1: top level must be a mapping"),
    _config_case("binary", b"\xff\xfe\x00model", 2, r"config\.yaml: cannot read"),
    _config_case("no base_url", "model: {default: m}\n", 2, r"model\.base_url is not set"),
    _config_case("model not a mapping", "model: 42\n", 2, r"config\.yaml:1: model: must be"),
    _config_case(
        "max_retries not a number",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1', max_retries: lots}\n",
        2,
        r"config\.yaml:1: model\.max_retries: must be a int",
    ),
    _config_case(
        "timeout infinite",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1', timeout: 1e400}\n",
        2,
        r"model\.timeout: must be a finite number",
    ),
    _config_case(
        "stream not a boolean",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1', stream: maybe}\n",
        2,
        r"model\.stream: must be true or false",
    ),
    _config_case(
        "base_url not a URL",
        "model: {default: m, base_url: 5}\n",
        2,
        r"config\.yaml:1: model\.base_url: must be an http",
    ),
    _config_case(
        "model name a list",
        "model: {default: [1], base_url: 'http://127.0.0.1:9/v1'}\n",
        2,
        r"model\.default: must be a string",
    ),
    _config_case(
        "toolsets a number",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\nagent: {toolsets: 5}\n",
        2,
        r"config\.yaml:2: agent\.toolsets: must be a list",
    ),
    _config_case(
        "toolset not a name",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\n"
        "agent: {toolsets: [file, {a: b}]}\n",
        2,
        r"config\.yaml:2: agent\.toolsets\.1: must be a toolset name",
    ),
    _config_case(
        "system prompt a mapping",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\nagent: {system_prompt: {a: 1}}\n",
        2,
        r"agent\.system_prompt: must be a string",
    ),
    _config_case(
        "negative max_turns",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\nagent: {max_turns: -3}\n",
        2,
        r"config\.yaml:2: agent\.max_turns: must be ≥ 0",
    ),
    _config_case(
        "approval mode unknown",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\napprovals: {mode: maybe}\n",
        2,
        r"config\.yaml:2: approvals\.mode: must be manual, off or deny",
    ),
    _config_case(
        "delegation not a mapping",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\ndelegation: 5\n",
        2,
        r"config\.yaml:2: delegation: must be a mapping",
    ),
    _config_case(
        "children not a number",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\n"
        "delegation: {max_concurrent_children: x}\n",
        2,
        r"delegation\.max_concurrent_children: must be a int",
    ),
    _config_case(
        "credential of the wrong type is not echoed",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\n"
        "delegation: {api_key: [sk-echoed0secret0value0000000]}\n",
        2,
        r"delegation\.api_key: must be a string, got list$",
    ),
    _config_case(
        "enabled not a list",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\n"
        "plugins: {enabled: observability/relay}\n",
        2,
        r"config\.yaml:2: plugins\.enabled: must be a list",
    ),
    _config_case(
        "entries not a mapping",
        "model: {default: m, base_url: 'http://127.0.0.1:9/v1'}\nplugins: {entries: [1]}\n",
        2,
        r"config\.yaml:2: plugins\.entries: must be a mapping",
    ),
    Case(
        "config: enable refuses to rewrite a broken file",
        ("plugins", "enable", "observability/relay"),
        2,
        (r"config\.yaml:3: invalid YAML",),
        {"home/config.yaml": "plugins: [unclosed\n# my notes\n"},
        keep=("home/config.yaml",),
    ),
    Case(
        "config: bad --base-url flag",
        ("chat", "-q", "hi", "--base-url", "ftp://x"),
        2,
        (r"--base-url: must be an http",),
    ),
    _plugin_case("invalid YAML", "name: [bad\n", OK_INIT, 0, r"plugin\.yaml:2: invalid YAML"),
    _plugin_case("name a list", "name: [1]\n", OK_INIT, 0, r"plugin\.yaml:1: name: must be"),
    _plugin_case("binary manifest", b"name: \xff\xfe\n", OK_INIT, 0, r"plugin\.yaml: cannot read"),
    _plugin_case(
        "register raises",
        "name: bad\n",
        "def register(ctx):\n    raise ValueError('nope')\n",
        0,
        r"bad/__init__\.py:2: ValueError: nope",
    ),
    _plugin_case(
        "syntax error", "name: bad\n", "def register(ctx) pass\n", 0, r"__init__\.py:1: SyntaxError"
    ),
    _plugin_case("no register", "name: bad\n", "x = 1\n", 0, r"no register\(ctx\) function"),
    _plugin_case(
        "bad middleware kind",
        "name: bad\n",
        "def register(ctx):\n    ctx.register_middleware('llm_teleport', lambda **kw: None)\n",
        0,
        r"unknown middleware kind 'llm_teleport'",
    ),
    _plugin_case(
        "callback not callable",
        "name: bad\n",
        "def register(ctx):\n    ctx.register_hook('pre_tool_call', 5)\n",
        0,
        r"__init__\.py:2: TypeError: callback for hook 'pre_tool_call' is not callable",
    ),
    _plugin_case(
        "exit while loading",
        "name: bad\n",
        "import sys\ndef register(ctx):\n    sys.exit(4)\n",
        4,
        r"a plugin requested exit \(code 4\)",
    ),
    _toml_case("invalid TOML", "version = 1\n[[components]\n", r"plugins\.toml:2: invalid TOML"),
    _toml_case("version", "version = 2\n", r"plugins\.toml:1: version: unsupported version 2"),
    _toml_case(
        "adaptive mode",
        'version = 1\n[[components]]\nkind = "adaptive"\n'
        '[components.config.tool_parallelism]\nmode = "warp"\n',
        r"plugins\.toml:5: tool_parallelism\.mode: must be one of",
    ),
    _toml_case(
        "atof not a table",
        'version = 1\n[[components]]\nkind = "observability"\n[components.config]\natof = 3\n',
        r"plugins\.toml:5: atof: must be a table",
    ),
    _toml_case(
        "directory not a string",
        'version = 1\n[[components]]\nkind = "observability"\n[components.config.atof]\n'
        "enabled = true\noutput_directory = 5\n",
        r"plugins\.toml:6: atof\.output_directory: must be a string",
    ),
    _toml_case(
        "parallelism not a table",
        'version = 1\n[[components]]\nkind = "adaptive"\n[components.config]\n'
        'tool_parallelism = "fast"\n',
        r"plugins\.toml:5: tool_parallelism: must be a table",
    ),
    _env_case(
        "payload limit", {"WAYLINE_PAYLOAD_MAX_CHARS": "abc"}, 0, r"WAYLINE_PAYLOAD_MAX_CHARS='abc'"
    ),
    _env_case(
        "missing pattern file",
        {"WAYLINE_REDACT_PATTERNS": "{tmp}/missing.txt"},
        0,
        r"WAYLINE_REDACT_PATTERNS=.*missing\.txt: cannot read",
    ),
    _env_case(
        "bad pattern line",
        {"WAYLINE_REDACT_PATTERNS": "{tmp}/patterns.txt"},
        0,
        r"patterns\.txt:2': invalid regex",
        patterns_dot_txt="ok_[0-9]+\n(unclosed\n",
    ),
    _env_case(
        "otel queue size", {"OTEL_BSP_MAX_QUEUE_SIZE": "many"}, 0, r"OTEL_BSP_MAX_QUEUE_SIZE: must"
    ),
    _env_case(
        "otel exporter", {"WAYLINE_OTEL_EXPORTER": "zipkin"}, 0, r"WAYLINE_OTEL_EXPORTER: must be"
    ),
    _env_case(
        "atof mode",
        {"WAYLINE_RELAY_ATOF_MODE": "sideways"},
        0,
        r"WAYLINE_RELAY_ATOF_MODE='sideways'",
    ),
    _env_case(
        "atof flag",
        {"WAYLINE_RELAY_ATOF_ENABLED": "maybe"},
        0,
        r"WAYLINE_RELAY_ATOF_ENABLED='maybe'",
    ),
    _env_case(
        "subagent mode",
        {"HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE": "bogus"},
        0,
        r"HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE='bogus'",
    ),
    _env_case(
        "template is a path",
        {"WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "a/{session_id}.json"},
        0,
        r"WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE: .* must name a file",
    ),
    _env_case(
        "template without the session",
        {"WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "one.json"},
        0,
        r"WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE: .*every session would overwrite",
    ),
    _env_case(
        "atof directory is a file",
        {"WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": "{tmp}/afile"},
        0,
        r"Failed to load plugin 'observability/relay': .*afile",
        afile="not a directory",
    ),
    _env_case(
        "home is a file", {"WAYLINE_HOME": "{tmp}/afile"}, 2, r"afile: not a directory", afile="x"
    ),
    _env_case("base url", {"WAYLINE_BASE_URL": "nope"}, 2, r"WAYLINE_BASE_URL: must be an http"),
    _script_case("invalid YAML", "rules: [\n", r"s\.yaml:2: .*"),
    _script_case(
        "unknown key",
        "rules:\n  - match: {foo: 1}\n    respond: {content: x}\n",
        r"s\.yaml:2: rules\[0\]\.match\.foo",
    ),
    _script_case(
        "status out of range",
        "default: {content: x, fault: {status: 700}}\n",
        r"s\.yaml:1: default\.fault\.status: must be between 400 and 599",
    ),
    _script_case("binary", b"\xff\xfe\x00\x01", r"s\.yaml"),
    _atof_case("empty", "", 2, r"in\.jsonl: the file is empty"),
    _atof_case("array line", EVENT + "[1,2]\n" + EVENT, 2, r"in\.jsonl:2: expected a JSON object"),
    _atof_case("garbage line", EVENT + "{oops\n" + EVENT, 2, r"in\.jsonl:2: invalid JSON"),
    _atof_case(
        "nested too deep", EVENT + "[" * 50_000 + "]" * 50_000 + "\n" + EVENT, 2, r"in\.jsonl:2:"
    ),
    Case(
        "atof: a directory",
        ("atif", "convert", "{tmp}", "-o", "{tmp}/out"),
        2,
        (r"atof_a_directory: a directory, not a file",),
    ),
]


def _fill(text: str, tmp: Path, url: str) -> str:
    return text.replace("{tmp}", str(tmp)).replace("{url}", url)


def _run_case(case: Case, root: Path, url: str) -> list[str]:
    tmp = root / re.sub(r"\W+", "_", case.name)
    (tmp / "home").mkdir(parents=True)
    for rel, content in case.files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(_fill(content, tmp, url), encoding="utf-8")
    before = {rel: (tmp / rel).read_bytes() for rel in case.keep}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "OTEL_"))}
    env.update(
        {
            "WAYLINE_HOME": str(tmp / "home"),
            "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(tmp / "atof"),
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(tmp / "atif"),
            "WAYLINE_OTEL_FILE": str(tmp / "otel" / "spans.jsonl"),
        }
    )
    env.update({k: _fill(v, tmp, url) for k, v in case.env.items()})
    argv = [_fill(a, tmp, url) for a in case.argv]
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "wayline", *argv],
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        return [f"{case.name}: did not finish"]
    problems: list[str] = []
    if proc.returncode != case.code:
        problems.append(f"{case.name}: exit {proc.returncode}, want {case.code}")
    if "Traceback" in proc.stderr or "Traceback" in proc.stdout:
        problems.append(f"{case.name}: a traceback reached the user")
    for pattern in case.says:
        if not re.search(pattern, proc.stderr):
            problems.append(f"{case.name}: stderr lacks /{pattern}/")
    if case.stdout is not None and proc.stdout.strip() != case.stdout:
        problems.append(f"{case.name}: stdout {proc.stdout.strip()[:100]!r}")
    for rel, data in before.items():
        if (tmp / rel).read_bytes() != data:
            problems.append(f"{case.name}: {rel} was changed")
    if problems:
        problems.append(f"    stderr: {proc.stderr.strip()[-600:]}")
    return problems


@pytest.mark.timeout(600)
def test_bad_input_gets_one_clear_error(tmp_path: Path) -> None:
    """Every malformed input: the documented exit code, a line naming it, no traceback."""
    script = {"model": "scripted-model", "default": {"content": "ok"}}
    with ScriptedServer(script) as server, ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda c: _run_case(c, tmp_path, server.base_url), CASES))
    problems = [p for r in results for p in r]
    bad = sum(1 for r in results if r)
    record("malformed_cases", "malformed input: hand-written cases", len(CASES), ">=", 50)
    record("malformed_bad", "malformed input: cases without one clear error", bad)
    assert not problems, "\n".join(problems)


def test_converter_keeps_trajectories_written_before_a_bad_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bad line after a finished session: exit 1 naming the line, the session's file stays."""
    out = Outputs(tmp_path / "out")
    for key, value in out.env().items():
        monkeypatch.setenv(key, value)
    home = tmp_path / "home"
    home.mkdir()
    with ScriptedServer({"model": "scripted-model", "default": {"content": "ok"}}) as server:
        write_config(home, server.base_url, plugins=("observability/relay",))
        runtime = build_runtime(home)
        agent = runtime.agent(cwd=tmp_path)
        agent.run_turn("hello")
        agent.finalize()
    assert not outputs_problems(out, runtime)
    good = out.atof.read_text(encoding="utf-8")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(good + "{not json\n" + good, encoding="utf-8")
    line = good.count("\n") + 1
    converted = tmp_path / "converted"
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "atif", "convert", str(broken), "-o", str(converted)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and f"broken.jsonl:{line}: invalid JSON" in proc.stderr
    assert "Traceback" not in proc.stderr
    files = sorted(converted.glob("*.json"))
    assert len(files) == 1, proc.stderr
    assert validate_trajectory(json.loads(files[0].read_text(encoding="utf-8"))) == []


def _managed_runtime(
    tmp_path: Path, server: ScriptedServer, monkeypatch: Any
) -> tuple[Any, Outputs]:
    out = Outputs(tmp_path / "out")
    toml = tmp_path / "plugins.toml"
    toml.write_text(
        'version = 1\n[[components]]\nkind = "observability"\n[components.config.atof]\n'
        f'enabled = true\noutput_directory = "{out.atof.parent}"\nfilename = "{out.atof.name}"\n'
        f'[components.config.atif]\nenabled = true\noutput_directory = "{out.atif}"\n'
        '[[components]]\nkind = "adaptive"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("WAYLINE_RELAY_PLUGINS_TOML", str(toml))
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, server.base_url, plugins=("observability/relay",))
    return build_runtime(home), out


def test_intercept_returning_garbage_fails_its_call_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relay LLM request intercept returning garbage: the call fails naming it; files balance."""
    from wayline.relay import intercepts

    script = {"model": "scripted-model", "default": {"content": "ok"}}
    with ScriptedServer(script) as server:
        runtime, out = _managed_runtime(tmp_path, server, monkeypatch)
        intercepts.register_llm_request("garbage_outcome", 1, False, lambda *a: {"not": "it"})
        try:
            agent = runtime.agent(cwd=tmp_path)
            result = agent.run_turn("hello")
            agent.finalize()
        finally:
            intercepts.deregister_llm_request("garbage_outcome")
        assert not server.requests, "the refused call reached the provider"
    assert result.reason == "api_error" and "(rejected)" in result.text
    assert "garbage_outcome" in result.text and "LLMRequestInterceptOutcome" in result.text
    assert not outputs_problems(out, runtime)


def test_tool_intercept_returning_garbage_fails_the_tool_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relay tool execution intercept returning garbage: that tool call errors, naming it."""
    from wayline.relay import intercepts

    script = {
        "model": "scripted-model",
        "rules": [
            {
                "match": {},
                "turns": [
                    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                    {"content": "done"},
                ],
            }
        ],
    }
    (tmp_path / "a.txt").write_text("alpha\n")
    with ScriptedServer(script) as server:
        runtime, out = _managed_runtime(tmp_path, server, monkeypatch)
        intercepts.register_tool_execution("garbage_tool", 1, lambda ctx, nxt: "not an outcome")
        try:
            agent = runtime.agent(cwd=tmp_path)
            result = agent.run_turn("read it")
            agent.finalize()
        finally:
            intercepts.deregister_tool_execution("garbage_tool")
    assert result.text == "done"
    tool = next(m for m in agent.messages if m["role"] == "tool")
    assert "garbage_tool" in tool["content"] and "ToolExecutionInterceptOutcome" in tool["content"]
    assert not outputs_problems(out, runtime)
