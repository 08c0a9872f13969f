"""The answers of ``wayline mcp``'s tools: questions to the session index, as bounded text.

:class:`SessionTools` answers each tool call with its own :class:`~wayline.store.SessionStore`
(an SQLite connection belongs to the thread that opened it, and the SDK runs each call on a
worker thread), brought up to date with the files first, as every ``wayline sessions`` command
does. Nothing here writes a recording: the index is a cache over them.

Every answer is text of at most :data:`~wayline.mcp.paging.RESULT_CHARS` characters; one that
stops early ends with the call that gets the rest. A question that cannot be answered raises
:class:`Refused`, whose message names the parameter and what to do.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wayline.mcp.paging import RESULT_CHARS, CursorError, Lines, clip, decode_cursor, encode_cursor
from wayline.mcp.steps import (
    PathError,
    StepFacts,
    ordered,
    render_step,
    resolve,
    step_facts,
    step_text,
)
from wayline.redaction import redact_text, redact_value
from wayline.store import (
    FilterError,
    IndexUnavailable,
    SessionFilter,
    SessionStore,
    StoreError,
)
from wayline.store.shown import duration_text, usd_text

__all__ = ["LIMITS", "Refused", "SessionTools"]

LIMITS = {"sessions": 200, "search": 200, "steps": 1_000, "diff": 500, "chars": 40_000}
"""The largest ``limit`` (and ``max_chars``) each tool accepts."""

TEXT_CHARS = 100
"""Characters of a step's text on its summary line."""

LISTED_FAILURES = 50
"""Failed step numbers a summary's header lists (``only="failed"`` pages through all)."""

Row = dict[str, Any]


