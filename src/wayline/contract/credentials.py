"""URLs as a message or a log may show them: without the credentials a URL can carry.

An endpoint may hold a password (``https://user:pass@host``) or a key in its query string
(``?api_key=…``); an error or a log line that names the endpoint shows neither. Used by the
ATOF stream sink, the OpenTelemetry plugin's settings and ``wayline export otlp``, whose log
filters hide what :func:`url_credentials` finds in any text.
"""

from __future__ import annotations

from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

__all__ = ["HIDDEN", "shown_url", "url_credentials"]

HIDDEN = "<redacted>"
"""What stands in for a hidden part (the redaction marker)."""


def shown_url(url: str) -> str:
    """``url`` with its userinfo and the value of each query parameter replaced by
    ``<redacted>``, and its fragment dropped; the scheme, host, port, path and parameter
    names stay, so the message still says where."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError:
        return f"(a URL that cannot be parsed, {len(url)} characters)"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rpartition('@')[2]}"
    query = "&".join(
        f"{name}={HIDDEN}" if sep else name
        for name, sep, _ in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def url_credentials(url: str) -> dict[str, str]:
    """The credentials ``url`` carries, each keyed by where it came from: its userinfo, the
    password in it, and each query parameter's value, as written and percent-decoded (a
    message may quote either form). Empty values are left out."""
    parts = urlsplit(url)
    found: dict[str, str] = {}
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        found["userinfo"] = userinfo
        found["password"] = userinfo.partition(":")[2]
        found["password (decoded)"] = unquote(found["password"])
    for item in parts.query.split("&"):
        name, _, value = item.partition("=")
        if value:
            found[f"query {name}"] = value
            found[f"query {name} (decoded)"] = unquote_plus(value)
    return {k: v for k, v in found.items() if v}
