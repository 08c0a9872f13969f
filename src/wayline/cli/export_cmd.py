"""``wayline export otlp``: recorded sessions (ATIF or ATOF) sent as OpenTelemetry spans and
metrics to an OTLP endpoint, with the live ``observability/otel`` plugin's own mapping.

Exit codes: 0 every file exported; 1 the backend refused or could not be reached; 2 bad
input (a flag, a file that is missing or is neither ATIF nor ATOF).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from wayline.cli.errors import EXIT_FAILED, fail, warn

__all__ = ["otlp"]


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _header_name(value: str) -> str:
    """The header name a ``--header`` value starts with, without anything after it."""
    match = _TOKEN.match(value.strip())
    return match.group(0) if match else ""


def _headers(values: tuple[str, ...]) -> dict[str, str]:
    """``--header KEY=VALUE`` values; a refused one is named by its header name only."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or _TOKEN.fullmatch(key.strip()) is None:
            name = _header_name(value)
            shown = f"{name!r} (the rest is not shown)" if name else "(its text is not shown)"
            fail(f"--header {shown}: expected KEY=VALUE with a header name as KEY")
        out[key.strip()] = rest.strip()
    return out


def _environment_secrets() -> dict[str, str]:
    """Header values of the standard ``OTEL_EXPORTER_OTLP_*HEADERS`` variables."""
    found: dict[str, str] = {}
    for variable in ("", "TRACES_", "METRICS_"):
        for item in os.environ.get(f"OTEL_EXPORTER_OTLP_{variable}HEADERS", "").split(","):
            name, _, value = item.partition("=")
            if value.strip():
                found[f"{variable}header {name.strip()}"] = value.strip()
    return found


@contextlib.contextmanager
def _credentials_kept_out_of_logs(log_filter: logging.Filter) -> Iterator[None]:
    """``log_filter`` on every handler of the root logger for the export's length (the SDK
    logs a failed export with the URL it tried, query string included, and a malformed
    header variable as it is). With no handler, Python would print WARNING and above bare
    on stderr (``logging.lastResort``); a handler doing the same, filtered, stands in."""
    root = logging.getLogger()
    own: logging.Handler | None = None
    if not root.handlers:
        own = logging.StreamHandler(sys.stderr)
        own.setLevel(logging.WARNING)
        root.addHandler(own)
    handlers = list(root.handlers)
    for handler in handlers:
        handler.addFilter(log_filter)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(log_filter)
        if own is not None:
            root.removeHandler(own)


def _files(paths: tuple[Path, ...]) -> list[tuple[Path, str]]:
    """Each file with its kind (``atif``/``atof``); a directory gives its .json/.jsonl files."""
    from wayline.trajectory.load import TrajectoryError, identify_input

    found: list[tuple[Path, str]] = []
    for path in paths:
        if not path.exists():
            fail(f"{path}: no such file or directory")
        candidates = (
            sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
            if path.is_dir()
            else [path]
        )
        for file in candidates:
            try:  # from the first bytes: says what a file of another kind is (OTel spans…)
                kind = identify_input(file)
            except TrajectoryError as exc:
                if path.is_dir():
                    continue  # a directory may hold other JSON files
                fail(str(exc))
            found.append((file, kind))
    if not found:
        fail(f"{', '.join(map(str, paths))}: no ATIF or ATOF files")
    return found


def _settings(
    endpoint: str | None, protocol: str | None, headers: dict[str, str], metrics: bool
) -> Any:
    """The otel plugin's settings (config.yaml section, OTEL_* variables) with the flags on top."""
    from wayline.host.config import ConfigError, load_config
    from wayline.plugins.observability.otel.settings import (
        SECTION,
        OtelConfigError,
        load_settings,
        shown_url,
    )
    from wayline.trajectory.otlp.offline import export_settings

    try:
        doc = load_config()
        entries = ((doc.data or {}).get("plugins") or {}).get("entries") or {}
        section = entries.get("observability/otel") or {}
        base = load_settings(section, os.environ)
    except (ConfigError, OtelConfigError) as exc:
        fail(str(exc))
    if endpoint is not None and not endpoint.startswith(("http://", "https://")):
        fail(
            f"--endpoint {shown_url(endpoint)!r}: expected an http:// or https:// URL "
            f"({SECTION}.endpoint)"
        )
    return export_settings(
        base,
        endpoint=endpoint,
        protocol=protocol,
        headers=headers,
        metrics=None if metrics else False,
    )


