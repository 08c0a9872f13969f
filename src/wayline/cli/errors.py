"""One way for every ``wayline`` command to end in error, warn, and name its exit status.

Answers go to stdout; errors, warnings and diagnostics go to stderr, so a pipeline that captures
stdout never takes an error for an answer. Exit statuses (docs/cli.md):

- 0: done (valid, same, reproduced, written);
- 1: the command ran and the outcome is negative: a turn that did not complete, a provider
  failure, files that differ, a replay that diverged, validation problems, nothing to export;
- 2: bad usage or input that cannot be used (a flag, a config file, a file that is missing,
  unreadable, not JSON, too deeply nested, or not the kind of file the command reads);
- 130: interrupted (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "fail",
    "say_error",
    "warn",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def say_error(message: str) -> None:
    """Print ``error: message`` on stderr as one line (newlines in ``message`` are escaped)."""
    click.echo(f"error: {_one_line(message)}", err=True)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code`` (default 2: bad input)."""
    say_error(message)
    sys.exit(code)


def warn(message: str) -> None:
    """Print ``warning: message`` on stderr as one line; the command goes on."""
    click.echo(f"warning: {_one_line(message)}", err=True)


def _one_line(message: str) -> str:
    # A hostile file name or value must not forge extra lines of output.
    return message.replace("\r", "\\r").replace("\n", "\\n")
