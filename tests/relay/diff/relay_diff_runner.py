"""Run the differential scenarios on one relay implementation and print their signatures.

Usage: ``python relay_diff_runner.py <module>`` (``nemo_relay`` or ``wayline.relay``). The same
file is imported by the test process to run the scenarios on ``wayline.relay`` in-process, so
it imports nothing from wayline itself: the implementation under test is passed in.

A signature keeps what must agree between implementations: each event's kind, scope
category, category, name, parent (as a label: ``e3`` is the third event's uuid, ``x1`` a uuid
not seen as an event), the keys of its data, profile and metadata and the values of metadata
whose keys a scenario pins. Ids, timestamps and trace ids are replaced by labels.
"""

from __future__ import annotations

import contextvars
import importlib
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import relay_diff_base
import relay_diff_scenarios  # noqa: F401  (registers the scenarios)
import relay_diff_scenarios_codecs  # noqa: F401
import relay_diff_scenarios_more  # noqa: F401
import relay_diff_scenarios_port  # noqa: F401
from relay_diff_base import SCENARIOS

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_VIEWS = (
    ("messages", "instructions", "model", "params", "tools", "tool_choice", "api_specific"),
    ("id", "model", "message", "tool_calls", "finish_reason", "usage", "api_specific"),
)
_HEX = re.compile(r"\b[0-9a-f]{16,32}\b")


class Labels:
    """Stable labels for ids in order of first appearance."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def event(self, uuid: str) -> str:
        return self.known.setdefault(uuid, f"e{len(self.known)}")

    def other(self, uuid: str | None) -> str | None:
        if uuid is None:
            return None
        return self.known.setdefault(uuid, f"x{len(self.known)}")

    def text(self, value: str) -> str:
        value = _UUID.sub(lambda m: str(self.other(m.group(0))), value)
        return _HEX.sub(lambda m: self._hex(m.group(0)), value)

    def _hex(self, value: str) -> str:
        for uuid, label in self.known.items():
            plain = uuid.replace("-", "")
            if value == plain or value == plain[-16:] or value == plain[:16]:
                return f"{label}#{len(value)}"
        return f"hex{len(value)}"


def normalize(value: Any, labels: Labels) -> Any:
    """JSON value with ids replaced by labels (dict keys sorted by json.dumps later)."""
    if isinstance(value, str):
        return labels.text(value)
    if isinstance(value, dict):
        return {str(k): normalize(v, labels) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v, labels) for v in value]
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    for names in _VIEWS:  # Relay's annotation views have properties but no to_dict()
        if all(hasattr(value, name) for name in names):
            return {name: normalize(getattr(value, name), labels) for name in names}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return normalize(to_dict(), labels)
    return f"<{type(value).__name__}>"


def _keys(value: Any) -> Any:
    if isinstance(value, dict):
        return sorted(value)
    return None if value is None else type(value).__name__


def signature(events: list[Any], labels: Labels, pinned: tuple[str, ...]) -> list[Any]:
    """One row per event (see the module docstring)."""
    for event in events:
        labels.event(event.uuid)
    rows = []
    for event in events:
        metadata = event.metadata
        row: dict[str, Any] = {
            "kind": event.kind,
            "phase": getattr(event, "scope_category", None),
            "category": event.category,
            "name": event.name,
            "self": labels.event(event.uuid),
            "parent": labels.other(event.parent_uuid),
            "data": _keys(event.data),
            "profile": _keys(event.category_profile),
            "metadata": _keys(metadata),
        }
        if pinned:
            row["pinned"] = {
                key: normalize(_pick(event, key), labels) for key in pinned if _pick(event, key)
            }
        rows.append(row)
    return rows


def _pick(event: Any, key: str) -> Any:
    where, _, name = key.partition(".")
    value = getattr(event, where, None)
    if not name:
        return value
    return value.get(name) if isinstance(value, dict) else None


class Recorder:
    """What a scenario reports besides events: values, and the ids it wants labelled."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.pinned: tuple[str, ...] = ()

    def __call__(self, key: str, value: Any) -> None:
        self.values[key] = value

    def pin(self, *keys: str) -> None:
        self.pinned += keys


def run_scenario(nr: Any, name: str) -> dict[str, Any]:
    """Run one scenario on a fresh thread with an empty context; its events and values."""
    events: list[Any] = []
    rec = Recorder()
    subscriber = f"relay-diff-{name}"
    nr.subscribers.register(subscriber, events.append)
    relay_diff_base.FLUSH[:] = [nr.subscribers.flush]

    def body() -> None:
        try:
            SCENARIOS[name](nr, rec)
        except Exception as exc:  # a scenario's unexpected error is part of its signature
            rec("unexpected_error", f"{type(exc).__name__}: {exc}")

    try:
        thread = threading.Thread(target=contextvars.Context().run, args=(body,))
        thread.start()
        thread.join()
        nr.subscribers.flush()
    finally:
        nr.subscribers.deregister(subscriber)
    labels = Labels()
    rows = signature(events, labels, rec.pinned)
    return {"events": rows, "values": normalize(rec.values, labels)}


def run_all(nr: Any, names: list[str] | None = None) -> dict[str, Any]:
    """Every (or the named) scenario's signature, keyed by scenario name."""
    return {name: run_scenario(nr, name) for name in names or list(SCENARIOS)}


def main(argv: list[str]) -> int:
    """Print the JSON signatures of every scenario for the module named in ``argv[1]``."""
    nr = importlib.import_module(argv[1])
    print(json.dumps(run_all(nr, argv[2:] or None), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
