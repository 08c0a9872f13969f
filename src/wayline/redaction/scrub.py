"""Messages and log lines without credentials: the known secrets of one sender (its header
values, its endpoint's userinfo and query values), any URL's userinfo and query values, and
what the redaction rules find.

For text about a connection (an exporter's error, the SDK's retry line quoting the request
URL), where the exact values are known to the caller and must never be printed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from wayline.redaction.redact import REDACTED, redact_text

__all__ = ["ScrubFilter", "scrub"]

# In free text (an exception's message, a log line): a URL's userinfo, and a query value.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#]*@")
_QUERY_VALUE = re.compile(r"(?P<name>[?&][^\s=&#?'\"<>]+=)[^\s&#'\"<>]+")


def scrub(text: str, secrets: Mapping[str, str] | None = None) -> str:
    """``text`` without credentials: every value of ``secrets`` (4 characters or more), any
    URL's userinfo and query values, and what the redaction rules find."""
    for value in sorted((v for v in (secrets or {}).values() if len(v) >= 4), key=len)[::-1]:
        text = text.replace(value, REDACTED)
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    text = _QUERY_VALUE.sub(lambda m: f"{m['name']}{REDACTED}", text)
    return redact_text(text)


class ScrubFilter(logging.Filter):
    """A logging filter that rewrites each record's text with :func:`scrub` and ``secrets``.

    An observer: it never drops a record and never raises; it runs on the logging thread,
    and does not block."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        super().__init__()
        self.secrets = dict(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the record's message (and exception text) by their scrubbed forms."""
        try:
            message = record.getMessage()
            record.msg, record.args = scrub(message, self.secrets), None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = scrub(record.exc_text, self.secrets)
        except Exception:  # a record that cannot be formatted stays as it is
            return True
        return True
