"""Replay compares what runs now with what ran then: a recording's executed arguments."""

from __future__ import annotations

from pathlib import Path

from record_support import batch, record_session

from wayline.testing import replay

SCRIPT = {"rules": [{"match": {}, "turns": [batch("call", ["EUR", "USD"]), {"content": "ok"}]}]}

USD_ONLY = """
def usd_only(**kw):
    if kw.get("tool_name") != "convert" or kw["args"].get("currency") not in ("EUR", "GBP"):
        return None
    return {"args": {**kw["args"], "currency": "USD"}, "source": "fx-policy", "reason": "usd"}


def register(ctx):
    ctx.register_middleware("tool_request", usd_only)
"""


def _plugin(root: Path) -> Path:
    folder = root / "usd_only"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: usd_only\nversion: 1\n")
    (folder / "__init__.py").write_text(USD_ONLY)
    return folder


def test_replay_checks_executed_arguments(tmp_path: Path) -> None:
    """A session recorded with a rewriting middleware reproduces with the same middleware,
    and without it diverges at the argument the middleware had rewritten."""
    recording = record_session(tmp_path / "rec", SCRIPT, ["convert please"])
    with_rewrite = replay(recording.atif_path, plugins=[_plugin(tmp_path / "plugins")])
    assert with_rewrite.reproduced, with_rewrite.describe()
    without = replay(recording.atif_path)
    assert not without.reproduced
    first = without.first
    assert first is not None
    assert (first.tool_call, first.kind, first.path, first.old, first.new) == (
        "call_0 (convert)",
        "arguments",
        "arguments.currency",
        "USD",
        "EUR",
    )
    assert len(without.differences) == 1  # call_1 asked for USD: nothing to rewrite
