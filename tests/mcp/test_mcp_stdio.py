"""``wayline mcp`` over stdio, asked by the SDK's own client (``mcp.client.stdio``).

The 10,000-step session is scaled from a real recording the way bench line I makes its
sessions (``mcp_support.scale``: the recorded turns repeated, renumbered and moved in time),
with the recording's one failing ``deploy`` call once, at step 7,002.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mcp_support import (
    BIG_ID,
    BIG_STEPS,
    DEPLOY_ARGS,
    TOKEN,
    Recorded,
    log_text,
    over_stdio,
)

from wayline.mcp import tokens
from wayline.testing.secrets import SECRET_SAMPLES

SIX = {"list_sessions", "search", "get_session", "get_step", "diff_sessions", "stats"}


def _rows(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def _steps(text: str) -> list[str]:
    """A get_session page's step lines."""
    return [line for line in text.splitlines() if re.match(r"^\d+ \| ", line)]


def test_lists_the_six_tools_read_only_and_described(recorded: Recorded) -> None:
    """The server lists the six tools, each read-only, described, every parameter described."""
    tools, _ = over_stdio(recorded.folder, recorded.home, [])
    assert {t.name for t in tools} == SIX and len(tools) == 6
    for tool in tools:
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        properties = tool.input_schema["properties"]
        assert properties, tool.name
        for name, schema in properties.items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
    by_name = {t.name: t for t in tools}
    assert by_name["get_step"].input_schema["required"] == ["session_id", "step"]
    assert set(by_name["list_sessions"].input_schema["properties"]) >= {
        "status", "model", "tool", "since", "until", "min_cost", "errors", "limit",
    }  # fmt: skip


def test_search_finds_the_planted_token(recorded: Recorded) -> None:
    """search finds the token planted in one user message: its session, step and field."""
    _, (found,) = over_stdio(recorded.folder, recorded.home, [("search", {"text": TOKEN})])
    assert not found.error, found.text
    matches = [line.split(" | ") for line in found.text.splitlines() if " | " in line]
    assert [m[:3] for m in matches if TOKEN in m[3]] == [[recorded.variant, "8", "user"]]
    assert f"«{TOKEN}»" in found.text


def test_locates_the_one_failed_call_of_10000_steps_in_budget(recorded: Recorded) -> None:
    """An agent's path to the one failed tool call of a 10,000-step session, and its arguments,
    takes at most 5 calls and 20,000 tokens of tool output in total."""
    spent: list[str] = []
    _, (listed,) = over_stdio(recorded.folder, recorded.home, [("list_sessions", {"errors": True})])
    spent.append(listed.text)
    biggest = max(_rows(listed.text), key=lambda row: int(str(row["steps"])))
    assert biggest["session_id"] == BIG_ID and biggest["steps"] == BIG_STEPS
    _, (page,) = over_stdio(
        recorded.folder, recorded.home, [("get_session", {"session_id": BIG_ID})]
    )
    spent.append(page.text)
    header = re.search(r"failed or cancelled steps \((\d+) of ([\d,]+)\): (\d+) \(", page.text)
    assert header is not None, page.text[:2000]
    assert header.group(1) == "1" and header.group(2) == "10,000"
    failed_step = int(header.group(3))
    assert failed_step == recorded.failed_step
    _, (step,) = over_stdio(
        recorded.folder,
        recorded.home,
        [("get_step", {"session_id": BIG_ID, "step": failed_step, "path": "tool_calls"})],
    )
    spent.append(step.text)
    assert not step.error, step.text
    body = json.loads(step.text.split("\n", 1)[1])
    (call,) = body.values()
    assert call["function_name"] == "deploy" and call["arguments"] == DEPLOY_ARGS
    assert len(spent) <= 5
    assert sum(tokens(text) for text in spent) <= 20_000


