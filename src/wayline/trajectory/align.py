"""Aligning two step lists in O(n log n): what ``wayline diff`` pairs, adds and drops.

A general sequence matcher (``difflib``) is quadratic on step lists, whose shapes repeat (a
coding agent's steps are mostly ``agent`` steps calling one of three tools). Instead:

1. steps whose content is the same on both sides and unique on each side are anchors; the
   longest run of anchors in order on both sides (a longest increasing subsequence) is kept,
   as patience diff does. Between two anchors, the same is done again with the steps unique
   in that gap, a bounded number of times;
2. a gap that is small (``SMALL`` pairs of steps at most) is aligned exactly by shape with
   ``difflib``, so short trajectories align as they always did;
3. a larger gap is walked once by shape, looking a bounded window ahead on either side for
   the nearest step of the same shape, or past a run of steps of one shape (a block of added
   or dropped steps), so one extra step is one difference, not a cascade.

Every stage is linear or n log n in the number of steps, so the whole is too.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Hashable, Sequence

__all__ = ["Opcode", "align"]

Opcode = tuple[str, int, int, int, int]
"""``(tag, i1, i2, j1, j2)`` as :meth:`difflib.SequenceMatcher.get_opcodes` gives them:
``equal``/``replace`` pair ``a[i1:i2]`` with ``b[j1:j2]``, ``delete`` drops ``a[i1:i2]``,
``insert`` adds ``b[j1:j2]``."""

SMALL = 4096
"""A gap of at most this many step pairs (``len(a) * len(b)``) is aligned exactly."""
WINDOW = 32
"""How far past a mismatch the walk of a large gap looks for a step of the same shape."""
DEPTH = 4
"""How many times anchors are looked for again inside the gap between two anchors."""


def align(
    shape_a: Sequence[Hashable],
    shape_b: Sequence[Hashable],
    content_a: Sequence[Hashable],
    content_b: Sequence[Hashable],
) -> list[Opcode]:
    """Opcodes that turn ``a`` into ``b``: steps are paired by content first, then by shape.

    ``shape_*`` is what makes two steps comparable (source, tool names); ``content_*`` what
    makes them the same (text, arguments). Both pairs of sequences have one item per step.
    """
    out: list[Opcode] = []
    _Aligner(shape_a, shape_b, content_a, content_b, out).gap(0, len(shape_a), 0, len(shape_b))
    return _merged(out)


class _Aligner:
    def __init__(
        self,
        shape_a: Sequence[Hashable],
        shape_b: Sequence[Hashable],
        content_a: Sequence[Hashable],
        content_b: Sequence[Hashable],
        out: list[Opcode],
    ) -> None:
        self.sa, self.sb, self.ca, self.cb, self.out = shape_a, shape_b, content_a, content_b, out

    def gap(self, i1: int, i2: int, j1: int, j2: int, depth: int = 0) -> None:
        """Align ``a[i1:i2]`` with ``b[j1:j2]``, appending opcodes in order."""
        ca, cb = self.ca, self.cb
        # Equal content at both ends needs no search (the usual case: a replay, an edit).
        while i1 < i2 and j1 < j2 and ca[i1] == cb[j1]:
            self.out.append(("equal", i1, i1 + 1, j1, j1 + 1))
            i1, j1 = i1 + 1, j1 + 1
        tail: list[Opcode] = []
        while i2 > i1 and j2 > j1 and ca[i2 - 1] == cb[j2 - 1]:
            tail.append(("equal", i2 - 1, i2, j2 - 1, j2))
            i2, j2 = i2 - 1, j2 - 1
        if i1 == i2 or j1 == j2:
            self._ends(i1, i2, j1, j2)
        elif (i2 - i1) * (j2 - j1) <= SMALL:
            self._exact(i1, i2, j1, j2)
        else:
            anchors = _anchors(ca, cb, i1, i2, j1, j2) if depth < DEPTH else []
            if anchors:
                for i, j in anchors:
                    self.gap(i1, i, j1, j, depth + 1)
                    self.out.append(("equal", i, i + 1, j, j + 1))
                    i1, j1 = i + 1, j + 1
                self.gap(i1, i2, j1, j2, depth + 1)
            else:
                self._walk(i1, i2, j1, j2)
        self.out.extend(reversed(tail))

    def _ends(self, i1: int, i2: int, j1: int, j2: int) -> None:
        if i1 < i2:
            self.out.append(("delete", i1, i2, j1, j1))
        if j1 < j2:
            self.out.append(("insert", i2, i2, j1, j2))

    def _exact(self, i1: int, i2: int, j1: int, j2: int) -> None:
        matcher = difflib.SequenceMatcher(None, self.sa[i1:i2], self.sb[j1:j2], autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            self.out.append((tag, i1 + a1, i1 + a2, j1 + b1, j1 + b2))

    def _walk(self, i1: int, i2: int, j1: int, j2: int) -> None:
        """One pass by shape: pair equal shapes, skip to the nearest match within the window,
        or past a run of one shape (a block of added or dropped steps, however long)."""
        sa, sb, out = self.sa, self.sb, self.out
        run_a, run_b = _run_ends(sa, i1, i2), _run_ends(sb, j1, j2)
        i, j = i1, j1
        while i < i2 and j < j2:
            if sa[i] == sb[j]:
                out.append(("equal", i, i + 1, j, j + 1))
                i, j = i + 1, j + 1
                continue
            skip_a = skip_b = 0
            for d in range(1, WINDOW + 1):
                if i + d < i2 and sa[i + d] == sb[j]:
                    skip_a = d
                    break
                if j + d < j2 and sa[i] == sb[j + d]:
                    skip_b = d
                    break
            if not (skip_a or skip_b):
                end_a, end_b = run_a[i - i1], run_b[j - j1]
                after_a = end_a < i2 and sa[end_a] == sb[j]
                after_b = end_b < j2 and sa[i] == sb[end_b]
                if after_a and (not after_b or end_a - i <= end_b - j):
                    skip_a = end_a - i
                elif after_b:
                    skip_b = end_b - j
            if skip_a:
                out.append(("delete", i, i + skip_a, j, j))
                i += skip_a
            elif skip_b:
                out.append(("insert", i, i, j, j + skip_b))
                j += skip_b
            else:  # nothing alike nearby: the two steps stand for each other
                out.append(("replace", i, i + 1, j, j + 1))
                i, j = i + 1, j + 1
        self._ends(i, i2, j, j2)


def _run_ends(shapes: Sequence[Hashable], start: int, stop: int) -> list[int]:
    """For each position of ``shapes[start:stop]``, where its run of one shape ends."""
    ends = [stop] * (stop - start)
    for k in range(stop - 2, start - 1, -1):
        if shapes[k] == shapes[k + 1]:
            ends[k - start] = ends[k + 1 - start]
        else:
            ends[k - start] = k + 1
    return ends


def _anchors(
    ca: Sequence[Hashable], cb: Sequence[Hashable], i1: int, i2: int, j1: int, j2: int
) -> list[tuple[int, int]]:
    """Positions of content unique in both ``a[i1:i2]`` and ``b[j1:j2]``, the longest run of
    them in the same order on both sides."""
    seen_a: dict[Hashable, int] = {}
    for i in range(i1, i2):
        seen_a[ca[i]] = -1 if ca[i] in seen_a else i
    seen_b: dict[Hashable, int] = {}
    for j in range(j1, j2):
        key = cb[j]
        if seen_a.get(key, -1) >= 0:
            seen_b[key] = -1 if key in seen_b else j
    pairs = [(seen_a[k], j) for k, j in seen_b.items() if j >= 0]
    pairs.sort()
    return _increasing(pairs)


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by the first item) increasing in the second
    (patience sorting, O(k log k))."""
    tops: list[int] = []  # the smallest j ending an increasing run of each length
    ends: list[int] = []  # the index in pairs of that run's end
    back: list[int] = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tops, j)
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k] = j
            ends[k] = n
        back[n] = ends[k - 1] if k else -1
    out: list[tuple[int, int]] = []
    n = ends[-1] if ends else -1
    while n >= 0:
        out.append(pairs[n])
        n = back[n]
    out.reverse()
    return out


def _merged(opcodes: list[Opcode]) -> list[Opcode]:
    """Adjacent opcodes of the same tag joined, as ``difflib`` would give them."""
    out: list[Opcode] = []
    for op in opcodes:
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if out and out[-1][0] == op[0] and out[-1][2] == op[1] and out[-1][4] == op[3]:
            prev = out[-1]
            out[-1] = (op[0], prev[1], op[2], prev[3], op[4])
        else:
            out.append(op)
    return out
