"""One real session recorded every way at once: the hook stream, ATOF, ATIF and OTel spans.

A session runs through ``wayline.Agent`` against the scripted server with both
observability plugins (relay by name, writing ATOF and ATIF into a temporary directory;
OTel as an in-memory instance of the real plugin), a plugin of the test's own that keeps a
deep copy of every hook payload, a ``tool_request`` middleware that rewrites an argument
with a reason and an ``llm_request`` middleware that sets ``temperature``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import wayline
from wayline.contract.hooks import HOOK_SPECS
from wayline.plugins.observability.otel.plugin import OtelPlugin, create
from wayline.plugins.observability.otel.settings import load_settings
from wayline.plugins.observability.relay import RelayPlugin
from wayline.relay.atof import read_events
from wayline.testing import ScriptedServer

#: Hooks that act on their return value: the recorder observes them and returns None.
_ALL_HOOKS = sorted(HOOK_SPECS)

CHILD_MARK = "CHILD"
REWRITE_SOURCE = "fx-policy"
REWRITE_REASON = "settle in USD only"
TEMPERATURE_SOURCE = "tuner"
TEMPERATURE = 0.25


BAD_CURRENCY = "XXX"


def convert(amount: float, currency: str) -> str:
    """Convert an amount (the test's tool: its result shows which currency ran; the
    currency ``XXX`` fails, so sessions have failed calls too)."""
    if currency == BAD_CURRENCY:
        raise ValueError(f"no rate for {currency}")
    return f"{amount:.2f} {currency}"


CONVERT = wayline.Tool(convert, parallel_safe=True)


def usd_only(**kw: Any) -> dict[str, Any] | None:
    """tool_request middleware: EUR and GBP are rewritten to USD, with a reason."""
    if kw.get("tool_name") != "convert" or kw["args"].get("currency") not in ("EUR", "GBP"):
        return None
    return {
        "args": {**kw["args"], "currency": "USD"},
        "source": REWRITE_SOURCE,
        "reason": REWRITE_REASON,
    }


def cooler(**kw: Any) -> dict[str, Any]:
    """llm_request middleware: every model call runs with a fixed temperature."""
    return {
        "request": {**kw["request"], "temperature": TEMPERATURE},
        "source": TEMPERATURE_SOURCE,
        "reason": "steadier answers",
    }


@dataclass
class HookRecorder:
    """A plugin of the test's own: a deep copy of every hook payload, in call order."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    times: list[int] = field(default_factory=list)  # time.time_ns() of each call
    lock: threading.Lock = field(default_factory=threading.Lock)

    def register(self, ctx: Any) -> None:
        """Plugin entry point: observe every hook the runtime emits."""
        for name in _ALL_HOOKS:
            ctx.register_hook(name, self._recorder(name))

    def _recorder(self, name: str) -> Any:
        def record(**kw: Any) -> None:
            now = time.time_ns()
            payload = copy.deepcopy(kw)
            with self.lock:
                self.calls.append((name, payload))
                self.times.append(now)

        record.__name__ = name
        return record

    def of(self, name: str) -> list[dict[str, Any]]:
        """The payloads of one hook, in call order."""
        return [payload for hook, payload in self.calls if hook == name]


@dataclass
class OtelAdapter:
    """Registers an in-memory OTel plugin instance like the bundled plugin registers itself."""

    plugin: OtelPlugin

    def register(self, ctx: Any) -> None:
        """Plugin entry point: the plugin's own (queued) hook callbacks."""
        for name, callback in self.plugin.hooks().items():
            ctx.register_hook(name, callback)


@dataclass
class Recording:
    """Everything one session left behind."""

    hooks: HookRecorder
    events: list[dict[str, Any]]
    atif: dict[str, Any]
    atif_path: Path
    atof_path: Path
    spans: list[ReadableSpan]
    session_id: str


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def record_session(directory: Path, script: dict[str, Any], user_turns: list[str]) -> Recording:
    """Run ``user_turns`` through one agent with everything recording; return the records."""
    out = directory / "out"
    home = directory / "home"
    home.mkdir(parents=True)
    exporter = InMemorySpanExporter()
    otel = create(
        load_settings({"schedule_delay_ms": 50}, env={}),
        span_exporter=exporter,
        metric_reader=InMemoryMetricReader(),
        env={},
    )
    hooks = HookRecorder()
    env = {
        "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
        "WAYLINE_RELAY_ATOF_FILENAME": "events.jsonl",
        "WAYLINE_RELAY_ATOF_MODE": "overwrite",
        "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        "WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE": "trajectory-{session_id}.json",
    }
    try:
        with (
            _env(env),
            ScriptedServer(script) as model,
            wayline.Agent(
                model="m",
                base_url=model.base_url,
                tools=[CONVERT],
                toolsets=["delegation"],
                home=home,
                plugins=["observability/relay", OtelAdapter(otel), hooks],
                yolo=True,
            ) as agent,
        ):
            relay = agent.plugin("observability/relay")
            assert isinstance(relay, RelayPlugin)
            agent.use("tool_request", usd_only)
            agent.use("llm_request", cooler)
            for text in user_turns:
                agent.run(text)
        # The agent's close finalized the session and closed its relay instance: every hook
        # it queued has reached the files.
        assert relay.drain()
        assert otel.force_flush(10_000)
    finally:
        otel.shutdown()
    (start,) = [p for p in hooks.of("on_session_start") if not p.get("parent_session_id")]
    session = str(start["session_id"])
    atif_path = out / "atif" / f"trajectory-{session}.json"
    atof_path = out / "atof" / "events.jsonl"
    return Recording(
        hooks=hooks,
        events=read_events(atof_path, sort=False),
        atif=json.loads(atif_path.read_text(encoding="utf-8")),
        atif_path=atif_path,
        atof_path=atof_path,
        spans=list(exporter.get_finished_spans()),
        session_id=session,
    )


def batch(prefix: str, currencies: list[str]) -> dict[str, Any]:
    """A scripted model turn asking for one ``convert`` call per currency (one batch)."""
    return {
        "tool_calls": [
            {
                "name": "convert",
                "id": f"{prefix}_{i}",
                "arguments": {"amount": i + 1, "currency": currency},
            }
            for i, currency in enumerate(currencies)
        ]
    }


def delegate(call_id: str, goal: str) -> dict[str, Any]:
    """A scripted model turn delegating ``goal`` to a child agent."""
    return {
        "tool_calls": [
            {
                "name": "delegate_task",
                "id": call_id,
                "arguments": {"goal": goal},
            }
        ]
    }
