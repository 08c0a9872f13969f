"""Shared helpers of the reliability suite: scale, figures, a hook probe, output checks.

``WAYLINE_RELIABILITY_SCALE=full`` selects the long counts (``make reliability``); anything
else the small ones ``make test`` runs. When ``WAYLINE_RELIABILITY_FIGURES`` names a directory,
every :func:`record` call also writes its figure there as JSON for ``report.py`` to print.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wayline.contract.hooks import EMITTED_HOOKS
from wayline.host.manager import PluginManager
from wayline.relay.atif.validate import validate_trajectory
from wayline.relay.atof import validate_atof
from wayline.runtime import Runtime

SCALE_ENV = "WAYLINE_RELIABILITY_SCALE"
FIGURES_ENV = "WAYLINE_RELIABILITY_FIGURES"
HERE = Path(__file__).resolve().parent
CHAOS_PLUGIN_DIR = HERE / "chaos_plugin"
LEAKY_PLUGIN_DIR = HERE / "leaky_plugin"


def full_scale() -> bool:
    """True for the long variants (``make reliability``)."""
    return os.environ.get(SCALE_ENV, "").strip().lower() in ("full", "long", "1")


def scaled(small: int, full: int) -> int:
    """``full`` under the long scale, else ``small``."""
    return full if full_scale() else small


@dataclass(frozen=True)
class Figure:
    """One reported number with its goal."""

    key: str
    label: str
    value: int
    op: str  # "==", "<=" or ">="
    goal: int

    @property
    def ok(self) -> bool:
        """Whether the value meets the goal."""
        if self.op == "==":
            return self.value == self.goal
        if self.op == "<=":
            return self.value <= self.goal
        return self.value >= self.goal


def record(key: str, label: str, value: int, op: str = "==", goal: int = 0) -> Figure:
    """Make a figure and, when the report asked for it, write it to the figures directory."""
    figure = Figure(key, label, int(value), op, int(goal))
    target = os.environ.get(FIGURES_ENV)
    if target:
        path = Path(target)
        path.mkdir(parents=True, exist_ok=True)
        data = {**asdict(figure), "ok": figure.ok, "scale": "full" if full_scale() else "small"}
        (path / f"{key}.json").write_text(json.dumps(data), encoding="utf-8")
    return figure


# -- a probe that records every hook ----------------------------------------------------------


@dataclass
class Probe:
    """Records (hook, a few ids) for every emitted hook; registered last on a bus."""

    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    KEEP = (
        "session_id",
        "tool_call_id",
        "api_request_id",
        "api_call_count",
        "tool_name",
        "status",
        "parent_session_id",
        "child_session_id",
        "child_status",
        "reason",
        "completed",
        "interrupted",
        "status_code",
        "retryable",
        "retry_count",
        "choice",
        "command",
    )

    def attach(self, hooks: Any, names: Iterable[str] = EMITTED_HOOKS) -> None:
        """Subscribe to ``names`` on the hook bus ``hooks``."""
        for name in sorted(names):
            hooks.register(name, self._make(name), "probe")

    def _make(self, name: str) -> Callable[..., None]:
        keep = self.KEEP

        def on_hook(**kw: Any) -> None:
            item = {k: kw[k] for k in keep if k in kw}
            with self.lock:
                self.events.append((name, item))

        return on_hook

    def of(self, name: str) -> list[dict[str, Any]]:
        """Payload extracts of every ``name`` hook, in order."""
        with self.lock:
            return [kw for n, kw in self.events if n == name]

    def family(self, root: str) -> list[str]:
        """``root`` and every session delegated from it (transitively)."""
        out, todo = [root], [root]
        starts = self.of("subagent_start")
        while todo:
            parent = todo.pop()
            for kw in starts:
                child = kw.get("child_session_id")
                if kw.get("parent_session_id") == parent and child and child not in out:
                    out.append(child)
                    todo.append(child)
        return out


# -- output checks ----------------------------------------------------------------------------


@dataclass
class AtofCheck:
    """What an ATOF file holds: validation problems and unbalanced scopes."""

    events: int = 0
    problems: list[str] = field(default_factory=list)
    unclosed: list[str] = field(default_factory=list)
    scopes: dict[str, dict[str, Any]] = field(default_factory=dict)
    parents: dict[str, str | None] = field(default_factory=dict)
    lines: list[dict[str, Any]] = field(default_factory=list)


def check_atof(path: Path) -> AtofCheck:
    """Validate an ATOF file and list scope starts that never end."""
    out = AtofCheck()
    if not path.exists():
        return out
    out.problems = validate_atof(path)
    starts: dict[str, dict[str, Any]] = {}
    ended: set[str] = set()
    for raw in path.read_bytes().splitlines():
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            continue  # validate_atof reported it
        out.events += 1
        out.lines.append(event)
        if event.get("kind") != "scope":
            continue
        if event.get("scope_category") == "start":
            starts[event["uuid"]] = event
            out.parents[event["uuid"]] = event.get("parent_uuid")
        elif event.get("scope_category") == "end":
            ended.add(event["uuid"])
    out.scopes = starts
    out.unclosed = [u for u in starts if u not in ended]
    return out


def check_atif_dir(directory: Path) -> tuple[int, list[str]]:
    """(files checked, one line per invalid file) for every ``*.json`` ATIF file in a dir."""
    import atif  # the third-party pydantic models, a second opinion on validity

    bad: list[str] = []
    files = sorted(p for p in directory.glob("*.json") if not p.name.startswith("."))
    for path in files:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            bad.append(f"{path.name}: not JSON: {exc}")
            continue
        problems = [str(p) for p in validate_trajectory(document)]
        if problems:
            bad.append(f"{path.name}: {problems[:3]}")
            continue
        try:
            atif.Trajectory.model_validate(document)
        except Exception as exc:
            bad.append(f"{path.name}: atif.Trajectory: {str(exc)[:300]}")
    return len(files), bad


def read_spans(path: Path) -> list[dict[str, Any]]:
    """Spans of an OTel JSON-lines file (``ReadableSpan.to_json`` per line)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def orphan_spans(spans: list[dict[str, Any]]) -> list[str]:
    """Spans whose parent span was never exported (orphaned), as ``name (trace)`` strings."""
    ids = {s["context"]["span_id"] for s in spans}
    return [
        f"{s['name']} (parent {s['parent_id']})"
        for s in spans
        if s.get("parent_id") and s["parent_id"] not in ids
    ]


