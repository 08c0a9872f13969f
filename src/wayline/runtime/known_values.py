"""The secrets an agent knows it has: masked as values in everything it records.

Built once per runtime (``build_runtime``) from what the agent is given, as it is when the
agent starts: the provider API key and credentials in the base URL (the agent's and the
children's), the values of credential-like environment variables, the header values the
plugins' settings configure (``headers``, ``header_env``, and the OTLP header variables), and
the config's ``redaction`` section:

.. code-block:: yaml

    redaction:
      env: [DEPLOY_HOOK, SIGNING_SEED]   # variables whose values are secret, whatever their names
      files: [.env, ~/.config/acme/creds] # KEY=VALUE files: every value is secret

A relative path in ``files`` is read from the current directory (a project's ``.env``); a
file that does not exist there is skipped with a warning, so one config serves every project.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from wayline.host.config import ConfigError, YamlDoc
from wayline.redaction import KnownValues, process_values
from wayline.runtime.settings import AgentSettings

__all__ = ["MAX_SECRETS_FILE", "agent_known_values", "parse_env_file"]

log = logging.getLogger("wayline.runtime")

#: A ``redaction.files`` entry larger than this is refused (a KEY=VALUE file is small).
MAX_SECRETS_FILE = 1_048_576

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_LINE = re.compile(r"\s*(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)\s*=\s*(?P<value>.*)\Z")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_OTLP_HEADERS = (
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
)


def agent_known_values(
    doc: YamlDoc,
    settings: AgentSettings,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> KnownValues:
    """The known values of one agent (a child of the process's own, see
    ``wayline.redaction.known``). Raises ``ConfigError`` naming the field for a bad
    ``redaction`` section or a secrets file that cannot be read."""
    env = os.environ if environ is None else environ
    known = KnownValues(process_values())
    names, files = _section(doc)
    for provider, where in ((settings.provider, "model"), (settings.delegation, "delegation")):
        known.add(provider.api_key, f"{where}.api_key")
        password = _url_password(provider.base_url)
        if password:
            known.add(password, f"{where}.base_url")
    known.add_environment(env, names)
    for header, value in _configured_headers(doc, env):
        _add_header(known, value, header)
    for index, path in enumerate(files):
        values = _read_secrets_file(doc, index, path, cwd or Path.cwd())
        known.add_many(values, "redaction.files")
    return known


def _section(doc: YamlDoc) -> tuple[list[str], list[str]]:
    """``redaction.env`` and ``redaction.files``, checked."""
    section = (doc.data or {}).get("redaction")
    if section is None:
        return [], []
    if not isinstance(section, dict):
        raise doc.error("must be a mapping with env and files lists", "redaction")
    out: list[list[str]] = []
    for key, what in (("env", "an environment variable name"), ("files", "a file path")):
        items = section.get(key)
        if items is None:
            out.append([])
            continue
        if not isinstance(items, list):
            raise doc.error(
                f"must be a list of {what}s, got {type(items).__name__}", "redaction", key
            )
        for i, item in enumerate(items):
            if not isinstance(item, str) or not item.strip():
                raise doc.error(f"must be {what}, got {item!r}", "redaction", key, i)
            if key == "env" and _NAME.match(item) is None:
                raise doc.error(f"must be {what}, got {item!r}", "redaction", key, i)
        out.append([str(item) for item in items])
    return out[0], out[1]


def _read_secrets_file(doc: YamlDoc, index: int, name: str, cwd: Path) -> list[str]:
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = cwd / path

    def refuse(problem: str) -> ConfigError:
        return doc.error(f"{path}: {problem}", "redaction", "files", index)

    try:
        # Without blocking: a FIFO (or a device) in its place must not hang the start.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        log.warning(
            "%s: redaction.files.%d: %s does not exist here; its values are not masked",
            doc.path,
            index,
            path,
        )
        return []
    except OSError as exc:
        raise refuse(f"cannot read: {exc.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise refuse("not a regular file")
    with os.fdopen(fd, "rb") as fh:
        if info.st_size > MAX_SECRETS_FILE:
            raise refuse(f"larger than {MAX_SECRETS_FILE} bytes: not a KEY=VALUE file")
        try:
            text = fh.read(MAX_SECRETS_FILE + 1).decode("utf-8")
        except UnicodeDecodeError:
            raise refuse("not UTF-8 text") from None
        except OSError as exc:
            raise refuse(f"cannot read: {exc.strerror}") from None
    return [value for _, value in parse_env_file(text)]


def parse_env_file(text: str) -> list[tuple[str, str]]:
    """``(KEY, value)`` of each ``KEY=VALUE`` line of a ``.env``-style text: ``export`` and
    ``#`` comments allowed, values in single quotes taken as written, in double quotes with
    ``\\n``, ``\\"`` and ``\\\\`` unescaped and over several lines, unquoted values up to a
    `` #`` comment. Other lines are skipped."""
    pairs: list[tuple[str, str]] = []
    lines = iter(text.splitlines())
    for line in lines:
        match = _LINE.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        pairs.append((match.group("key"), _value(match.group("value"), lines)))
    return pairs


