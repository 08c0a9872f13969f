"""What an agent knows of its secrets is masked in its records: the API key, credential-like
environment variables, the config's ``redaction`` section (``env`` names, ``files``), header
values its plugins configure, and what a rule redacted once in the session or its parent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from wayline.host.config import ConfigError, load_config
from wayline.redaction import REDACTED
from wayline.runtime import build_runtime
from wayline.runtime.known_values import agent_known_values, parse_env_file
from wayline.runtime.settings import load_settings
from wayline.testing.server import ScriptedServer

API_KEY = "plainKeyWithNoShapeAtAll"
LEARNED = "VbnmQwer7tyuIop"  # an assignment's value: redacted by rule, then known
CHILD_SEES = f"child printed {LEARNED} again"


def _config(home: Path, base_url: str, **sections: Any) -> None:
    config = {"model": {"default": "scripted-model", "base_url": base_url}, **sections}
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _known(home: Path, environ: dict[str, str], cwd: Path) -> Any:
    doc = load_config(home)
    return agent_known_values(doc, load_settings(doc), environ, cwd)


def test_env_file_parsing() -> None:
    """KEY=VALUE lines: export, comments, single and double quotes, escapes, multi-line
    double-quoted values; other lines are skipped."""
    text = (
        "# a comment\n"
        "export A_TOKEN=abc123def # trailing comment\n"
        "B='single # kept'\n"
        'C="dq \\"escaped\\" \\\\ and\\nnewline"\n'
        'PEM="-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----"\n'
        "not a pair\n"
        "EMPTY=\n"
    )
    assert parse_env_file(text) == [
        ("A_TOKEN", "abc123def"),
        ("B", "single # kept"),
        ("C", 'dq "escaped" \\ and\nnewline'),
        ("PEM", "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----"),
        ("EMPTY", ""),
    ]


def test_the_agent_knows_its_key_env_names_files_and_headers(tmp_path: Path) -> None:
    """The runtime's set holds the API key, a base URL's password, credential-like variables,
    ``redaction.env`` names, every value of ``redaction.files`` and configured header values
    (``${VAR}`` resolved, the credential after its scheme word), never ordinary variables."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / ".env").write_text("DATABASE_URL_PART=lettersonlyvalue\nPORT=8080\n")
    _config(
        home,
        "http://deploy:UrlPassw0rdHere@127.0.0.1:9/v1",
        redaction={"env": ["SIGNING_SEED"], "files": [".env"]},
        plugins={"entries": {"observability/otel": {"headers": {"x-k": "Bearer ${OTLP_TOK}"}}}},
    )
    environ = {
        "WAYLINE_API_KEY": API_KEY,
        "SIGNING_SEED": "seedvalue-no-name",
        "ACME_SECRET": "acmesecretvalue",
        "OTLP_TOK": "otlpheadertoken",
        "HOME": "/home/nobody/somewhere",
        "OTEL_EXPORTER_OTLP_HEADERS": "api-key=envheadervalue1,x=y",
    }
    doc = load_config(home)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WAYLINE_API_KEY", API_KEY)
        settings = load_settings(doc)
    known = agent_known_values(doc, settings, environ, work)
    assert known.values() >= {
        API_KEY,
        "UrlPassw0rdHere",
        "seedvalue-no-name",
        "acmesecretvalue",
        "lettersonlyvalue",
        "otlpheadertoken",
        "Bearer otlpheadertoken",
        "envheadervalue1",
    }
    assert "/home/nobody/somewhere" not in known
    assert "8080" not in known


