"""Known values: secrets the process knows, masked as values whatever their shape.

Rules find secrets by their shape or their name; many of a process's secrets have neither
(``DB_PASSWORD=CfTDKSBAzacQzLfH`` printed by ``env`` is a word next to nothing). The process
knows them, though, the way a CI system knows the secrets it was given: the provider API key,
the values of credential-like environment variables, what the user registers, and what a rule
redacted once in a session (``export T=V``, then ``echo $T``). Each such value is masked
wherever it occurs, raw, JSON-escaped, URL-encoded and inside base64 (standard and URL-safe, at
each of the three byte alignments), in one pass of an Aho–Corasick automaton
(:mod:`wayline.redaction.automaton`). Values shorter than :data:`MIN_LENGTH` are not masked:
they would hit ordinary words.

Design: a :class:`KnownValues` belongs to its owner. The process's own
(:func:`process_values`: :func:`mask`) is the one process-wide instance; a wayline runtime
holds one for the agent it builds (its API key and configured secrets), and each top-level
session one for what it learns, shared with its delegated children. Values are *owned* per
instance, but *masked* process-wide: every exporter calls ``sanitize``/``redact_text`` on
threads that do not know which session a payload came from, so the redaction pass masks the
values of every instance that is alive. An instance's values leave that set when it is
garbage collected, so agents built one after another in a process do not pile up each other's
keys, and masking one agent's key in another's output costs nothing.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import threading
import weakref
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

from wayline.redaction.automaton import Automaton
from wayline.redaction.redact_rules import REDACTED

__all__ = [
    "MAX_LEARNED",
    "MIN_LENGTH",
    "KnownValues",
    "encodings",
    "mask",
    "process_values",
    "registry",
]

#: Values shorter than this are not masked (they would hit ordinary words and numbers).
MIN_LENGTH = 8
#: At most this many learned values per instance: each costs the automaton a few hundred
#: states, and a hostile session must not grow it without bound.
MAX_LEARNED = 128


def encodings(value: str) -> frozenset[str]:
    """Every form ``value`` is searched in: raw, JSON-escaped (once and twice, ASCII or not,
    ``\\/``), URL-encoded (``%20`` or ``+``, upper or lower hex) and the inner part of its
    base64 (standard and URL-safe) when it starts at byte 0, 1 or 2 of a 3-byte group."""
    forms = {value}
    once = json.dumps(value)[1:-1]
    forms |= {once, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(once)[1:-1]}
    forms.add(once.replace("/", "\\/"))
    for encoded in (quote(value, safe=""), quote_plus(value, safe=""), quote(value)):
        forms |= {encoded, _lower_hex(encoded)}
    raw = value.encode("utf-8", "surrogatepass")
    bits = 8 * len(raw)
    for offset in range(3):
        # Characters wholly inside the value's bits: the same whatever surrounds the value.
        padded = b"\0" * offset + raw + b"\0\0"
        start, end = -(-8 * offset // 6), (8 * offset + bits) // 6
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            forms.add(encode(padded).decode("ascii")[start:end])
    return frozenset(f for f in forms if len(f) >= MIN_LENGTH)


def _lower_hex(encoded: str) -> str:
    if "%" not in encoded:
        return encoded
    parts = encoded.split("%")
    return parts[0] + "".join("%" + p[:2].lower() + p[2:] for p in parts[1:])


def _is_path(value: str) -> bool:
    try:
        return os.path.isabs(value) and os.path.exists(value)
    except (OSError, ValueError):
        return False


def _candidates(value: str) -> set[str]:
    """The strings masked for ``value``: itself, trimmed, each line of a multi-line value
    (a PEM key is printed line by line too), and the text of a JSON-escaped value."""
    found = {value, value.strip()}
    if "\n" in value or "\r" in value:
        found |= {line.strip() for line in value.splitlines()}
    if "\\" in value:
        try:
            decoded = json.loads(f'"{value}"')
        except ValueError:
            decoded = None
        if isinstance(decoded, str):
            found.add(decoded)
    return {v for v in found if len(v) >= MIN_LENGTH and REDACTED not in v and not v.isspace()}


class Registry:
    """Every live :class:`KnownValues` of the process, and one automaton over all their forms.

    Thread-safe: ``automaton()`` returns an immutable automaton, rebuilt after a change.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members: weakref.WeakSet[KnownValues] = weakref.WeakSet()
        # next() of a count is atomic, so a change from a garbage collector's finalizer on
        # any thread needs no lock (a lock here could be taken by the thread it interrupts).
        self._counter = itertools.count(1)
        self._generation = 0
        self._built: tuple[int, Automaton | None] = (0, None)
        self._forms: frozenset[str] = frozenset()

    def join(self, member: KnownValues) -> None:
        """Mask ``member``'s values from now on, until it is garbage collected."""
        with self._lock:
            self._members.add(member)

    def changed(self) -> None:
        """Some member's values changed (or a member is gone): rebuild at the next use."""
        self._generation = next(self._counter)

    def automaton(self) -> Automaton | None:
        """The automaton over every live member's forms; None when there are none."""
        built, automaton = self._built
        generation = self._generation
        if built == generation:
            return automaton
        with self._lock:
            if self._built[0] == generation:
                return self._built[1]
            forms: set[str] = set()
            for member in list(self._members):
                forms |= member.own_forms()
            automaton = self._built[1]
            if forms != self._forms:  # the same values again (another agent's env) keep it
                automaton = Automaton(forms) if forms else None
                self._forms = frozenset(forms)
            self._built = (generation, automaton)
            return automaton


