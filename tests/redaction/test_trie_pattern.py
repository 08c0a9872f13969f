"""The trie-shaped trigger pattern finds a word exactly where a flat alternation does."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from wayline.redaction._trie import any_word_pattern

_alphabet = "abk-_.:@ sy"


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.text(alphabet=_alphabet, min_size=1, max_size=5), max_size=12),
    text=st.text(alphabet=_alphabet, max_size=60),
)
def test_trie_search_agrees_with_a_flat_alternation(words: list[str], text: str) -> None:
    """Whether any word occurs (and where the first one starts) is the same for both."""
    trie = re.compile(any_word_pattern(words))
    flat = re.compile("|".join(re.escape(w) for w in words) or r"(?!x)x")
    a, b = trie.search(text), flat.search(text)
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        assert a.start() == b.start()


def test_no_words_never_match() -> None:
    """An empty word list gives a pattern that matches nothing, not everything."""
    assert re.compile(any_word_pattern([])).search("anything") is None
    assert re.compile(any_word_pattern([""])).search("anything") is None
