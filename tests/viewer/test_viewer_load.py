"""Loading and modelling trajectories for the viewer, and the ``wayline view`` CLI (no browser)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from viewer_support import PAYLOADS, RELAY_DATA

from wayline.relay.atof import read_events
from wayline.viewer import (
    ViewerInputError,
    build_view,
    decode_data,
    embed_json,
    load_trajectories,
    load_trajectory,
    render_page,
)


def harbor_trajectory(version: str = "ATIF-v1.5") -> dict[str, Any]:
    """A Harbor-shaped trajectory: naive timestamps, cost metrics, no relay extras."""
    return {
        "schema_version": version,
        "session_id": "harbor-run-1",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "gpt-5"},
        "steps": [
            {"step_id": 1, "timestamp": "2025-10-14T20:08:40", "source": "system",
             "message": "You are an agent."},
            {"step_id": 2, "timestamp": "2025-10-14T20:08:41", "source": "user",
             "message": [{"type": "text", "text": "List the files."}]},
            {"step_id": 3, "timestamp": "2025-10-14T20:08:44.500", "source": "agent",
             "model_name": "gpt-5", "message": "Running ls.", "reasoning_content": "ls is enough",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "bash",
                             "arguments": {"cmd": "ls"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "a.txt\nb.txt"}]},
             "metrics": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 50,
                         "cost_usd": 0.0125}},
            {"step_id": 4, "timestamp": "2025-10-14T20:08:46Z", "source": "agent",
             "message": "Two files.", "metrics": {"prompt_tokens": 130, "completion_tokens": 5,
                                                  "cost_usd": 0.0025}},
        ],
        "final_metrics": {"total_prompt_tokens": 230, "total_completion_tokens": 25,
                          "total_cached_tokens": 50, "total_cost_usd": 0.015, "total_steps": 4},
    }  # fmt: skip


def _write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document))
    return path


def _view(tmp_path: Path, document: Any) -> dict[str, Any]:
    return build_view(load_trajectory(_write(tmp_path / "t.json", document))[0])


@pytest.mark.parametrize("version", ["ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7", "ATIF-v1.8"])
def test_harbor_trajectory_header_counts_tokens_and_cost(tmp_path: Path, version: str) -> None:
    """A Harbor ATIF v1.5–v1.8 file gives header tokens, cached tokens, cost and duration."""
    view = _view(tmp_path, harbor_trajectory(version))
    header = view["h"]
    assert (header["in"], header["out"], header["ca"], header["co"]) == (230, 25, 50, 0.015)
    assert header["dur"] == 6000.0 and header["steps"] == 4 and header["errors"] == 0
    assert view["w"] == []


def test_harbor_timing_is_estimated_from_step_timestamps(tmp_path: Path) -> None:
    """Without invocation times, an agent step's LLM span runs from the previous step's time."""
    view = _view(tmp_path, harbor_trajectory())
    spans = [(s["k"], s["s"], s["e"], s.get("ap")) for s in view["spans"] if s["k"] != "turn"]
    assert spans == [("llm", 1000.0, 4500.0, 1), ("llm", 4500.0, 6000.0, 1)]
    assert view["timing"] == "estimated from step timestamps"


def test_warnings_are_kept_and_the_trajectory_still_loads(tmp_path: Path) -> None:
    """Harbor-rule problems that leave steps drawable become warnings naming file and field."""
    document = harbor_trajectory()
    document["steps"][1]["step_id"] = 7
    document["surprise"] = True
    (loaded,) = load_trajectory(_write(tmp_path / "w.json", document))
    assert any("$.steps[1].step_id" in w and "w.json" in w for w in loaded.warnings)
    assert any("$.surprise: unknown field" in w for w in loaded.warnings)
    assert build_view(loaded)["w"] == loaded.warnings


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("steps"), "$.steps"),
        (lambda d: d.update(steps=[]), "$.steps"),
        (lambda d: d["steps"][2].update(source="robot"), "$.steps[2].source"),
        (lambda d: d["steps"][0].pop("message"), "$.steps[0].message"),
        (lambda d: d.update(schema_version="v9"), "$.schema_version"),
    ],
)
def test_undrawable_input_names_file_and_field(tmp_path: Path, mutate: Any, field: str) -> None:
    """Input with nothing drawable raises ViewerInputError naming the file and JSON field."""
    document = harbor_trajectory()
    mutate(document)
    path = _write(tmp_path / "bad.json", document)
    with pytest.raises(ViewerInputError, match=re.escape(f"{path}: {field}")):
        load_trajectory(path)


def test_cli_invalid_input_exits_2_with_one_line(tmp_path: Path) -> None:
    """`wayline view` on broken JSON prints file, field and line, exits 2, shows no traceback."""
    bad = tmp_path / "broken.json"
    bad.write_text('{"steps": [')
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "view", str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert f"{bad}: $: invalid JSON" in proc.stderr and "Traceback" not in proc.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "wayline", "view", str(tmp_path / "nope.json")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_bad_atof_line_names_file_and_line(tmp_path: Path) -> None:
    """A malformed ATOF line (not the last) is rejected with the file and line number."""
    lines = (RELAY_DATA / "relay_manual.atof.jsonl").read_text().splitlines()
    lines.insert(2, "{not json")
    path = tmp_path / "bad.atof.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ViewerInputError, match=re.escape(f"{path}: line 3")):
        load_trajectory(path)


def test_atof_keeps_exact_nanosecond_timing() -> None:
    """ATOF input keeps event-exact span times; the ATIF file's copy is rounded to ms."""
    path = RELAY_DATA / "relay_manual.atof.jsonl"
    (loaded,) = load_trajectory(path)
    view = build_view(loaded)
    events = read_events(path)
    tool = [e for e in events if e.get("category") == "tool"]
    start = next(e for e in tool if e["scope_category"] == "start")
    end = next(e for e in tool if e["scope_category"] == "end")
    from wayline.relay.atif.payloads import timestamp_ns

    exact_ms = (timestamp_ns(end["timestamp"]) - timestamp_ns(start["timestamp"])) / 1e6
    (span,) = [s for s in view["spans"] if s["k"] == "tool"]
    assert abs((span["e"] - span["s"]) - exact_ms) <= 0.002
    assert view["timing"].startswith("exact")
    atif_view = build_view(load_trajectory(RELAY_DATA / "relay_manual.atif.json")[0])
    (atif_span,) = [s for s in atif_view["spans"] if s["k"] == "tool"]
    assert (atif_span["e"] - atif_span["s"]) * 1000 % 1000 == 0  # whole ms (Relay's rounding)


