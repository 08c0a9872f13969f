"""Every redaction path has a size bound and redacts before it cuts: messages of any size
(``redact_bounded``: exception texts, error bodies), and the session store (each string at
``MAX_STORED_CHARS``), with no fragment of a secret left at the cut and ids kept whole."""

from __future__ import annotations

import json
from pathlib import Path

from wayline.host.bus import describe_exception
from wayline.redaction import REDACTED, redact_bounded
from wayline.runtime.sessions import MAX_STORED_CHARS, SessionStore

SECRET = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"


def _fragments(secret: str, text: str) -> list[str]:
    size = int(len(secret) * 0.4)
    runs = (secret[i : i + size] for i in range(len(secret) - size + 1))
    return [run for run in runs if run in text]


def test_a_secret_across_the_cut_leaves_no_fragment() -> None:
    """Wherever the bound falls inside a secret, no 40% run of it survives, and the result is
    at most the bound plus the marker."""
    for share in range(1, len(SECRET)):
        text = "x " * ((2000 - share) // 2) + SECRET + " tail" * 100
        out = redact_bounded(text, 2000)
        assert not _fragments(SECRET, out), (share, out[-120:])
        assert len(out) <= 2000 + len("...[truncated 9999999 chars]")


def test_a_huge_message_is_bounded() -> None:
    """A 5 MB exception text becomes a short, redacted message (the work follows the bound)."""
    text = f"token={SECRET} " + "y" * 5_000_000
    out = describe_exception(RuntimeError(text))
    assert out.startswith(f"token={REDACTED} ")
    assert "...[truncated" in out and len(out) < 2100


def test_the_store_cuts_long_strings_after_redacting_and_keeps_ids(tmp_path: Path) -> None:
    """A tool result longer than the store's bound is stored redacted and cut, the secret at
    the cut is gone whole, and the tool call's id is untouched."""
    ident = "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"
    content = "z " * ((MAX_STORED_CHARS - 10) // 2) + SECRET + " after" * 1000
    store = SessionStore(tmp_path / "sessions")
    store.append("s1", {"role": "tool", "tool_call_id": ident, "content": content})
    store.close("s1")
    line = (tmp_path / "sessions" / "s1.jsonl").read_text(encoding="utf-8")
    stored = json.loads(line)
    assert stored["tool_call_id"] == ident
    assert "...[truncated" in stored["content"]
    assert len(stored["content"]) < MAX_STORED_CHARS + 100
    assert not _fragments(SECRET, line)
