"""``wayline demo``: a real session against the bundled scripted model, with a hook timeline.

The model is scripted (say so plainly): it delegates to a child agent that runs a
terminal command, then reads two files in parallel, then answers. Everything
else is real: HTTP on 127.0.0.1, the agent loop, tools, subprocesses, plugins.
``--base-url`` points the same session at a real OpenAI-compatible server.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import click

from wayline.cli.errors import EXIT_FAILED, fail

DEMO_PROMPT = (
    "Summarise the project notes: delegate a quick terminal check, "
    "then read notes.txt and todo.txt."
)
CHILD_GOAL = (
    "CHILD-TASK: run `echo hello from the child agent` in the terminal and report what it printed."
)

DEMO_SCRIPT: dict[str, Any] = {
    "model": "wayline-scripted",
    "default": {"content": "ok"},
    "rules": [
        {
            "name": "child",
            "match": {"first_user_contains": "CHILD-TASK"},
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "terminal",
                            "arguments": {"command": "echo hello from the child agent"},
                        }
                    ]
                },
                {"content": "The command printed: hello from the child agent"},
            ],
        },
        {
            "name": "parent",
            "match": {"first_user_contains": "Summarise the project notes"},
            "turns": [
                {
                    "tool_calls": [
                        {"name": "delegate_task", "arguments": {"goal": CHILD_GOAL, "role": "leaf"}}
                    ]
                },
                {
                    "tool_calls": [
                        {"name": "read_file", "arguments": {"path": "notes.txt"}},
                        {"name": "read_file", "arguments": {"path": "todo.txt"}},
                    ]
                },
                {
                    "content": "The child agent confirmed the terminal works; "
                    "notes.txt describes wayline and todo.txt lists two open items."
                },
            ],
        },
    ],
}


def _details(hook: str, kw: dict[str, Any]) -> str:
    if hook in ("pre_tool_call", "post_tool_call", "transform_tool_result"):
        extra = f" [{kw.get('status')}]" if "status" in kw else ""
        return f"{kw.get('tool_name')} {kw.get('tool_call_id')}{extra}"
    if hook in ("pre_api_request", "post_api_request", "api_request_error"):
        return f"call #{kw.get('api_call_count')} {kw.get('finish_reason') or ''}".strip()
    if hook.startswith("subagent"):
        state = kw.get("child_status") or kw.get("child_role") or ""
        return f"child {kw.get('child_session_id')} {state}"
    if hook.endswith("approval_request") or hook.endswith("approval_response"):
        return f"{kw.get('pattern_key')} {kw.get('choice') or ''}"
    return str(kw.get("reason") or "")


@click.command()
@click.option("--base-url", help="Use a real OpenAI-compatible server instead of the scripted one.")
@click.option("--model", default=None, help="Model name for --base-url.")
@click.option("--api-key", default=None, help="API key for --base-url.")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
def demo(base_url: str | None, model: str | None, api_key: str | None, keep: Path | None) -> None:
    """Run the main job on the embedded default and print a timeline of every hook."""
    from rich.console import Console
    from rich.table import Table

    from wayline.contract.hooks import EMITTED_HOOKS
    from wayline.contract.private import private_directory
    from wayline.host.manifest import BUNDLED_DIR
    from wayline.runtime import build_runtime
    from wayline.testing.server import ScriptedServer

    console = Console()
    out = keep or Path(tempfile.mkdtemp(prefix="wayline-demo-"))
    home, work = out / "home", out / "workdir"
    work.mkdir(parents=True, exist_ok=True)
    private_directory(home)  # 0700, as every wayline home
    (work / "notes.txt").write_text("wayline: every agent step observable and interceptable.\n")
    (work / "todo.txt").write_text("1. ship the relay exporter\n2. ship the otel exporter\n")
    os.environ["WAYLINE_HOME"] = str(home)
    for var, sub in (
        ("WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY", "atof"),
        ("WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY", "atif"),
    ):
        os.environ.setdefault(var, str(out / sub))
    os.environ.setdefault("WAYLINE_OTEL_EXPORTER", "file")
    os.environ.setdefault("WAYLINE_OTEL_FILE", str(out / "otel" / "spans.jsonl"))
    observability = tuple(
        f"observability/{p.name}"
        for p in sorted((BUNDLED_DIR / "observability").glob("*"))
        if (p / "plugin.yaml").exists()
    )

    server = None
    if base_url is None:
        server = ScriptedServer(DEMO_SCRIPT).start()
        base_url, model = server.base_url, "wayline-scripted"
        console.print(
            f"[bold]Scripted model[/] on {base_url} — its answers are canned; "
            "use [cyan]--base-url[/] for a real model."
        )
    try:
        runtime = build_runtime(
            home,
            extra_plugins=observability,
            base_url=base_url,
            model=model or "default",
            api_key=api_key,
            yolo=True,
        )
        t0 = time.perf_counter()
        rows: list[tuple[float, str, str, str, str]] = []
        lock = threading.Lock()

        def recorder(name: str) -> Any:
            def record(**kw: Any) -> None:
                with lock:
                    rows.append(
                        (
                            time.perf_counter() - t0,
                            name,
                            threading.current_thread().name,
                            str(kw.get("session_id") or kw.get("parent_session_id") or "")[-6:],
                            _details(name, kw),
                        )
                    )

            return record

        for hook in sorted(EMITTED_HOOKS):
            runtime.manager.hooks.register(hook, recorder(hook), "<demo-timeline>")
        loaded = [p["key"] for p in runtime.manager.list_plugins() if p["loaded"]]
        console.print(f"plugins loaded: {', '.join(loaded) or '(none)'}")
        agent = runtime.agent(cwd=work)
        with console.status("running the session…"):
            result = agent.run_turn(DEMO_PROMPT)
            agent.finalize("shutdown")
            runtime.manager.close_instances()
    finally:
        if server is not None:
            server.stop()
    table = Table(title="hook timeline")
    for col in ("+ms", "hook", "thread", "session", "details"):
        table.add_column(col)
    for at, name, thread, session, details in rows:
        table.add_row(f"{at * 1000:.1f}", name, thread, session, details)
    console.print(table)
    if result.completed:
        console.print(f"[bold]answer:[/] {result.text}")
    console.print(f"session transcript: {home / 'sessions' / (agent.session_id + '.jsonl')}")
    for sub in ("atof", "atif", "otel"):
        d = out / sub
        files = sorted(str(p) for p in d.rglob("*") if p.is_file()) if d.exists() else []
        console.print(f"{sub}: {', '.join(files) if files else '(no plugin wrote here yet)'}")
    _write_page(console, out, agent.session_id)
    if not result.completed:  # the failure is no answer: stderr, exit 1 (docs/cli.md)
        fail(str(result.text).removeprefix("error:").strip() or result.reason, EXIT_FAILED)


def _write_page(console: Any, out: Path, session_id: str) -> None:
    """End the demo with the session as one HTML page (``wayline view``) and print its path."""
    from wayline.viewer import ViewerInputError, load_trajectories, write_page

    atif_dir = Path(os.environ.get("WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY", str(out / "atif")))
    atof_dir = Path(os.environ.get("WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY", str(out / "atof")))
    mine = sorted(atif_dir.glob(f"*{session_id}*.json")) if atif_dir.is_dir() else []
    sources = mine or (sorted(atof_dir.glob("*.jsonl")) if atof_dir.is_dir() else [])
    if not sources:
        console.print("page: (no trajectory was written, so no page)")
        return
    try:
        page = write_page(load_trajectories(sources), out / "trajectory.html")
    except (ViewerInputError, OSError) as exc:
        console.print(f"page: could not be written: {exc}")
        return
    console.print(
        f"[bold]page:[/] {page}  (open it in a browser; wayline view draws any trajectory)"
    )
