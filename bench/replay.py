"""P3-efficiency worker: replay a captured hook stream into one observer, in this process.

    python -m bench.replay ARM STREAM.json OUTDIR [--repeat 4] [--gap-ms 1]

ARM is one of

* ``relay``: wayline's ``observability/relay`` (ATOF + ATIF files, its hook thread);
* ``hermes``: Hermes Agent 0.19.0's bundled ``plugins.observability.nemo_relay`` with
  nemo-relay 0.10.4, configured by ``HERMES_NEMO_RELAY_*`` (ATOF + ATIF) — run this arm
  with ``.venv-bench/bin/python``;
* ``otel``: wayline's ``observability/otel`` with the JSON-lines file exporter;
* ``plain-otel``: the OTel-SDK observer of ``bench/plain_otel.py`` (spans on the calling
  thread, ``BatchSpanProcessor``, the same file exporter);
* ``none``: no observer (what the replay loop itself costs).

Each arm registers through a small context that collects ``register_hook`` callbacks, as a
host would. The stream (``bench/hookstream.py``) is replayed ``--repeat`` times with the
session ids renamed per repetition, on this one thread, in recorded order, with a fixed gap
(``time.sleep``) after every hook call so a background thread runs when an agent would be
waiting for its model or tools. Only hooks the arm subscribed to are called.

Figures (one JSON line on standard output):

* ``block_us``: mean µs a hook call spends in the arm's callbacks (``perf_counter_ns``
  around the call): what it blocks the agent's thread; ``block_no_finalize_us`` the same
  over every hook but ``on_session_finalize``, and ``finalize_us`` the mean of that one
  (a session's finalize may wait until its files are written);
* ``cpu_us``: process CPU (all threads, ``process_time_ns``) from the first hook call until
  the arm's shutdown has written everything, divided by the number of hook calls.

Payloads are prepared before the timing starts. Messages that repeat from one model call to
the next are the same objects, as in a live agent (its request lists share the message
dicts). wayline's arms get the provider request and response as ``Unsanitized`` values, as
the runtime passes them when every callback of a hook is a queued observer; the other arms
get plain dicts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Ctx:
    """The part of a host's plugin context the observers use: hook and middleware lists."""

    def __init__(self) -> None:
        self.hooks: dict[str, list[Callable[..., Any]]] = {}
        self.middleware: dict[str, list[Callable[..., Any]]] = {}

    def register_hook(self, name: str, callback: Callable[..., Any]) -> None:
        """Subscribe ``callback`` to ``name``."""
        self.hooks.setdefault(name, []).append(callback)

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None:
        """Keep middleware (never called: the replay has no real calls to wrap)."""
        self.middleware.setdefault(kind, []).append(callback)


