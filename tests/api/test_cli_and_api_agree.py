"""``wayline chat`` and ``wayline.Agent`` build agents the same way (one builder)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import wayline
from wayline.testing import ScriptedServer

WAYLINE = Path(sys.executable).with_name("wayline")
CONFIG = """\
agent:
  system_prompt: Speak like a ship's log.
  toolsets: [file]
plugins:
  enabled: [nosuch]
"""


def test_cli_and_api_send_the_same_request_and_both_warn_about_a_missing_plugin(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Same config → same system prompt from both; the CLI offers the configured toolsets and
    the API the ones it names (the same here); each run warns about ``nosuch``."""
    (home / "config.yaml").write_text(CONFIG)
    with ScriptedServer({"default": {"content": "logged"}}) as srv:
        proc = subprocess.run(
            [str(WAYLINE), "chat", "-q", "hi", "--base-url", srv.base_url, "-m", "m", "-Q"],
            capture_output=True,
            text=True,
            env={**os.environ, "WAYLINE_HOME": str(home)},
            timeout=60,
            check=False,
        )
        with (
            caplog.at_level(logging.WARNING, logger="wayline.plugins"),
            wayline.Agent(model="m", base_url=srv.base_url, home=home, toolsets=["file"]) as agent,
        ):
            result = agent.run("hi")
        cli_body, api_body = (r.body for r in srv.requests)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == result.text == "logged"
    assert "plugin 'nosuch': enabled in config.yaml (plugins.enabled) but not found" in proc.stderr
    assert "'nosuch'" in caplog.text
    assert cli_body["messages"] == api_body["messages"]
    assert cli_body["tools"] == api_body["tools"]
    assert cli_body["messages"][0]["content"] == "Speak like a ship's log."


def test_the_api_ignores_configured_toolsets_the_cli_offers(home: Path) -> None:
    """``agent.toolsets`` in config.yaml is the CLI's default; ``wayline.Agent`` without
    ``toolsets=`` offers no built-in tool, so a program gets no shell it did not ask for."""
    (home / "config.yaml").write_text("agent:\n  toolsets: [terminal, file]\n")
    with ScriptedServer({"default": {"content": "ok"}}) as srv:
        proc = subprocess.run(
            [str(WAYLINE), "chat", "-q", "hi", "--base-url", srv.base_url, "-m", "m", "-Q"],
            capture_output=True,
            text=True,
            env={**os.environ, "WAYLINE_HOME": str(home)},
            timeout=60,
            check=False,
        )
        with wayline.Agent(model="m", base_url=srv.base_url, home=home) as agent:
            agent.run("hi")
        cli_body, api_body = (r.body for r in srv.requests)
    assert proc.returncode == 0, proc.stderr
    assert "terminal" in {t["function"]["name"] for t in cli_body["tools"]}
    assert "tools" not in api_body