class Refused(ValueError):
    """A question the tools cannot answer; ``str()`` names the parameter and what to do."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _call(name: str, **args: Any) -> str:
    shown = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items()
    )
    return f"{name}({shown})"


def _bounded(limit: int, name: str, most: int) -> int:
    if limit < 1 or limit > most:
        raise Refused(f"{name}: {limit} is not between 1 and {most}")
    return limit


_MARK = {"failed": "✗", "interrupted": "⊘", "ok": ""}


def _tools_cell(facts: StepFacts) -> str:
    if not facts.tools:
        return "-"
    shown = [name + _MARK[state] for name, state in facts.tools[:5]]
    more = len(facts.tools) - 5
    return ",".join(shown) + (f",+{more}" if more > 0 else "")


class SessionTools:
    """The six tools over the recordings of ``paths`` (the home's when empty).

    Each method is one tool call: it opens the index, updates it from the files, answers and
    closes it, so calls may run on any thread, several at once.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        home: Path,
        *,
        index: Path | None = None,
        redact: Callable[[str], str] = redact_text,
    ) -> None:
        self.paths = list(paths)
        self.home = home
        self.index = index
        self._redact = redact

    @contextmanager
    def _store(self) -> Iterator[SessionStore]:
        try:
            store = SessionStore.open(self.paths, self.home, index=self.index)
        except IndexUnavailable as exc:
            raise Refused(str(exc)) from None
        try:
            store.update()
            yield store
        except IndexUnavailable as exc:
            raise Refused(str(exc)) from None
        finally:
            store.close()

    @staticmethod
    def _filter(params: Mapping[str, Any]) -> SessionFilter:
        try:
            return SessionFilter.parse(params)
        except FilterError as exc:
            raise Refused(str(exc)) from None

    def _trajectory(
        self, store: SessionStore, session_id: str, name: str = "session_id"
    ) -> tuple[Row, Mapping[str, Any], bool]:
        try:
            found = store.trajectory(session_id)
        except StoreError as exc:
            raise Refused(f"{name}: {exc}") from None
        if found is None:
            raise Refused(f"{name}: no session {session_id!r} (list_sessions shows them)")
        return found

    # -- list_sessions -----------------------------------------------------------------------

    def list_sessions(self, filters: Mapping[str, Any], limit: int, offset: int) -> str:
        """Sessions matching ``filters`` (``wayline sessions list``'s), newest first."""
        limit = _bounded(limit, "limit", LIMITS["sessions"])
        where = self._filter(filters)
        with self._store() as store:
            rows = store.sessions(where, limit=offset + limit + 1)
        page, more = rows[offset : offset + limit], len(rows) > offset + limit
        out = Lines()
        if not page:
            out.add("no sessions match" if offset == 0 else f"no sessions past offset {offset}")
            return out.text()
        out.add(
            f"sessions {offset + 1}–{offset + len(page)}{' (more follow)' if more else ''}, "
            "newest first; get_session(session_id) shows one step by step:"
        )
        shown = 0
        for row in page:
            view = {
                "session_id": row["session_id"],
                "status": row["status"],
                "started_at": row["started_at"],
                "duration_ms": row["duration_ms"],
                "agent": row["agent"],
                "model": row["model"],
                "steps": row["steps"],
                "tool_calls": row["tool_calls"],
                "errors": row["errors"],
                "tools": row["tools"],
                "input_tokens": row["input_tokens"],
                "output_tokens": row["output_tokens"],
                "cost_usd": row["cost_usd"],
            }
            if len(row["models"]) > 1:
                view["models"] = row["models"]
            if row["parent_id"]:
                view["parent_id"] = row["parent_id"]
            if row["children"]:
                view["children"] = row["children"][:20]
            if not out.add(_json(view)):
                more = True
                break
            shown += 1
        if more:
            args = {k: v for k, v in filters.items() if v not in (None, "", False)}
            out.extend(
                [f"next: {_call('list_sessions', **args, offset=offset + shown, limit=limit)}"]
            )
        return out.text()

    # -- search --------------------------------------------------------------------------------

    def search(self, text: str, limit: int, offset: int) -> str:
        """Steps whose text holds ``text``: session, step, field, snippet."""
        limit = _bounded(limit, "limit", LIMITS["search"])
        if not text.strip():
            raise Refused("text: empty; give the text to find (3 characters or more is fastest)")
        with self._store() as store:
            try:
                rows = store.search(text, limit=offset + limit + 1)
            except FilterError as exc:
                raise Refused(str(exc)) from None
        page, more = rows[offset : offset + limit], len(rows) > offset + limit
        out = Lines()
        if not page:
            out.add(f"no step holds {text!r}" + (f" past offset {offset}" if offset else ""))
            return out.text()
        out.add(
            f"matches {offset + 1}–{offset + len(page)}{' (more follow)' if more else ''}, "
            "most recently indexed first (session | step | field | snippet, the match in «»); "
            "get_step(session_id, step) shows a step whole:"
        )
        shown = 0
        for row in page:
            snippet = clip(row["snippet"], 240)
            line = f"{row['session_id']} | {row['step']} | {row['field']} | {snippet}"
            if not out.add(line):
                more = True
                break
            shown += 1
        if more:
            out.extend([f"next: {_call('search', text=text, offset=offset + shown, limit=limit)}"])
        return out.text()

    # -- stats ---------------------------------------------------------------------------------

    def stats(self, by: str, filters: Mapping[str, Any]) -> str:
        """Totals per ``by`` over the sessions matching ``filters``."""
        where = self._filter(filters)
        with self._store() as store:
            try:
                rows = store.stats(by, where)
            except FilterError as exc:
                raise Refused(str(exc)) from None
        out = Lines()
        if not rows:
            out.add("no sessions match")
            return out.text()
        costs = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
        total = {
            "sessions": sum(r["sessions"] for r in rows),
            "steps": sum(r["steps"] for r in rows),
            "input_tokens": sum(r["input_tokens"] for r in rows),
            "output_tokens": sum(r["output_tokens"] for r in rows),
            "cost_usd": round(sum(costs), 9) if costs else None,
            "errors": sum(r["errors"] for r in rows),
        }
        if by == "tool":  # a session counts under each tool it called: rows overlap
            out.add(
                f"totals by tool, {len(rows)} rows (a session counts under each tool it called)"
            )
        else:
            out.add(f"totals by {by}, {len(rows)} rows; all: {_json(total)}")
        for index, row in enumerate(rows):
            if not out.add(_json(row)):
                out.extend([f"… {len(rows) - index} more rows: narrow the filters"])
                break
        return out.text()

    # -- get_session ---------------------------------------------------------------------------

    def get_session(
        self, session_id: str, offset: int, limit: int, only: str, cursor: str | None
    ) -> str:
        """A session's header (totals, failed steps) and one line per step, a page at a time."""
        if cursor:
            try:
                state = decode_cursor(cursor, "get_session")
            except CursorError as exc:
                raise Refused(str(exc)) from None
            if state.get("session") != session_id:
                raise Refused(
                    f"cursor: it pages session {state.get('session')!r}, not {session_id!r}"
                )
            offset, limit, only = int(state["offset"]), int(state["limit"]), str(state["only"])
        limit = _bounded(limit, "limit", LIMITS["steps"])
        if only not in ("all", "failed"):
            raise Refused(f"only: {only!r} is not all or failed")
        with self._store() as store:
            row, traj, mine = self._trajectory(store, session_id)
        raw = traj.get("steps")
        steps: list[Any] = raw if isinstance(raw, list) else []
        facts = step_facts(steps)
        failed = [f for f in facts if f.status != "ok"]
        chosen = failed if only == "failed" else facts
        sid = row["session_id"]
        out = Lines()
        tools = ", ".join(f"{name}×{n}" for name, n in row["tools"].items()) or "none"
        out.add(
            f"session {sid}: status {row['status']}, {row['steps']:,} steps, "
            f"{row['tool_calls']:,} tool calls ({clip(tools, 300)}), {row['errors']:,} errors, "
            f"cost {usd_text(row['cost_usd'])}, took {duration_text(row['duration_ms'])}, "
            f"started {row['started_at'] or '-'}, agent {row['agent'] or '-'}, "
            f"models {', '.join(row['models']) or '-'}"
        )
        if row["parent_id"] or row["children"]:
            out.add(
                f"parent {row['parent_id'] or '-'}; subagents: "
                f"{clip(', '.join(row['children']), 400) or '-'}"
            )
        out.add(self._failure_line(facts, failed, sid))
        out.add(
            "one line per step: step | kind | status | took | cost | tools (✗ failed, "
            f"⊘ cancelled) | first {TEXT_CHARS} characters of its text; "
            "get_step(session_id, step) shows one whole"
        )
        redact = None if mine else self._redact
        shown = 0
        for fact in chosen[offset : offset + limit]:
            text = step_text(steps[fact.index], TEXT_CHARS, redact)
            status = fact.status.upper() if fact.status != "ok" else "ok"
            line = (
                f"{fact.number} | {fact.kind} | {status} | {duration_text(fact.took_ms)} | "
                f"{usd_text(fact.cost_usd)} | {_tools_cell(fact)} | {text}"
            )
            if not out.add(line):
                break
            shown += 1
        end = offset + shown
        what = "failed steps" if only == "failed" else "steps"
        if shown == 0:
            out.extend([f"no {what} past offset {offset} (the session has {len(chosen):,})"])
        elif end < len(chosen):
            token = encode_cursor("get_session", session=sid, offset=end, limit=limit, only=only)
            out.extend(
                [
                    f"shown: {what} {offset + 1}–{end} of {len(chosen):,}; "
                    f"{len(chosen) - end:,} more. Next page: "
                    f"{_call('get_session', session_id=sid, cursor=token)} "
                    f"(the same as offset={end}, limit={limit}, only={only!r})"
                ]
            )
        else:
            out.extend([f"shown: {what} {offset + 1}–{end} of {len(chosen):,} (the last page)"])
        return out.text()

    @staticmethod
    def _failure_line(facts: list[StepFacts], failed: list[StepFacts], sid: str) -> str:
        if not failed:
            return f"failed steps: none of {len(facts):,}"
        listed = []
        for fact in failed[:LISTED_FAILURES]:
            bad = [name for name, state in fact.tools if state != "ok"]
            why = ("model call " + fact.status) if fact.llm_failed else ",".join(bad) or fact.status
            listed.append(f"{fact.number} ({clip(why, 60)})")
        more = len(failed) - LISTED_FAILURES
        tail = (
            f" … and {more:,} more: {_call('get_session', session_id=sid, only='failed')}"
            if more > 0
            else ""
        )
        return (
            f"failed or cancelled steps ({len(failed):,} of {len(facts):,}): "
            f"{', '.join(listed)}{tail}"
        )

    # -- get_step ------------------------------------------------------------------------------

    def get_step(
        self, session_id: str, step: int, path: str | None, offset: int, max_chars: int
    ) -> str:
        """One step whole (redacted), or the part ``path`` names from ``offset``."""
        max_chars = _bounded(max_chars, "max_chars", LIMITS["chars"])
        if offset < 0:
            raise Refused(f"offset: {offset} is negative")
        with self._store() as store:
            row, traj, _mine = self._trajectory(store, session_id)
        raw = traj.get("steps")
        steps: list[Any] = raw if isinstance(raw, list) else []
        facts = step_facts(steps)
        fact = next((f for f in facts if f.number == step), None)
        if fact is None:
            first, last = (facts[0].number, facts[-1].number) if facts else (0, 0)
            raise Refused(
                f"step: session {row['session_id']} has no step {step} (steps {first}–{last})"
            )
        # Redacted whoever wrote the file: wayline's recordings were, another producer's may
        # hold anything; structure and ids are kept, nothing is cut.
        whole = redact_value(ordered(steps[fact.index]), max_string=sys.maxsize)
        sid = row["session_id"]
        bad = [name for name, state in fact.tools if state != "ok"]
        head = (
            f"session {sid}, step {fact.number} ({fact.index + 1} of {len(facts):,}): "
            f"{fact.kind}, {fact.status}"
            + (f" (tools: {', '.join(bad)})" if bad else "")
            + (", the model call " + fact.status if fact.llm_failed else "")
        )
        budget = RESULT_CHARS - 2_000
        if path is None:
            if offset:
                raise Refused("offset: give it with path (the field to read on from offset)")
            body, cuts = render_step(whole, budget, max_string=max_chars)
            return self._step_answer(head, body, cuts, sid, step)
        try:
            part = resolve(whole, path)
        except PathError as exc:
            raise Refused(str(exc)) from None
        if isinstance(part, str):
            end = min(len(part), offset + max_chars)
            if offset > len(part):
                raise Refused(f"offset: {offset} is past the end of {path} ({len(part):,} chars)")
            lines = [f"{head}; {path}: chars {offset:,}–{end:,} of {len(part):,}", part[offset:end]]
            if end < len(part):
                nxt = _call("get_step", session_id=sid, step=step, path=path, offset=end)
                lines.append(f"[{len(part) - end:,} more chars: {nxt}]")
            return "\n".join(lines)
        if isinstance(part, list):
            if offset > len(part):
                raise Refused(f"offset: {offset} is past the end of {path} ({len(part):,} items)")
            window = {f"{path}[{offset + i}]": item for i, item in enumerate(part[offset:])}
            body, cuts = render_step(window, budget, max_string=max_chars)
            head += f"; {path}: items from {offset:,} of {len(part):,}"
            return self._step_answer(head, body, cuts, sid, step)
        body, cuts = render_step(part, budget, base=path, max_string=max_chars)
        return self._step_answer(f"{head}; {path}", body, cuts, sid, step)

    @staticmethod
    def _step_answer(head: str, body: str, cuts: list[str], sid: str, step: int) -> str:
        lines = [head, body]
        if cuts:
            listed = "; ".join(cuts[:20]) + (
                f"; and {len(cuts) - 20} more" if len(cuts) > 20 else ""
            )
            example = _call("get_step", session_id=sid, step=step, path="<path>", offset="<offset>")
            lines.append(f"cut to fit: {listed}. Read on with {example} (each cut names both).")
        return "\n".join(lines)

    # -- diff_sessions -------------------------------------------------------------------------

    def diff_sessions(
        self, old_session: str, new_session: str, offset: int, limit: int, strict: bool
    ) -> str:
        """Where two sessions first differ, then their differences step by step."""
        from wayline.mcp.diffs import diff_text

        limit = _bounded(limit, "limit", LIMITS["diff"])
        with self._store() as store:
            old_row, old, _ = self._trajectory(store, old_session, "old_session")
            new_row, new, _ = self._trajectory(store, new_session, "new_session")
        return diff_text(old_row, old, new_row, new, offset=offset, limit=limit, strict=strict)