class KnownValues:
    """Secret values masked wherever they occur, in every encoding (see the module).

    ``parent``: an instance whose values this one also stands for in :meth:`values` and
    :meth:`mask` (a session's parent is its agent's, an agent's is the process's).
    Thread-safe.
    """

    def __init__(
        self, parent: KnownValues | None = None, *, registry: Registry | None = None
    ) -> None:
        self.parent = parent
        self._lock = threading.Lock()
        self._sources: dict[str, str] = {}  # value -> where it came from
        self._forms: frozenset[str] = frozenset()
        self._learned = 0
        self._chain: tuple[int, Automaton | None] = (-1, None)
        self._registry = registry if registry is not None else _REGISTRY
        self._registry.join(self)
        self._mortal = False  # its end changes the registry once it holds a value

    def add(self, value: str, source: str = "registered") -> bool:
        """Mask ``value`` (and its forms) from now on; False when it is too short to mask.

        ``source`` says where it came from (``WAYLINE_API_KEY``, ``config.yaml:
        redaction.files``); it is never shown with the value.
        """
        if not isinstance(value, str):
            raise TypeError(f"a known value must be a str, not {type(value).__name__}")
        if not _candidates(value):
            return False
        self.add_many([value], source)
        return True

    def add_many(self, values: Iterable[str], source: str = "registered") -> int:
        """Add several values at once (one rebuild); returns how many were not known yet."""
        fresh: dict[str, str] = {}
        for value in values:
            for candidate in _candidates(value):
                fresh.setdefault(candidate, source)
        if not fresh:
            return 0
        mortal = True
        with self._lock:
            new = {v: s for v, s in fresh.items() if v not in self._sources}
            if new:
                self._sources.update(new)
                forms = set(self._forms)
                for value in new:
                    forms |= encodings(value)
                self._forms = frozenset(forms)
                mortal, self._mortal = self._mortal, True
        if new:
            if not mortal:
                weakref.finalize(self, self._registry.changed)
            self._registry.changed()
        return len(new)

    def learn(self, values: Iterable[str]) -> int:
        """Add values a rule redacted (at most :data:`MAX_LEARNED` per instance)."""
        with self._lock:
            room = MAX_LEARNED - self._learned
        if room <= 0:
            return 0
        added = self.add_many(itertools.islice(values, room), "learned")
        with self._lock:
            self._learned += added
        return added

    def add_environment(self, environ: Mapping[str, str], names: Iterable[str] = ()) -> int:
        """Mask the values of ``environ``'s credential-like variables (by name, as the
        redaction rules judge names), and of ``names`` whatever they are called. A value that
        names an existing file is a path (``GIT_ASKPASS``), not a secret, unless asked for."""
        from wayline.redaction.redact import is_sensitive_key, is_weak_key

        picked = set(names)
        values = [
            (name, value)
            for name, value in environ.items()
            if value
            and (
                name in picked
                or ((is_sensitive_key(name) or is_weak_key(name)) and not _is_path(value))
            )
        ]
        return sum(self.add(value, name) for name, value in values)

    def own_forms(self) -> frozenset[str]:
        """The forms of this instance's own values (not its parent's)."""
        return self._forms

    def values(self) -> frozenset[str]:
        """Every value masked for this instance: its own and its parents'."""
        with self._lock:
            own = frozenset(self._sources)
        return own | self.parent.values() if self.parent is not None else own

    def sources(self) -> dict[str, int]:
        """How many values came from each source (never the values themselves)."""
        with self._lock:
            counts: dict[str, int] = {}
            for source in self._sources.values():
                counts[source] = counts.get(source, 0) + 1
        return counts

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and value in self.values()

    def __len__(self) -> int:
        return len(self._sources)

    def mask(self, text: str) -> str:
        """``text`` with the values of this instance and its parents replaced (only these:
        ``redact_text`` masks those of every live instance)."""
        generation = self._registry._generation
        built, automaton = self._chain
        if built != generation:
            forms: set[str] = set()
            node: KnownValues | None = self
            while node is not None:
                forms |= node.own_forms()
                node = node.parent
            automaton = Automaton(forms) if forms else None
            self._chain = (generation, automaton)
        return automaton.mask(text, REDACTED) if automaton is not None else text

    def child(self) -> KnownValues:
        """A new instance whose parent is this one (a session of this agent)."""
        return KnownValues(self, registry=self._registry)

    def __repr__(self) -> str:
        return f"KnownValues({len(self)} values, sources={sorted(self.sources())})"


_REGISTRY = Registry()  # the process's registry: every live KnownValues joins it
_PROCESS = KnownValues()


def registry() -> Registry:
    """The process's registry of live known values (what ``redact_text`` masks)."""
    return _REGISTRY


def process_values() -> KnownValues:
    """The process-wide known values: what :func:`mask` registers."""
    return _PROCESS


def mask(value: str) -> bool:
    """Mask ``value`` in everything this process exports from now on, in every encoding
    (process-wide, thread-safe). False when it is shorter than :data:`MIN_LENGTH`
    characters and so is not masked."""
    return _PROCESS.add(value, "mask()")
