"""Copy the redaction rules added at runtime to another process (the hook worker process).

`add_secret_pattern` and `add_sensitive_key` change this process's rules only. A process
that redacts on this one's behalf (``hookchild``, where the observability plugins turn raw
tool arguments and results into ATOF lines and spans) gets :func:`rules_state` whenever
:func:`rules_token` changed, and applies it with :func:`apply_rules_state`: from then on it
redacts with the same rules. Rules from ``WAYLINE_REDACT_PATTERNS`` are not copied: the
other process reads the same file itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wayline.contract import redact

__all__ = ["RulesState", "apply_rules_state", "rules_state", "rules_token"]


@dataclass(frozen=True, slots=True)
class RulesState:
    """The runtime-added rules: sensitive key names and (name, regex, triggers) patterns."""

    keys: tuple[str, ...]
    patterns: tuple[tuple[str, Any, tuple[str, ...]], ...]


def rules_token() -> object:
    """An object that changes whenever any rule changes (compare with ``is``)."""
    return redact._snapshot


def rules_state() -> RulesState:
    """This process's runtime-added rules (picklable)."""
    with redact._lock:
        patterns = tuple(
            (name, rule.regex, tuple(sorted(rule.triggers)))
            for name, rule in redact._user_rules.items()
            if rule.regex is not None
        )
        return RulesState(tuple(sorted(redact._extra_keys)), patterns)


def apply_rules_state(state: RulesState) -> None:
    """Make this process's runtime-added rules those of ``state`` (keys are only added:
    a sensitive key cannot be removed in the sending process either)."""
    for key in state.keys:
        if key not in redact._extra_keys:
            redact.add_sensitive_key(key)
    wanted = {name for name, _, _ in state.patterns}
    for name in [n for n in redact._user_rules if n not in wanted]:
        redact.remove_secret_pattern(name)
    for name, regex, triggers in state.patterns:
        current = redact._user_rules.get(name)
        if current is None or current.regex != regex or current.triggers != frozenset(triggers):
            redact.add_secret_pattern(name, regex, triggers=triggers)
