"""Settings, registration through the real plugin loader, privacy switches, Hermes payloads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import metrics, trace
from otel_support import DELEGATE_PARALLEL, attrs

import wayline.plugins.observability.otel as otel_pkg
from wayline.host.manager import PluginManager
from wayline.plugins.observability.otel.plugin import OtelPlugin
from wayline.plugins.observability.otel.settings import OtelConfigError, load_settings
from wayline.runtime import build_runtime

SECRET = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678"


# -- settings -------------------------------------------------------------------------------
def test_defaults_write_files_under_home_and_send_nothing(tmp_path: Path) -> None:
    """With nothing configured: JSON lines under $WAYLINE_HOME/otel, content on, history off."""
    s = load_settings({}, env={"WAYLINE_HOME": str(tmp_path)})
    assert s.exporter == "file" and s.file == tmp_path / "otel" / "spans.jsonl"
    assert s.metrics_file == tmp_path / "otel" / "spans.metrics.jsonl"
    assert s.capture_content and not s.capture_conversation_history
    assert s.service_name == "wayline" and s.traces_endpoint() is None


def test_environment_precedence() -> None:
    """WAYLINE_OTEL_* beat OTEL_* which beat config.yaml; an OTLP endpoint alone picks otlp."""
    cfg = {"exporter": "console", "service_name": "from-config"}
    assert load_settings(cfg, env={}).exporter == "console"
    assert load_settings(cfg, env={"OTEL_TRACES_EXPORTER": "otlp"}).exporter == "otlp"
    env = {
        "OTEL_TRACES_EXPORTER": "otlp",
        "WAYLINE_OTEL_EXPORTER": "file",
        "WAYLINE_OTEL_FILE": "/tmp/x/s.jsonl",
    }
    s = load_settings(cfg, env=env)
    assert s.exporter == "file" and s.file == Path("/tmp/x/s.jsonl")
    s = load_settings({}, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert s.exporter == "otlp"
    explicit = load_settings({"exporter": "file"}, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"})
    assert explicit.exporter == "file"
    assert load_settings(cfg, env={"OTEL_SERVICE_NAME": "svc"}).service_name == "svc"
    assert not load_settings({}, env={"OTEL_METRICS_EXPORTER": "none"}).metrics
    assert load_settings({}, env={"OTEL_BSP_MAX_QUEUE_SIZE": "7"}).max_queue_size == 7
    assert not load_settings({}, env={"OTEL_SDK_DISABLED": "true"}).enabled


def test_endpoint_and_header_interpolation() -> None:
    """A base endpoint gets the signal path; ${VAR} in headers comes from the environment."""
    s = load_settings(
        {
            "endpoint": "http://127.0.0.1:6006/v1/traces",
            "headers": {"authorization": "Bearer ${T}"},
        },
        env={"T": "tok"},
    )
    assert s.traces_endpoint() == "http://127.0.0.1:6006/v1/traces"
    assert s.metrics_endpoint() == "http://127.0.0.1:6006/v1/metrics"
    assert s.headers == {"authorization": "Bearer tok"}
    with pytest.raises(OtelConfigError, match=r"headers: \$\{T\} is not set"):
        load_settings({"headers": {"a": "${T}"}}, env={})


@pytest.mark.parametrize(
    ("config", "env", "message"),
    [
        ({"exporer": "file"}, {}, r"observability/otel\.exporer: unknown setting"),
        ({"exporter": "jaeger"}, {}, r"observability/otel\.exporter: must be one of"),
        ({}, {"WAYLINE_OTEL_EXPORTER": "x"}, r"WAYLINE_OTEL_EXPORTER: must be one of"),
        ({"capture_content": "maybe"}, {}, r"capture_content: must be true or false"),
        ({"content_max_chars": "lots"}, {}, r"content_max_chars: must be an integer"),
        ({"max_queue_size": 0}, {}, r"max_queue_size: must be at least 1"),
        ({"sample_rate": 2}, {}, r"sample_rate: must be a number from 0 to 1"),
        ({"headers": ["a"]}, {}, r"headers: must be a mapping"),
        ({}, {"OTEL_BSP_SCHEDULE_DELAY": "soon"}, r"OTEL_BSP_SCHEDULE_DELAY: must be an integer"),
    ],
)
def test_bad_settings_name_the_field(
    config: dict[str, Any], env: dict[str, str], message: str
) -> None:
    """Every bad value is reported with the config path or variable that holds it."""
    with pytest.raises(OtelConfigError, match=message):
        load_settings(config, env=env)


def test_bad_config_fails_plugin_load_with_the_field(home: Path) -> None:
    """A bad section in config.yaml becomes the plugin's load error; the host carries on."""
    (home / "config.yaml").write_text(
        "plugins:\n  enabled: [observability/otel]\n"
        "  entries:\n    observability/otel:\n      exporter: zipkin\n"
    )
    manager = PluginManager(home)
    manager.discover_and_load()
    row = manager.plugins["observability/otel"].row()
    assert not row["loaded"] and "observability/otel.exporter: must be one of" in row["error"]
    assert manager.instance("observability/otel") is None


