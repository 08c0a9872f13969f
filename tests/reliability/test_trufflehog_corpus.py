"""The trufflehog corpus (issue 36): its reader of Go test tables and the cases it wrote.

The leak figures themselves are printed by ``corpus/heldout.py``; these tests pin that the
corpus is what its README says, and that the reader evaluates the Go forms it claims to.
"""

from __future__ import annotations

import pytest
from corpus import heldout, measure
from corpus.extract_trufflehog import GoFile, secret_of

_GO = """
package demo

var (
	keyword      = "demo"
	validPattern = "Zq8vW3xY5uT7sR1pL0kM" // a comment, dropped
	validId      = "4d2c"
	invalid      = `Zq8v_3xY`
)

func TestDemo_Pattern(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{
			name:  "valid pattern",
			input: fmt.Sprintf("%s token = '%s'\\tid=%q", keyword, validPattern, validId),
			want:  []string{validPattern + validId},
		},
		{
			name:  "invalid pattern",
			input: keyword + ": " + invalid,
			want:  nil,
		},
		{
			name:        "data shape",
			data:        `key: ` + strings.Repeat("ab", 2),
			shouldMatch: true,
			match:       "abab",
		},
		{
			name:  "not read",
			input: helper(validPattern),
			want:  []string{},
		},
	}
}
"""


def test_reader_evaluates_sprintf_concatenation_and_both_table_shapes() -> None:
    """Constants, ``fmt.Sprintf`` with %s/%q, ``+``, ``strings.Repeat`` and the two table shapes
    are read; an element built by an unknown call is counted as unread, not guessed."""
    go = GoFile(_GO)
    tables = go.tables()
    assert tables == [
        (
            "valid pattern",
            "demo token = 'Zq8vW3xY5uT7sR1pL0kM'\tid=\"4d2c\"",
            ["Zq8vW3xY5uT7sR1pL0kM4d2c"],
        ),
        ("invalid pattern", "demo: Zq8v_3xY", []),
        ("data shape", "key: abab", ["abab"]),
    ]
    assert go.unread == 1


def test_joined_values_keep_their_random_piece() -> None:
    """A reported key joined with its id, a JSON object or an endpoint gives the key."""
    text = "demo token = 'Zq8vW3xY5uT7sR1pL0kM' id=4d2c host=api.demo.io"
    assert secret_of("Zq8vW3xY5uT7sR1pL0kM4d2c", text) == "Zq8vW3xY5uT7sR1pL0kM"
    assert secret_of('{"id":"4d2c","key":"Zq8vW3xY5uT7sR1pL0kM"}', text) == "Zq8vW3xY5uT7sR1pL0kM"
    assert secret_of("Zq8vW3xY5uT7sR1pL0kMhttps://api.demo.io", text) == "Zq8vW3xY5uT7sR1pL0kM"
    assert secret_of("nothing-of-it", text) is None
    url = "mongodb://u:Pq9rS8tU7v@h.example.net:27017/?ssl=true"
    assert secret_of(url, "mongodb://u:Pq9rS8tU7v@h.example.net:27017/?tls=1") == "Pq9rS8tU7v"


@pytest.mark.skipif(
    not heldout.TRUFFLEHOG.exists(), reason="trufflehog's cases are extracted by hand (AGPL-3.0)"
)
def test_corpus_cases_name_their_source_and_hold_their_secret() -> None:
    """Every case names a trufflehog test file and a known family, every secret's part that
    must vanish is in its text, and both halves hold counted secrets."""
    cases = heldout.trufflehog_cases()
    families = {"private_key", "ai_provider", "cloud", "vcs", "database_url", "auth_header"}
    assert {c.family for c in cases} <= families | {"generic", "saas"}
    halves = {"tune": 0, "held": 0}
    for case in cases:
        assert case.source.startswith("trufflehog:pkg/detectors/"), case.source
        assert case.source.endswith("_test.go"), case.source
        if case.secret is not None:
            assert measure.needle(case.secret, case.text) in case.text, case.rule
    counted, _ = heldout.counted(cases)
    for case in counted:
        if case.secret is not None and measure.excluded(case) is None:
            halves[heldout.half(case)] += 1
    assert min(halves.values()) > 100, halves
