"""``wayline chat``: one-shot ``--query`` or an interactive REPL (Hermes-compatible flags)."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import click

from wayline.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, say_error
from wayline.host.config import ConfigError


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM ends a run like Ctrl-C: hooks fire, files close


def _prefetch_provider_sdk() -> None:
    """Start importing the provider SDK (the largest import of a one-shot) on a thread, so it
    overlaps loading the runtime, config and plugins. The provider's own ``import openai``
    waits on the import lock until this one is done, which is the join before the first
    call; an import error is left to that import to report."""

    def load() -> None:
        try:
            import openai  # noqa: F401
        except BaseException:
            return

    threading.Thread(target=load, name="wayline-sdk-import", daemon=True).start()


def _console_observer(quiet: bool) -> Any:
    def on_pre_tool(**kw: Any) -> None:
        if not quiet:
            click.echo(f"  → {kw.get('tool_name')} {str(kw.get('args'))[:120]}", err=True)

    def on_post_tool(**kw: Any) -> None:
        if not quiet:
            click.echo(
                f"  ← {kw.get('tool_name')} [{kw.get('status')}] {kw.get('duration_ms')} ms",
                err=True,
            )

    return on_pre_tool, on_post_tool


@click.command()
@click.option("-q", "--query", help="Run one turn with this message, then exit.")
@click.option("--provider", help="Provider name (any OpenAI-compatible server: custom).")
@click.option("--base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1.")
@click.option("--api-key", help="API key (else WAYLINE_API_KEY / model.api_key / OPENAI_API_KEY).")
@click.option("-m", "--model", help="Model name.")
@click.option("-t", "--toolsets", help="Comma list of toolsets: terminal,file,delegation.")
@click.option("--max-turns", type=int, help="Maximum model calls per user turn.")
@click.option(
    "-Q", "--quiet", is_flag=True, help="Print only the answer (no session id, no tool lines)."
)
@click.option("--accept-hooks", is_flag=True, help="Accepted for Hermes compatibility.")
@click.option("--yolo", is_flag=True, help="Approve dangerous commands without asking.")
@click.option("--stream", is_flag=True, default=None, help="Stream model responses (SSE).")
@click.option("-r", "--resume", "resume_id", help="Continue a stored session.")
@click.option("--max-retries", type=int, help="Provider retries per call (default 3).")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), help="Tool cwd.")
def chat(
    query: str | None,
    provider: str | None,
    base_url: str | None,
    api_key: str | None,
    model: str | None,
    toolsets: str | None,
    max_turns: int | None,
    quiet: bool,
    accept_hooks: bool,
    yolo: bool,
    stream: bool | None,
    resume_id: str | None,
    max_retries: int | None,
    workdir: Path | None,
) -> None:
    """Talk to an agent; every step emits hooks to the enabled plugins."""
    _prefetch_provider_sdk()
    from wayline.api.build import AgentSpec, build_agent, split_toolsets

    del accept_hooks
    signal.signal(signal.SIGTERM, _sigterm)
    pre, post = _console_observer(quiet)
    spec = AgentSpec(
        model=model,
        base_url=base_url,
        api_key=api_key,
        settings={
            "provider": provider,
            "max_turns": max_turns,
            "yolo": yolo,
            "stream": stream,
            "max_retries": max_retries,
        },
        toolsets=split_toolsets(toolsets) or None,
        hooks=(("pre_tool_call", pre), ("post_tool_call", post)),
        owner="<cli>",
        platform="cli",
        cwd=workdir or Path.cwd(),
        resume=resume_id,
    )
    try:
        _, agent = build_agent(spec)
    except ConfigError as exc:
        say_error(str(exc))
        sys.exit(EXIT_USAGE)
    except (RecursionError, ValueError) as exc:  # a config nested too deeply, a bad value
        say_error(f"cannot start the agent: {type(exc).__name__}: {exc}")
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BaseException as exc:  # a plugin's SystemExit or own BaseException while loading
        sys.exit(_stopped(exc))
    _announce(agent, quiet)
    if query is not None:
        code = EXIT_OK
        try:
            code = _answer(agent.run_turn(query))
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            code = EXIT_INTERRUPTED
        except BaseException as exc:
            code = _stopped(exc)
        finally:
            agent.finalize("shutdown")
            agent.manager.close_instances()
        _skip_exit_collections()
        sys.exit(code)
    _repl(agent, quiet)


def _skip_exit_collections() -> None:
    """Leave every object alive now out of the garbage collections of the interpreter's exit.

    A one-shot run is over here: the session is finalized and its plugins closed, and atexit
    handlers still run. What remains is the interpreter's teardown, whose collections walk
    every object the provider SDK, pydantic and the runtime created: a visible share of a
    one-shot's wall time. ``gc.freeze`` takes those objects out of them; they are still freed
    by reference counting as the modules are cleared, and only cycles among them are left
    unfinalized at exit, which Python never promises to finalize anyway.
    """
    import gc

    gc.freeze()


def _answer(result: Any) -> int:
    """Print a turn's outcome: the answer on stdout, anything else on stderr; the exit code.

    A pipeline that captures stdout gets the answer or nothing: a provider failure, an
    interrupted turn or the model-call limit goes to stderr with exit status 1 (130 when
    interrupted).
    """
    if result.completed:
        click.echo(result.text)
        return EXIT_OK
    if result.interrupted:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    text = str(result.text).strip()
    say_error(text.removeprefix("error:").strip().strip("()") or f"the turn ended: {result.reason}")
    return EXIT_FAILED


def _announce(agent: Any, quiet: bool = False) -> None:
    """Print the session id (unless ``-Q``), once its transcript exists (so ``--resume`` of it
    always works, even after the process is killed before the first message)."""
    if agent.store is not None:
        agent.store.create(agent.session_id)
    if not quiet:
        click.echo(f"session_id: {agent.session_id}", err=True)


def _stopped(exc: BaseException) -> int:
    """One line for a run stopped by something other than Ctrl-C; the exit code to use.

    A plugin's ``SystemExit`` keeps its code; its own ``BaseException`` or a bug gives 1.
    The session is still finalized by the caller, so every file is complete.
    """
    from wayline.host.bus import describe_exception

    if isinstance(exc, SystemExit):
        code = exc.code if isinstance(exc.code, int) else 1
        say_error(f"stopped: a plugin requested exit (code {code})")
        return code
    if isinstance(exc, OSError):
        kind = ""  # the environment (a full disk, a path that is not a directory)
    else:
        kind = "internal error: " if isinstance(exc, Exception) else "stopped: "
    say_error(f"{kind}{type(exc).__name__}: {describe_exception(exc)}")
    return 1


def _repl(agent: Any, quiet: bool) -> None:
    if not quiet:
        click.echo("wayline chat — /new starts a new session, /exit or Ctrl-D quits.", err=True)
    code: int | None = None
    try:
        while True:
            try:
                line = input("you> ")
            except EOFError:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/exit", "/quit"):
                break
            if text == "/new":
                agent.reset()
                _announce(agent, quiet)
                continue
            try:
                result = agent.run_turn(text)
            except KeyboardInterrupt:
                click.echo("\n(interrupted)", err=True)
                agent.cancel.clear()
                continue
            _answer(result)
    except KeyboardInterrupt:
        click.echo("", err=True)
    except BaseException as exc:
        code = _stopped(exc)
    finally:
        agent.finalize("shutdown")
        agent.manager.close_instances()
    if code is not None:
        sys.exit(code)
