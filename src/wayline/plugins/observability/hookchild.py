"""The hook worker process: runs plugins' observer callbacks sent by :mod:`hookproc`.

``python -m wayline.plugins.observability.hookchild <reply fd>`` reads frames from stdin:
``("open", qid, Remote)`` builds a plugin's handlers; ``("hooks", records, drops)`` runs
callbacks (OBSERVERS: a failure is logged once per hook and error type, counted, and the
next record runs); ``("sync"|"call"|"close", token, ...)`` are answered on the reply fd with
``(token, ok, value)``; ``("rules", RulesState)`` sets the redaction rules added at runtime
in the parent (:mod:`wayline.contract.redact_sync`). At EOF (the parent exited or closed
the pipe) every plugin is closed, so open sessions end and the files are complete.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Mapping
from typing import Any

from wayline.contract.redact_sync import apply_rules_state
from wayline.plugins.observability import cooperation
from wayline.plugins.observability.cooperation import Yielder, cooperate
from wayline.plugins.observability.hookproc import (
    Handlers,
    ListStore,
    Remote,
    read_frame,
    write_frame,
)
from wayline.plugins.observability.hookqueue import HookQueue

log = logging.getLogger("wayline.plugins.hooks")
CLOSE_AT_EOF_S = 30.0

NICE_ENV = "WAYLINE_HOOK_WORKER_NICE"
DEFAULT_NICE = 19


def worker_nice(environ: Mapping[str, str] | None = None) -> int:
    """The worker process's niceness (``WAYLINE_HOOK_WORKER_NICE``, 0-19, default 19)."""
    raw = (os.environ if environ is None else environ).get(NICE_ENV, "").strip()
    if not raw:
        return DEFAULT_NICE
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= 19:
        log.error("%s=%r must be an integer from 0 to 19; using %d", NICE_ENV, raw, DEFAULT_NICE)
        return DEFAULT_NICE
    return value


def background_priority(nice: int) -> None:
    """Yield the CPU to the agent whenever both want it (the files catch up while it waits).

    The worker runs in its own session (a Ctrl-C to the agent's terminal must not cut the
    files). With Linux's autogroup scheduling, the default on many kernels, a session is a
    scheduling group of its own that weighs as much as the agent's whole session (the agent,
    its tool threads, a local model server): a task's nice value only counts inside its
    group, so the group's nice (``/proc/self/autogroup``) is set too. Measured on P3 of
    ``bench/``: 1.18x -> 1.14x (medians of 20 alternating rounds, same build).
    """
    if nice <= 0:
        return
    try:
        os.nice(nice - os.nice(0))
    except OSError:
        pass
    try:
        with open("/proc/self/autogroup", "w") as fh:
            fh.write(str(nice))
    except OSError:  # not Linux, no autogroup, or not allowed: the task's nice still applies
        pass


GC_YOUNG_THRESHOLD = 5_000
"""The worker's first-generation GC threshold (CPython's default: 700).

The worker allocates hundreds of thousands of short-lived objects per busy session; with
the default, the collector ran ~40 young and ~4 middle collections and one full one per
100-turn session (40 ms of the worker's ~500 ms, replayed frames). With this threshold and
the startup heap frozen (:func:`settle_heap`): ~6 young collections, 8-14 ms."""


def settle_heap() -> None:
    """Move what exists now (modules, plugin objects) out of the collector's sight.

    Called after each plugin is built: full collections then scan what the sessions
    allocate, not the imported libraries. Frozen objects are still freed by reference
    counting; only a reference cycle among them would stay (none is made at build time).
    """
    gc.collect()
    gc.freeze()


CPU_ENV = "WAYLINE_HOOK_WORKER_CPU"
LAG_UNPIN_S = 1.0
"""Hooks this late (their time to now) end the pinning: the chosen CPU is too busy."""


def worker_cpu(environ: Mapping[str, str] | None = None) -> int | None:
    """The CPU to pin the worker to (``WAYLINE_HOOK_WORKER_CPU``), or None to leave it free.

    ``auto`` (the default) is the last CPU this process may use, when it may use two or
    more; ``none`` leaves the choice to the kernel; a number names the CPU, which may be
    outside the agent's own set: an agent started with ``taskset -c 0`` and the worker on
    CPU 1 never share a CPU (P3's ``--split-cpus`` row of ``bench/``).
    """
    raw = (os.environ if environ is None else environ).get(CPU_ENV, "").strip().lower()
    if raw == "none":
        return None
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return None
    if raw.isdigit() and (int(raw) in allowed or int(raw) < (os.cpu_count() or 0)):
        return int(raw)
    if raw not in ("", "auto"):
        log.error(
            "%s=%r must be auto, none or a CPU number below %s; using auto",
            CPU_ENV,
            raw,
            os.cpu_count(),
        )
    return allowed[-1] if len(allowed) >= 2 else None


class Pinning:
    """The worker's CPU affinity: one CPU, given up for good once hooks arrive late.

    The worker's hundreds of milliseconds of CPU per busy session, spread over whichever
    CPU is free, also evict the agent's caches there; kept on one CPU they cost the agent
    less (P3 of ``bench/``, paired rounds, worker pinned vs free: the plugin arm's time
    x0.93-0.98). Should that CPU be busy with other work (several agents on one machine all
    picking the last CPU), hooks arrive ``LAG_UNPIN_S`` late and the pinning is dropped.
    """

    def __init__(self, cpu: int | None) -> None:
        self.cpu = cpu
        self.pinned = False
        self._allowed: set[int] = set()
        if cpu is None:
            return
        try:
            self._allowed = set(os.sched_getaffinity(0))
            # Before any thread starts: the threads the plugins start inherit it.
            os.sched_setaffinity(0, {cpu})
            self.pinned = True
        except OSError as exc:  # e.g. a CPU outside the cgroup's cpuset
            log.warning("hook worker process: not pinned to CPU %s: %s", cpu, exc)

    def check(self, hook_ns: int) -> None:
        """Unpin (every thread) if a hook fired at ``hook_ns`` arrives too late."""
        if not self.pinned or time.time_ns() - hook_ns < LAG_UNPIN_S * 1e9:
            return
        self.pinned = False
        log.info("hook worker process: hooks arrive late on CPU %s; no longer pinned", self.cpu)
        for task in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(task), self._allowed)
            except OSError:  # a thread that just ended
                pass


