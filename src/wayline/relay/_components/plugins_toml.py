"""The ``plugins.toml`` loader: component config files and the exporters they start.

Accepted shapes for the observability component: Hermes' Relay plugin's ``version = 1`` flat
sections (``[components.config.atof] output_directory/filename/mode``) and Relay
0.10.4's ``sinks`` list (file sinks). ``adaptive`` is recognised with
``tool_parallelism.mode`` ∈ ``observe_only`` (default), ``inject_hints``, ``schedule``.
Bad input raises :class:`PluginsTomlError` naming the file, line and field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wayline.relay.atof import AtofExporter, AtofExporterConfig, AtofExporterMode

ADAPTIVE_MODES = ("observe_only", "inject_hints", "schedule")


class PluginsTomlError(ValueError):
    """A plugins.toml problem, with the file and (when known) the line."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True, slots=True)
class AtofSettings:
    """Where the ATOF file sink writes."""

    output_directory: str
    filename: str
    mode: str = "append"


@dataclass(frozen=True, slots=True)
class AtifSettings:
    """Where and how ATIF trajectories are written."""

    output_directory: str
    filename_template: str = "wayline-atif-{session_id}.json"
    agent_name: str = "wayline"
    agent_version: str = "unknown"
    model_name: str = "unknown"
    subagent_export_mode: str = "embedded"


@dataclass(frozen=True, slots=True)
class StreamSink:
    """An ATOF stream sink of a plugins.toml (see :mod:`wayline.relay.atof_stream`)."""

    url: str
    transport: str = "http_post"
    headers: dict[str, str] = field(default_factory=dict)
    header_env: dict[str, str] = field(default_factory=dict)
    timeout_millis: int = 3000
    field_name_policy: str = "preserve"