# -- registration through the loader -----------------------------------------------------------
def test_loader_registers_hooks_and_writes_spans(
    scripted_server: Any, home: Path, tmp_path: Path, workdir: Path
) -> None:
    """Enabled in config.yaml, the plugin registers its hooks; a run lands in the span file."""
    spans_file = tmp_path / "spans.jsonl"
    srv = scripted_server(DELEGATE_PARALLEL)
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {srv.base_url}\n"
        "plugins:\n  enabled: [observability/otel]\n"
        "  entries:\n    observability/otel:\n      exporter: console\n"
        "      service_name: from-config\n"
    )
    tracer_provider = trace.get_tracer_provider()
    meter_provider = metrics.get_meter_provider()
    os.environ["WAYLINE_OTEL_EXPORTER"] = "file"  # what `wayline demo` sets; wins over config
    os.environ["WAYLINE_OTEL_FILE"] = str(spans_file)
    try:
        rt = build_runtime(home)
    finally:
        del os.environ["WAYLINE_OTEL_EXPORTER"], os.environ["WAYLINE_OTEL_FILE"]
    try:
        row = rt.manager.plugins["observability/otel"].row()
        assert row["loaded"] and row["error"] is None
        assert set(row["hooks"]) == {
            "on_session_start",
            "on_session_end",
            "on_session_finalize",
            "pre_llm_call",
            "post_llm_call",
            "pre_api_request",
            "post_api_request",
            "api_request_error",
            "pre_tool_call",
            "post_tool_call",
            "pre_approval_request",
            "post_approval_response",
            "subagent_start",
            "subagent_stop",
        }
        plugin = rt.manager.instance("observability/otel")
        assert isinstance(plugin, OtelPlugin)
        assert plugin.settings.service_name == "from-config"
        agent = rt.agent(cwd=workdir)
        agent.run_turn("delegate please")
        agent.finalize()
    finally:
        rt.manager.close_instances()
    # the plugin's providers are private: the global ones are untouched
    assert trace.get_tracer_provider() is tracer_provider
    assert metrics.get_meter_provider() is meter_provider
    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    assert {s["context"]["trace_id"] for s in spans} == {spans[0]["context"]["trace_id"]}
    assert spans[0]["resource"]["attributes"]["service.name"] == "from-config"
    assert sorted(s["name"] for s in spans if s["parent_id"] is None) == ["agent"]


