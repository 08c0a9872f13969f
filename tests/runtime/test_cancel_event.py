"""``CancelEvent``: the turn's cancel flag that also calls back the waits it must end."""

from __future__ import annotations

import logging
import threading

import pytest

from wayline.runtime.cancel import CancelEvent, on_cancel


def test_callbacks_run_once_when_set_and_not_after_removal() -> None:
    """``set()`` runs each registered callback once; a removed one never runs; a second
    ``set()`` runs nothing again."""
    event = CancelEvent()
    calls: list[str] = []
    event.on_set(lambda: calls.append("kept"))
    remove = event.on_set(lambda: calls.append("removed"))
    remove()
    event.set()
    event.set()
    assert calls == ["kept"]
    assert event.is_set()


def test_registering_on_a_set_event_runs_the_callback_at_once() -> None:
    """A wait that starts after the cancel still ends: the callback runs immediately."""
    event = CancelEvent()
    event.set()
    calls: list[int] = []
    event.on_set(lambda: calls.append(1))
    assert calls == [1]


def test_a_failing_callback_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    """A callback that raises is logged; the callbacks after it still run."""
    event = CancelEvent()
    calls: list[str] = []

    def boom() -> None:
        raise RuntimeError("boom")

    event.on_set(boom)
    event.on_set(lambda: calls.append("after"))
    with caplog.at_level(logging.ERROR, logger="wayline.runtime"):
        event.set()
    assert calls == ["after"]
    assert "a cancel callback failed" in caplog.text


def test_on_cancel_accepts_a_plain_event() -> None:
    """A plain ``threading.Event`` cannot call back: ``on_cancel`` runs the callback only if
    it is set already, and its remover is harmless."""
    calls: list[str] = []
    plain = threading.Event()
    on_cancel(plain, lambda: calls.append("unset"))()
    plain.set()
    on_cancel(plain, lambda: calls.append("set"))()
    on_cancel(None, lambda: calls.append("none"))()
    assert calls == ["set"]


def test_set_from_another_thread_wakes_a_waiter_through_its_callback() -> None:
    """The pattern the runtime uses: a waiter blocked on its own event is woken by the
    callback when another thread cancels."""
    event = CancelEvent()
    woken = threading.Event()
    remove = event.on_set(woken.set)
    thread = threading.Thread(target=event.set)
    thread.start()
    assert woken.wait(10)
    thread.join()
    remove()