def _setup_relay(out: Path, ctx: Ctx) -> Callable[[], None]:
    os.environ.update(
        {
            "WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
            "WAYLINE_RELAY_ATOF_MODE": "overwrite",
            "WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        }
    )
    from wayline.plugins.observability import relay

    plugin = relay.register(ctx)
    plugin.observer  # noqa: B018 - built on the first hook otherwise: not timed, as for Hermes
    return plugin.close


def _setup_hermes(out: Path, ctx: Ctx) -> Callable[[], None]:
    os.environ.update(
        {
            "HERMES_NEMO_RELAY_ATOF_ENABLED": "1",
            "HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY": str(out / "atof"),
            "HERMES_NEMO_RELAY_ATOF_FILENAME": "events.jsonl",
            "HERMES_NEMO_RELAY_ATOF_MODE": "overwrite",
            "HERMES_NEMO_RELAY_ATIF_ENABLED": "1",
            "HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY": str(out / "atif"),
        }
    )
    import nemo_relay
    from plugins.observability import nemo_relay as plugin  # hermes-agent's bundled plugin

    plugin.register(ctx)
    runtime = plugin._get_runtime()  # the plugin builds it on its first hook: not timed
    if runtime is None:
        raise RuntimeError("Hermes' nemo_relay plugin did not start (nemo-relay missing?)")
    exporter = runtime.atof_exporter

    def finish() -> None:
        runtime.shutdown()  # closes open sessions (ATIF files) and deregisters the exporter
        nemo_relay.subscribers.flush()
        exporter.force_flush()  # Relay delivers on its dispatcher: wait until written
        exporter.shutdown()

    return finish


def _setup_otel(out: Path, ctx: Ctx) -> Callable[[], None]:
    os.environ.update(
        {"WAYLINE_OTEL_EXPORTER": "file", "WAYLINE_OTEL_FILE": str(out / "spans.jsonl")}
    )
    from wayline.plugins.observability import otel

    plugin = otel.register(ctx)
    if plugin is None:
        raise RuntimeError("observability/otel did not start (OpenTelemetry missing?)")
    plugin.pipeline  # noqa: B018 - built on the first hook otherwise: not timed, as for Hermes
    return plugin.shutdown


def _setup_plain(out: Path, ctx: Ctx) -> Callable[[], None]:
    from bench.plain_otel import PlainOtelObserver

    observer = PlainOtelObserver(out / "spans.jsonl")
    for name, callback in observer.hooks().items():
        ctx.register_hook(name, callback)
    return observer.shutdown


def _setup_none(out: Path, ctx: Ctx) -> Callable[[], None]:
    from wayline.contract import VALID_HOOKS

    def nothing(**_: Any) -> None:
        return None

    for name in VALID_HOOKS:
        ctx.register_hook(name, nothing)
    return lambda: None


ARMS: dict[str, Callable[[Path, Ctx], Callable[[], None]]] = {
    "relay": _setup_relay,
    "hermes": _setup_hermes,
    "otel": _setup_otel,
    "plain-otel": _setup_plain,
    "none": _setup_none,
}
# Arms that run in a wayline process, behind its hook bus (Hermes' runs in Hermes' host).
WAYLINE_PROCESS_ARMS = ("relay", "otel", "plain-otel")

# The conversation lists of a payload: members repeat call after call as the same objects
# (and so do a request's tool definitions: an agent builds them once).
_MESSAGE_LISTS = ("request_messages", "conversation_history")


def _intern_messages(payload: dict[str, Any], seen: dict[str, Any]) -> None:
    def share(items: Any) -> Any:
        if not isinstance(items, list):
            return items
        out = []
        for item in items:
            key = json.dumps(item, sort_keys=True)
            out.append(seen.setdefault(key, item))
        return out

    for key in _MESSAGE_LISTS:
        if key in payload:
            payload[key] = share(payload[key])
    request = payload.get("request")
    body = request.get("body") if isinstance(request, dict) else None
    if isinstance(body, dict):
        for key in ("messages", "tools"):
            if key in body:
                body[key] = share(body[key])


def _deferred(name: str, payload: dict[str, Any], memo: Any) -> dict[str, Any]:
    """What wayline's runtime hands its hook bus: request/response still to sanitize, with
    the agent's own sanitize memo for the request (``REQUEST_MEMO_DEPTH``)."""
    from wayline.redaction.unsanitized import Unsanitized

    if name in ("pre_api_request", "api_request_error") and isinstance(
        payload.get("request"), dict
    ):
        payload["request"] = Unsanitized(payload["request"], 3, memo)
    elif name == "post_api_request" and isinstance(payload.get("response"), dict):
        payload["response"] = Unsanitized(payload["response"])
    return payload


def load_calls(
    stream: Path, hooks: dict[str, list[Callable[..., Any]]], repeat: int, wayline: bool
) -> list[tuple[str, dict[str, Any]]]:
    """The replay's hook calls (``repeat`` copies of the stream, renamed sessions), built
    ahead of the timing; only hooks that have callbacks. ``wayline``: the payloads are
    what wayline's runtime gives its bus (see :func:`_invoker` for what the bus does)."""
    from wayline.redaction.sanitize import SanitizeMemo

    memo = SanitizeMemo(3)
    text = stream.read_text()
    sessions: list[str] = json.loads(text)["sessions"]
    calls: list[tuple[str, dict[str, Any]]] = []
    for copy in range(repeat):
        renamed = text
        for session in sessions:
            renamed = renamed.replace(session, f"{session}r{copy}")
        seen: dict[str, Any] = {}
        for name, payload, _ in json.loads(renamed)["hooks"]:
            if name not in hooks:
                continue
            _intern_messages(payload, seen)
            calls.append((name, _deferred(name, payload, memo) if wayline else payload))
    return calls


def _invoker(callback: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
    """How wayline's hook bus calls ``callback``: a queued observer gets the payload dict
    itself, still unsanitized, through ``enqueue_owned`` (a wayline host with no middleware
    never changes a payload after its hook); any other callback gets keyword arguments,
    sanitized first on the calling thread (``HookBus._returns``)."""
    enqueue = getattr(callback, "enqueue_owned", None)
    if callable(enqueue):
        return enqueue  # type: ignore[no-any-return]
    from wayline.redaction.unsanitized import has_unsanitized, resolve_payload

    def call(payload: dict[str, Any]) -> Any:
        if has_unsanitized(payload):
            resolve_payload(payload)
        return callback(**payload)

    return call


def replay(arm: str, stream: Path, out: Path, repeat: int, gap_s: float) -> dict[str, Any]:
    """Run one arm over the stream; returns its figures."""
    out.mkdir(parents=True, exist_ok=True)
    ctx = Ctx()
    finish = ARMS[arm](out, ctx)
    invokers = {name: [_invoker(cb) for cb in cbs] for name, cbs in ctx.hooks.items()}
    calls = load_calls(stream, ctx.hooks, repeat, arm in WAYLINE_PROCESS_ARMS)
    per_hook: dict[str, list[int]] = {}
    clock, sleep = time.perf_counter_ns, time.sleep
    blocked = 0
    cpu0, wall0 = time.process_time_ns(), clock()
    for name, payload in calls:
        t0 = clock()
        for invoke in invokers[name]:
            invoke(payload)
        spent = clock() - t0
        blocked += spent
        totals = per_hook.setdefault(name, [0, 0])
        totals[0] += 1
        totals[1] += spent
        sleep(gap_s)
    t0 = clock()
    finish()
    finish_ns = clock() - t0
    cpu = time.process_time_ns() - cpu0
    wall = clock() - wall0
    n = len(calls)
    ends = per_hook.get("on_session_finalize", [0, 0])
    return {
        "arm": arm,
        "hook_calls": n,
        "block_us": blocked / n / 1000,
        # what the hooks block besides a session's finalize, which may wait for its files
        "block_no_finalize_us": (blocked - ends[1]) / max(n - ends[0], 1) / 1000,
        "finalize_us": ends[1] / max(ends[0], 1) / 1000,
        "cpu_us": cpu / n / 1000,
        "wall_s": wall / 1e9,
        "finish_ms": finish_ns / 1e6,
        "per_hook_block_us": {k: round(v[1] / v[0] / 1000, 2) for k, v in sorted(per_hook.items())},
        "files": sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()),
    }


def main() -> None:
    """Parse the command line, replay, print one JSON line."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("arm", choices=sorted(ARMS))
    parser.add_argument("stream", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--gap-ms", type=float, default=1.0)
    args = parser.parse_args()
    figures = replay(args.arm, args.stream, args.out, args.repeat, args.gap_ms / 1000)
    print(json.dumps(figures), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
