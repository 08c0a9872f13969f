"""Reading the fields of ATIF steps and results for the viewer's model: times, texts, statuses.

Every reader is tolerant: a value of the wrong type reads as absent, never as an error.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from wayline.relay.atif.payloads import timestamp_ns

JsonDict = dict[str, Any]
_PRETTY_LIMIT = 200_000  # bigger results are shown as they are, not re-indented

__all__ = [
    "content_text",
    "finite",
    "header_of",
    "is_error_status",
    "list_of_dicts",
    "llm_cancelled",
    "metrics_of",
    "ns_of_seconds",
    "ns_of_text",
    "pretty",
    "result_cancelled",
    "result_is_error",
    "result_text",
    "scope_uuid",
]


def ns_of_text(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    exact: int | None = timestamp_ns(value)
    if exact is not None:
        return exact
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # Harbor writes naive UTC times
    return round(parsed.timestamp() * 1_000_000) * 1000


def finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def ns_of_seconds(value: Any) -> int | None:
    if finite(value):
        return round(float(value) * 1000) * 1_000_000
    return None


def content_text(content: Any) -> str:
    """ATIF message/result content as text; media parts become ``[image: type path]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if not isinstance(part, dict):
                parts.append(str(part))
            elif part.get("type") == "text":
                parts.append(str(part.get("text") or ""))
            else:
                source = part.get("source") if isinstance(part.get("source"), dict) else {}
                media = source.get("media_type", "") if source else ""
                where = source.get("path", "") if source else ""
                parts.append(f"[{part.get('type')}: {media} {where}]".replace("  ", " "))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def pretty(text: str) -> str:
    """Re-indent text that is a JSON object or array; other text unchanged."""
    stripped = text.strip()
    if len(stripped) > _PRETTY_LIMIT or stripped[:1] not in ("{", "["):
        return text
    try:
        value = json.loads(stripped)
    except ValueError:
        return text
    return json.dumps(value, indent=2, ensure_ascii=False)


def is_error_status(value: Any) -> bool:
    return isinstance(value, str) and value.lower() in ("error", "failed", "failure")


def llm_cancelled(extra: JsonDict) -> bool:
    """Whether a step's model call ended because the turn was cancelled (wayline records the
    attempt's error with reason ``interrupted``): a cancellation, not a failure."""
    response = extra.get("llm_response")
    error = response.get("error") if isinstance(response, dict) else None
    if not isinstance(error, dict):
        return False
    return error.get("reason") == "interrupted" or error.get("type") == "TurnInterrupted"


def result_cancelled(result: JsonDict) -> bool:
    extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    assert isinstance(extra, dict)
    meta = extra.get("metadata") if isinstance(extra.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return meta.get("status") == "cancelled" or extra.get("status") == "cancelled"


def result_is_error(result: JsonDict, text: str) -> bool:
    extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    assert isinstance(extra, dict)
    meta = extra.get("metadata") if isinstance(extra.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    if extra.get("is_error") is True or is_error_status(meta.get("status")):
        return True
    if meta.get("otel.status_code") == "ERROR":
        return True
    if text.lstrip().startswith("{") and '"error"' in text:
        try:
            value = json.loads(text)
        except ValueError:
            return False
        return isinstance(value, dict) and bool(value.get("error"))
    return False


def list_of_dicts(value: Any) -> list[JsonDict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def scope_uuid(doc: JsonDict) -> str | None:
    for step in doc.get("steps") or []:
        extra = step.get("extra") if isinstance(step, dict) else None
        ancestry = extra.get("ancestry") if isinstance(extra, dict) else None
        if isinstance(ancestry, dict) and isinstance(ancestry.get("parent_id"), str):
            return str(ancestry["parent_id"])
    return None


def result_text(result: JsonDict) -> str:
    if result.get("content") is not None:
        return content_text(result.get("content"))
    extra = result.get("extra")
    if isinstance(extra, dict) and "tool_result" in extra:
        value = extra["tool_result"]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def metrics_of(value: Any) -> JsonDict:
    if not isinstance(value, dict):
        return {}
    out: JsonDict = {}
    for key, short in (
        ("prompt_tokens", "in"),
        ("completion_tokens", "out"),
        ("cached_tokens", "ca"),
        ("cost_usd", "co"),
    ):
        number = value.get(key)
        if finite(number):
            out[short] = number
    return out


def header_of(doc: JsonDict) -> JsonDict:
    agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    assert isinstance(agent, dict)
    steps = [s for s in doc.get("steps") or [] if isinstance(s, dict)]
    final = doc.get("final_metrics") if isinstance(doc.get("final_metrics"), dict) else {}
    assert isinstance(final, dict)
    summed: JsonDict = {}
    for step in steps:
        for key, number in metrics_of(step.get("metrics")).items():
            summed[key] = summed.get(key, 0) + number
    header: JsonDict = {
        "agent": agent.get("name"),
        "ver": agent.get("version"),
        "model": agent.get("model_name"),
        "session": doc.get("session_id"),
        "tid": doc.get("trajectory_id"),
        "schema": doc.get("schema_version"),
        "steps": len(steps),
    }
    for key, total in (
        ("in", "total_prompt_tokens"),
        ("out", "total_completion_tokens"),
        ("ca", "total_cached_tokens"),
        ("co", "total_cost_usd"),
    ):
        value = final.get(total, summed.get(key))
        if finite(value):
            header[key] = value
    if isinstance(doc.get("notes"), str):
        header["notes"] = doc["notes"]
    return header