def unfinished_spans(spans: list[dict[str, Any]]) -> list[str]:
    """Spans exported without an end time."""
    return [s["name"] for s in spans if not s.get("end_time")]


# -- tool-result pairing ----------------------------------------------------------------------


def pairing_problems(messages: list[dict[str, Any]], where: str) -> list[str]:
    """Tool calls of assistant messages without exactly one answering tool message, and strays."""
    problems: list[str] = []
    wanted: Counter[str] = Counter()
    answered: Counter[str] = Counter()
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    wanted[str(call.get("id"))] += 1
        elif message.get("role") == "tool":
            answered[str(message.get("tool_call_id"))] += 1
    for call_id, n in wanted.items():
        if n != 1 or answered[call_id] != 1:
            problems.append(
                f"{where}: tool call {call_id} made {n}x, answered {answered[call_id]}x"
            )
    for call_id in answered:
        if call_id not in wanted:
            problems.append(f"{where}: tool result {call_id} answers no call")
    return problems


def store_messages(home: Path, session_id: str) -> list[dict[str, Any]]:
    """A stored transcript (torn last line skipped)."""
    path = home / "sessions" / f"{session_id}.jsonl"
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


# -- homes and plugins ------------------------------------------------------------------------


def install_plugin(home: Path, source: Path, name: str) -> None:
    """Copy the plugin directory ``source`` to ``home/plugins/<name>/``, named ``name``."""
    target = home / "plugins" / name
    if target.exists():
        return
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = (target / "plugin.yaml").read_text(encoding="utf-8")
    lines = [f"name: {name}" if ln.startswith("name:") else ln for ln in manifest.splitlines()]
    (target / "plugin.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def install_chaos(home: Path, name: str) -> None:
    """Copy the chaos plugin into ``home/plugins/<name>/`` under manifest name ``name``."""
    install_plugin(home, CHAOS_PLUGIN_DIR, name)


def shutdown_exporters(*hosts: Runtime | PluginManager) -> None:
    """Close the plugin instances of each host (a runtime or its plugin manager): the relay
    and otel plugins end their sessions and spans and write and close their files."""
    for host in hosts:
        manager = host.manager if isinstance(host, Runtime) else host
        manager.close_instances()


def run_with_deadline(fn: Callable[[], Any], timeout: float) -> tuple[Any, BaseException | None]:
    """Run ``fn`` on a thread; (result, exception). A ``TimeoutError`` means it hung."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="reliability-session", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return None, TimeoutError(f"still running after {timeout:g} s")
    return box.get("result"), box.get("error")


# -- an observed runtime: relay + otel writing into one output directory ----------------------


@dataclass
class Outputs:
    """Where an observed runtime's exporters write."""

    root: Path

    @property
    def atof(self) -> Path:
        """The ATOF file."""
        return self.root / "atof" / "events.jsonl"

    @property
    def atif(self) -> Path:
        """The ATIF directory."""
        return self.root / "atif"

    @property
    def spans(self) -> Path:
        """The OTel span file."""
        return self.root / "otel" / "spans.jsonl"

    def env(self) -> dict[str, str]:
        """Relay settings that point the exporters here."""
        return {
            "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(self.atof.parent),
            "WAYLINE_RELAY_ATOF_FILENAME": self.atof.name,
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(self.atif),
        }


def write_config(
    home: Path,
    base_url: str,
    outputs: Outputs | None = None,
    *,
    plugins: Iterable[str] = ("observability/relay", "observability/otel"),
    model: dict[str, Any] | None = None,
    disabled: Iterable[str] = (),
    **sections: Any,
) -> None:
    """Write ``home/config.yaml``: the scripted model, the given plugins, the otel file."""
    import yaml

    entries: dict[str, Any] = dict(sections.pop("entries", {}))
    if outputs is not None:
        entries.setdefault(
            "observability/otel",
            {
                "exporter": "file",
                "file": str(outputs.spans),
                "metrics": False,
                "schedule_delay_ms": 200,
                "shutdown_timeout_ms": 10_000,
            },
        )
    config: dict[str, Any] = {
        "model": {"default": "scripted-model", "base_url": base_url, **(model or {})},
        "plugins": {"enabled": list(plugins), "disabled": list(disabled), "entries": entries},
        **sections,
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def outputs_problems(outputs: Outputs, *hosts: Runtime | PluginManager) -> list[str]:
    """Shut the exporters of ``hosts`` down (a host in another process closed its own), then
    every problem in the ATOF, ATIF and OTel outputs."""
    shutdown_exporters(*hosts)
    problems: list[str] = []
    atof = check_atof(outputs.atof)
    problems += [f"ATOF: {p}" for p in atof.problems]
    problems += [f"ATOF: scope {atof.scopes[u].get('name')} never ends" for u in atof.unclosed]
    _, bad = check_atif_dir(outputs.atif)
    problems += [f"ATIF: {b}" for b in bad]
    spans = read_spans(outputs.spans)
    problems += [f"OTel: orphan {s}" for s in orphan_spans(spans)]
    problems += [f"OTel: unfinished {s}" for s in unfinished_spans(spans)]
    return problems