def _value(raw: str, rest: Iterator[str]) -> str:
    quote = raw[:1]
    if quote not in ("'", '"'):
        return re.split(r"\s#", raw, maxsplit=1)[0].strip()
    body = raw[1:]
    while _closing(body, quote) < 0:
        more = next(rest, None)
        if more is None:
            return body
        body += "\n" + more
    body = body[: _closing(body, quote)]
    if quote == "'":
        return body
    return re.sub(r"\\([n\"\\])", lambda m: "\n" if m.group(1) == "n" else m.group(1), body)


def _closing(body: str, quote: str) -> int:
    """Where the closing ``quote`` is (a double quote may be escaped); -1 when absent."""
    i = 0
    while i < len(body):
        if body[i] == "\\" and quote == '"':
            i += 2
            continue
        if body[i] == quote:
            return i
        i += 1
    return -1


def _url_password(url: str) -> str:
    try:
        password = urlsplit(url).password
    except ValueError:
        return ""
    return unquote(password) if password else ""


def _configured_headers(doc: YamlDoc, env: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """``(header, value)`` of every header a plugin's settings configure (``${VAR}``
    resolved), of ``header_env`` variables, and of the OTLP header variables."""
    plugins = (doc.data or {}).get("plugins") or {}
    entries = plugins.get("entries") if isinstance(plugins, dict) else None
    for settings in (entries or {}).values() if isinstance(entries, dict) else ():
        yield from _headers_in(settings, env, 0)
    for name in _OTLP_HEADERS:
        for item in env.get(name, "").split(","):
            header, _, value = item.partition("=")
            if value.strip():
                yield header.strip(), unquote(value.strip())


def _headers_in(settings: Any, env: Mapping[str, str], depth: int) -> Iterator[tuple[str, str]]:
    if not isinstance(settings, dict) or depth > 4:
        return
    for key, value in settings.items():
        if key == "headers" and isinstance(value, dict):
            for header, text in value.items():
                if isinstance(text, str):
                    yield str(header), _VAR.sub(lambda m: env.get(m.group(1), ""), text)
        elif key == "header_env" and isinstance(value, dict):
            for header, name in value.items():
                if isinstance(name, str) and env.get(name):
                    yield str(header), env[name]
        elif isinstance(value, dict):
            yield from _headers_in(value, env, depth + 1)


def _add_header(known: KnownValues, value: str, header: str) -> None:
    """A header value, and its credential after a scheme word (``Bearer <token>``)."""
    source = f"header {header}"
    known.add(value, source)
    scheme, _, credential = value.strip().partition(" ")
    if credential and scheme.isalpha():
        known.add(credential.strip(), source)
