"""Inspect AI evaluation logs (``.eval`` and ``.json``) into ATIF: one trajectory per sample.

The two layouts, as Inspect writes them:

- ``.json``: one ``EvalLog`` object: ``eval`` (task, model, ids, packages), ``results``,
  ``stats`` and ``samples`` (each with ``id``, ``epoch``, ``messages``, ``events``,
  ``scores``, ``model_usage``, ``attachments``).
- ``.eval``: a zip archive whose ``header.json`` is the log without samples and whose
  ``samples/<id>_epoch_<n>.json`` members are the samples. Current Inspect versions compress
  the members with Zstandard (zip method 93), which Python's ``zipfile`` cannot read: such
  members are read from the archive's local headers (PKWARE APPNOTE 4.3.7) and decompressed
  with the ``zstandard`` package (``pip install 'wayline[import]'``).

Messages become steps (system, user, assistant → agent with its tool calls and reasoning; a
``tool`` message is the result of its call). Each assistant message gets the usage of the model
event that produced it (matched by message id). The sample's scores, target, the task and the
model go to the trajectory's ``extra.inspect``. String values Inspect moved into
``attachments`` (``attachment://<hash>``) are put back.
"""

from __future__ import annotations

import json
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wayline.importers.common import (
    Imported,
    ImportFailure,
    Trajectory,
    arguments_of,
    metrics_of,
    text_of,
    when,
)
from wayline.relay.atif.payloads import JsonDict

__all__ = ["AGENT", "read_inspect", "read_log_parts"]

AGENT = "inspect_ai"
ZIP_ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_ATTACHMENT = "attachment://"
_USAGE_KEYS = {
    "input_tokens": "prompt_tokens",
    "output_tokens": "completion_tokens",
    "input_tokens_cache_read": "cache_read_tokens",
    "input_tokens_cache_write": "cache_write_tokens",
    "total_cost": "cost_usd",
}


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    if info.compress_type != ZIP_ZSTANDARD:
        return archive.read(info)
    try:
        import zstandard
    except ImportError:
        raise ImportFailure(
            path,
            None,
            info.filename,
            "compressed with Zstandard: install the zstandard package "
            "(pip install 'wayline[import]')",
        ) from None
    handle = archive.fp
    assert handle is not None
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    fields = _LOCAL_HEADER.unpack(header) if len(header) == _LOCAL_HEADER.size else None
    if fields is None or fields[0] != _LOCAL_SIGNATURE:
        raise ImportFailure(path, None, info.filename, "broken zip local header")
    handle.seek(fields[9] + fields[10], 1)  # the name and the extra field
    data = handle.read(info.compress_size)
    try:
        return bytes(zstandard.ZstdDecompressor().decompress(data, max_output_size=info.file_size))
    except zstandard.ZstdError as exc:
        raise ImportFailure(path, None, info.filename, f"not Zstandard data ({exc})") from None


