"""Patterns compile on first use: a process that redacts ordinary text compiles few of them,
and what a text redacts to does not depend on which patterns were compiled before it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from typing import Any

from wayline.redaction._lazyre import LazyPattern, lazy_compile

# Run in a fresh interpreter: counts every pattern ``re`` compiles from the package's import
# on, and the package's module-level lazy patterns, compiled or not.
_PROBE = r"""
import json, re._compiler, sys

compiled = []
_real = re._compiler.compile


def _counting(pattern, flags=0):
    compiled.append(pattern)
    return _real(pattern, flags)


re._compiler.compile = _counting

import wayline.redaction as R
from wayline.redaction import _lazyre, redact

if sys.argv[1] == "eager":  # every lazy pattern and rule compiled before the text comes
    for name, module in list(sys.modules.items()):
        if name.startswith("wayline.redaction"):
            for value in list(vars(module).values()):
                if isinstance(value, _lazyre.LazyPattern):
                    value.compiled()
    snap = redact._current()
    snap.finder.found("x" * 10_000)
    for rule, _ in snap.rules:
        rule.apply("")
before = len(compiled)
text = sys.stdin.read()
out = R.redact_text(text)
lazy = [
    value
    for name, module in sys.modules.items()
    if name.startswith("wayline.redaction")
    for value in vars(module).values()
    if isinstance(value, _lazyre.LazyPattern)
]
print(json.dumps({
    "output": out,
    "compiled_before": before,
    "compiled": len(compiled),
    "lazy": len(lazy),
    "lazy_compiled": sum(1 for p in lazy if "search" in vars(p)),
}))
"""


def _probe(text: str, mode: str = "lazy") -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, mode],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _every_trigger() -> str:
    from wayline.redaction.redact import _current

    triggers = _current().triggers
    lines = [" ".join(triggers)]
    lines += [f"{t} = 'Xy12345678abcdefGHIJ' {t}: sk-Ab12Cd34Ef56Gh78Ij90Kl12" for t in triggers]
    return "\n".join(lines)


_ORDINARY = "Meeting notes: the build passed on the second try; ship it on Monday."


def test_ordinary_text_compiles_few_patterns_in_a_fresh_process() -> None:
    """Importing the package and redacting ordinary text compiles a small share of what a text
    naming every trigger compiles, and few of the module-level patterns."""
    ordinary = _probe(_ORDINARY)
    every = _probe(_every_trigger())
    assert ordinary["output"] == _ORDINARY
    assert ordinary["lazy"] >= 100  # the rules' helper patterns are lazy
    assert ordinary["lazy_compiled"] <= 10
    assert every["lazy_compiled"] >= ordinary["lazy"] // 3
    assert ordinary["compiled"] * 4 < every["compiled"]


def test_a_text_naming_every_trigger_redacts_the_same_compiled_lazily_or_eagerly() -> None:
    """The first text of a process, with every rule compiled for it on the way, gives what it
    gives once every pattern was compiled beforehand (and the same in this process)."""
    from wayline.redaction import redact_text

    text = _every_trigger()
    lazy = _probe(text)
    eager = _probe(text, "eager")
    assert eager["compiled_before"] > lazy["compiled_before"]
    assert lazy["output"] == eager["output"] == redact_text(text)
    assert lazy["output"].count("<redacted>") >= 100


def test_a_lazy_pattern_answers_as_the_compiled_pattern_does() -> None:
    """Every method gives what ``re.Pattern``'s gives, before and after the first compile."""
    source, flags = r"(?P<k>[a-z]+)=(?P<v>\d+)", re.IGNORECASE
    regex = re.compile(source, flags)
    text = "A=1, bb=22; c=x, D=4"
    for _ in range(2):  # the first pass compiles on the way, the second uses what it bound
        pattern = lazy_compile(source, flags)
        assert pattern.search(text, 2) is not None
        assert pattern.search(text, 2).span() == regex.search(text, 2).span()  # type: ignore[union-attr]
        assert pattern.match(text) is not None and regex.match(text) is not None
        assert pattern.fullmatch("x=9") is not None and pattern.fullmatch("x=") is None
        assert [m.span() for m in pattern.finditer(text)] == [
            m.span() for m in regex.finditer(text)
        ]
        assert pattern.findall(text) == regex.findall(text)
        assert pattern.sub("<r>", text) == regex.sub("<r>", text)
        assert pattern.subn(lambda m: m.group("k"), text, 2) == regex.subn(
            lambda m: m.group("k"), text, 2
        )
        assert pattern.split(text) == regex.split(text)
        assert pattern.groupindex == regex.groupindex
        assert pattern.compiled() is pattern.compiled()


def test_threads_using_a_new_lazy_pattern_at_once_all_get_right_answers() -> None:
    """Threads racing to compile one pattern each get the right match (a race only compiles it
    twice)."""
    pattern = LazyPattern(r"(?P<secret>[0-9a-f]{32})")
    text = "key " + "0123456789abcdef" * 2 + " end"
    barrier = threading.Barrier(8)
    results: list[str | None] = []

    def use() -> None:
        barrier.wait()
        match = pattern.search(text)
        results.append(None if match is None else match.group("secret"))

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["0123456789abcdef" * 2] * 8