def test_relay_subagent_is_nested_under_its_tool_call() -> None:
    """The relay plugin's embedded sub-agent hangs off the delegating call, spans nested below."""
    view = build_view(load_trajectory(RELAY_DATA / "relay_plugin.atif.json")[0])
    call = view["steps"][1]["c"][0]
    assert call["n"] == "delegate" and call["sub"] == [0]
    assert [s["m"] for s in view["subs"][0]["steps"]] == ["sub task x", "sub answer"]
    kinds = [(s["k"], s["d"]) for s in view["spans"]]
    assert kinds == [
        ("turn", 0),
        ("llm", 0),
        ("tool", 0),
        ("subagent", 1),
        ("turn", 2),
        ("llm", 2),
        ("llm", 0),
    ]


def test_approval_and_denied_command_from_a_real_session(injection_run: Path) -> None:
    """A denied approval becomes an approval span under its tool call, and the call an error."""
    (loaded,) = load_trajectory(injection_run / "atof" / "wayline-atof.jsonl")
    view = build_view(loaded)
    approvals = [s for s in view["spans"] if s["k"] == "approval"]
    assert len(approvals) == 1 and "deny" in approvals[0]["n"]
    assert view["h"]["errors"] == 1
    (denied,) = [c for s in view["steps"] for c in s.get("c", []) if c.get("e")]
    assert denied["n"] == "terminal"


def test_embedded_json_cannot_close_its_script_element(injection_run: Path) -> None:
    """The page source holds no payload markup: the data is base64, and embed_json escapes."""
    trajectories = load_trajectories([injection_run / "atif"])
    page = render_page(trajectories)
    for payload in PAYLOADS:
        assert payload not in page
    assert page.count("</script>") == 2  # the data element's and the page script's own
    data = page.split('data-encoding="deflate-base64">')[1].split("</script>")[0]
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", data)
    policy = page.split('http-equiv="Content-Security-Policy" content="')[1].split('"')[0]
    assert "default-src &#x27;none&#x27;" in policy and "unsafe" not in policy
    escaped = '{"x":"a\\u2028b\\u003c/script\\u003e\\u0026"}'
    assert embed_json({"x": "a\u2028b</script>&"}) == escaped


def test_directory_gives_one_page_with_every_trajectory(demo_run: Path, tmp_path: Path) -> None:
    """A directory's ATIF and ATOF files all load; the CLI writes one page and prints its path."""
    out = tmp_path / "all.html"
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "view", str(demo_run / "atif"), str(demo_run / "atof"),
         "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    text = out.read_text()
    data = decode_data(text.split('data-encoding="deflate-base64">')[1].split("</script>")[0])
    assert data["v"] == 2 and [item["kind"] for item in data["items"]].count("atof") == 1
    assert "http://" not in text.split('id="wl-data"')[0]  # nothing loads from the network


def test_tree_prints_steps_calls_and_nested_subagent(demo_run: Path) -> None:
    """`wayline view --tree` prints the header, each step, tool calls and the nested sub-agent."""
    (atif,) = sorted((demo_run / "atif").glob("*.json"))
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "view", "--tree", str(atif)],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "4 steps" in out and "delegate_task" in out and out.count("read_file") == 2
    assert "sub-agent" in out and "hello from the child agent" in out


def test_span_columns_keep_every_span_to_the_microsecond() -> None:
    """The page's span columns decode to build_view's spans: kind, label, times, flags, step."""
    from wayline.viewer.page import span_columns

    (loaded,) = load_trajectory(RELAY_DATA / "relay_plugin.atof.jsonl")
    spans = build_view(loaded)["spans"]
    columns = span_columns(spans)
    at = 0
    kinds = ("llm", "tool", "approval", "subagent", "turn")
    for i, span in enumerate(spans):
        at += columns["s"][i]
        assert kinds[columns["k"][i]] == span["k"]
        assert columns["nt"][columns["n"][i]] == span["n"]
        assert columns["pt"][columns["p"][i]] == span["p"]
        assert abs(at / 1000 - span["s"]) < 0.0015
        assert abs((at + columns["u"][i]) / 1000 - span["e"]) < 0.0015
        assert columns["st"][i] == span.get("st", 0) and columns["d"][i] == span["d"]
        assert bool(columns["f"][i] & 1) == bool(span.get("er") or span.get("o") == "error")
        assert bool(columns["f"][i] & 8) == (span.get("g") is not None)
    assert len(spans) > 3
