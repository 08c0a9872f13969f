"""A plugin instance closes once and for all: a hook that comes after its close (a host that
fires one more hook on its way out) builds nothing, so it opens no file and starts no thread."""

from __future__ import annotations

import threading
from pathlib import Path

from wayline.plugins.observability.otel.plugin import create
from wayline.plugins.observability.otel.settings import load_settings as otel_settings
from wayline.plugins.observability.relay import RelayPlugin
from wayline.plugins.observability.relay.settings import load_settings as relay_settings


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate()}


def test_a_hook_after_close_builds_no_otel_pipeline(tmp_path: Path) -> None:
    """The otel plugin closed before any hook: a late hook creates no span file and no
    exporter thread."""
    plugin = create(otel_settings({}, {}, home=tmp_path))
    hooks = plugin.hooks()
    before = _threads()
    plugin.close()
    hooks["on_session_start"](session_id="late", model="m")
    assert not (tmp_path / "otel" / "spans.jsonl").exists()
    assert _threads() <= before


def test_a_hook_after_close_builds_no_relay_exporters(tmp_path: Path) -> None:
    """The relay plugin closed before any hook: a late hook writes no ATOF line and no ATIF
    file."""
    plugin = RelayPlugin(relay_settings(home=tmp_path))
    hooks = plugin.hooks()
    plugin.close()
    hooks["on_session_start"](session_id="late", model="m")
    hooks["on_session_finalize"](session_id="late")
    assert not (tmp_path / "relay" / "atof" / "wayline-atof.jsonl").exists()
    assert not list((tmp_path / "relay").rglob("*.json"))
