"""Run a plugin's shutdown when the process ends, in any host.

``atexit`` is not enough: Hermes Agent's one-shot mode and exit watchdog leave through
``os._exit()``, which skips ``atexit`` — but every such path calls ``logging.shutdown()``
first, and that closes every live ``logging.Handler``. A handler attached to no logger is
therefore an exit signal that survives ``os._exit`` hosts. ``logging.config`` also closes
all handlers while the process keeps running; that case is recognised and ignored, and the
sentinel is re-armed by the next :meth:`ExitHook.arm` (plugins call it from
``on_session_start``/``on_session_end``).
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from wayline.host.bus import QueuedObserver

log = logging.getLogger("wayline.host.exit")


def _reconfiguring() -> bool:
    """Whether ``logging.config`` (``dictConfig``/``fileConfig``, which close every handler
    and keep the process running) is what closes the sentinel: that is not an exit.

    Told by the module a calling frame belongs to (``logging.config``'s file), not by the
    name of one of its private functions.
    """
    config = sys.modules.get("logging.config")  # never imported: nothing is reconfiguring
    if config is None:
        return False
    config_file = config.__file__
    return any(frame.f_code.co_filename == config_file for frame, _ in traceback.walk_stack(None))


class _Sentinel(logging.Handler):
    def __init__(self, owner: ExitHook) -> None:
        super().__init__()
        self._owner: ExitHook | None = owner

    def emit(self, record: logging.LogRecord) -> None:
        """Never receives records (it is attached to no logger)."""

    def detach(self) -> None:
        """Close without firing (the owner closed by itself)."""
        self._owner = None
        self.close()

    def close(self) -> None:
        owner, self._owner = self._owner, None
        try:
            if owner is None:
                pass
            elif _reconfiguring():
                owner._disarmed()
            else:
                owner.fire()
        finally:
            super().close()


class ExitHook:
    """Calls ``callback`` at process exit: at ``atexit`` and at ``logging.shutdown()``.

    ``callback`` should be idempotent (both may happen). Failures are logged and
    swallowed: an observer fails open, even on the way out. Thread-safe.
    """

    def __init__(self, callback: Callable[[], None], *, name: str) -> None:
        self._callback = callback
        self._name = name
        self._lock = threading.Lock()
        self._sentinel: _Sentinel | None = None
        atexit.register(self.fire)

    def arm(self, **_: Any) -> None:
        """(Re)create the logging sentinel; usable directly as an observer hook callback."""
        with self._lock:
            if self._sentinel is None:
                self._sentinel = _Sentinel(self)

    def arming(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        """``callback`` (a hook callback) that first re-arms this exit hook.

        Plugins wrap their ``on_session_start``/``on_session_end`` callbacks in it: a logging
        reconfiguration may have dropped the sentinel, and a run's end may precede the exit.
        One registration per hook, so ``wayline plugins list`` shows each hook once. The
        re-arming happens on the hook's calling thread, before a queued observer queues:
        the process may begin to exit right after the hook.
        """

        if isinstance(callback, QueuedObserver):
            return _ArmingQueued(self, callback)

        def arming(**payload: Any) -> Any:
            self.arm()
            return callback(**payload)

        arming.__name__ = getattr(callback, "__name__", "arming")
        arming.__qualname__ = getattr(callback, "__qualname__", "arming")
        return arming

    def _disarmed(self) -> None:
        with self._lock:
            self._sentinel = None

    def disarm(self) -> None:
        """Forget the exit: the owner closed by itself (its callback is not called later)."""
        with self._lock:
            sentinel, self._sentinel = self._sentinel, None
        atexit.unregister(self.fire)
        if sentinel is not None:
            sentinel.detach()

    def fire(self) -> None:
        """Run the shutdown callback now."""
        try:
            self._callback()
        except Exception as exc:
            log.warning("%s: shutdown at exit failed: %s", self._name, exc)


class _ArmingQueued(QueuedObserver):
    """A queued observer that re-arms an :class:`ExitHook` before it queues. Kind: OBSERVER."""

    def __init__(self, exit_hook: ExitHook, inner: QueuedObserver) -> None:
        self.exit_hook = exit_hook
        self.inner = inner
        self.__name__ = getattr(inner, "__name__", "arming")
        self.__qualname__ = getattr(inner, "__qualname__", "arming")

    def enqueue(self, payload: dict[str, Any]) -> None:
        """Re-arm, then queue ``payload`` with the wrapped observer."""
        self.exit_hook.arm()
        self.inner.enqueue(payload)

    def enqueue_owned(self, payload: dict[str, Any]) -> None:
        """Re-arm, then queue ``payload`` (its host never changes it) with the wrapped observer."""
        self.exit_hook.arm()
        self.inner.enqueue_owned(payload)
