"""The eager ``skill.load`` mark after a tool start (cases checked against nemo-relay 0.10.4)."""

from __future__ import annotations

from typing import Any

import pytest

from wayline import relay


def _skills(captured: list[relay.Event], name: str, args: Any) -> list[tuple[str, str]]:
    captured.clear()
    handle = relay.tools.call(name, args)
    relay.tools.call_end(handle, relay.ToolExecutionResult({"ok": True}))
    return [
        (event.data["skill_name"], event.metadata["skill_load_source"])
        for event in captured
        if event.kind == "mark"
    ]


def test_the_mark_sits_between_start_and_end_under_the_tool(captured: list[relay.Event]) -> None:
    """A skill read gives one mark after the start, at its time, parented to the tool."""
    handle = relay.tools.call("read_file", {"path": "/skills/review/SKILL.md"}, tool_call_id="c1")
    relay.tools.call_end(handle, relay.ToolExecutionResult({"ok": True}))
    start, mark, end = captured
    assert (start.kind, mark.kind, end.kind) == ("scope", "mark", "scope")
    assert mark.name == "skill.load"
    assert mark.parent_uuid == handle.uuid == start.uuid
    assert mark.timestamp == start.timestamp
    assert mark.data == {"skill_name": "review"}
    assert mark.metadata == {"skill_load_source": "structured_read", "tool_name": "read_file"}


def test_detection_reads_the_arguments_as_called(captured: list[relay.Event]) -> None:
    """A request sanitizer changes the recorded args, not what the mark detects."""
    relay.guardrails.register_tool_sanitize_request("hide", 0, lambda name, args: {})
    try:
        assert _skills(captured, "read_file", {"path": "/s/a/SKILL.md"}) == [
            ("a", "structured_read")
        ]
    finally:
        relay.guardrails.deregister_tool_sanitize_request("hide")
    assert captured[0].data == {}


@pytest.mark.parametrize(
    ("tool", "args", "skills"),
    [
        ("read_file", {"path": "/skills/review/skill.md"}, ["review"]),
        ("read_file", {"path": "SKILL.md"}, []),
        ("read_file", {"path": "C:\\skills\\win\\SKILL.md"}, ["win"]),
        ("read_file", {"uri": "file:///skills/uri/SKILL.md"}, ["uri"]),
        ("read_file", {"path": "/skills//SKILL.md"}, ["skills"]),
        ("read_file", {"path": "/s/a/SKILL.md/"}, []),
        ("read_file", {"path": "/s/../SKILL.md"}, []),
        ("read_file", {"path": "C:\\SKILL.md"}, []),
        ("read_file", {"path": "/s/a/SKILL.md?x=1"}, []),
        ("read_file", {"path": "/s/a/SKILL.md", "offset": 0}, ["a"]),
        ("read_file", {"path": "/s/a/SKILL.md", "offset": 0.0}, []),
        ("read_file", {"path": "/s/a/SKILL.md", "offset": None}, []),
        ("read_file", {"path": "/s/a/SKILL.md", "limit": None}, ["a"]),
        ("read_file", {"path": "/s/a/SKILL.md", "limit": 10}, []),
        ("read_file", {"path": "/s/a/SKILL.md", "startLine": 1}, []),
        ("read_file", {"path": "/s/a/SKILL.md", "view_range": [1, 2]}, ["a"]),
        (
            "read_file",
            {"uri": "/s/a/SKILL.md", "file": "/s/b/SKILL.md", "path": "/s/a/SKILL.md"},
            ["b", "a"],
        ),
        (
            "read_multiple_files",
            {"paths": [["/s/a/SKILL.md"], 5, "/x/y.md", "/s/b/SKILL.md"]},
            ["a", "b"],
        ),
        ("readTextFile", {"filePath": "/s/camel/SKILL.md"}, ["camel"]),
        ("mcp__fs__read_text_file", {"path": "/s/mcp/SKILL.md"}, ["mcp"]),
        ("myread", {"path": "/s/a/SKILL.md"}, []),
        ("read_file2", {"path": "/s/a/SKILL.md"}, []),
        ("read_file", "not an object", []),
        ("Skill", {"skill": " pdf "}, ["pdf"]),
        ("SkillView", {"name": "b", "skill_name": "c"}, ["b", "c"]),
        ("Skill", {"skill": "   "}, []),
        ("load_skill", {"name": "x"}, []),
        ("Skill", {"skill": "pdf", "path": "/s/other/SKILL.md"}, ["pdf"]),
    ],
)
def test_structured_reads_and_skill_tools(
    captured: list[relay.Event], tool: str, args: Any, skills: list[str]
) -> None:
    """Reader tools name the SKILL.md's directory; skill tools name their skill argument."""
    found = _skills(captured, tool, args)
    assert [name for name, _ in found] == skills
    source = "skill_tool" if tool.lower().startswith("skill") else "structured_read"
    assert all(kind == source for _, kind in found)


