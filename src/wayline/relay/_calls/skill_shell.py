"""Whole-file reads of ``SKILL.md`` in a shell tool's command (Relay's ``shell_read`` source).

A shell tool (:data:`SHELL_TOOLS`, by the words of its name) whose ``command`` or ``cmd``
argument is one complete reader command: ``cat`` (no option but ``-u``), ``bat``/``batcat``
(exactly one ``-p``/``--plain``) or ``Get-Content`` (positional paths and the reviewed
parameters in :data:`GET_CONTENT_VALUES` and :data:`GET_CONTENT_SWITCHES`, no abbreviations).
A PowerShell tool takes only ``Get-Content`` directly. One wrapper layer may carry the reader:
``sh -c``, ``bash``/``zsh`` ``-c`` or ``-lc``, ``fish -c`` or ``fish --command=…`` (readers
``cat``/``bat``/``batcat``), ``pwsh``/``powershell -Command`` (``Get-Content``).

Words split on blanks with single and double quotes (no backslash escapes); a word starting
with ``#`` begins a comment. A pipeline, redirection, command substitution, compound command,
control character or unbalanced quote before the comment means no read is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

__all__ = ["SHELL_TOOLS", "is_shell_tool", "reads"]

SHELL_TOOLS: Final = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "fish",
        "shell",
        "shell_command",
        "exec",
        "exec_command",
        "execute",
        "terminal",
        "run_command",
        "run_shell_command",
        "shell_exec",
        "powershell",
        "pwsh",
    }
)
POWERSHELL: Final = frozenset({"powershell", "pwsh"})
COMMAND_FIELDS: Final = ("cmd", "command")
POSIX_READERS: Final = frozenset({"cat", "bat", "batcat"})
PS_READERS: Final = frozenset({"get-content"})
GET_CONTENT_VALUES: Final = frozenset({"path", "literalpath", "encoding", "readcount"})
GET_CONTENT_SWITCHES: Final = frozenset({"raw", "asbytestream", "force"})
_REFUSED: Final = frozenset("|&;<>()`\n\r\0")


def is_shell_tool(tool_words: tuple[str, ...]) -> bool:
    """Whether a tool name (as its words) is one of Relay's direct shell tools."""
    return "_".join(tool_words) in SHELL_TOOLS


def reads(fields: list[tuple[str, Any]], tool_words: tuple[str, ...]) -> Iterator[str]:
    """The paths a shell tool's command arguments read whole (in argument order)."""
    powershell = "_".join(tool_words) in POWERSHELL
    direct = PS_READERS if powershell else POSIX_READERS | PS_READERS
    for key, value in fields:
        if key in COMMAND_FIELDS and isinstance(value, str):
            words = split(value)
            if words:
                yield from _command(words, direct, wrapped=False)


def split(command: str) -> list[str] | None:
    """``command``'s words, or ``None`` when it is more than one plain command."""
    words: list[str] = []
    word: str | None = None
    quote = ""
    for ch in command:
        if ch in _REFUSED or (ch < " " and ch != "\t"):
            return None
        if quote:
            if ch == quote:
                quote = ""
            else:
                word += ch  # type: ignore[operator]  # a quote always starts a word
            continue
        if ch in "'\"":
            quote = ch
            word = word or ""
        elif ch in " \t":
            if word is not None:
                words.append(word)
                word = None
        elif ch == "#" and word is None:
            break  # a comment: the rest of the line is not part of the command
        else:
            word = (word or "") + ch
    if quote:
        return None
    if word is not None:
        words.append(word)
    return words


def _program(word: str) -> str:
    base = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return base.removesuffix(".exe")


def _command(words: list[str], readers: frozenset[str], *, wrapped: bool) -> Iterator[str]:
    program = _program(words[0])
    if program in readers:
        paths = _reader(program, words[1:])
        if paths is not None:
            yield from paths
    elif not wrapped:
        unwrapped = _unwrap(program, words)
        if unwrapped is not None:
            inner = split(unwrapped[0])
            if inner:
                yield from _command(inner, unwrapped[1], wrapped=True)


def _unwrap(program: str, words: list[str]) -> tuple[str, frozenset[str]] | None:
    """The script a supported wrapper runs and the readers allowed in it."""
    if program in ("sh", "bash", "zsh") and len(words) == 3:
        flags = ("-c",) if program == "sh" else ("-c", "-lc")
        if words[1] in flags:
            return words[2], POSIX_READERS
    elif program == "fish":
        if len(words) == 3 and words[1] == "-c":
            return words[2], POSIX_READERS
        if len(words) == 2 and words[1].startswith("--command="):
            return words[1][len("--command=") :], POSIX_READERS
    elif program in POWERSHELL and len(words) >= 3 and words[1].lower() == "-command":
        return " ".join(words[2:]), PS_READERS
    return None


def _reader(program: str, args: list[str]) -> list[str] | None:
    if program == "get-content":
        return _get_content(args)
    plain = 0
    paths: list[str] = []
    options = True
    for arg in args:
        if options and arg == "--":
            options = False
        elif options and arg.startswith("-"):
            if program == "cat" and arg == "-u":
                continue
            if program != "cat" and arg in ("-p", "--plain"):
                plain += 1
                continue
            return None  # an option that may change what is printed
        else:
            paths.append(arg)
    if program != "cat" and plain != 1:
        return None  # bat without plain output decorates the file
    return paths


def _get_content(args: list[str]) -> list[str] | None:
    paths: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if not arg.startswith("-"):
            paths.append(arg)
            continue
        name, colon, value = arg[1:].partition(":")
        name = name.lower()
        if name in GET_CONTENT_SWITCHES:
            continue
        if name not in GET_CONTENT_VALUES:
            return None  # -TotalCount, -Tail, abbreviations … read part of the file
        if not (colon and value):
            if index == len(args):
                return None
            value = args[index]
            index += 1
        if name in ("path", "literalpath"):
            paths.append(value)
    return paths