def test_first_page_of_10000_steps_is_bounded_and_pages_on(recorded: Recorded) -> None:
    """The first get_session page of 10,000 steps is at most 20,000 tokens and says how to
    page on; the cursor it gives returns the next steps, and only='failed' the failed one."""
    _, (first,) = over_stdio(
        recorded.folder, recorded.home, [("get_session", {"session_id": BIG_ID})]
    )
    assert tokens(first.text) <= 20_000
    numbers = [int(line.split(" | ")[0]) for line in _steps(first.text)]
    assert numbers == list(range(1, 101))
    cursor = re.search(r'cursor="([^"]+)"', first.text)
    assert cursor is not None and "9,900 more" in first.text
    _, (second, failed, wide) = over_stdio(
        recorded.folder,
        recorded.home,
        [
            ("get_session", {"session_id": BIG_ID, "cursor": cursor.group(1)}),
            ("get_session", {"session_id": BIG_ID, "only": "failed"}),
            ("get_session", {"session_id": BIG_ID, "limit": 1000}),
        ],
    )
    numbers = [int(line.split(" | ")[0]) for line in _steps(second.text)]
    assert numbers == list(range(101, 201))
    lines = _steps(failed.text)
    assert len(lines) == 1 and lines[0].startswith(f"{recorded.failed_step} | agent | FAILED |")
    assert "deploy✗" in lines[0] and "prod-eu-7" in lines[0]
    assert len(wide.text) <= 48_000 and "Next page" in wide.text


def test_get_step_cuts_a_long_result_and_reads_on(recorded: Recorded) -> None:
    """get_step cuts a long tool result where it says how to read on, and following the
    notes gives the whole result as recorded (the recorder bounds it below 12,000 characters)."""
    _, (whole,) = over_stdio(
        recorded.folder,
        recorded.home,
        [("get_step", {"session_id": recorded.variant, "step": 12, "max_chars": 2000})],
    )
    assert not whole.error, whole.text
    assert '"function_name": "read_log"' in whole.text
    path = "observation.results[0].content"
    assert f"more chars: path='{path}' offset=2000" in whole.text
    parts, offset = [], 0
    for _ in range(10):
        _, (part,) = over_stdio(
            recorded.folder,
            recorded.home,
            [("get_step", {"session_id": recorded.variant, "step": 12, "path": path,
                           "offset": offset, "max_chars": 5000})],
        )  # fmt: skip
        _head, rest = part.text.split("\n", 1)
        following = re.search(r"offset=(\d+)\)\]$", rest)
        parts.append(rest[: following.start()].rsplit("\n", 1)[0] if following else rest)
        if following is None:
            break
        offset = int(following.group(1))
    document = json.loads(
        (recorded.folder / f"wayline-atif-{recorded.variant}.json").read_text(encoding="utf-8")
    )
    content = document["steps"][11]["observation"]["results"][0]["content"]
    assert len(parts) >= 2 and content.startswith(log_text()[:5000])
    assert "".join(parts) == content


def test_diff_sessions_gives_the_first_divergence(recorded: Recorded) -> None:
    """diff_sessions names the first divergence (step 8: the third turn's user message, which
    the steps' alignment pairs with nothing) and lists the differences one per line."""
    _, (diff,) = over_stdio(
        recorded.folder,
        recorded.home,
        [("diff_sessions", {"old_session": recorded.template, "new_session": recorded.variant})],
    )
    assert not diff.error, diff.text
    first = diff.text.split("first divergence: ", 1)[1].splitlines()
    assert first[:2] == [
        "step 8 of main: a step only the old session has",
        '  old: {"source": "user", "message": "ship it"}',
    ]
    lines = [line for line in diff.text.splitlines() if line.startswith("step ")]
    assert f"step 11 of main | text at message | question 3 → question 9 {TOKEN}" in lines
    count = re.search(r": (\d+) differences", diff.text)
    assert count is not None and len(lines) == int(count.group(1))


def test_list_sessions_and_stats_filter_like_sessions_list(recorded: Recorded) -> None:
    """list_sessions and stats take sessions list's filters; a bad one is a tool error that
    names the parameter."""
    _, (by_tool, by_status, bad, stats) = over_stdio(
        recorded.folder,
        recorded.home,
        [
            ("list_sessions", {"tool": "read_log"}),
            ("list_sessions", {"status": "completed", "limit": 1}),
            ("list_sessions", {"since": "yesterday-ish"}),
            ("stats", {"by": "tool"}),
        ],
    )
    assert [r["session_id"] for r in _rows(by_tool.text)] == [recorded.variant]
    assert len(_rows(by_status.text)) == 1 and "next: list_sessions(" in by_status.text
    assert bad.error and "since:" in bad.text
    deploy = next(r for r in _rows(stats.text) if r["key"] == "deploy")
    assert deploy["sessions"] == 2 and deploy["errors"] == 2


