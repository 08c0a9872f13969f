"""A regular expression that finds whether any of many literal words occurs, built as a trie."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["WordFinder", "any_word_pattern"]

_Node = dict[str, "_Node"]
_END = ""  # a word ends at this node


def any_word_pattern(words: Iterable[str]) -> str:
    """A pattern whose ``search`` succeeds exactly where one of ``words`` starts.

    A flat ``a|b|c`` alternation makes ``re`` try every word at every position; nested by
    shared prefixes, each position costs one test per distinct first character (about 3x
    faster on text of a few KB). A word that another word starts with stands for both: a
    search only asks whether some word occurs. No words: a pattern that never matches.
    """
    root: _Node = {}
    for word in words:
        if not word:
            continue
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[_END] = {}
    return _alternatives(root) if root else r"(?!x)x"


def _alternatives(node: _Node) -> str:
    if _END in node:
        return ""  # the shorter word already matches
    branches = [re.escape(ch) + _alternatives(child) for ch, child in sorted(node.items())]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


# Until the texts searched add up to this many characters (about what compiling the pattern of
# a few hundred triggers costs in ``in`` tests), and for texts up to _SCAN_TEXT, each word is
# looked for with ``in``: a process that redacts a few short texts never compiles the pattern.
_SCAN_BUDGET = 16_384
_SCAN_TEXT = 2_048


class WordFinder:
    """Which of many literal words occur in a text, found in one regex pass.

    ``re.findall`` of the trie inside a lookahead reports, at every position, the shortest
    word starting there; a longer word is then one substring test, made only when a word it
    starts with occurred. Checking every word with ``in`` scans the text once per word, which
    is cheaper only than compiling the pattern: short texts are searched so until they add up
    to ``scan`` characters, and the pattern is compiled for the first text after them.
    """

    __slots__ = ("_longer", "_scan", "_starts", "_words")

    def __init__(self, words: Iterable[str], *, scan: int = _SCAN_BUDGET) -> None:
        self._words = tuple(sorted({w for w in words if w}))
        self._longer: dict[str, tuple[str, ...]] = {}
        self._starts: re.Pattern[str] | None = None
        self._scan = scan  # characters still to search word by word

    def found(self, text: str) -> set[str]:
        """Every word that occurs in ``text``."""
        starts = self._starts
        if starts is None:
            if len(text) <= _SCAN_TEXT and self._scan > 0:
                # Two threads may both count: the budget bounds the work, it is not exact.
                self._scan -= len(text)
                return {w for w in self._words if w in text}
            starts = self._compile()
        shortest = set(starts.findall(text))
        hits = set(shortest)
        longer = self._longer
        for word in shortest:
            hits.update(t for t in longer[word] if t in text)
        return hits

    def _compile(self) -> re.Pattern[str]:
        # Two threads may both compile; each sets equal tables, ``_longer`` before ``_starts``
        # so that a thread seeing the pattern also sees the table it needs.
        unique = self._words
        # Sorted, the words a word starts are the run right after it: one pass, not one
        # test per pair of words (hundreds of triggers made that a visible start-up cost).
        longer: dict[str, tuple[str, ...]] = {}
        for i, word in enumerate(unique):
            end = i + 1
            while end < len(unique) and unique[end].startswith(word):
                end += 1
            longer[word] = tuple(unique[i + 1 : end])
        if not unique:
            starts = re.compile(r"(?!x)x")
        else:
            first = "[" + "".join(sorted({re.escape(w[0]) for w in unique})) + "]"
            # The word's first character leads, so the engine skips to candidates at C speed;
            # the lookbehind steps back onto it and the lookahead captures the word from there.
            starts = re.compile(first + "(?<=(?=(" + any_word_pattern(unique) + "))" + first + ")")
        self._longer = longer
        self._starts = starts
        return starts