def _calls(path: Path, kind: str) -> tuple[str, Any]:
    """The id seed and the hook calls of one file."""
    from wayline.trajectory.otlp.recorded import atif_hooks, atof_hooks

    if kind == "atif":
        from wayline.trajectory.load import TrajectoryError, load_trajectory

        try:
            document = load_trajectory(path)
        except TrajectoryError as exc:
            fail(str(exc))
        seed = str(document.get("session_id") or document.get("trajectory_id") or path.name)
        return f"atif:{seed}", atif_hooks(document)
    import warnings

    from wayline.relay.atof_reader import AtofFormatError, AtofTornLineWarning, iter_events

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AtofTornLineWarning)
        try:
            events = list(iter_events(path))
        except (AtofFormatError, OSError) as exc:
            fail(f"{path}: {exc}")
    torn = [str(w.message) for w in caught if issubclass(w.category, AtofTornLineWarning)]
    if not any(e.get("kind") == "scope" for e in events):  # nothing to send: bad input
        fail(f"{path}: truncated: {torn[0]}" if torn else f"{path}: no ATOF scope events")
    for line in torn:  # a writer killed mid-line: what came before is exported
        warn(line)
    seed = next(
        (
            str((e.get("metadata") or {}).get("session_id") or e.get("uuid"))
            for e in events
            if e.get("kind") == "scope" and e.get("scope_category") == "start"
        ),
        path.name,
    )
    return f"atof:{seed}", atof_hooks(events)


@click.command("otlp")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--endpoint",
    help="Base URL like OTEL_EXPORTER_OTLP_ENDPOINT (/v1/traces and /v1/metrics are appended).",
)
@click.option(
    "--protocol",
    type=click.Choice(["http/protobuf", "grpc"]),
    help="OTLP transport (default http/protobuf, or OTEL_EXPORTER_OTLP_PROTOCOL).",
)
@click.option("--header", "header", multiple=True, help="KEY=VALUE sent with every export.")
@click.option("--metrics/--no-metrics", default=True, help="Also send the metrics (default on).")
def otlp(
    paths: tuple[Path, ...],
    endpoint: str | None,
    protocol: str | None,
    header: tuple[str, ...],
    metrics: bool,
) -> None:
    """Send recorded sessions (ATIF or ATOF files) to an OTLP endpoint as spans and metrics.

    Same mapping as the live observability/otel plugin; trace and span ids derive from each
    session, so exporting the same files again does not duplicate them in the backend.
    Without flags the standard OTEL_EXPORTER_OTLP_* variables apply.
    """
    headers = _headers(header)
    files = _files(paths)
    settings = _settings(endpoint, protocol, headers, metrics)
    from wayline.plugins.observability.otel.settings import CredentialFilter, scrub, shown_url
    from wayline.trajectory.otlp.offline import OfflineExport

    # No message of this command shows a header value, URL userinfo or a query value.
    log_filter = CredentialFilter(settings)
    log_filter.secrets.update(_environment_secrets())
    hooks = 0
    with _credentials_kept_out_of_logs(log_filter), _progress(len(files)) as advance:
        try:
            run = OfflineExport.build(settings)
        except ValueError as exc:  # OtelConfigError: a missing grpc extra, a bad setting
            fail(scrub(str(exc), log_filter.secrets))
        for path, kind in files:
            seed, calls = _calls(path, kind)
            try:
                hooks += run.session(seed, calls)
            except ValueError as exc:  # a timestamp the file cannot be read by
                warn(f"{path}: skipped the rest: {exc}")
            advance(path)
        stats = run.finish()
    exported = stats.get("exported", 0)
    failed = stats.get("failed_exports", 0)
    target = settings.traces_endpoint() or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    where = shown_url(target) if target else "default"
    summary = {"files": len(files), "hooks": hooks, "spans_exported": exported, "endpoint": where}
    click.echo(json.dumps(summary))
    if failed:
        fail(
            f"{failed} export(s) failed ({stats.get('dropped_export_failed', 0)} spans not "
            f"sent): is {where} reachable and accepting OTLP {settings.protocol}?",
            EXIT_FAILED,
        )


class _progress:
    """A rich progress bar on stderr for several files (nothing for one)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> Any:
        if self.total > 1:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("exporting", total=self.total)

        def advance(path: Path) -> None:
            if self.bar is not None:
                self.bar.update(self.task, advance=1, description=path.name[:40])

        return advance

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
