"""The cost of one model call in USD, from the ``genai-prices`` table, offline.

``genai-prices`` (the table Pydantic AI and Logfire price with) ships its data inside the
package; wayline reads only that bundled snapshot and never starts the package's
``UpdatePrices`` background fetch, so pricing needs no network. The package is imported on
the first call that needs a price: a process that never prices anything never pays for it.
Which table entry prices a model is remembered per user (:mod:`wayline.pricing_cache`), so a
process that prices models priced before does not load the whole table; the cost is still
worked out by the package's own code from that entry.

Token counts arrive in several shapes, and the providers disagree on what ``input`` means —
mixing them up is the well-known "40x overcharge" bug of cached tokens:

==========================  ===========================================  ===================
shape                       input total                                  output total
==========================  ===========================================  ===================
OpenAI Chat / Responses     ``prompt_tokens`` / ``input_tokens``         ``completion_tokens``
                            (already includes ``cached_tokens``)         (includes reasoning)
Anthropic Messages          ``input_tokens`` + ``cache_read_input_tokens``
                            + ``cache_creation_input_tokens``            ``output_tokens``
Google Gemini               ``promptTokenCount`` (includes cached)       ``candidatesTokenCount``
                            + ``toolUsePromptTokenCount``                + ``thoughtsTokenCount``
wayline hook usage          ``input_tokens`` (includes cache reads)      ``output_tokens``
relay annotated usage       ``uncached_input_tokens`` + cache reads
                            + cache writes                               ``completion_tokens``
==========================  ===========================================  ===================

:func:`token_counts` turns any of them into :class:`TokenCounts`, whose ``input`` is the
total input with the cached parts counted in, as ``genai-prices`` expects; the table then
prices cache reads, cache writes and reasoning at their own rates where it has them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wayline.pricing_cache import MISSING, PriceCache, cache_dir, table_version

__all__ = [
    "COST_ATTRIBUTES",
    "CUSTOM_PROVIDER",
    "TABLE_DATES",
    "Pricer",
    "TokenCounts",
    "price_table",
    "token_counts",
    "with_cost",
]

log = logging.getLogger("wayline.pricing")

CUSTOM_PROVIDER = "custom"
"""The provider name wayline gives an endpoint it does not know (a local or self-hosted server)."""

COST_ATTRIBUTES = ("llm.cost.total", "gen_ai.usage.cost")
"""Span attributes of a call's cost in USD: OpenInference's, and the name Langfuse reads (the
GenAI semantic conventions define none yet)."""

TABLE_DATES = {"0.2.3": "2026-11-10"}
"""Release date of each known ``genai-prices`` version: the date of its bundled snapshot."""


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """Token counts of one call: ``input``/``output`` are totals the parts are included in."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _get(usage: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        n = _int(usage.get(key))
        if n is not None:
            return n
    return None


def _details(usage: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, Mapping):
            return value
    return {}


def _google(usage: Mapping[str, Any]) -> TokenCounts:
    prompt = _get(usage, "promptTokenCount", "prompt_token_count") or 0
    tool_prompt = _get(usage, "toolUsePromptTokenCount", "tool_use_prompt_token_count") or 0
    candidates = _get(usage, "candidatesTokenCount", "candidates_token_count") or 0
    thoughts = _get(usage, "thoughtsTokenCount", "thoughts_token_count") or 0
    cached = _get(usage, "cachedContentTokenCount", "cached_content_token_count") or 0
    return TokenCounts(prompt + tool_prompt, candidates + thoughts, cached, 0, thoughts)


def _anthropic(usage: Mapping[str, Any]) -> TokenCounts:
    read = _get(usage, "cache_read_input_tokens") or 0
    write = _get(usage, "cache_creation_input_tokens") or 0
    uncached = _get(usage, "input_tokens") or 0
    return TokenCounts(uncached + read + write, _get(usage, "output_tokens") or 0, read, write)


def _openai_like(usage: Mapping[str, Any]) -> TokenCounts:
    prompt_details = _details(usage, "prompt_tokens_details", "input_tokens_details")
    output_details = _details(usage, "completion_tokens_details", "output_tokens_details")
    read = _get(usage, "cache_read_tokens")
    if read is None:
        read = _get(prompt_details, "cached_tokens") or 0
    write = _get(usage, "cache_write_tokens")
    if write is None:
        write = _get(prompt_details, "cache_write_tokens", "cache_creation_tokens") or 0
    reasoning = _get(usage, "reasoning_tokens")
    if reasoning is None:
        reasoning = _get(output_details, "reasoning_tokens") or 0
    uncached = _get(usage, "uncached_input_tokens")
    if uncached is not None:  # relay's annotation: the uncached part is explicit
        total_input = uncached + read + write
    else:
        total_input = _get(usage, "prompt_tokens", "input_tokens") or 0
    output = _get(usage, "completion_tokens", "output_tokens") or 0
    return TokenCounts(total_input, output, read, write, reasoning)


def token_counts(usage: Any) -> TokenCounts | None:
    """The counts in a usage dict of any supported shape (see the module doc), else None."""
    if not isinstance(usage, Mapping):
        return None
    inner = usage.get("usageMetadata") or usage.get("usage_metadata")
    if isinstance(inner, Mapping):
        usage = inner
    if any(k in usage for k in ("promptTokenCount", "prompt_token_count", "candidatesTokenCount")):
        return _google(usage)
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
        return _anthropic(usage)
    counts = _openai_like(usage)
    if counts == TokenCounts() and not any(
        k in usage for k in ("prompt_tokens", "input_tokens", "completion_tokens", "output_tokens")
    ):
        return None
    return counts


