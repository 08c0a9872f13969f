"""Exact multi-string search in one linear pass: an Aho–Corasick automaton with a q-gram gate.

:class:`Automaton` finds every occurrence of any of a fixed set of literal strings (the known
values and their encodings, :mod:`wayline.redaction.known`) and :meth:`Automaton.mask`
replaces the union of those occurrences. The automaton is the textbook one (a trie of the
strings, failure links built breadth first, and for each state the longest string that ends
there), so a text is read once whatever the strings share: no backtracking, no rescans.

Running the automaton costs a Python step per character. Most text holds no known value, so a
gate skips it at C speed first: every string is at least ``min_length`` long, so each
occurrence contains a q-gram that starts at a multiple of ``step``; the gate takes those
q-grams of the text (a slice per ``step`` characters, in C) and asks a set whether any of them
is a q-gram of some string. Only when one is does the automaton run, and only over windows
around the q-grams that matched, each character at most once.

Line breaks are transparent: the strings are built without ``\\r`` and ``\\n`` and the text is
searched with them removed, so a value wrapped over lines (``base64`` wraps at 76 columns, a
PEM body at 64) is found, and its replacement covers the breaks inside it.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import compress

from wayline.redaction._lazyre import lazy_compile

__all__ = ["Automaton"]

_GRAM = 4  # q-gram length of the gate
_BREAKS = lazy_compile(r"[\r\n]")


class Automaton:
    """Aho–Corasick over ``patterns`` (line breaks removed; empty strings ignored).

    Immutable once built, so any number of threads may search with one at the same time.
    """

    __slots__ = ("_fail", "_goto", "_grams", "_longest", "_q", "_step", "count", "max_length")

    def __init__(self, patterns: Iterable[str]) -> None:
        goto: list[dict[str, int]] = [{}]
        longest = [0]  # the length of the longest pattern that is a suffix of the state
        words = {p.replace("\r", "").replace("\n", "") for p in patterns} - {""}
        for word in words:
            state = 0
            for ch in word:
                nxt = goto[state].get(ch)
                if nxt is None:
                    nxt = len(goto)
                    goto.append({})
                    longest.append(0)
                    goto[state][ch] = nxt
                state = nxt
            longest[state] = max(longest[state], len(word))
        fail = [0] * len(goto)
        queue = deque(goto[0].values())  # depth 1 fails to the root
        while queue:
            state = queue.popleft()
            for ch, child in goto[state].items():
                back = fail[state]
                while back and ch not in goto[back]:
                    back = fail[back]
                target = goto[back].get(ch, 0)
                fail[child] = target
                longest[child] = max(longest[child], longest[target])
                queue.append(child)
        self._goto = goto
        self._fail = fail
        self._longest = longest
        self.count = len(words)
        self.max_length = max(map(len, words), default=0)
        shortest = min(map(len, words), default=0)
        self._q = min(_GRAM, shortest)
        # Every occurrence (at least `shortest` long) holds a q-gram starting at a multiple
        # of the step.
        self._step = max(1, shortest - self._q + 1)
        q = self._q
        self._grams = frozenset(w[i : i + q] for w in words for i in range(len(w) - q + 1))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Sorted, disjoint ``(start, end)`` ranges of ``text`` covered by occurrences
        (overlapping or touching occurrences are merged into one range)."""
        n = len(text)
        q = self._q
        if not self.count or n < q:
            return []
        grams, step = self._grams, self._step
        if grams.isdisjoint(_samples(text, q, step)):
            return []
        # The sampled places whose q-gram is some pattern's: each occurrence holds one.
        hits = compress(range(0, n - q + 1, step), map(grams.__contains__, _samples(text, q, step)))
        return self._run(text, hits)

    def _run(self, text: str, triggers: Iterator[int]) -> list[tuple[int, int]]:
        goto, fail, longest = self._goto, self._fail, self._longest
        n, q, reach = len(text), self._q, self.max_length
        out: list[tuple[int, int]] = []
        scanned = 0  # text[:scanned] was read by the automaton, which is now in `state`
        state = 0
        for at in triggers:
            if at + q <= scanned:
                continue  # read already, by a scan that went on past any value holding it
            # An occurrence holding the q-gram at `at` starts at `at + q - reach` or later;
            # one starting earlier holds an earlier trigger, whose scan ran past its end.
            i = at + q - reach
            if i > scanned:
                state = 0
            else:
                i = scanned
            stop = at + q
            while i < n and (i < stop or state):
                ch = text[i]
                while True:
                    nxt = goto[state].get(ch)
                    if nxt is not None:
                        state = nxt
                        break
                    if not state:
                        break
                    state = fail[state]
                size = longest[state]
                i += 1
                if size:
                    # A long value may start before ranges found inside it: absorb them.
                    start = i - size
                    while out and start <= out[-1][1]:
                        start = min(start, out.pop()[0])
                    out.append((start, i))
            scanned = i
        return out

    def mask(self, text: str, replacement: str) -> str:
        """``text`` with every occurrence replaced by ``replacement`` (one per merged range),
        line breaks inside a value included."""
        if not self.count or len(text) < self._q:
            return text
        if "\n" not in text and "\r" not in text:
            spans = self.spans(text)
            if not spans:
                return text
        else:
            flat = text.replace("\r", "").replace("\n", "")
            spans = self.spans(flat)
            if not spans:
                return text
            spans = _unflatten(text, spans)
        parts: list[str] = []
        pos = 0
        for start, end in spans:
            parts.append(text[pos:start])
            parts.append(replacement)
            pos = end
        parts.append(text[pos:])
        return "".join(parts)


def _samples(text: str, q: int, step: int) -> Iterable[str]:
    """The q-grams of ``text`` starting at multiples of ``step``, sliced in C."""
    n = len(text)
    return map(text.__getitem__, map(slice, range(0, n - q + 1, step), range(q, n + 1, step)))


def _unflatten(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ranges of the text without line breaks, as ranges of ``text`` (breaks inside kept in)."""
    # before[k]: how many other characters precede the k-th line break of `text`.
    before = [m.start() - k for k, m in enumerate(_BREAKS.finditer(text))]

    def original(index: int) -> int:  # where the index-th non-break character is
        return index + bisect.bisect_right(before, index)

    return [(original(start), original(end - 1) + 1) for start, end in spans]
