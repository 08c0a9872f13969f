"""Observer callbacks in a worker process: the agent's interpreter never runs them.

On the shared worker *thread* (:mod:`hookqueue`), every microsecond a plugin spends building
spans or ATOF lines is taken from the agent: there is one interpreter lock, and each time a
model reply arrives the agent's thread waits for the worker to hand the lock over. Measured
on a 100-turn session (``bench/session.py``), that background work cost 30–40% of the wall
time even though the agent mostly waits for the model. So by default (``WAYLINE_HOOK_WORKER``
= ``process``) a plugin that supports it (``observability/relay``, ``observability/otel``)
runs its observer in one child process (``python -m wayline.plugins.observability.hookchild``)
shared by those plugins; ``WAYLINE_HOOK_WORKER=thread`` keeps them on the worker thread.

The worker thread still gathers the hooks; instead of running them it pickles a batch and
writes it to the child's stdin. Message lists are sent as deltas (:class:`ListTail`): a
100-turn conversation re-sends its whole history with every model call (~60 kB a call), but
hosts only append to it, so only the new messages travel (the sanitized request's message
and tool lists too). Fields a plugin's handlers never read (``Remote.unread``) are not sent,
and the copies of one hook's payload made for each plugin are encoded and pickled once.
Replies (``sync``, ``call``,
``close``) come back on a second pipe; a request follows every hook queued before it, so a
``sync`` reply means the child has handled them.

The child is started with the parent's ``sys.path`` and environment as of the plugin's
registration, ignores SIGINT, and when the parent goes away (even by SIGKILL) it reads EOF,
closes every open session and exits: what the hooks sent reaches the files. If the child
cannot start, or dies, the plugin's callbacks run on the worker thread from then on (a fresh
observer: sessions open at that moment are recorded from there), and one error is logged.

Everything here serves OBSERVER callbacks: failures are logged and the agent goes on.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import logging
import operator
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from wayline.contract.deferred import Deferred
from wayline.contract.redact_sync import rules_state, rules_token

log = logging.getLogger("wayline.plugins.hooks")

MODE_ENV = "WAYLINE_HOOK_WORKER"
MODES = ("process", "thread")
START_TIMEOUT_S = 30.0
"""How long the first batch waits for the child to say it is ready."""

LIST_MIN = 8
"""Shorter lists are sent whole: a delta is not worth its bookkeeping."""

SLOTS = 512
"""Message lists remembered for deltas (per field and session), oldest forgotten first."""

_HEADER = struct.Struct(">I")

_NONE: frozenset[str] = frozenset()

NOT_SENT = "<not sent to the hook worker process: does not pickle>"


def worker_mode(environ: Mapping[str, str] | None = None) -> str:
    """``process`` or ``thread``: where queued observer callbacks run (``WAYLINE_HOOK_WORKER``)."""
    value = (os.environ if environ is None else environ).get(MODE_ENV, "").strip().lower()
    if value in MODES:
        return value
    if value:
        log.error("%s=%r must be one of %s; using 'process'", MODE_ENV, value, ", ".join(MODES))
    return "process" if sys.executable else "thread"


class Handlers(Protocol):
    """One plugin's observer as the worker process runs it (built by a :class:`Remote`)."""

    callbacks: Mapping[str, Callable[..., Any]]

    def call(self, name: str, *args: Any) -> Any:
        """A query from the parent (``stats``, ``force_flush``...)."""

    def flush(self) -> None:
        """Write what the callbacks of one batch buffered (after every batch; optional)."""

    def close(self, timeout_s: float) -> None:
        """End open sessions, write and flush the files (the plugin's shutdown)."""


@dataclass(frozen=True, slots=True)
class Remote:
    """How to build a plugin's :class:`Handlers` in another process: ``factory(args)``.

    ``factory`` is ``"package.module:function"``; ``args`` must pickle. ``environ`` is the
    environment the handlers are built under (the parent's at registration). ``unread``
    names ``(hook, field)`` pairs the handlers never read: those are not sent (the raw
    provider response object in ``post_api_request``'s ``assistant_message`` is most of
    that hook's bytes, and the sanitized ``response`` carries what observers use).
    """

    factory: str
    args: Any
    environ: Mapping[str, str]
    unread: frozenset[tuple[str, str]] = frozenset()
    # ``unread`` by hook, for the sender's per-record lookup.
    _by_hook: Mapping[str, frozenset[str]] = dataclasses.field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        by_hook: dict[str, frozenset[str]] = {}
        for hook, key in self.unread:
            by_hook[hook] = by_hook.get(hook, _NONE) | {key}
        object.__setattr__(self, "_by_hook", by_hook)

    def unread_in(self, hook: str) -> frozenset[str]:
        """The fields of ``hook`` not sent (most hooks: none)."""
        return self._by_hook.get(hook, _NONE)

    def build(self) -> Handlers:
        """Import the factory and call it (in whichever process runs the callbacks)."""
        module, _, name = self.factory.partition(":")
        handlers: Handlers = getattr(importlib.import_module(module), name)(self.args)
        return handlers


