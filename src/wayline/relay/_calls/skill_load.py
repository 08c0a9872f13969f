"""Which skills a tool call loads, for Relay's eager ``skill.load`` mark.

Relay emits one ``skill.load`` mark per skill right after a tool's start event (parent: the
tool, the start's timestamp) when the call's arguments show a skill being loaded:

- ``skill_tool``: a first-class skill tool (``Skill``, ``skill_view``) with a non-blank
  ``skill``, ``skill_name`` or ``name`` argument (stripped);
- ``structured_read``: a reader tool (its name ends in one of :data:`READER_SUFFIXES`) whose
  path argument (:data:`PATH_FIELDS`, a string or a list of them) ends in ``SKILL.md``
  under a named directory, with no partial-read control (:data:`PARTIAL_CONTROLS`; an
  ``offset`` of exactly ``0`` still reads the whole file);
- ``shell_read``: see :mod:`wayline.relay._calls.skill_shell`.

Tool names and argument keys are compared by their words (``readTextFile``,
``read-text-file`` and ``READ_TEXT_FILE`` are ``read_text_file``). Arguments are read in
sorted key order and each skill is reported once per call. The mark records an attempt seen
before the tool runs, not that the file was read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from wayline.relay._calls import skill_shell

__all__ = ["MARK_NAME", "detect", "skill_dir", "words"]

MARK_NAME: Final = "skill.load"
SKILL_TOOLS: Final = frozenset({("skill",), ("skill", "view")})
SKILL_FIELDS: Final = frozenset({"skill", "skill_name", "name"})
READER_SUFFIXES: Final = (
    ("read",),
    ("read", "file"),
    ("read", "text", "file"),
    ("read", "multiple", "files"),
    ("file", "read"),
    ("read", "resource"),
    ("get", "file", "contents"),
    ("read", "file", "content"),
)
PATH_FIELDS: Final = frozenset(
    {"path", "file_path", "filepath", "filename", "file", "paths", "uri", "absolute_path"}
)
PARTIAL_CONTROLS: Final = frozenset(
    {"limit", "range", "head", "tail", "start_line", "end_line", "line_start", "line_end"}
)

# A word: an uppercase run before a capitalised word (the READ of READFile), a capitalised or
# lowercase word, or a run of digits glued to the letters before it.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")


def words(name: str) -> tuple[str, ...]:
    """``name``'s words, lowercased (camelCase and any separator split them)."""
    return tuple(word.lower() for word in _WORD.findall(name))


def skill_dir(path: str) -> str | None:
    """The skill a path to a ``SKILL.md`` names: its parent directory (``None`` if none).

    Components are split on ``/`` and ``\\``, so URIs and Windows paths work. The last one
    must be ``SKILL.md`` (any case); the parent is the nearest non-empty one before it, and
    ``.``, ``..`` or a drive or scheme (ending in ``:``) names none.
    """
    parts = re.split(r"[/\\]", path)
    if parts[-1].lower() != "skill.md":
        return None
    parent = next((part for part in reversed(parts[:-1]) if part), "")
    if parent in ("", ".", "..") or parent.endswith(":"):
        return None
    return parent


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


Fields = list[tuple[str, Any]]


def _whole_read(fields: Fields) -> bool:
    for key, value in fields:
        if key == "offset":
            if type(value) is not int or value != 0:
                return False
        elif key in PARTIAL_CONTROLS and value is not None:
            return False
    return True


def _structured(fields: Fields) -> Iterator[str]:
    if not _whole_read(fields):
        return
    for key, value in fields:
        if key in PATH_FIELDS:
            for path in _strings(value):
                name = skill_dir(path)
                if name is not None:
                    yield name


def _skill_tool(fields: Fields) -> Iterator[str]:
    for key, value in fields:
        if key in SKILL_FIELDS and isinstance(value, str) and value.strip():
            yield value.strip()


def detect(tool_name: str, args: Any) -> list[tuple[str, str]]:
    """``(skill_name, source)`` for each skill the call loads, in Relay's order, once each."""
    if not isinstance(args, dict):
        return []
    tool = words(tool_name)
    if not tool:
        return []
    if tool in SKILL_TOOLS:
        source, found = "skill_tool", _skill_tool(_fields(args))
    elif any(tool[-len(suffix) :] == suffix for suffix in READER_SUFFIXES):
        source, found = "structured_read", _structured(_fields(args))
    elif skill_shell.is_shell_tool(tool):
        source, found = "shell_read", _shell(_fields(args), tool)
    else:
        return []
    return [(name, source) for name in dict.fromkeys(found)]


def _shell(fields: Fields, tool: tuple[str, ...]) -> Iterator[str]:
    for path in skill_shell.reads(fields, tool):
        name = skill_dir(path)
        if name is not None:
            yield name


def _fields(args: dict[Any, Any]) -> Fields:
    """The arguments keyed by their words (``filePath`` is ``file_path``), in sorted key order."""
    return [
        ("_".join(words(key)), args[key]) for key in sorted(k for k in args if isinstance(k, str))
    ]