@pytest.mark.parametrize(
    ("section", "field", "message"),
    [
        ("just a string", "redaction", "must be a mapping"),
        ({"env": "NAME"}, "redaction.env", "must be a list"),
        ({"env": ["GOOD", 3]}, "redaction.env.1", "must be an environment variable name"),
        ({"env": ["bad name"]}, "redaction.env.0", "must be an environment variable name"),
        ({"files": [""]}, "redaction.files.0", "must be a file path"),
        ({"files": ["."]}, "redaction.files.0", "not a regular file"),
        ({"files": ["fifo.env"]}, "redaction.files.0", "not a regular file"),
        ({"nope": []}, "redaction.nope", "unknown key"),
    ],
)
def test_a_bad_redaction_section_is_one_error_naming_the_field(
    tmp_path: Path, section: Any, field: str, message: str
) -> None:
    """Each mistake raises a ``ConfigError`` with the file, the line and the dotted field; a
    FIFO in a secrets file's place is refused without blocking."""
    home = tmp_path / "home"
    home.mkdir()
    os.mkfifo(tmp_path / "fifo.env")  # must be refused, not read (a read would block)
    _config(home, "http://127.0.0.1:9/v1", redaction=section)
    with pytest.raises(ConfigError) as caught:
        agent_known_values(load_config(home), load_settings(load_config(home)), {}, tmp_path)
    text = str(caught.value)
    assert str(home / "config.yaml") in text and field in text and message in text, text
    assert caught.value.line is not None


def test_a_missing_secrets_file_is_skipped(tmp_path: Path) -> None:
    """A ``redaction.files`` entry that does not exist in this project is no error."""
    home = tmp_path / "home"
    home.mkdir()
    _config(home, "http://127.0.0.1:9/v1", redaction={"files": [".env.missing"]})
    assert len(_known(home, {}, tmp_path)) == 0


def test_the_cli_prints_one_error_line_for_a_bad_section(tmp_path: Path) -> None:
    """``wayline chat`` exits 2 with one ``error:`` line naming the field, no traceback."""
    home = tmp_path / "home"
    home.mkdir()
    _config(home, "http://127.0.0.1:9/v1", redaction={"files": [42]})
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "chat", "-q", "hi"],
        env={**os.environ, "WAYLINE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "redaction.files.0: must be a file path" in proc.stderr
    assert "Traceback" not in proc.stderr


def _script() -> dict[str, Any]:
    return {
        "rules": [
            {
                "match": {"first_user_contains": "CHILD"},
                "turns": [
                    {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo ready"}}]},
                    {"content": CHILD_SEES},
                ],
            },
            {
                "match": {"first_user_contains": "deploy"},
                "turns": [
                    {
                        "tool_calls": [
                            {
                                "name": "terminal",
                                "arguments": {
                                    "command": f"export DEPLOY_TOKEN={LEARNED} && "
                                    "echo token is $DEPLOY_TOKEN"
                                },
                            }
                        ]
                    },
                    {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "CHILD"}}]},
                    {"content": f"the key {API_KEY} deployed with {LEARNED}"},
                ],
            },
        ]
    }


def test_known_and_learned_values_never_reach_the_session_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API key (no shape) and a value learned from ``export T=V`` are masked in the
    parent's transcript (the tool's output, the answer) and in its child's (which never saw
    the export), while the model received them."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("WAYLINE_API_KEY", API_KEY)
    server = ScriptedServer(_script()).start()
    try:
        _config(home, server.base_url, approvals={"mode": "off"})
        runtime = build_runtime(home)
        agent = runtime.agent(cwd=work)
        result = agent.run_turn("please deploy")
        agent.finalize()
    finally:
        server.stop()
    assert result.completed, result.text
    seen = json.dumps([r.body for r in server.requests])
    assert f"token is {LEARNED}" in seen, seen[-3000:]
    assert API_KEY in json.dumps([r.headers for r in server.requests])
    stored = {p.stem: p.read_text(encoding="utf-8") for p in (home / "sessions").glob("*.jsonl")}
    assert len(stored) == 2  # the parent and its child
    for name, text in stored.items():
        assert LEARNED not in text and API_KEY not in text, (name, text)
    parent = stored[agent.session_id]
    assert f"token is {REDACTED}" in parent
    child = next(text for sid, text in stored.items() if sid != agent.session_id)
    assert f"child printed {REDACTED} again" in child
    assert LEARNED in agent.known
