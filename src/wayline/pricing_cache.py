"""A per-user cache of ``genai-prices`` lookups: which table entry prices a model, if any.

Loading the bundled table means executing a module of tens of thousands of lines, the larger
part of a one-shot ``wayline chat -q`` with the exporters on; yet a session prices one or two
models, the same ones run after run. So the answer of each lookup (a provider name and a model
name in, the matching provider and model entry or "not in the table" out) is kept in
``$XDG_CACHE_HOME/wayline/`` (``~/.cache/wayline/`` without it), one JSON file per installed
table, and a later process that asks the same question reads it there instead of loading the
table. The price itself is always worked out by ``genai-prices``' own code, from the cached
entry rebuilt as the package's own objects, so a cost is the one the table gives.

The file is named after, and says inside, the table it was made from: the package version and
the size and modification time of the package's data module. Any other table (an upgrade, an
edited install) finds no file of its own, so no stale answer is ever used. It is written as
every file of the user cache is (:mod:`wayline.usercache`): whole, 0600; an unreadable,
foreign or damaged file counts as empty.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
from datetime import date, datetime, time
from decimal import Decimal
from importlib import metadata
from pathlib import Path
from typing import Any

from wayline.usercache import cache_dir, read_json, write_json

__all__ = ["MAX_ENTRIES", "PriceCache", "cache_dir", "decode", "encode", "table_key"]

log = logging.getLogger("wayline.pricing")

FORMAT = 1
MAX_ENTRIES = 256
"""Lookups one file keeps; the oldest go first (a session prices a handful of models)."""

Key = tuple[str | None, str]
"""(the provider name asked for or None, the model name as given)."""


class _Missing:
    pass


MISSING: Any = _Missing()
"""What :meth:`PriceCache.get` returns for a lookup it does not hold."""


@functools.cache
def _distribution() -> metadata.Distribution | None:
    try:
        return metadata.distribution("genai-prices")
    except metadata.PackageNotFoundError:
        return None


def table_version() -> str | None:
    """The installed ``genai-prices`` version, or None when it is not installed."""
    dist = _distribution()
    return dist.version if dist is not None else None


def table_key() -> str | None:
    """What names the installed table: version, size and mtime of its data module (None when
    that module is not a plain file, which then goes uncached)."""
    dist = _distribution()
    if dist is None:
        return None
    try:
        st = os.stat(str(dist.locate_file("genai_prices/data.py")))
    except (OSError, TypeError, ValueError):
        return None
    return f"{dist.version}:{st.st_size}:{st.st_mtime_ns}"


# -- the table's objects as JSON ------------------------------------------------------------


def encode(value: Any) -> Any:
    """``value`` (a genai-prices model entry and what it holds) as JSON data; ``TypeError``
    for anything else, which then goes uncached."""
    from genai_prices.types import ModelPrice

    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, Decimal):
        return {"$": "Decimal", "v": str(value)}
    if isinstance(value, datetime):
        return {"$": "datetime", "v": value.isoformat()}
    if isinstance(value, date):
        return {"$": "date", "v": value.isoformat()}
    if isinstance(value, time):
        return {"$": "time", "v": value.isoformat()}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"$": "dict", "v": {k: encode(v) for k, v in value.items()}}
    if isinstance(value, ModelPrice):
        return {"$": "ModelPrice", "v": {k: encode(v) for k, v in vars(value).items()}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _table_class(name) is not type(value):
            raise TypeError(f"not a genai-prices type: {type(value)!r}")
        fields = [f.name for f in dataclasses.fields(value) if f.init]
        return {"$": name, "v": {field: encode(getattr(value, field)) for field in fields}}
    raise TypeError(f"cannot cache a {type(value).__name__}")


def decode(data: Any) -> Any:
    """The objects :func:`encode` was given, rebuilt with genai-prices' own classes;
    ``ValueError``/``TypeError`` for data it did not write."""
    if data is None or isinstance(data, str | bool | int):
        return data
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict) or set(data) != {"$", "v"}:
        raise ValueError("not an encoded value")
    tag, inner = data["$"], data["v"]
    if tag == "Decimal":
        return Decimal(inner)
    if tag == "datetime":
        return datetime.fromisoformat(inner)
    if tag == "date":
        return date.fromisoformat(inner)
    if tag == "time":
        return time.fromisoformat(inner)
    if not isinstance(inner, dict):
        raise ValueError(f"{tag}: not a mapping")
    values = {str(k): decode(v) for k, v in inner.items()}
    if tag == "dict":
        return values
    cls = _table_class(str(tag))
    if cls is None:
        raise ValueError(f"unknown type {tag!r}")
    return cls(**values)


def _table_class(name: str) -> type | None:
    """A class of ``genai_prices.types`` that entries hold (dataclasses and ModelPrice)."""
    from genai_prices import types

    cls = getattr(types, name, None)
    if not isinstance(cls, type) or cls.__module__ != types.__name__:
        return None
    if cls is types.ModelPrice or dataclasses.is_dataclass(cls):
        return cls
    return None


# -- the file -------------------------------------------------------------------------------


class PriceCache:
    """The cached lookups of one table, read from its file on first use.

    One per :class:`~wayline.pricing.Pricer`; thread-safety is the pricer's (it holds its
    lock around these calls). ``directory`` None means "do not cache" (nothing read or
    written).
    """

    def __init__(self, directory: Path | None) -> None:
        self._directory = directory
        self._key: str | None = None
        self._path: Path | None = None
        self._entries: dict[str, Any] | None = None
        self._writable = True

    def _file(self) -> Path | None:
        if self._directory is None:
            return None
        if self._path is None:
            key = table_key()
            if key is None:
                self._directory = None
                return None
            digest = hashlib.sha256(key.encode()).hexdigest()[:16]
            version = key.split(":", 1)[0]
            self._key = key
            self._path = self._directory / f"prices-{version}-{digest}.json"
        return self._path

    def _read(self) -> dict[str, Any]:
        path = self._file()
        if path is None:
            return {}
        doc = read_json(path)
        if not isinstance(doc, dict):
            return {}
        if doc.get("format") != FORMAT or doc.get("table") != self._key:
            return {}
        entries = doc.get("lookups")
        return entries if isinstance(entries, dict) else {}

    def load(self) -> None:
        """Read the file now, if it has not been read."""
        if self._entries is None:
            self._entries = self._read()

    def get(self, key: Key) -> Any:
        """``(provider, model)`` entry objects, None ("not in the table"), or ``MISSING``."""
        self.load()
        assert self._entries is not None
        name = _name(key)
        if name not in self._entries:
            return MISSING
        entry = self._entries[name]
        if entry is None:
            return None
        try:
            return _rebuild(entry)
        except (TypeError, ValueError, KeyError, ArithmeticError) as exc:
            log.debug("price cache: entry %s unusable (%s); looking it up", name, exc)
            return MISSING

    def put(self, key: Key, found: Any) -> None:
        """Keep a lookup's answer (``(provider, model)`` or None) and write the file."""
        path = self._file()
        if path is None or not self._writable:
            return
        try:
            entry = None if found is None else _flatten(found)
        except TypeError as exc:
            log.debug("price cache: %s not cached (%s)", _name(key), exc)
            return
        entries = self._read()  # what other processes added meanwhile
        entries.pop(_name(key), None)
        entries[_name(key)] = entry
        while len(entries) > MAX_ENTRIES:
            del entries[next(iter(entries))]
        self._entries = entries
        try:
            write_json(path, {"format": FORMAT, "table": self._key, "lookups": entries})
        except OSError as exc:
            self._writable = False
            log.debug("price cache: cannot write %s (%s); pricing goes on uncached", path, exc)


def _name(key: Key) -> str:
    provider, model = key
    return json.dumps([provider, model])


def _flatten(found: Any) -> dict[str, Any]:
    provider, model = found
    return {
        "provider": {"id": provider.id, "name": provider.name, "api_pattern": provider.api_pattern},
        "model": encode(model),
    }


def _rebuild(entry: Any) -> tuple[Any, Any]:
    """The provider (only what pricing reads of it: id, name, API pattern) and the model."""
    from genai_prices.types import ModelInfo, Provider

    fields = entry["provider"]
    provider = Provider(id=fields["id"], name=fields["name"], api_pattern=fields["api_pattern"])
    model = decode(entry["model"])
    if not isinstance(model, ModelInfo):
        raise TypeError("not a model entry")
    return provider, model
