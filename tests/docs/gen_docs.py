"""Generate the reference pages built from code: docs/hooks.md (HOOK_SPECS) and docs/cli.md (click).

Run ``.venv/bin/python tests/docs/gen_docs.py`` after changing a hook spec or a command;
``tests/docs/test_reference_docs.py`` fails while the committed pages differ from the output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from wayline.contract.hooks import (
    HERMES_ONLY_HOOKS,
    HOOK_SPECS,
    MIDDLEWARE_SCHEMA_VERSION,
    TELEMETRY_SCHEMA_VERSION,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

SID = "20261125_101500_a1b2c3"
TURN = f"{SID}:task_7f3e:turn_1"

# field -> (meaning, example value). ``(hook, field)`` keys override for one hook.
#: Payload fields wayline adds that Hermes Agent does not send.
WAYLINE_FIELDS = frozenset({"original_request_fields"})

FIELDS: dict[Any, tuple[str, Any]] = {
    "session_id": ("The session (conversation) id.", SID),
    "task_id": ("The agent's task id; a delegated child has its own.", "task_7f3e"),
    "turn_id": ("The user turn; shared by its API attempts and tool calls.", TURN),
    "api_request_id": ("One model call of the turn (`<turn_id>:api_<n>`).", f"{TURN}:api_1"),
    "api_call_count": ("Model calls so far in this turn, 1-based.", 1),
    "platform": ("Where the agent runs: `cli`, `python`, or the host's name.", "cli"),
    "model": ("The configured model name.", "qwen3:8b"),
    "provider": ("The provider name from config (`custom` for any OpenAI-compatible).", "custom"),
    "base_url": ("The model server's base URL.", "http://127.0.0.1:11434/v1"),
    "api_mode": ("The wire API used.", "chat_completions"),
    "message_count": ("Messages in the request.", 3),
    "tool_count": ("Tools offered in the request.", 4),
    "approx_input_tokens": ("A rough token estimate of the request (chars / 4).", 412),
    "request_char_count": ("Characters in the request's messages.", 1650),
    "max_tokens": ("The request's `max_tokens`, or null.", None),
    "started_at": ("Unix time (seconds) the attempt started.", 1795601700.12),
    "ended_at": ("Unix time (seconds) the attempt ended.", 1795601700.87),
    "request": (
        "The provider request (model, messages, tools…), sanitized: secrets redacted, "
        "long strings bounded.",
        {"model": "qwen3:8b", "messages": [{"role": "user", "content": "list the files"}]},
    ),
    "user_message": ("The user's text for this turn.", "list the files"),
    "conversation_history": (
        "The messages before this point, as the agent holds them.",
        [{"role": "system", "content": "You are wayline…"}],
    ),
    "request_messages": ("The request's messages (raw, for hosts that read them).", []),
    "original_request_fields": (
        "Only when `llm_request` middleware changed the request: each top-level field it "
        "changed, as it was before (null: added by the middleware); sanitized.",
        {"temperature": None},
    ),
    "middleware_trace": (
        "One entry (`source`, `reason`, `name`) per request middleware that rewrote the payload.",
        [{"source": "audit", "reason": "pinned workdir"}],
    ),
    "api_duration": ("Seconds the attempt took.", 0.75),
    "finish_reason": ("The response's finish reason.", "tool_calls"),
    "response_model": ("The model name the server reported.", "qwen3:8b"),
    "usage": (
        "Token usage (`input_tokens`, `output_tokens`, `prompt_tokens`, … as reported).",
        {"input_tokens": 412, "output_tokens": 18, "total_tokens": 430},
    ),
    "assistant_content_chars": ("Characters of assistant text in the response.", 0),
    "assistant_tool_call_count": ("Tool calls in the response.", 1),
    "response": (
        "The response, sanitized.",
        {"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant"}}]},
    ),
    "assistant_message": (
        "The assistant message as it enters the conversation.",
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1"}]},
    ),
    "status_code": ("The HTTP status, or null for a connection failure.", 503),
    "retry_count": ("Retries done before this attempt.", 0),
    "max_retries": ("Retries allowed per call.", 3),
    "retryable": ("Whether another attempt follows.", True),
    ("api_request_error", "reason"): (
        "Why it failed: `http_error`, `timeout`, `connection`…, or `interrupted` "
        "(the turn was cancelled).",
        "http_error",
    ),
    "error": (
        "`{type, message}` of the failure, sanitized.",
        {"type": "APIStatusError", "message": "Service Unavailable"},
    ),
    "tool_name": ("The tool called.", "terminal"),
    "args": ("The tool's arguments after `tool_request` middleware.", {"command": "ls"}),
    "tool_call_id": ("The tool call's id (from the model, or generated).", "call_1"),
    "result": (
        "The tool's result string (JSON for built-in tools).",
        '{"output": "a.txt\\nb.txt", "exit_code": 0}',
    ),
    "duration_ms": ("Milliseconds the call took.", 12),
    "status": ("`ok`, `error`, `blocked`, `cancelled` or `timeout`.", "ok"),
    "error_type": (
        "For a failed call: `tool_error`, `plugin_block`, `approval_denied`, an exception name…",
        None,
    ),
    "error_message": ("For a failed call: what went wrong.", None),
    "response_text": ("The final assistant text.", "Those are the files."),
    "assistant_response": (
        "The final assistant text (after `transform_llm_output`).",
        "Those are the files.",
    ),
    "is_first_turn": ("True for the session's first user turn.", True),
    "sender_id": ("The sender on multi-user platforms; empty in wayline.", ""),
    "completed": ("The turn ended with a final answer.", True),
    "interrupted": ("The turn was cancelled (Ctrl-C, SIGTERM, a cancelled `arun`).", False),
    ("on_session_end", "reason"): (
        "`completed`, `interrupted`, `api_error`, `max_turns` or `error`.",
        "completed",
    ),
    ("on_session_finalize", "reason"): ("`shutdown`, `session_boundary` (`/new`)….", "shutdown"),
    ("on_session_reset", "reason"): ("Why the session changed.", "new_session"),
    "old_session_id": ("The session being left.", SID),
    "new_session_id": ("The session starting.", "20261125_101712_d4e5f6"),
    "command": ("The shell command.", "rm -rf build"),
    "description": ("Why the command needs approval.", "recursive delete"),
    "pattern_key": ("The dangerous-pattern rule that matched.", "rm_recursive"),
    "pattern_keys": ("Every rule that matched.", ["rm_recursive"]),
    "session_key": ("The key a `session` approval is remembered under.", SID),
    "surface": ("Where the approval is asked.", "cli"),
    "choice": ("`once`, `session`, `always`, `deny` or `timeout`.", "once"),
    "parent_session_id": ("The delegating (parent) session.", SID),
    "parent_turn_id": ("The parent's turn.", TURN),
    "parent_subagent_id": ("The parent's own subagent id (null at the top level).", None),
    "parent_tool_call_id": ("The parent's `delegate_task` tool call.", "call_2"),
    "child_session_id": ("The child agent's session.", "20261125_101501_0a9b8c"),
    "child_subagent_id": ("The child's subagent id.", "sub_1"),
    "child_role": ("The child's role (`leaf` or `orchestrator`).", "leaf"),
    "child_goal": ("The goal the child was given.", "run the tests"),
    "child_status": ("`completed`, `failed`, `timeout`, `interrupted` or `error`.", "completed"),
    "child_summary": ("The child's final answer.", "All 12 tests pass."),
    "output": ("The command's captured output.", "a.txt\nb.txt\n"),
    "returncode": ("The command's exit status.", 0),
    "env_type": ("Where the command ran.", "local"),
}

RETURNS = {
    "ignored": "Return value ignored.",
    "context": 'Return a string or `{"context": "..."}` to add context to this turn\'s '
    "user message (the API copy only; the transcript keeps the user's text).",
    "block": 'Return `{"action": "block", "message": "..."}` to block the call: '
    "it ends with status `blocked` and the message is the tool result.",
    "first_str": "Return a string to replace the result (the first string returned wins).",
    "first_nonempty_str": "Return a non-empty string to replace the final text.",
}


def _field(hook: str, name: str) -> tuple[str, Any]:
    found = FIELDS.get((hook, name)) or FIELDS.get(name)
    if found is None:
        raise KeyError(f"tests/docs/gen_docs.py: no description for field {name!r} of {hook!r}")
    return found


def hooks_page() -> str:
    """docs/hooks.md, from :data:`wayline.contract.HOOK_SPECS`."""
    out = [
        "# Hooks reference",
        "",
        "<!-- Generated by tests/docs/gen_docs.py from wayline.contract.HOOK_SPECS; "
        "do not edit by hand. -->",
        "",
        "Observer hooks report what happened. A callback gets the payload as keyword "
        "arguments (accept `**kwargs`: fields are only ever added), runs on the thread that "
        "fired the hook (tool and subagent threads too), and fails open: an exception is "
        "logged once per plugin, hook and type, and the next callback still runs. "
        "`KeyboardInterrupt` and other `BaseException`s propagate.",
        "",
        "Payloads are read-only. The values a callback gets are the agent's live objects (its "
        "message dicts, a tool's arguments, the response), shared with every other callback of "
        "the hook, and the agent never changes them after the hook. A callback that changes "
        "them anyway changes what other plugins see; to change what the agent does, use "
        "middleware ([middleware.md](middleware.md)) or the hooks whose return value counts "
        "(`pre_llm_call`, `transform_*`). The bundled observability plugins queue payloads for "
        "a thread of their own: they copy what they keep only when a host has middleware or "
        "callbacks like yours that run on the hook's thread, and read the payload as it is "
        "otherwise.",
        "",
        f'Every payload also carries `telemetry_schema_version = "{TELEMETRY_SCHEMA_VERSION}"`.'
        " *Contract* fields are the ones the Hermes observer contract names, which every host "
        "sends; *Hermes* fields are the extra ones "
        "Hermes Agent 0.19.0 sends, which wayline sends too so a Hermes plugin finds them; "
        "*wayline* fields are wayline's own additions (a plugin must not rely on them in "
        "Hermes). "
        f"Middleware (`{MIDDLEWARE_SCHEMA_VERSION}`) is in [middleware.md](middleware.md).",
        "",
        "Register a hook from a plugin (`ctx.register_hook(name, fn)`, see "
        "[plugins.md](plugins.md)) or from Python (`agent.on(name, fn)`, see "
        "[python-api.md](python-api.md)).",
        "",
        "| hook | fires | return |",
        "|---|---|---|",
    ]
    for spec in HOOK_SPECS.values():
        out.append(f"| [`{spec.name}`](#{spec.name}) | {spec.fires} | {spec.returns} |")
    out += [
        "",
        "Accepted but never fired (Hermes gateway and kanban hooks, so Hermes plugins load "
        "without a warning): " + ", ".join(f"`{h}`" for h in sorted(HERMES_ONLY_HOOKS)) + ".",
    ]
    for spec in HOOK_SPECS.values():
        out += ["", f"## {spec.name}", "", spec.fires, "", RETURNS[spec.returns], ""]
        out += ["| field | kind | meaning |", "|---|---|---|"]
        example: dict[str, Any] = {"telemetry_schema_version": TELEMETRY_SCHEMA_VERSION}
        for name in sorted(spec.fields):
            meaning, value = _field(spec.name, name)
            kind = (
                "contract"
                if name in spec.contract_fields
                else "wayline"
                if name in WAYLINE_FIELDS
                else "Hermes"
            )
            if name in spec.sanitized_fields:
                kind += ", sanitized"
            out.append(f"| `{name}` | {kind} | {meaning} |")
            example[name] = value
        out += ["", "Example payload:", "", "```json", json.dumps(example, indent=2), "```"]
    return "\n".join(out) + "\n"


def _commands(group: click.Group, ctx: click.Context) -> list[tuple[list[str], click.Command]]:
    found: list[tuple[list[str], click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        found.append(([name], command))
        if isinstance(command, click.Group):
            sub_ctx = click.Context(command, info_name=name, parent=ctx)
            found += [([name, *path], sub) for path, sub in _commands(command, sub_ctx)]
    return found


def cli_page() -> str:
    """docs/cli.md: ``wayline --help`` and the help of every command, from click itself."""
    from wayline.cli.main import cli

    runner = CliRunner()

    def help_of(args: list[str]) -> str:
        result = runner.invoke(cli, [*args, "--help"], prog_name="wayline", terminal_width=100)
        if result.exit_code != 0:
            raise RuntimeError(f"wayline {' '.join(args)} --help failed: {result.output}")
        return result.output.rstrip()

    out = [
        "# Command line reference",
        "",
        "<!-- Generated by tests/docs/gen_docs.py from the click commands; "
        "do not edit by hand. -->",
        "",
        "Every command takes `--help`. Answers go to stdout; errors, warnings and progress go "
        "to stderr, so `answer=$(wayline chat -q …)` never captures an error as the answer. "
        "An error is one line that starts with `error:` and names the file, line and field; "
        "a command-line user never sees a traceback (`WAYLINE_DEBUG=1` shows it).",
        "",
        "Every command exits with one of these statuses:",
        "",
        "| status | meaning |",
        "|---|---|",
        "| 0 | done: the answer was printed, the files are valid or the same, the replay "
        "reproduced, the file was written |",
        "| 1 | the command ran and the outcome is negative: the turn did not complete (a "
        "provider failure, the model-call limit), the trajectories differ, the replay diverged, "
        "validation found problems, nothing to export |",
        "| 2 | bad usage or input that cannot be used: an unknown flag or name (the error names "
        "the flag), a bad config file, a file that is missing, unreadable, not a regular file "
        "(a FIFO, a device), empty, not UTF-8, not JSON, truncated, nested too deeply, or not "
        "the kind of file the command reads |",
        "| 130 | interrupted (Ctrl-C or SIGTERM) |",
        "",
        "The trajectory commands (`view`, `replay`, `diff`, `export sft`) read ATIF `.json` "
        "files and ATOF `.jsonl` event files; ATOF is converted in memory as "
        "`wayline atif convert` would write it. Given a directory, `view` and `export sft` skip "
        "the files that are not trajectories (a session transcript, OpenTelemetry spans) with "
        "one `warning:` line each. `atof validate` given an ATIF file, `atif validate` given "
        "ATOF, and `atif convert` given ATIF each say so in one line.",
        "",
        "Every command that reads these files (`view`, `replay`, `diff`, `export sft`, "
        "`export otlp`, `atif convert`, `atif validate`, `atof validate`) first tells what a "
        "file is from its first 64 KiB, so a file it cannot use is refused in one `error:` "
        "line naming what it is (exit 2) before it is read, whatever its size: a FIFO or a "
        "device, an empty file, bytes that are not UTF-8, text that is not JSON, "
        "OpenTelemetry spans, a session transcript, other JSON lines. ATOF files are then "
        "read a line at a time; an ATIF document is read whole. ATOF cut off mid-line before "
        "any trajectory is complete is truncated input (exit 2); `atof validate` of such a "
        "file prints its problems and then that error.",
        "",
        "## wayline",
        "",
        "```text",
        help_of([]),
        "```",
    ]
    root_ctx = click.Context(cli, info_name="wayline")
    for path, _ in _commands(cli, root_ctx):
        out += ["", f"## wayline {' '.join(path)}", "", "```text", help_of(path), "```"]
    return "\n".join(out) + "\n"


PAGES = {"hooks.md": hooks_page, "cli.md": cli_page}


def main(argv: list[str]) -> int:
    """Write the generated pages (``--check``: report the stale ones, exit 1)."""
    stale = []
    for name, build in PAGES.items():
        path = DOCS / name
        text = build()
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    for name in stale:
        print(f"docs/{name} is stale: run .venv/bin/python tests/docs/gen_docs.py")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
