"""Known values: 50 random credential-like environment variables, of random shapes (letters
only, digits, hex, base64, symbols, spaces), are printed by a tool every way a shell shows
them (``env``, ``cat .env``, ``base64`` wrapped and not, URL-encoded, JSON, base64 at each
alignment) and repeated by the model; no form of any of them may appear in any output: the
ATOF file, the ATIF files, the OTel span file, the session store, the ``wayline view`` page,
the commands' stderr and ``view``'s stdout (``chat``'s stdout is the answer itself, shown to
the user whole).

The session runs through ``wayline chat`` in a subprocess (the agent's environment is the
planted one), with both observability plugins and ``redaction.files: [.env]``.
"""

from __future__ import annotations

import html
import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from rel_support import Outputs, record, scaled  # type: ignore[import-not-found]

from wayline.redaction import is_sensitive_key, is_weak_key
from wayline.redaction.known import encodings
from wayline.testing.server import ScriptedServer
from wayline.viewer.page import embed_json

PLANTED = 50
WAYLINE = [sys.executable, "-m", "wayline"]
_WORDS = ("ACME", "BILLING", "DEPLOY", "LEDGER", "MAILER", "ORBIT", "QUARRY", "VAULTED", "ZEPHYR")
_SUFFIXES = (
    "API_KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "ACCESS_KEY",
    "AUTH_TOKEN",
    "CLIENT_SECRET",
    "PASS",
    "PASSWD",
    "SECRET_KEY",
    "CREDENTIALS",
    "KEY",
    "PWD_HASH_SECRET",
)
_SHAPES = {
    "letters": string.ascii_letters,
    "lower letters": string.ascii_lowercase,
    "alnum": string.ascii_letters + string.digits,
    "hex": "0123456789abcdef",
    "base64": string.ascii_letters + string.digits + "+/",
    "urlsafe": string.ascii_letters + string.digits + "-_",
    "symbols": string.ascii_letters + string.digits + "!#$%&()*+,-./:;<=>?@[]^_{|}~",
    "spaces": string.ascii_lowercase + "   ",
    "quotes": string.ascii_letters + '"\\`',
}

FORMS_PY = """
import base64, json, os, sys, urllib.parse
names = open("names.txt").read().split()
for i, name in enumerate(names):
    value = os.environ[name]
    lead = ("x" * (i % 3)).encode()
    raw = lead + value.encode()
    print(name, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value))
    print(json.dumps({name: value}))
    print(base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode())
"""


def _plant(rng: random.Random) -> dict[str, str]:
    """``PLANTED`` credential-like names with values of random shapes (8 to 48 chars)."""
    planted: dict[str, str] = {}
    shapes = list(_SHAPES.values())
    while len(planted) < PLANTED:
        name = f"WLK{len(planted)}_{rng.choice(_WORDS)}_{rng.choice(_SUFFIXES)}"
        assert is_sensitive_key(name) or is_weak_key(name), name
        alphabet = shapes[len(planted) % len(shapes)]
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 48)))
        if value.strip() and value == value.strip():
            planted[name] = value
    return planted


def _dotenv(planted: dict[str, str]) -> str:
    """A ``.env`` of the planted values (single quotes: taken as written)."""
    return "".join(f"{name}='{value}'\n" for name, value in planted.items())


def _script(planted: dict[str, str]) -> dict[str, Any]:
    commands = ["env", "cat .env", "base64 .env", "base64 -w0 .env", "python3 forms.py"]
    repeated = " ".join(planted.values())
    return {
        "rules": [
            {
                "match": {"first_user_contains": "show me"},
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "terminal", "arguments": {"command": c}} for c in commands
                        ]
                    },
                    {"content": f"Here they are again: {repeated}"},
                ],
            }
        ]
    }


def _forms(value: str) -> set[str]:
    """Every form an output could hold ``value`` in (the viewer escapes ``< > &`` in JSON)."""
    forms = set(encodings(value))
    forms |= {html.escape(value), embed_json(value)[1:-1]}
    return {f for f in forms if len(f) >= 8}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        out = [value]
        if value[:1] in "{[":
            try:
                out += _strings(json.loads(value))
            except ValueError:
                pass
        return out
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _decoded(text: str) -> str:
    """The strings of every JSON document or line in ``text``, decoded (nested JSON too)."""
    found: list[str] = []
    documents = [text] if text.lstrip()[:1] == "{" and "\n{" not in text else text.splitlines()
    for document in documents:
        try:
            found += _strings(json.loads(document))
        except ValueError:
            continue
    return "\n".join(found)