@dataclass(frozen=True, slots=True)
class PluginsToml:
    """The parts of a plugins.toml wayline acts on."""

    path: str
    atof: AtofSettings | None = None
    atif: AtifSettings | None = None
    adaptive_mode: str | None = None
    observability_enabled: bool = False
    atof_streams: tuple[StreamSink, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict)


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*(\[+\s*)?[^#\n]*\b{re.escape(key)}\b", re.M)
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def load_plugins_toml(path: str | Path, overrides: dict[str, Any] | None = None) -> PluginsToml:
    """Parse and check a plugins.toml; ``overrides`` (the programmatic layer, the same shape
    as the file) is merged over it with Relay's rules (see :func:`merge_layers`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginsTomlError(str(p), None, f"cannot read: {exc}") from None
    import tomllib  # here: a home without plugins.toml never loads the parser

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"at line (\d+)", str(exc))
        raise PluginsTomlError(
            str(p), int(m.group(1)) if m else None, f"invalid TOML: {exc}"
        ) from None
    if overrides:
        data = merge_layers(data, overrides)
    return _parse(data, str(p), text, p.parent)


def _parse(data: dict[str, Any], label: str, text: str, base: Path) -> PluginsToml:
    def bad(message: str, key: str) -> PluginsTomlError:
        return PluginsTomlError(label, _line_of(text, key.rsplit(".", 1)[-1]), f"{key}: {message}")

    version = data.get("version", 1)
    if version != 1:
        raise bad(f"unsupported version {version!r} (expected 1)", "version")
    components = data.get("components", [])
    if not isinstance(components, list):
        raise bad("must be an array of tables ([[components]])", "components")
    result = PluginsToml(label, raw=data)
    seen: set[str] = set()
    for i, comp in enumerate(components):
        if not isinstance(comp, dict) or not isinstance(comp.get("kind"), str):
            raise bad("every component needs a string `kind`", f"components[{i}].kind")
        kind = comp["kind"]
        if kind in seen:
            raise bad(f"component kind {kind!r} appears twice", f"components[{i}].kind")
        seen.add(kind)
        if comp.get("enabled", True) is False:
            continue
        config = comp.get("config") or {}
        if not isinstance(config, dict):
            raise bad("must be a table", f"components[{i}].config")
        if kind == "observability":
            result = _observability(result, config, bad, base)
        elif kind == "adaptive":
            tp = config.get("tool_parallelism") or {}
            if not isinstance(tp, dict):
                raise bad("must be a table", "tool_parallelism")
            mode = tp.get("mode")
            mode = mode or config.get("mode") or "observe_only"
            if mode not in ADAPTIVE_MODES:
                raise bad(
                    f"must be one of {', '.join(ADAPTIVE_MODES)}, got {mode!r}",
                    "tool_parallelism.mode",
                )
            result = _replace(result, adaptive_mode=mode)
    return result


def _replace(result: PluginsToml, **changes: Any) -> PluginsToml:
    from dataclasses import replace

    return replace(result, **changes)


def _resolve(base: Path, directory: Any) -> str:
    d = Path(str(directory or ".")).expanduser()
    return str(d if d.is_absolute() else base / d)


_STRING_KEYS = frozenset(
    (
        "output_directory",
        "filename",
        "mode",
        "filename_template",
        "agent_name",
        "agent_version",
        "model_name",
        "subagent_export_mode",
    )
)


def _observability(
    result: PluginsToml, config: dict[str, Any], bad: Any, base: Path
) -> PluginsToml:
    atof = config.get("atof") or {}
    atif = config.get("atif") or {}
    for name, section in (("atof", atof), ("atif", atif)):
        if not isinstance(section, dict):
            raise bad("must be a table", name)
        for key, value in section.items():
            if key in _STRING_KEYS and not isinstance(value, str):
                raise bad(f"must be a string, got {value!r}", f"{name}.{key}")
    changes: dict[str, Any] = {"observability_enabled": True}
    if isinstance(atof, dict) and atof.get("enabled"):
        sink: dict[str, Any] | None = atof
        sinks = atof.get("sinks")
        if isinstance(sinks, list) and sinks:
            kinds = [s.get("type", "file") if isinstance(s, dict) else None for s in sinks]
            for i, kind in enumerate(kinds):
                if kind not in ("file", "stream"):
                    raise bad(f"type must be file or stream, got {kind!r}", f"atof.sinks[{i}]")
            files = [s for s, kind in zip(sinks, kinds, strict=True) if kind == "file"]
            sink = files[0] if files else None
            changes["atof_streams"] = tuple(
                _stream_sink(s, bad, f"atof.sinks[{i}]")
                for i, (s, kind) in enumerate(zip(sinks, kinds, strict=True))
                if kind == "stream"
            )
        if sink is not None:
            mode = str(sink.get("mode", "append"))
            if mode not in ("append", "overwrite"):
                raise bad(f"must be append or overwrite, got {mode!r}", "atof.mode")
            changes["atof"] = AtofSettings(
                _resolve(base, sink.get("output_directory")),
                str(sink.get("filename") or "wayline-atof.jsonl"),
                mode,
            )
    if isinstance(atif, dict) and atif.get("enabled"):
        template = str(atif.get("filename_template") or "wayline-atif-{session_id}.json")
        if "{session_id}" not in template:
            raise bad("must contain {session_id}", "atif.filename_template")
        changes["atif"] = AtifSettings(
            _resolve(base, atif.get("output_directory")),
            template,
            str(atif.get("agent_name") or "wayline"),
            str(atif.get("agent_version") or "unknown"),
            str(atif.get("model_name") or "unknown"),
            _subagent_mode(atif, bad),
        )
    return _replace(result, **changes)


def _stream_sink(sink: dict[str, Any], bad: Any, where: str) -> StreamSink:
    from wayline.relay.atof_stream import POLICIES, TRANSPORTS

    url = sink.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise bad(f"url must be an http(s) URL, got {url!r}", f"{where}.url")
    transport = sink.get("transport", "http_post")
    if transport not in TRANSPORTS:
        raise bad(
            f"must be one of {', '.join(TRANSPORTS)}, got {transport!r}", f"{where}.transport"
        )
    policy = sink.get("field_name_policy", "preserve")
    if policy not in POLICIES:
        raise bad(
            f"must be one of {', '.join(POLICIES)}, got {policy!r}", f"{where}.field_name_policy"
        )
    timeout = sink.get("timeout_millis", 3000)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        raise bad(f"must be a positive integer, got {timeout!r}", f"{where}.timeout_millis")
    tables = {}
    for key in ("headers", "header_env"):
        table = sink.get(key) or {}
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise bad("must be a table of strings", f"{where}.{key}")
        tables[key] = {str(k): v for k, v in table.items()}
    return StreamSink(url, transport, tables["headers"], tables["header_env"], timeout, policy)


def stream_exporter(sink: StreamSink) -> AtofExporter:
    """The ATOF stream exporter of ``sink`` (``ValueError`` for an unset ``header_env``)."""
    cfg = AtofExporterConfig(
        sink_type="stream",
        url=sink.url,
        transport=sink.transport,
        headers=sink.headers,
        header_env=sink.header_env,
        timeout_millis=sink.timeout_millis,
        field_name_policy=sink.field_name_policy,
    )
    return AtofExporter(cfg)


def _subagent_mode(atif: dict[str, Any], bad: Any) -> str:
    mode = str(atif.get("subagent_export_mode") or "embedded")
    if mode not in ("embedded", "all"):
        raise bad(f"must be embedded or all, got {mode!r}", "atif.subagent_export_mode")
    return mode


class Activation:
    """What :func:`initialize` started; ``close()`` stops it."""

    def __init__(
        self,
        config: PluginsToml,
        atof: AtofExporter | None,
        name: str,
        streams: tuple[AtofExporter, ...] = (),
    ) -> None:
        self.config = config
        self.atof_exporter = atof
        self.stream_exporters = streams
        self._name = name

    def close(self) -> None:
        """Deregister and close the exporters this activation owns (streams sent, bounded)."""
        if self.atof_exporter is not None:
            self.atof_exporter.deregister(self._name)
            self.atof_exporter.shutdown()
            self.atof_exporter = None
        for exporter in self.stream_exporters:
            exporter.shutdown()
        self.stream_exporters = ()


def atof_exporter(settings: AtofSettings) -> AtofExporter:
    """An ATOF file exporter for ``settings`` (its directory is created, 0700 when new)."""
    cfg = AtofExporterConfig()
    cfg.output_directory = settings.output_directory
    cfg.filename = settings.filename
    cfg.mode = (
        AtofExporterMode.Overwrite if settings.mode == "overwrite" else AtofExporterMode.Append
    )
    return AtofExporter(cfg)


# Lists that add up across layers (higher layer first), as in Relay 0.10.4; any other list
# below a component's top level is replaced by the higher layer's.
_DESTINATIONS = frozenset(
    (
        ("atof", "sinks"),
        ("atif", "storage"),
        ("opentelemetry", "endpoints"),
        ("opentelemetry", "logs", "endpoints"),
        ("opentelemetry", "metrics", "endpoints"),
    )
)


def _enabled(item: Any) -> bool:
    return not (isinstance(item, dict) and item.get("enabled", True) is False)


def _merge_config(low: Any, high: Any, path: tuple[str, ...]) -> Any:
    if isinstance(low, dict) and isinstance(high, dict):
        out = dict(low)
        for key, value in high.items():
            out[key] = _merge_config(low[key], value, (*path, key)) if key in low else value
        return out
    if (
        isinstance(low, list)
        and isinstance(high, list)
        and (len(path) == 1 or path in _DESTINATIONS)
    ):
        return [x for x in high if _enabled(x)] + [x for x in low if _enabled(x)]
    return high


def merge_layers(low: dict[str, Any], high: dict[str, Any]) -> dict[str, Any]:
    """``high`` over ``low`` (two plugins.toml documents): components are matched by
    ``kind`` and their configs merged table by table; component-level lists and the
    destination lists (``atof.sinks``, ``atif.storage``, OpenTelemetry endpoints) are
    concatenated, higher layer first; other lists are replaced; ``enabled = false``
    components and destinations are left out before merging."""
    merged = {k: v for k, v in low.items() if k != "components"}
    merged.update({k: v for k, v in high.items() if k != "components"})
    components: dict[Any, dict[str, Any]] = {}
    for layer in (low, high):
        found = layer.get("components", [])
        if not isinstance(found, list):
            return {**merged, "components": found}  # _parse reports it
        for comp in found:
            if not isinstance(comp, dict) or not _enabled(comp):
                continue
            kind = comp.get("kind")
            known = components.get(kind)
            if known is None:
                components[kind] = comp
            else:
                config = _merge_config(known.get("config") or {}, comp.get("config") or {}, ())
                components[kind] = {**known, **comp, "config": config}
    merged["components"] = list(components.values())
    return merged


def activate_exporters(
    config: dict[str, Any] | None = None, plugins_toml: str | Path | None = None
) -> Activation:
    """Start the observability exporters described by ``plugins_toml`` and/or ``config``
    (what ``plugin.initialize`` does for the observability component): ``config`` is the
    programmatic layer, merged over the file
    (:func:`merge_layers`); relative directories in it resolve from the current directory
    when there is no file."""
    if plugins_toml is not None:
        parsed = load_plugins_toml(plugins_toml, config)
    else:
        if not isinstance(config, dict):
            raise PluginsTomlError(
                "<config>", None, "activate_exporters needs a config dict or a path"
            )
        parsed = _parse(merge_layers({}, config), "<config>", "", Path.cwd())
    name = f"wayline.plugins_toml.{id(parsed)}"
    streams = tuple(stream_exporter(sink) for sink in parsed.atof_streams)
    for i, stream in enumerate(streams):
        stream.register(f"{name}.stream.{i}")
    exporter = None
    if parsed.atof is not None:
        exporter = atof_exporter(parsed.atof)
        exporter.register(name)
    return Activation(parsed, exporter, name, streams)