def remote(factory: str, args: Any, unread: Iterable[tuple[str, str]] = ()) -> Remote:
    """A :class:`Remote` capturing the current environment."""
    return Remote(factory, args, dict(os.environ), frozenset(unread))


class ListTail:
    """A message list sent as ``known[:base] + items``, where ``known`` is the last list sent
    under the same ``key`` (payload field, session id); ``base == 0`` sends it whole."""

    __slots__ = ("base", "items", "key")

    def __init__(self, key: tuple[str, str], base: int, items: list[Any]) -> None:
        self.key, self.base, self.items = key, base, items

    def __reduce__(self) -> tuple[Any, ...]:
        return (ListTail, (self.key, self.base, self.items))


NESTED_PATH = ("request", "body")
NESTED_LISTS = (("messages", LIST_MIN), ("tools", 1))
"""Lists in ``payload["request"]["body"]`` sent as deltas too, with their minimum lengths:
the sanitized request repeats the conversation and the tool schemas (the sanitizer's memo
hands back the same objects call after call)."""


class DeltaLists:
    """The sending side of :class:`ListTail`: remembers the lists sent, per field and session.

    A list continues the one sent before when its first element and the one at the old
    length are the very same objects: hosts append to a conversation and never edit a
    message in it (what the sanitizer's memo assumes too). A list whose old last element was
    replaced (the sanitizer's ``{"_truncated_items": n}`` marker after a cut conversation)
    continues it up to the element before. Anything else is sent whole.
    """

    def __init__(self, slots: int = SLOTS) -> None:
        self._slots = slots
        # key -> (length, first, last, second last)
        self._known: dict[tuple[str, str], tuple[int, Any, Any, Any]] = {}
        self.dropped: list[tuple[str, str]] = []  # keys forgotten since the last frame

    def _tail(self, key: tuple[str, str], value: list[Any]) -> ListTail:
        known = self._known.pop(key, None)
        base = 0
        if known is not None:
            n, first, last, before = known
            if len(value) >= n and value[0] is first:
                if value[n - 1] is last:
                    base = n
                elif n >= 2 and value[n - 2] is before:
                    base = n - 1
        self._known[key] = (len(value), value[0], value[-1], value[-2] if len(value) > 1 else None)
        return ListTail(key, base, value[base:])

    def encode(self, hook: str, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with its long lists replaced by :class:`ListTail` deltas."""
        out: dict[str, Any] | None = None
        session = str(payload.get("session_id") or payload.get("task_id") or "")
        for field, value in payload.items():
            if type(value) is list and len(value) >= LIST_MIN:
                if out is None:
                    out = dict(payload)
                out[field] = self._tail((field, session), value)
        top = payload.get(NESTED_PATH[0])
        outer = top.raw if type(top) is Deferred else top
        inner = outer.get(NESTED_PATH[1]) if type(outer) is dict else None
        if type(inner) is dict:
            tails = {
                name: self._tail((f"{NESTED_PATH[0]}.{NESTED_PATH[1]}.{name}", session), value)
                for name, least in NESTED_LISTS
                if type(value := inner.get(name)) is list and len(value) >= least
            }
            if tails:
                out = dict(payload) if out is None else out
                encoded = {**outer, NESTED_PATH[1]: {**inner, **tails}}  # type: ignore[dict-item]
                if type(top) is Deferred:
                    out[NESTED_PATH[0]] = Deferred(encoded, top.memo_depth)
                else:
                    out[NESTED_PATH[0]] = encoded
        if len(self._known) > self._slots:
            for key in list(itertools.islice(self._known, len(self._known) - self._slots)):
                del self._known[key]
                self.dropped.append(key)
        if hook in ("on_session_finalize", "on_session_reset") and self._known:
            ended = str(payload.get("session_id") or payload.get("old_session_id") or "")
            for key in [k for k in self._known if k[1] == ended]:
                del self._known[key]
                self.dropped.append(key)
        return payload if out is None else out


class ListStore:
    """The receiving side of :class:`ListTail` (in the worker process)."""

    def __init__(self) -> None:
        self._lists: dict[tuple[str, str], list[Any]] = {}

    def _full(self, tail: ListTail) -> list[Any]:
        known = self._lists.get(tail.key) if tail.base else None
        if known is None or len(known) < tail.base:
            full = tail.items  # a base we do not have cannot happen; stay usable
        else:
            full = known[: tail.base] + tail.items
        self._lists[tail.key] = full
        return full

    def decode(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Replace every :class:`ListTail` in ``payload`` by the list it stands for."""
        for field, value in payload.items():
            if type(value) is ListTail:
                payload[field] = self._full(value)
        top = payload.get(NESTED_PATH[0])
        outer = top.raw if type(top) is Deferred else top
        inner = outer.get(NESTED_PATH[1]) if type(outer) is dict else None
        if type(inner) is dict:
            for name, value in inner.items():
                if type(value) is ListTail:
                    inner[name] = self._full(value)
        return payload

    def drop(self, keys: Iterable[tuple[str, str]]) -> None:
        """Forget lists the sender forgot."""
        for key in keys:
            self._lists.pop(key, None)


def write_frame(fd: int, obj: Any) -> None:
    """Pickle ``obj`` and write it, length-prefixed, to ``fd`` (all of it)."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_exact(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``; None at EOF."""
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Any:
    """One frame written by :func:`write_frame`; raises EOFError at the end of the stream."""
    header = read_exact(fd, _HEADER.size)
    data = None if header is None else read_exact(fd, _HEADER.unpack(header)[0])
    if data is None:
        raise EOFError
    return pickle.loads(data)


def _same_values(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when both dicts hold the very same objects under the same keys.

    Two callbacks' copies of one hook's payload have their keys in the same order, so the
    comparison runs in C (keys in order, then values by identity); dicts with the same keys
    in another order compare unequal, which only costs an encoding.
    """
    return (
        len(a) == len(b) and list(a) == list(b) and all(map(operator.is_, a.values(), b.values()))
    )


class ChildGone(Exception):
    """The worker process could not be started or has exited."""


Record = tuple[int, str, dict[str, Any], int]


class WorkerProcess:
    """The parent's end of the worker process: started on first use, shared by the plugins.

    Hook batches are written by the worker thread; requests (``sync``, ``call``, ``close``)
    by whichever thread asks, one at a time, each waiting for its reply.
    """

    def __init__(self) -> None:
        self._write_lock = threading.Lock()
        self._request_lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._reply_fd = -1
        self._dead: str | None = None
        self._remotes: dict[int, Remote] = {}
        self._unopened: list[int] = []
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._delta = DeltaLists()
        self._rules_token: object = None
        self._pickle_failed: set[str] = set()

    @property
    def dead(self) -> str | None:
        """Why the worker process is unusable (None while it works or is not started)."""
        return self._dead

    def add(self, spec: Remote) -> int:
        """Register a plugin's handlers; returns its queue id (opened in the child lazily)."""
        with self._write_lock:
            qid = next(self._ids)
            self._remotes[qid] = spec
            self._unopened.append(qid)
            return qid

    @property
    def pid(self) -> int | None:
        """The worker process's pid while it runs."""
        proc = self._proc
        return None if proc is None else proc.pid

    def opened(self, qid: int) -> bool:
        """Whether queue ``qid`` has been opened in a running worker process."""
        return self._proc is not None and qid in self._remotes and qid not in self._unopened

    # -- writing (under the write lock) ------------------------------------------------

    def _start(self) -> None:
        if self._proc is not None or self._dead is not None:
            return
        reply_r, reply_w = os.pipe()
        env = dict(os.environ)
        # The child imports exactly what this process imports (plugins loaded from paths).
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "wayline.plugins.observability.hookchild", str(reply_w)],
                stdin=subprocess.PIPE,
                pass_fds=(reply_w,),
                env=env,
                start_new_session=True,  # a Ctrl-C to the agent's group must not cut the files
            )
        except OSError as exc:
            os.close(reply_r)
            os.close(reply_w)
            raise ChildGone(f"cannot start the hook worker process: {exc}") from exc
        os.close(reply_w)
        self._reply_fd = reply_r
        try:
            hello = self._reply(0, START_TIMEOUT_S)
        except ChildGone:
            self._kill()
            raise
        if hello != (0, True, "ready"):
            self._kill()
            raise ChildGone(f"the hook worker process answered {hello!r}")

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def _write(self, frame: tuple[Any, ...]) -> None:
        """Write ``frame`` (after any pending ``open``); raises ChildGone."""
        if self._dead is not None:
            raise ChildGone(self._dead)
        try:
            self._start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None
            fd = proc.stdin.fileno()
            while self._unopened:
                qid = self._unopened[0]
                write_frame(fd, ("open", qid, self._remotes[qid]))
                self._unopened.pop(0)
            token = rules_token()
            if token is not self._rules_token:  # add_secret_pattern & co. since the last frame
                write_frame(fd, ("rules", rules_state()))
                self._rules_token = token
            write_frame(fd, frame)
        except ChildGone as exc:
            self._fail(str(exc))
            raise
        except (OSError, ValueError) as exc:  # BrokenPipeError: the child exited
            self._fail(f"the hook worker process is gone ({exc!r})")
            raise ChildGone(self._dead or "gone") from exc

    def _fail(self, reason: str) -> None:
        if self._dead is None:
            self._dead = reason
            log.error("%s; observer callbacks run in this process from now on", reason)
        self._kill()

    def send(self, items: list[tuple[int, str, dict[str, Any], int]]) -> None:
        """Send a batch of ``(queue id, hook, payload, time ns)``; raises ChildGone."""
        records: list[Record] = []
        encode = self._delta.encode
        remotes = self._remotes
        # Each plugin's callback got the hook's payload (the bus's dict through a queue's
        # ``payload_sink``, or a copy with the same values): it is filtered and encoded
        # once, and pickled once (the records share it).
        last: tuple[str, frozenset[str], dict[str, Any], dict[str, Any]] | None = None
        for qid, hook, payload, ns in items:
            spec = remotes.get(qid)
            unread = spec.unread_in(hook) if spec is not None else _NONE
            if not (
                last is not None
                and last[0] == hook
                and last[1] == unread
                and (last[2] is payload or _same_values(last[2], payload))
            ):
                sent = payload
                if unread:
                    sent = {k: v for k, v in payload.items() if k not in unread}
                last = (hook, unread, payload, encode(hook, sent))
            records.append((qid, hook, last[3], ns))
        drops, self._delta.dropped = self._delta.dropped, []
        with self._write_lock:
            try:
                self._write(("hooks", records, drops))
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                # A payload value that does not pickle: send those records as plain JSON data.
                self._write(("hooks", [self._plain(r, exc) for r in records], drops))

    def _plain(self, record: Record, exc: BaseException) -> Record:
        from wayline.contract.sanitize import sanitize

        qid, hook, payload, ns = record
        try:
            pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
            return record
        except Exception:
            if hook not in self._pickle_failed:
                self._pickle_failed.add(hook)
                log.warning("%s payload does not pickle (%r): sent sanitized", hook, exc)
        plain: dict[str, Any] = {}
        for key, value in payload.items():
            try:
                pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                plain[key] = value
            except Exception:
                # An encoded list or deferred value holds only part of its data: not sent.
                encoded = type(value) is ListTail or type(value) is Deferred
                plain[key] = NOT_SENT if encoded else sanitize(value, max_chars=None)
        return (qid, hook, plain, ns)

    # -- requests ------------------------------------------------------------------------

    def _reply(self, token: int, timeout_s: float) -> Any:
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._reply_fd], [], [], left)[0]:
                raise TimeoutError(f"no reply from the hook worker process in {timeout_s:.1f} s")
            try:
                reply = read_frame(self._reply_fd)
            except (EOFError, OSError) as exc:
                raise ChildGone("the hook worker process exited") from exc
            if reply[0] == token:
                return reply
            # A reply to a request that timed out earlier: skip it.

    def request(self, op: str, *args: Any, timeout_s: float) -> Any:
        """Send ``(op, token, *args)`` and return the child's result; raises ChildGone,
        TimeoutError, or the child's error as RuntimeError."""
        with self._request_lock:
            token = next(self._tokens)
            with self._write_lock:
                self._write((op, token, *args))
            try:
                _, ok, value = self._reply(token, timeout_s)
            except ChildGone as exc:
                with self._write_lock:
                    self._fail(str(exc))
                raise
            if not ok:
                raise RuntimeError(value)
            return value

    def close(self, qid: int, timeout_s: float) -> None:
        """Close one plugin's handlers in the child (its shutdown); stop the child after the
        last one."""
        try:
            if qid not in self._unopened and self._proc is not None:
                self.request("close", qid, timeout_s, timeout_s=timeout_s + 5.0)
        finally:
            with self._write_lock:
                self._remotes.pop(qid, None)
                if qid in self._unopened:
                    self._unopened.remove(qid)
                if not self._remotes:
                    self._stop(timeout_s)
                    self._dead = None  # the next plugin registered may start a new one

    def _stop(self, timeout_s: float) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.close()  # EOF: the child closes what is left and exits
            proc.wait(timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
        finally:
            os.close(self._reply_fd)
            self._reply_fd = -1
            self._delta = DeltaLists()  # a next worker process knows no lists and no rules
            self._rules_token = None

    def after_fork(self) -> None:
        """In a forked child: the worker process belongs to the parent."""
        self.__init__()  # type: ignore[misc]
        self._dead = "forked process: the parent's hook worker process is not ours"


worker_process = WorkerProcess()

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: worker_process.after_fork())