def _run_session(tmp: Path, seed: int) -> tuple[int, dict[str, list[str]], list[str]]:
    """One session; (values planted, {output: [leaked names]}, [sanity problems])."""
    rng = random.Random(seed)
    planted = _plant(rng)
    home, work, out = tmp / "home", tmp / "work", Outputs(tmp / "out")
    home.mkdir(parents=True)
    work.mkdir()
    (work / ".env").write_text(_dotenv(planted), encoding="utf-8")
    (work / "names.txt").write_text("\n".join(planted), encoding="utf-8")
    (work / "forms.py").write_text(FORMS_PY, encoding="utf-8")
    server = ScriptedServer(_script(planted)).start()
    config = {
        "model": {"default": "scripted-model", "base_url": server.base_url},
        "approvals": {"mode": "off"},
        "redaction": {"files": [".env"]},
        "plugins": {
            "enabled": ["observability/relay", "observability/otel"],
            "entries": {
                "observability/otel": {"exporter": "file", "file": str(out.spans), "metrics": False}
            },
        },
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**os.environ, **planted, **out.env(), "WAYLINE_HOME": str(home)}
    try:
        chat = subprocess.run(
            [*WAYLINE, "chat", "-q", "show me the secrets", "-Q"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        server.stop()
    page = tmp / "page.html"
    view = subprocess.run(
        [*WAYLINE, "view", str(out.atif), "-o", str(page)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    sanity = []
    if chat.returncode != 0 or view.returncode != 0:
        sanity.append(f"seed {seed}: chat {chat.returncode}: {chat.stderr[-500:]}; view: {view}")
    sent = json.dumps([r.body for r in server.requests])
    unseen = [n for n, v in planted.items() if not any(f in sent for f in encodings(v))]
    if unseen:
        sanity.append(f"seed {seed}: never reached the model: {unseen}")
    outputs: dict[str, str] = {
        "ATOF": "\n".join(p.read_text("utf-8") for p in sorted(out.atof.parent.glob("*"))),
        "ATIF": "\n".join(p.read_text("utf-8") for p in sorted(out.atif.glob("*.json"))),
        "OTel": "\n".join(p.read_text("utf-8") for p in sorted(out.spans.parent.glob("*"))),
        "session store": "\n".join(
            p.read_text("utf-8") for p in sorted((home / "sessions").glob("*.jsonl"))
        ),
        "view page": page.read_text("utf-8") if page.exists() else "",
        "stderr, view's stdout": chat.stderr + view.stdout + view.stderr,
    }
    # The answer on chat's stdout is the conversation, not a record: the user sees it whole.
    if not all(value in chat.stdout for value in planted.values()):
        sanity.append(f"seed {seed}: the answer on stdout is not the model's: {chat.stdout[:200]}")
    for label in ("ATOF", "ATIF", "OTel", "session store", "view page"):
        if not outputs[label]:
            sanity.append(f"seed {seed}: {label} is empty")
    leaks: dict[str, list[str]] = {}
    for label, text in outputs.items():
        decoded = _decoded(text)
        for name, value in planted.items():
            forms = _forms(value)
            if any(f in text or f in decoded for f in forms):
                leaks.setdefault(label, []).append(name)
    return len(planted), leaks, sanity


def test_no_known_value_reaches_any_output(tmp_path: Path) -> None:
    """50 planted credential-like variables per session, printed every way: 0 occurrences of
    any form of any of them in ATOF, ATIF, OTel, the session store, the view page or stderr."""
    planted = 0
    occurrences = 0
    sanity: list[str] = []
    leaked: dict[str, set[str]] = {}
    for run in range(scaled(1, 4)):
        count, leaks, problems = _run_session(tmp_path / f"run{run}", seed=1000 + run)
        planted += count
        sanity += problems
        for label, names in leaks.items():
            occurrences += len(names)
            leaked.setdefault(label, set()).update(names)
    record(
        "secrets_known_planted",
        "known values planted (env, .env; every form printed)",
        planted,
        ">=",
        50,
    )
    figure = record(
        "secrets_known_leaks",
        "known values found in ATOF, ATIF, OTel, store, view page, stderr",
        occurrences,
    )
    for label, found in sorted(leaked.items()):
        print(f"known values leaked into {label}: {sorted(found)}")
    assert not sanity, "\n".join(sanity)
    assert figure.ok, {k: sorted(v) for k, v in leaked.items()}
