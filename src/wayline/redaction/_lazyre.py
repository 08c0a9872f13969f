"""Regular expressions compiled on first use, for the rules' module-level patterns.

Compiling a pattern runs ``re``'s parser and compiler, which are Python code: the package's
patterns cost every process's start-up, while most of them serve rules whose triggers never
occur in a given process. A `LazyPattern` compiles when it is first used.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["LazyPattern", "lazy_compile"]

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """A ``re.Pattern`` that compiles itself on the first call of one of its methods.

    The first call binds the compiled pattern's own methods on the instance, where attribute
    lookup finds them before the class's: later calls go straight to ``re`` with no test and
    no lock. Two threads that first use a pattern at once both compile it and bind equal
    patterns (``re`` caches them, so usually the same one): the race is harmless.
    """

    def __init__(self, pattern: str, flags: int | re.RegexFlag = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now, on the first call)."""
        regex = re.compile(self.pattern, self._flags)
        bound: dict[str, Any] = {name: getattr(regex, name) for name in _METHODS}
        bound["compiled"] = lambda: regex
        vars(self).update(bound)
        return regex

    @property
    def groupindex(self) -> Any:
        """The compiled pattern's ``groupindex``."""
        return self.compiled().groupindex

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """``re.Pattern.search``."""
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """``re.Pattern.match``."""
        return self.compiled().match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        """``re.Pattern.fullmatch``."""
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        """``re.Pattern.finditer``."""
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        """``re.Pattern.findall``."""
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """``re.Pattern.sub``."""
        return self.compiled().sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        """``re.Pattern.subn``."""
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        """``re.Pattern.split``."""
        return self.compiled().split(string, maxsplit)


def lazy_compile(pattern: str, flags: int | re.RegexFlag = 0) -> LazyPattern:
    """A pattern compiled on first use: ``compiled(p)`` where a module would ``re.compile(p)``."""
    return LazyPattern(pattern, flags)