@pytest.mark.parametrize(
    ("tool", "command", "skills"),
    [
        ("bash", "cat ./skills/review/SKILL.md", ["review"]),
        ("bash", "cat -u -u /s/a/SKILL.md other.txt /s/a/SKILL.md", ["a"]),
        ("bash", "cat -n /s/a/SKILL.md", []),
        ("bash", "cat - /s/a/SKILL.md", []),
        ("bash", "cat -- -u /s/a/SKILL.md", ["a"]),
        ("bash", "cat '/s/sp ace/SKILL.md' # a | comment", ["sp ace"]),
        ("bash", "cat /s/a/SKILL.md | head", []),
        ("bash", "cat '/s/a|b/SKILL.md'", []),
        ("bash", "cat /s/a/SKILL.md > out", []),
        ("bash", "cat /s/a/SKILL.md\n", []),
        ("bash", "cat $(x)/SKILL.md", []),
        ("bash", "cat '/s/a/SKILL.md", []),
        ("bash", "cat /s/a\\ b/SKILL.md", ["b"]),
        ("bash", "C:\\bin\\cat.exe /s/a/SKILL.md", ["a"]),
        ("bash", "sudo cat /s/a/SKILL.md", []),
        ("bash", "bat -p /s/b/SKILL.md", ["b"]),
        ("bash", "bat /s/b/SKILL.md", []),
        ("bash", "bat -p -p /s/b/SKILL.md", []),
        ("bash", "bash -lc 'cat ./skills/wrapped/SKILL.md'", ["wrapped"]),
        ("bash", "sh -lc 'cat /s/w/SKILL.md'", []),
        ("bash", "bash -c 'cat /s/w/SKILL.md' extra", []),
        ("bash", "bash -c 'bash -c \"cat /s/w/SKILL.md\"'", []),
        ("bash", "fish --command='bat -p /s/a/SKILL.md'", ["a"]),
        ("bash", "bash -c 'Get-Content ./s/p/SKILL.md'", []),
        ("bash", "Get-Content ./s/p/SKILL.md", ["p"]),
        ("terminal", "pwsh -Command Get-Content -Raw ./s/p/SKILL.md", ["p"]),
        ("exec_command", "Get-Content -Path ./s/p/SKILL.md -Path:./s/q/SKILL.md", ["p", "q"]),
        ("bash", "Get-Content -Encoding ./s/p/SKILL.md", []),
        ("bash", "Get-Content ./s/p/SKILL.md -Tail 3", []),
        ("bash", "Get-Content -Pa ./s/p/SKILL.md", []),
        ("pwsh", "cat ./s/p/SKILL.md", []),
        ("pwsh", "bash -c 'cat /s/a/SKILL.md'", ["a"]),
        ("mcp__x__bash", "cat /s/a/SKILL.md", []),
    ],
)
def test_shell_reads(
    captured: list[relay.Event], tool: str, command: str, skills: list[str]
) -> None:
    """A shell tool's single complete reader command, directly or in one wrapper."""
    found = _skills(captured, tool, {"command": command})
    assert found == [(name, "shell_read") for name in skills]


def test_cmd_and_command_are_both_read(captured: list[relay.Event]) -> None:
    """Both command fields count, in sorted key order; other keys do not."""
    args = {
        "command": "cat /s/y/SKILL.md",
        "cmd": "cat /s/x/SKILL.md",
        "script": "cat /s/z/SKILL.md",
    }
    assert [name for name, _ in _skills(captured, "bash", args)] == ["x", "y"]