def price_table() -> dict[str, str | None]:
    """The price table in use: ``source``, ``version`` and ``date`` of its bundled snapshot."""
    version = table_version()
    date = TABLE_DATES.get(version) if version else None
    return {"source": "genai-prices", "version": version, "date": date}


_DEFAULT_CACHE: Any = object()


class Pricer:
    """Prices calls; warns once per model the table does not know (its cost is None, not 0).

    One instance per consumer (an ATIF builder, an OTel observer, an export run): the set of
    models already warned about lives here, not in the module. ``cache`` is the directory of
    the lookup cache (default :func:`wayline.pricing_cache.cache_dir`; None: no cache).
    Thread-safe.
    """

    def __init__(self, *, cache: Path | None = _DEFAULT_CACHE) -> None:
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        self._table: Any = None  # genai-prices' bundled snapshot, loaded on first use
        self._cache = PriceCache(cache_dir() if cache is _DEFAULT_CACHE else cache)
        self._found: dict[tuple[str | None, str], Any] = {}

    def load(self) -> None:
        """Get ready to price now (a plugin's build on its hook thread): reads the cached
        lookups; the table itself loads only for a model they do not answer."""
        with self._lock:
            self._cache.load()

    def _bundled(self) -> Any:
        """The table bundled with genai-prices: never one its background updater fetched
        (another library in the process may run it), so the recorded table date holds."""
        if self._table is None:
            from genai_prices.data import providers
            from genai_prices.data_snapshot import DataSnapshot

            self._table = DataSnapshot(providers=providers, from_auto_update=False)
        return self._table

    def _lookup(self, provider: str | None, model: str) -> Any:
        """The table's ``(provider, model)`` entry for a provider name (or None) and a model
        name, else None: from this pricer's memory, the cache, or the table itself."""
        key = (provider, model)
        with self._lock:
            if key in self._found:
                return self._found[key]
            found = self._cache.get(key)
            if found is MISSING:
                try:
                    found = self._bundled().find_provider_model(model, None, provider, None)
                except LookupError:
                    found = None
                self._cache.put(key, found)
            self._found[key] = found
            return found

    def cost_usd(
        self,
        models: str | list[str | None] | None,
        usage: Any,
        *,
        provider: str | None = None,
        when: datetime | None = None,
    ) -> float | None:
        """USD cost of one call, or None (no usage, no model, or a model not in the table).

        ``models`` may list candidates (the response's model first, then the requested one):
        the first the table knows is priced. ``when`` picks the prices in force at the call's
        time, so pricing a recorded session again gives the same figure.
        """
        counts = token_counts(usage)
        if counts is None:
            return None
        names = [models] if isinstance(models, str) or models is None else models
        candidates = [m for m in names if isinstance(m, str) and m]
        if not candidates:
            return None
        for model in candidates:
            price = self._price(model, provider, counts, when)
            if price is not None:
                return price
        self._warn(candidates[0], provider)
        return None

    def hook_cost(self, payload: Mapping[str, Any]) -> float | None:
        """The cost of a ``post_api_request`` payload: its usage, the response's model (then
        the requested one), its provider, priced at its ``ended_at`` time."""
        response = payload.get("response")
        usage = payload.get("usage")
        if usage is None and isinstance(response, Mapping):
            usage = response.get("usage")
        models: list[str | None] = [payload.get("response_model"), payload.get("model")]
        if isinstance(response, Mapping):
            models.insert(1, response.get("model"))
        provider = payload.get("provider")
        ended = payload.get("ended_at")
        when = None
        if isinstance(ended, int | float) and not isinstance(ended, bool) and ended > 0:
            when = datetime.fromtimestamp(ended, UTC)
        return self.cost_usd(
            models, usage, provider=provider if isinstance(provider, str) else None, when=when
        )

    def _price(
        self, model: str, provider: str | None, counts: TokenCounts, when: datetime | None
    ) -> float | None:
        """The table's price of ``counts``: the entry of the first of (provider, no provider)
        that finds the model, priced as ``DataSnapshot.calc`` prices it."""
        for provider_id in (provider, None) if provider else (None,):
            found = self._lookup(provider_id, model)
            if found is None:
                continue
            from genai_prices.types import Usage

            usage = Usage(
                input_tokens=counts.input,
                output_tokens=counts.output,
                cache_read_tokens=counts.cache_read or None,
                cache_write_tokens=counts.cache_write or None,
                output_reasoning_tokens=counts.reasoning or None,
            )
            table_provider, table_model = found
            try:
                result = table_model.calc_price(
                    usage, table_provider, genai_request_timestamp=when or datetime.now(UTC)
                )
            except LookupError:
                continue
            except ValueError as exc:  # inconsistent counts (e.g. more cached than input)
                log.debug("cost: %s: %s", model, exc)
                return None
            return float(result.total_price)
        return None

    def _warn(self, model: str, provider: str | None) -> None:
        key = f"{provider or ''}/{model}"
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        # A custom endpoint (Ollama, vLLM, a scripted model) serves models no price table
        # knows: expected, so said once at INFO; an unknown model of a known provider warns.
        level = logging.INFO if provider == CUSTOM_PROVIDER else logging.WARNING
        log.log(
            level,
            "cost: model %r%s is not in the genai-prices table; its cost is left empty",
            model,
            f" (provider {provider!r})" if provider else "",
        )


def with_cost(response: Any, cost: float | None) -> Any:
    """``response`` (a hook's response dict) with ``usage.cost_usd`` set, as a copy; unchanged
    when there is no cost or no usage dict to put it in."""
    if cost is None or not isinstance(response, Mapping):
        return response
    usage = response.get("usage")
    if not isinstance(usage, Mapping):
        return response
    return {**response, "usage": {**usage, "cost_usd": cost}}
