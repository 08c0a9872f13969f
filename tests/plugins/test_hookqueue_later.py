"""Later work on the hook thread: run when the thread is idle, one job per key, dropped by a
cancel or by closing its queue, run inline once the queue is closed."""

from __future__ import annotations

import threading
from pathlib import Path

import wayline
from wayline.plugins.observability.hookqueue import THREAD_NAME, HookQueue, HookThread
from wayline.testing.server import ScriptedServer


def test_later_runs_on_the_hook_thread_after_the_queued_hooks() -> None:
    """A later job runs on the hook thread, after every hook queued before the thread idled."""
    queue = HookQueue(label="later", thread=HookThread())
    seen: list[tuple[str, str]] = []
    done = threading.Event()

    def job() -> None:
        seen.append(("later", threading.current_thread().name))
        done.set()

    queue.later("k", job, 0.0)
    for i in range(3):
        queue.put(
            "h", lambda n: seen.append((f"hook{n}", threading.current_thread().name)), {"n": i}
        )
    assert done.wait(10)
    assert seen == [(f"hook{i}", THREAD_NAME) for i in range(3)] + [("later", THREAD_NAME)]


def test_asking_again_for_a_key_replaces_its_job() -> None:
    """Two requests for one key before it is due run once: the latest job."""
    thread = HookThread()
    queue = HookQueue(label="later", thread=thread)
    ran: list[str] = []
    hold, done = threading.Event(), threading.Event()
    queue.put("h", lambda: hold.wait(10), {})  # keeps the thread busy while we ask twice
    queue.later("k", lambda: ran.append("first"), 0.0)
    queue.later("k", lambda: (ran.append("second"), done.set()), 0.0)
    hold.set()
    assert done.wait(10)
    assert queue.drain(10)
    assert ran == ["second"]


def test_cancel_and_close_drop_later_work() -> None:
    """cancel_later forgets a job; closing the queue forgets its jobs; after close a job runs
    at once on the caller."""
    thread = HookThread()
    queue = HookQueue(label="later", thread=thread)
    ran: list[str] = []
    queue.later("cancelled", lambda: ran.append("cancelled"), 3600.0)
    queue.cancel_later("cancelled")
    queue.later("closed", lambda: ran.append("closed"), 3600.0)
    assert thread.later  # due in an hour: still waiting
    assert queue.close(10)
    assert not thread.later
    queue.later("inline", lambda: ran.append(threading.current_thread().name), 3600.0)
    assert ran == [threading.current_thread().name]


def test_a_running_session_has_a_live_atif_file(tmp_path: Path) -> None:
    """After a turn, while the agent stays open, its ATIF file appears (written when the hook
    thread idles); closing the agent writes the final one."""
    home = tmp_path / "home"
    home.mkdir()
    with ScriptedServer({"default": {"content": "hi"}}) as srv:
        agent = wayline.Agent("m", srv.base_url, "k", plugins=["observability/relay"], home=home)
        try:
            assert agent.run("hello").completed
            path = home / "relay" / "atif" / f"wayline-atif-{agent.session_id}.json"
            relay = agent.plugin("observability/relay")
            seen = threading.Event()
            # The snapshot is later work: poll the file on the hook thread's own schedule.
            for _ in range(200):
                relay.drain(10)
                if path.exists():
                    seen.set()
                    break
                seen.wait(0.05)
            assert path.exists()
        finally:
            agent.close()
    assert '"hello"' in path.read_text() or "hello" in path.read_text()


def test_a_base_exception_ends_the_thread_and_a_new_one_runs_the_rest() -> None:
    """An observer's ``BaseException`` is not swallowed: it ends the hook thread (Python's
    thread excepthook sees it), and the hooks queued after it still run, on a new thread."""

    class Abort(BaseException):
        """A plugin's own BaseException."""

    thread = HookThread()
    queue = HookQueue(label="abort", thread=thread)
    seen: list[BaseException] = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: seen.append(args.exc_value)  # type: ignore[assignment,misc,arg-type]
    ran: list[int] = []
    try:
        hold = threading.Event()
        queue.put("h", lambda: hold.wait(10), {})

        def abort() -> None:
            raise Abort

        queue.put("h", abort, {})
        queue.put("h", lambda: ran.append(1), {})
        first = thread.thread
        hold.set()
        assert queue.drain(10)
        assert first is not None
        first.join(10)  # its excepthook call comes after the hooks it handed over
    finally:
        threading.excepthook = old_hook
    assert ran == [1]
    assert thread.thread is not first
    assert [type(e) for e in seen] == [Abort]
    assert queue.failures == 0
