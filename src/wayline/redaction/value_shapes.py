"""What a value looks like: a key, a short vendor key, or a name made of words.

The assignment scan, the structured walk and the password rules ask the same questions of a
value once a credential name or word has pointed at it.
"""

from __future__ import annotations

from wayline.redaction._lazyre import lazy_compile
from wayline.redaction.secret_names import made_of_words

__all__ = ["ENV_NAME", "credential_like", "pronounceable", "short_key_like"]

ENV_NAME = lazy_compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
"""An environment variable's name in capitals (``SENDGRID_KEY``): such a name holds a literal."""

# A run of consonants no word has (y counts as a vowel): random letters have them often.
_CONSONANTS = lazy_compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}")
_SHORT_KEY = lazy_compile(r"[A-Za-z0-9]{10,15}")


def pronounceable(value: str) -> bool:
    """``made_of_words``, and no run of five consonants (which no word has)."""
    return made_of_words(value) and _CONSONANTS.search(value) is None


_CREDENTIAL_CHARS = lazy_compile(r"[A-Za-z0-9+/=_\-.~]{16,512}")


def credential_like(value: str, name: str = "") -> bool:
    """A value shaped like a key: 16+ token characters with letters and digits, no path/URL.
    Under an environment name in capitals (``SENDGRID_KEY``), 16+ token characters in mixed
    case are a key whatever their digits: such a name holds a literal."""
    if _CREDENTIAL_CHARS.fullmatch(value) is None or value.count("/") > 1 or ".." in value:
        return False
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    uri = "." in value and "/" in value  # io.modelcontextprotocol/subscriptionId
    if (
        mixed
        and ENV_NAME.fullmatch(name) is not None
        and "." not in value[:1] + value[-1:]
        and not uri
    ):
        return True
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    if letters >= 2 and digits >= 4:
        return True
    # A vendor key of letters with few digits (SENDGRID_KEY=AbcdefGhijkLmnop…): mixed case
    # that is not a name made of words (HEROKU_KEY=DefaultKeyName stays); with a digit, 16
    # characters are enough (nasdaq_key = yhTFulkELh3-jC6oudRX).
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    long_enough = digits + letters >= 20 or digits > 0
    return mixed and long_enough and not pronounceable(value)


def short_key_like(value: str) -> bool:
    """A short vendor key (10 to 15 characters, as some vendors issue): letters and digits
    alone, at least three of each, and no name made of words (``layer12norm3``)."""
    if _SHORT_KEY.fullmatch(value) is None:
        return False
    letters = sum(c.isalpha() for c in value)
    return letters >= 3 and len(value) - letters >= 3 and not pronounceable(value)
