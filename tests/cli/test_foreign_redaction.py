"""Every output of ours redacts what it read, whoever wrote the file: a trajectory from another
producer with secrets in its messages, tool arguments, results and extras loses them in
`view` (page and tree), `export sft`, `diff` (text, JSON, HTML) and `replay`'s report."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from wayline.testing.secrets import SECRET_SAMPLES
from wayline.viewer import decode_data

from .support import HERMES_ATIF, HERMES_ATOF, invoke

SAMPLES = {s.name: s for s in SECRET_SAMPLES}
PROJECT_KEY = SAMPLES["openai_project"]  # sk-proj-…, found by its shape
GITHUB = SAMPLES["github_classic"]
SLACK = SAMPLES["slack_bot"]
LETTERS = "CfTDKSBAzacQzLfHqWxE"  # letters only: hidden by its key's name, not by its shape
NEEDLES = (PROJECT_KEY.needle, GITHUB.needle, SLACK.needle, LETTERS)


def planted() -> dict[str, Any]:
    """Hermes' recording, as another producer wrote it, with secrets in four places."""
    document = json.loads(HERMES_ATIF.read_text(encoding="utf-8"))
    document["agent"]["name"] = "someone-else"
    steps = document["steps"]
    steps[0]["message"] += f" My key is {PROJECT_KEY.secret} for this."
    call = steps[1]["tool_calls"][0]
    call["arguments"] = {**call["arguments"], "api_key": LETTERS}
    content = f"alpha_content\nGITHUB_TOKEN={GITHUB.secret}\n"
    steps[1]["observation"] = {"results": [{"source_call_id": "call_alpha", "content": content}]}
    steps[-1].setdefault("extra", {})["notes"] = f"slack: {SLACK.secret}"
    return document


def leaked(text: str) -> list[str]:
    """The planted secrets (their secret parts) that ``text`` holds."""
    return [needle for needle in NEEDLES if needle in text]


def page_text(html: str) -> str:
    """The page and every data element it embeds, decoded (deflate + base64)."""
    blocks = re.findall(r'data-encoding="deflate-base64">([^<]*)</script>', html)
    assert blocks
    return html + "".join(json.dumps(decode_data(b), ensure_ascii=False) for b in blocks)


def write(path: Path, document: dict[str, Any]) -> Path:
    """``document`` as an ATIF file at ``path``."""
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_the_planted_file_holds_every_secret(tmp_path: Path) -> None:
    """The planted ATIF really carries the four secrets (else the tests below prove nothing)."""
    text = write(tmp_path / "foreign.json", planted()).read_text()
    assert leaked(text) == list(NEEDLES)


def test_view_page_and_tree_redact_a_foreign_trajectory(tmp_path: Path) -> None:
    """The page (its decoded data included) and --tree hold none of the secrets; the page
    shows the redaction marker where they were."""
    source = write(tmp_path / "foreign.json", planted())
    page = tmp_path / "page.html"
    result = invoke("view", source, "-o", page, home=tmp_path / "home")
    assert result.exit_code == 0, result.stderr
    shown = page_text(page.read_text(encoding="utf-8"))
    assert not leaked(shown) and "<redacted>" in shown
    tree = invoke("view", "--tree", source, home=tmp_path / "home")
    assert tree.exit_code == 0, tree.stderr
    assert not leaked(tree.stdout + tree.stderr)


def test_export_sft_redacts_a_foreign_trajectory(tmp_path: Path) -> None:
    """The samples hold none of the secrets; the tool call's arguments stay a JSON object
    whose credential key is hidden, and call ids are kept."""
    source = write(tmp_path / "foreign.json", planted())
    out = tmp_path / "sft.jsonl"
    result = invoke("export", "sft", source, "-o", out, home=tmp_path / "home")
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert not leaked(text)
    (sample,) = [json.loads(line) for line in text.splitlines()]
    calls = [c for m in sample["messages"] for c in m.get("tool_calls") or []]
    first = next(c for c in calls if c["id"] == "call_alpha")
    assert json.loads(first["function"]["arguments"]) == {
        "path": "alpha.txt",
        "api_key": "<redacted>",
    }


def test_diff_in_every_form_redacts_both_sides(tmp_path: Path) -> None:
    """Diffing the clean recording against the planted one finds the differences (exit 1) and
    shows them redacted as text, JSON and HTML."""
    clean = json.loads(HERMES_ATIF.read_text(encoding="utf-8"))
    old = write(tmp_path / "old.json", copy.deepcopy(clean))
    new = write(tmp_path / "new.json", planted())
    for flags in ((), ("--json",), ("--html",)):
        result = invoke("diff", *flags, old, new, home=tmp_path / "home")
        assert result.exit_code == 1, result.stderr
        assert not leaked(result.stdout + result.stderr), flags
        assert "redacted" in result.stdout
    rows = json.loads(invoke("diff", "--json", old, new, home=tmp_path / "home").stdout)
    assert any(row.get("new") == "<redacted>" for row in rows)  # the api_key, by its key


def test_view_redacts_foreign_atof_events_and_approval_marks(tmp_path: Path) -> None:
    """An ATOF file whose user message (in every event that carries it) and an approval's
    pattern label carry secrets: the page holds neither, and shows the marker."""
    text = HERMES_ATOF.read_text(encoding="utf-8")
    asked = "Read alpha.txt and beta.txt, then delegate reading gamma.txt, then summarize."
    assert asked in text
    text = text.replace(asked, f"{asked} My key is {PROJECT_KEY.secret} for this.")
    lines = [json.loads(line) for line in text.splitlines()]
    tool = next(e for e in lines if e.get("category") == "tool")
    for name, offset in (("hermes.approval.request", 1), ("hermes.approval.response", 2)):
        lines.append(
            {
                **{k: v for k, v in lines[1].items() if k not in ("data", "metadata")},
                "name": name,
                "uuid": f"01a2149f-0000-7000-8000-00000000000{offset}",
                "parent_uuid": tool["parent_uuid"],
                "timestamp": tool["timestamp"].replace(".595", f".59{offset + 5}"),
                "data": {"tool_call_id": "call_alpha", "pattern_key": f"x {SLACK.secret}"},
            }
        )
    source = tmp_path / "foreign.atof.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    page = tmp_path / "page.html"
    result = invoke("view", source, "-o", page, home=tmp_path / "home")
    assert result.exit_code == 0, result.stderr
    shown = page_text(page.read_text(encoding="utf-8"))
    assert not leaked(shown) and "My key is <redacted>" in shown and "x <redacted>" in shown