class _Plugin:
    def __init__(self, qid: int, spec: Remote) -> None:
        self.label = f"hook worker process, queue {qid} ({spec.factory})"
        self.queue = HookQueue(label=self.label)
        os.environ.clear()
        os.environ.update(spec.environ)  # settings read lazily see the plugin's environment
        self.handlers: Handlers = spec.build()

    def flush(self) -> None:
        flush = getattr(self.handlers, "flush", None)  # optional for handlers
        if flush is None:
            return
        try:
            flush()
        except Exception as exc:
            self.queue.failures += 1
            log.warning("%s: flush failed: %r", self.label, exc)

    def call(self, name: str, args: tuple[Any, ...]) -> Any:
        if name == "hook_failures":
            return self.queue.failures
        return self.handlers.call(name, *args)


class Child:
    """The worker process's state: the plugins it runs and the message lists it knows."""

    def __init__(
        self, reply_fd: int, pinning: Pinning | None = None, *, settle: bool = False
    ) -> None:
        self.reply_fd = reply_fd
        self.pinning = pinning
        # Freeze the heap after each plugin built before the first hooks (the real worker):
        # later, the heap holds sessions, whose reference cycles must stay collectable.
        self.settle = settle
        self.handled = False  # a hooks frame has been handled
        self.ready_ns = 0  # when the last plugin was built
        self.plugins: dict[int, _Plugin] = {}
        self.failed: set[int] = set()  # queues whose handlers could not be built
        self.lists = ListStore()

    def handle(self, frame: tuple[Any, ...]) -> None:
        """Act on one frame from the parent."""
        op = frame[0]
        if op == "hooks":
            self.handled = True
            self.lists.drop(frame[2])
            decode = self.lists.decode
            if self.pinning is not None and frame[1]:
                # Hooks queued while a plugin was being built (imports) are late for that.
                self.pinning.check(max(frame[1][0][3], self.ready_ns))
            decoded: Any = None  # the last payload decoded (the plugins' records share it)
            for qid, hook, payload, ns in frame[1]:
                cooperate()
                plugin = self.plugins.get(qid)
                if plugin is None:
                    continue
                callback = plugin.handlers.callbacks.get(hook)
                if callback is not None:
                    if payload is not decoded:
                        decoded = decode(payload)
                    queue = plugin.queue
                    queue.run((queue, callback, decoded, ns, hook))
            for plugin in self.plugins.values():
                cooperate()
                plugin.flush()
        elif op == "rules":
            apply_rules_state(frame[1])
        elif op == "open":
            _, qid, spec = frame
            try:
                self.plugins[qid] = _Plugin(qid, spec)
            except Exception:
                self.failed.add(qid)
                log.exception("hook worker process: cannot build %s", spec.factory)
            if self.settle and not self.handled:
                settle_heap()
            self.ready_ns = time.time_ns()
        else:
            token = frame[1]
            try:
                reply = (token, True, self._request(op, frame[2:]))
            except Exception as exc:
                reply = (token, False, f"{type(exc).__name__}: {exc}")
            self.reply(reply)

    def reply(self, reply: tuple[int, bool, Any]) -> None:
        """Answer the parent; a parent that is gone is not an error (EOF on stdin follows)."""
        try:
            write_frame(self.reply_fd, reply)
        except OSError:
            pass

    def _request(self, op: str, args: tuple[Any, ...]) -> Any:
        if op == "sync":
            return None
        qid = args[0]
        if qid in self.failed:
            raise RuntimeError("the plugin's handlers could not be built (see its log)")
        if op == "call":
            return self.plugins[qid].call(args[1], tuple(args[2]))
        if op == "close":
            plugin = self.plugins.pop(qid, None)
            if plugin is not None:
                plugin.handlers.close(float(args[1]))
            return None
        raise ValueError(f"unknown request {op!r}")

    def close_all(self) -> None:
        """Close every plugin (the parent is gone)."""
        for qid in list(self.plugins):
            plugin = self.plugins.pop(qid)
            try:
                plugin.handlers.close(CLOSE_AT_EOF_S)
            except Exception:
                log.exception("hook worker process: closing %s failed", plugin.label)


def main(argv: list[str] | None = None) -> int:
    """Serve the parent until EOF on stdin."""
    args = sys.argv[1:] if argv is None else argv
    # The parent's group gets Ctrl-C; the parent decides, and EOF tells us when it is gone.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(
        level=logging.WARNING, format="wayline hook worker: %(levelname)s %(name)s: %(message)s"
    )
    background_priority(worker_nice())
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    cooperation.worker_yielder = Yielder()
    child = Child(int(args[0]), Pinning(worker_cpu()), settle=True)

    stdin = sys.stdin.buffer.fileno()
    child.reply((0, True, "ready"))
    try:
        while True:
            try:
                frame = read_frame(stdin)
            except EOFError:
                break
            except Exception:  # a frame that does not unpickle: the stream stays aligned
                log.exception("hook worker process: unreadable frame skipped")
                continue
            child.handle(frame)
    finally:
        child.close_all()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
