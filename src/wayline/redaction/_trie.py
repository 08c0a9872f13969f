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


class WordFinder:
    """Which of many literal words occur in a text, found in one regex pass.

    ``re.findall`` of the trie inside a lookahead reports, at every position, the shortest
    word starting there; a longer word is then one substring test, made only when a word it
    starts with occurred. Checking every word with ``in`` would scan the text once per word.
    """

    __slots__ = ("_longer", "_starts")

    def __init__(self, words: Iterable[str]) -> None:
        unique = sorted({w for w in words if w})
        # Sorted, the words a word starts are the run right after it: one pass, not one
        # test per pair of words (hundreds of triggers made that a visible start-up cost).
        self._longer: dict[str, tuple[str, ...]] = {}
        for i, word in enumerate(unique):
            end = i + 1
            while end < len(unique) and unique[end].startswith(word):
                end += 1
            self._longer[word] = tuple(unique[i + 1 : end])
        if not unique:
            self._starts = re.compile(r"(?!x)x")
            return
        first = "[" + "".join(sorted({re.escape(w[0]) for w in unique})) + "]"
        # The word's first character leads, so the engine skips to candidates at C speed; the
        # lookbehind steps back onto it and the lookahead captures the word from there.
        self._starts = re.compile(
            first + "(?<=(?=(" + any_word_pattern(unique) + "))" + first + ")"
        )

    def found(self, text: str) -> set[str]:
        """Every word that occurs in ``text``."""
        shortest = set(self._starts.findall(text))
        hits = set(shortest)
        for word in shortest:
            hits.update(t for t in self._longer[word] if t in text)
        return hits