def test_importing_the_plugin_does_not_import_opentelemetry() -> None:
    """`wayline --help` / `plugins list` stay fast: OpenTelemetry loads only in register()."""
    code = (
        "import sys, wayline.plugins.observability.otel as m; "
        "print(any(k.startswith('opentelemetry') for k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_extra_registers_nothing_and_warns_once(home: Path) -> None:
    """Without the otel extra the plugin loads, registers no hook, and logs one warning."""
    (home / "config.yaml").write_text("plugins:\n  enabled: [observability/otel]\n")
    code = (
        "import sys, logging\n"
        "sys.modules['opentelemetry'] = None  # what a missing extra looks like to imports\n"
        "logging.basicConfig(level=logging.WARNING)\n"
        "from wayline.host.manager import PluginManager\n"
        f"m = PluginManager(__import__('pathlib').Path({str(home)!r}))\n"
        "m.discover_and_load()\n"
        "row = m.plugins['observability/otel'].row()\n"
        "print(row['loaded'], row['hooks'], m.hooks.names())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "True [] []"
    assert proc.stderr.count("OpenTelemetry is not installed") == 1


def test_exporter_none_registers_nothing(home: Path) -> None:
    """`exporter: none` disables the plugin entirely: no hook, no cost."""
    (home / "config.yaml").write_text(
        "plugins:\n  enabled: [observability/otel]\n"
        "  entries:\n    observability/otel:\n      exporter: none\n"
    )
    manager = PluginManager(home)
    manager.discover_and_load()
    assert manager.plugins["observability/otel"].loaded and manager.hooks.names() == []


# -- sampling, privacy, bounds -----------------------------------------------------------------
def test_env_sampler_always_off_exports_no_spans(
    otel_runtime: Any, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTEL_TRACES_SAMPLER=always_off: no spans, the run is unaffected, metrics still flow."""
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    rt, otel = otel_runtime(DELEGATE_PARALLEL, sample_rate=1.0)
    assert rt.agent(cwd=workdir).run_turn("delegate please").text == "parent done"
    assert otel.spans().spans == []
    assert any(p.metric == "hermes.tool.calls" for p in otel.points())


def test_secrets_never_reach_attributes(otel_runtime: Any, workdir: Path) -> None:
    """Secret-looking text and credential keys are redacted in every exported attribute."""
    script = {
        "rules": [
            {
                "match": {},
                "turns": [
                    {
                        "tool_calls": [
                            {
                                "name": "read_file",
                                "arguments": {"path": "a.txt", "api_key": "hunter2-very-secret"},
                            }
                        ]
                    },
                    {"content": f"your key {SECRET} is set"},
                ],
            }
        ]
    }
    rt, otel = otel_runtime(script)
    rt.agent(cwd=workdir).run_turn(f"use my key {SECRET} please")
    view = otel.spans()
    dump = json.dumps([attrs(s) for s in view.spans], default=str)
    assert SECRET not in dump and "hunter2-very-secret" not in dump
    assert "<redacted>" in dump
    tool_args = json.loads(str(attrs(view.one("tool.read_file"))["input.value"]))
    assert tool_args == {"path": "a.txt", "api_key": "<redacted>"}


def test_content_is_capped(make_otel: Any) -> None:
    """Long content is clipped to content_max_chars with an explicit truncation marker."""
    otel = make_otel(content_max_chars=1000)
    otel.observer.pre_llm_call(session_id="s", turn_id="s:t", model="m", user_message="x" * 9000)
    otel.observer.on_session_end(session_id="s", turn_id="s:t", completed=True)
    value = str(attrs(otel.spans().one("llm.m"))["input.value"])
    assert value.startswith("x" * 1000) and value.endswith("...[truncated 8000 chars]")


def test_capture_content_off_sets_no_content(otel_runtime: Any, workdir: Path) -> None:
    """capture_content=false: no message, argument, result, command or goal on any span."""
    rt, otel = otel_runtime(DELEGATE_PARALLEL, capture_content=False)
    rt.agent(cwd=workdir).run_turn("delegate please")
    view = otel.spans()
    content_keys = {
        "input.value",
        "output.value",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "hermes.tool.command",
        "hermes.subagent.goal",
        "hermes.subagent.summary",
    }
    assert len(view.spans) > 5
    assert not content_keys & {k for s in view.spans for k in attrs(s)}


def test_conversation_history_capture(otel_runtime: Any, workdir: Path) -> None:
    """capture_conversation_history: llm input.value is the JSON history, with its size."""
    rt, otel = otel_runtime(
        {"default": {"content": "ok"}}, capture_conversation_history=True, history_max_chars=5000
    )
    agent = rt.agent(cwd=workdir)
    agent.run_turn("first")
    agent.run_turn("second")
    second = otel.spans().named("llm.scripted-model")[1]
    a = attrs(second)
    messages = json.loads(str(a["input.value"]))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[-1]["content"] == "second" and a["hermes.conversation.message_count"] == 4
    assert a["input.mime_type"] == "application/json"


# -- Hermes payload differences ------------------------------------------------------------------
class HermesCtx:
    """What Hermes 0.19.0 hands to register(ctx): register_hook and a manifest, no config."""

    def __init__(self) -> None:
        self.hooks: dict[str, Any] = {}

    def register_hook(self, name: str, callback: Any) -> None:
        """Store the callback as Hermes' plugin manager would."""
        self.hooks[name] = callback


def test_hermes_shaped_payloads_build_one_connected_tree(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hermes: no ctx.config, retries reusing api_request_id, subagent_stop without
    child_subagent_id, on_session_end per turn, an exit-time on_session_end without turn_id,
    no on_session_finalize."""
    spans_file = tmp_path / "hermes.jsonl"
    monkeypatch.setenv("WAYLINE_OTEL_EXPORTER", "file")
    monkeypatch.setenv("WAYLINE_OTEL_FILE", str(spans_file))
    ctx = HermesCtx()
    plugin = otel_pkg.register(ctx)
    assert plugin is not None

    def hermes_call(callback: Any) -> Any:
        # Hermes' invoke_hook adds telemetry_schema_version to every payload.
        return lambda **kw: callback(telemetry_schema_version="hermes.observer.v1", **kw)

    h = {name: hermes_call(cb) for name, cb in ctx.hooks.items()}
    sid, child = "20261121_204400_005564", "20261121_204401_abcdef"
    turn = f"{sid}:task:0badcafe"
    rid = f"{turn}:api:1"
    base = {"session_id": sid, "task_id": "task", "turn_id": turn, "platform": "cli", "model": "m"}
    try:
        h["on_session_start"](session_id=sid, model="m", platform="cli")
        h["pre_llm_call"](
            **base, user_message="hi", conversation_history=[], is_first_turn=True, sender_id=""
        )
        h["pre_api_request"](**base, api_request_id=rid, provider="custom", api_call_count=1)
        h["api_request_error"](
            **base,
            api_request_id=rid,
            status_code=500,
            retry_count=0,
            max_retries=3,
            retryable=True,
            reason="server_error",
            error={"type": "InternalServerError", "message": "boom"},
        )
        h["pre_api_request"](**base, api_request_id=rid, provider="custom", api_call_count=1)
        h["post_api_request"](**base, api_request_id=rid, usage={"input_tokens": 9})
        h["pre_tool_call"](
            **base,
            api_request_id=rid,
            tool_name="delegate_task",
            tool_call_id="call_1",
            args={"goal": "g"},
        )
        h["subagent_start"](
            parent_session_id=sid,
            parent_turn_id=turn,
            parent_subagent_id=None,
            child_session_id=child,
            child_subagent_id="sa-0-1",
            child_role="leaf",
            child_goal="g",
        )
        cturn = f"{child}:sa-0-1:12345678"
        h["on_session_start"](session_id=child, model="m", platform="subagent")
        h["pre_llm_call"](
            session_id=child,
            task_id="sa-0-1",
            turn_id=cturn,
            model="m",
            platform="subagent",
            user_message="g",
        )
        h["on_session_end"](
            session_id=child,
            task_id="sa-0-1",
            turn_id=cturn,
            completed=True,
            interrupted=False,
            model="m",
            platform="subagent",
        )
        h["subagent_stop"](
            parent_session_id=sid,
            parent_turn_id=turn,
            child_session_id=child,
            child_role="leaf",
            child_summary="done",
            child_status="completed",
            duration_ms=5,
        )
        h["post_tool_call"](
            **base,
            api_request_id=rid,
            tool_name="delegate_task",
            tool_call_id="call_1",
            result="{}",
            duration_ms=6,
            status="ok",
        )
        h["post_llm_call"](**base, user_message="hi", assistant_response="bye")
        h["on_session_end"](**base, completed=True, interrupted=False)
        # the next turn: no on_session_start (Hermes fires it once per session)
        turn2 = f"{sid}:task:feedf00d"
        h["pre_llm_call"](**{**base, "turn_id": turn2}, user_message="more")
        h["on_session_end"](**{**base, "turn_id": turn2}, completed=True, interrupted=False)
        h["on_session_end"](
            session_id=sid,
            completed=False,
            interrupted=True,
            model="m",
            platform="cli",
            reason="shutdown",
        )
    finally:
        plugin.shutdown()
    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    by_id = {s["context"]["span_id"]: s for s in spans}
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 2  # one per parent turn; the child rejoined the first
    first_trace = {
        s["context"]["trace_id"]
        for s in spans
        if s["context"]["trace_id"] == roots[0]["context"]["trace_id"]
    }
    assert len(first_trace) == 1

    def parent_name(name: str) -> str:
        (span,) = [s for s in spans if s["name"] == name and s["parent_id"] is not None][:1]
        return str(by_id[span["parent_id"]]["name"])

    assert parent_name("subagent.leaf") == "api.m"
    (delegation,) = [s for s in spans if s["name"] == "subagent.leaf"]
    # Hermes names no parent_tool_call_id: the open delegate_task call is the delegating one
    assert delegation["attributes"]["gen_ai.tool.call.id"] == "call_1"
    assert parent_name("tool.delegate_task") == "api.m"
    child_root = [s for s in spans if s["name"] == "agent" and s["parent_id"] is not None]
    assert len(child_root) == 1 and by_id[child_root[0]["parent_id"]]["name"] == "subagent.leaf"
    apis = [s for s in spans if s["name"] == "api.m"]
    assert [a["status"]["status_code"] for a in apis] == ["ERROR", "OK"]
    second_root = roots[1] if roots[1]["attributes"].get("hermes.session.synthesized") else roots[0]
    assert second_root["attributes"]["hermes.session.synthesized"] is True


def test_logging_shutdown_then_os_exit_still_exports(tmp_path: Path) -> None:
    """`hermes -z` leaves via logging.shutdown() + os._exit: open spans are still written."""
    spans_file = tmp_path / "exit.jsonl"
    code = (
        "import logging, logging.config, os\n"
        "import wayline.plugins.observability.otel as otel\n"
        "hooks = {}\n"
        "class Ctx:\n"
        "    def register_hook(self, name, cb):\n"
        "        hooks.setdefault(name, []).append(cb)\n"
        "def fire(name, **kw):\n"
        "    for cb in hooks[name]:\n"
        "        cb(**kw)\n"
        "plugin = otel.register(Ctx())\n"
        "logging.config.dictConfig({'version': 1})  # a reconfiguration is not an exit\n"
        "assert plugin is not None and not plugin._closed\n"
        "fire('on_session_start', session_id='s', model='m')  # re-arms the sentinel\n"
        "fire('pre_llm_call', session_id='s', turn_id='s:t', model='m', user_message='hi')\n"
        "logging.shutdown()\n"
        "os._exit(0)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WAYLINE_OTEL_"))}
    env.update(WAYLINE_OTEL_EXPORTER="file", WAYLINE_OTEL_FILE=str(spans_file))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    spans = {s["name"]: s for s in map(json.loads, spans_file.read_text().splitlines())}
    assert set(spans) == {"agent", "llm.m"}
    assert spans["agent"]["attributes"]["hermes.turn.final_status"] == "incomplete"
