"""The trie-shaped trigger pattern finds a word exactly where a flat alternation does, and the
literal-led patterns match exactly where the patterns they replace did."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from wayline.redaction._trie import WordFinder, any_word_pattern
from wayline.redaction.redact_rules import ci_word_start, word_start

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


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.text(alphabet=_alphabet, min_size=1, max_size=5), max_size=12),
    text=st.text(alphabet=_alphabet, max_size=60),
)
def test_word_finder_finds_every_word_that_occurs(words: list[str], text: str) -> None:
    """The words found are exactly those that occur, prefixes and overlaps included, both when
    they are looked for one by one and by the compiled pattern's one findall pass."""
    expected = {w for w in words if w and w in text}
    assert WordFinder(words).found(text) == expected
    assert WordFinder(words, scan=0).found(text) == expected


def test_word_finder_compiles_its_pattern_once_short_texts_have_used_the_budget() -> None:
    """Short texts are searched word by word until ``scan`` characters; then, and for any
    long text, the pattern is compiled, and the answers stay the same throughout."""
    words = ["secret", "sec", "token", "key", "passwd"]
    finder = WordFinder(words, scan=40)
    text = "my secret key, not a token"
    assert finder.found(text) == {"secret", "sec", "key", "token"}
    assert finder.found(text) == {"secret", "sec", "key", "token"}
    assert finder._starts is None  # 14 of the 40 characters were left: still word by word
    assert finder.found(text) == {"secret", "sec", "key", "token"}
    assert finder._starts is not None  # the budget was spent: the pattern serves from now on
    assert finder.found("passwd=x") == {"passwd"}
    long = WordFinder(words)
    assert long.found("x" * 5000 + "passwd") == {"passwd"}
    assert long._starts is not None  # a long text is never searched word by word


# The words in cases IGNORECASE matches (Kelvin sign, long s, dotted and dotless i among
# them), glued to word characters or not.
_pieces = st.sampled_from(
    [
        *("secret", "SECRET", "\u017fecret", "kit", "\u212ait", "Kit"),
        *("ice", "\u0130ce", "\u0131ce", "x", "_", " ", ".", "\t", "é"),
    ]
)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_pieces, max_size=8).map("".join))
def test_led_word_patterns_match_where_word_boundary_patterns_do(text: str) -> None:
    """A pattern led by its words' literals or first letters matches where ``\\b`` + words did."""
    words = ("secret", "kit", "ice")
    pairs = [
        (ci_word_start(words, r"[ \t]*\.?"), r"\b(?i:(?:secret|kit|ice)[ \t]*\.?)"),
        (word_start("secret", ".kit", "ice"), r"\b(?:secret|\.kit|ice)"),
    ]
    for led, plain in pairs:
        spans = [m.span() for m in re.finditer(led, text)]
        assert spans == [m.span() for m in re.finditer(plain, text)]