def _json_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> Any:
    try:
        return json.loads(_member(archive, info, path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ImportFailure(path, None, info.filename, f"not JSON ({exc})") from None


def read_log_parts(path: Path) -> tuple[JsonDict, Iterator[JsonDict]]:
    """The log's header (everything but the samples) and its samples, either layout."""
    if zipfile.is_zipfile(path):
        archive = zipfile.ZipFile(path)
        members = {info.filename: info for info in archive.infolist()}
        if "header.json" in members:
            header = _json_member(archive, members["header.json"], path)
        elif "_journal/start.json" in members:  # a log still being written
            header = _json_member(archive, members["_journal/start.json"], path)
        else:
            raise ImportFailure(path, None, "header.json", "missing: not an Inspect .eval log")
        if not isinstance(header, dict):
            raise ImportFailure(path, None, "header.json", "not an object")
        names = [n for n in members if n.startswith("samples/") and n.endswith(".json")]

        def samples() -> Iterator[JsonDict]:
            with archive:
                for name in names:
                    sample = _json_member(archive, members[name], path)
                    if not isinstance(sample, dict):
                        raise ImportFailure(path, None, name, "not an object")
                    yield sample

        return header, samples()
    try:
        document = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ImportFailure(path, None, "file", f"not JSON ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("eval"), dict):
        raise ImportFailure(path, None, "eval", "missing: not an Inspect log")
    listed = document.get("samples") or []
    if not isinstance(listed, list):
        raise ImportFailure(path, None, "samples", "not a list")
    return document, iter(s for s in listed if isinstance(s, dict))


def _restore(value: Any, attachments: JsonDict) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by what it stands for."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            found = attachments.get(value[len(_ATTACHMENT) :])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [_restore(item, attachments) for item in value]
    if isinstance(value, dict):
        return {key: _restore(item, attachments) for key, item in value.items()}
    return value


def _usage(usage: Any) -> JsonDict | None:
    if not isinstance(usage, dict):
        return None
    mapped: JsonDict = {}
    for key, value in usage.items():
        renamed = _USAGE_KEYS.get(str(key), str(key))
        if value is not None:
            mapped[renamed] = value
    return metrics_of(mapped)


def _reasoning(content: Any) -> str | None:
    if not isinstance(content, list):
        return None
    parts = [
        block["reasoning"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "reasoning"
        and isinstance(block.get("reasoning"), str)
    ]
    return "\n".join(parts) if parts else None


def _visible(content: Any) -> str:
    if isinstance(content, list):
        content = [b for b in content if not (isinstance(b, dict) and b.get("type") == "reasoning")]
    return text_of(content)


def _sample(path: Path, header: JsonDict, sample: JsonDict, index: int) -> Imported:
    sample = _restore(sample, sample.get("attachments") or {})
    spec = header["eval"]
    where = f"samples[{index}]"
    if "id" not in sample:
        raise ImportFailure(path, None, f"{where}.id", "missing")
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise ImportFailure(path, None, f"{where}.messages", "missing or not a list")
    eval_id = spec.get("eval_id") or spec.get("task_id") or path.stem
    epoch = sample.get("epoch", 1)
    source_id = f"{eval_id}-{sample['id']}-{epoch}"
    packages = spec.get("packages") if isinstance(spec.get("packages"), dict) else {}
    model = spec.get("model") if isinstance(spec.get("model"), str) else None
    root = Trajectory.root(source_id, AGENT, packages.get("inspect_ai"), model)
    usage_by_message: dict[str, JsonDict] = {}
    times: dict[str, str] = {}
    for event in sample.get("events") or []:
        if not isinstance(event, dict) or event.get("event") != "model":
            continue
        output = event.get("output")
        if not isinstance(output, dict):
            continue
        choices = output.get("choices") or []
        message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            metrics = _usage(output.get("usage"))
            if metrics is not None:
                usage_by_message[message["id"]] = metrics
            if isinstance(event.get("timestamp"), str):
                times[message["id"]] = event["timestamp"]
    for position, message in enumerate(messages):
        at = f"{where}.messages[{position}]"
        if not isinstance(message, dict):
            raise ImportFailure(path, None, at, "not an object")
        role = message.get("role")
        content = message.get("content")
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        extra: JsonDict = {"message_id": message_id} if message_id else {}
        stamp = when(times.get(message_id or ""))
        if role in ("system", "user"):
            root.step(role, _visible(content), stamp, extra)
        elif role == "assistant":
            step = root.step(
                "agent", _visible(content), stamp, extra, model=message.get("model") or model
            )
            step.reasoning = _reasoning(content)
            step.metrics = usage_by_message.get(message_id or "")
            for number, call in enumerate(message.get("tool_calls") or []):
                if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                    raise ImportFailure(path, None, f"{at}.tool_calls[{number}].id", "missing")
                name = call.get("function")
                if not isinstance(name, str):
                    raise ImportFailure(
                        path, None, f"{at}.tool_calls[{number}].function", "missing"
                    )
                root.call(step, call["id"], name, arguments_of(call.get("arguments")))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            result_extra: JsonDict = dict(extra)
            if message.get("error"):
                result_extra["error"] = message["error"]
            text = _visible(content)
            if not root.result(call_id if isinstance(call_id, str) else None, text, result_extra):
                root.orphan_result(
                    call_id if isinstance(call_id, str) else None, text, result_extra
                )
        else:
            raise ImportFailure(path, None, f"{at}.role", f"unknown role {role!r}")
    if not root.node.steps:
        raise ImportFailure(path, None, f"{where}.messages", "empty")
    details: JsonDict = {
        "task": spec.get("task"),
        "model": model,
        "eval_id": spec.get("eval_id"),
        "run_id": spec.get("run_id"),
        "sample_id": sample["id"],
        "epoch": epoch,
    }
    for key in ("uuid", "target", "scores", "model_usage", "error", "metadata"):
        if sample.get(key) not in (None, {}, []):
            details["sample_uuid" if key == "uuid" else key] = sample[key]
    source: JsonDict = {"task": spec.get("task"), "sample_id": sample["id"], "epoch": epoch}
    return Imported(root, "inspect", source_id, path, source, {"inspect": details})


def read_inspect(path: Path) -> list[Imported]:
    """One trajectory per sample of the Inspect log ``path`` (``.eval`` or ``.json``)."""
    try:
        header, samples = read_log_parts(path)
    except zipfile.BadZipFile as exc:
        raise ImportFailure(path, None, "file", f"broken zip archive ({exc})") from None
    if not isinstance(header.get("eval"), dict):
        raise ImportFailure(path, None, "eval", "missing or not an object")
    out = [_sample(path, header, sample, index) for index, sample in enumerate(samples)]
    if not out:
        raise ImportFailure(path, None, "samples", "the log holds no samples")
    return out