def test_bad_questions_are_tool_errors(recorded: Recorded) -> None:
    """An unknown session, a missing step, a foreign cursor and a wrong path are tool errors
    saying what is wrong."""
    _, answers = over_stdio(
        recorded.folder,
        recorded.home,
        [
            ("get_session", {"session_id": "no-such-session"}),
            ("get_step", {"session_id": BIG_ID, "step": 10_001}),
            ("get_session", {"session_id": BIG_ID, "cursor": "not-a-cursor"}),
            ("get_step", {"session_id": BIG_ID, "step": 2, "path": "tool_calls[5]"}),
        ],
    )
    assert all(a.error for a in answers), answers
    assert "no session 'no-such-session'" in answers[0].text
    assert "has no step 10001 (steps 1–10000)" in answers[1].text
    assert "cursor:" in answers[2].text
    assert "has no item [5]" in answers[3].text


def test_another_producers_secret_is_redacted(recorded: Recorded, tmp_path: Path) -> None:
    """A file wayline did not write is redacted in get_step, get_session and search: its
    secret never reaches the agent."""
    sample = next(s for s in SECRET_SAMPLES if s.name == "github_classic")
    document = json.loads(
        (recorded.folder / f"wayline-atif-{recorded.variant}.json").read_text(encoding="utf-8")
    )
    del document["agent"]["extra"]  # no longer wayline's recording
    document["session_id"] = document["trajectory_id"] = "foreign-1"
    step = document["steps"][11]
    step["observation"]["results"][0]["content"] = f"token={sample.secret}\n" + log_text()
    step["message"] = f"use {sample.secret} please"
    (tmp_path / "foreign.json").write_text(json.dumps(document), encoding="utf-8")
    _, answers = over_stdio(
        tmp_path,
        recorded.home,
        [
            ("get_step", {"session_id": "foreign-1", "step": 12}),
            ("get_session", {"session_id": "foreign-1"}),
            ("search", {"text": "token="}),
        ],
    )
    assert all(not a.error for a in answers), answers
    assert all(sample.needle not in a.text for a in answers)
    assert "token=" in answers[2].text and "use " in answers[1].text


def test_a_step_with_many_calls_is_cut_and_pages_by_item(
    recorded: Recorded, tmp_path: Path
) -> None:
    """A step of 120 tool calls: its line counts them, get_step cuts the list where it says
    the path and offset to read on, and reading from that offset gives the later calls."""
    document = json.loads(
        (recorded.folder / f"wayline-atif-{recorded.template}.json").read_text(encoding="utf-8")
    )
    document["session_id"] = document["trajectory_id"] = "many-calls"
    step = document["steps"][1]
    (call,) = step["tool_calls"]
    (result,) = step["observation"]["results"]
    step["tool_calls"] = [
        dict(call, tool_call_id=f"c{n}", arguments={"query": f"topic {n}"}) for n in range(120)
    ]
    step["observation"]["results"] = [dict(result, source_call_id=f"c{n}") for n in range(120)]
    (tmp_path / "many.json").write_text(json.dumps(document), encoding="utf-8")
    _, (page, whole) = over_stdio(
        tmp_path,
        recorded.home,
        [
            ("get_session", {"session_id": "many-calls", "limit": 3}),
            ("get_step", {"session_id": "many-calls", "step": 2}),
        ],
    )
    assert "| lookup,lookup,lookup,lookup,lookup,+115 |" in _steps(page.text)[1]
    assert len(whole.text) <= 48_000
    cut = re.search(r"…\[(\d+) more items: path='tool_calls' offset=(\d+)\]", whole.text)
    assert cut is not None, whole.text[-500:]
    shown = int(cut.group(2))
    assert int(cut.group(1)) + shown == 120
    assert f'"topic {shown - 1}"' in whole.text and f'"topic {shown}"' not in whole.text
    _, (later,) = over_stdio(
        tmp_path,
        recorded.home,
        [("get_step", {"session_id": "many-calls", "step": 2, "path": "tool_calls",
                       "offset": shown})],
    )  # fmt: skip
    assert f"items from {shown} of 120" in later.text.splitlines()[0]
    assert f'"tool_calls[{shown}]"' in later.text and f'"topic {shown}"' in later.text
