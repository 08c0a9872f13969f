"""Cost of one call from usage payloads of the OpenAI, Anthropic and Google shapes.

Every expected figure is worked out here by hand from the providers' published prices per
million tokens (quoted next to each model below), never by asking genai-prices.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from wayline.pricing import Pricer, TokenCounts, price_table, token_counts

M = 1_000_000
# Published prices, USD per million tokens: (input, cached input read, output[, cache write]).
GPT_4O = (2.50, 1.25, 10.00)
GPT_4O_MINI = (0.15, 0.075, 0.60)
GPT_41 = (2.00, 0.50, 8.00)
GPT_41_MINI = (0.40, 0.10, 1.60)
O3 = (2.00, 0.50, 8.00)
O4_MINI = (1.10, 0.275, 4.40)
GPT_5 = (1.25, 0.125, 10.00)
GPT_5_MINI = (0.25, 0.025, 2.00)
SONNET_4 = (3.00, 0.30, 15.00, 3.75)
HAIKU_35 = (0.80, 0.08, 4.00, 1.00)
OPUS_41 = (15.00, 1.50, 75.00, 18.75)
HAIKU_45 = (1.00, 0.10, 5.00, 1.25)
FLASH_25 = (0.30, 0.03, 2.50)
FLASH_20 = (0.10, 0.025, 0.40)
FLASH_LITE_25 = (0.10, 0.01, 0.40)
PRO_25 = (1.25, 0.125, 10.00)  # prompts up to 200k tokens
PRO_25_LONG = (2.50, 0.25, 15.00)  # prompts over 200k tokens


def openai(p: tuple[float, ...], uncached: int, cached: int, output: int) -> float:
    """OpenAI: the uncached prompt at the input rate, cached at the cache rate, output
    (reasoning included) at the output rate."""
    return (uncached * p[0] + cached * p[1] + output * p[2]) / M


def anthropic(p: tuple[float, ...], uncached: int, read: int, write: int, output: int) -> float:
    """Anthropic: uncached input, cache reads, cache writes (5 min) and output, each at its rate."""
    return (uncached * p[0] + read * p[1] + write * p[3] + output * p[2]) / M


CASES: list[tuple[str, str, str | None, dict[str, Any], float]] = [
    # -- OpenAI Chat Completions: prompt_tokens INCLUDES cached_tokens -----------------------
    (
        "oa-plain",
        "gpt-4o",
        "openai",
        {"prompt_tokens": 1000, "completion_tokens": 500},
        openai(GPT_4O, 1000, 0, 500),
    ),
    (
        "oa-cached",
        "gpt-4o",
        "openai",
        {
            "prompt_tokens": 10000,
            "completion_tokens": 200,
            "prompt_tokens_details": {"cached_tokens": 8000},
        },
        openai(GPT_4O, 2000, 8000, 200),
    ),
    (
        "oa-all-cached",
        "gpt-4o-mini",
        "openai",
        {
            "prompt_tokens": 4096,
            "completion_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 4096},
        },
        openai(GPT_4O_MINI, 0, 4096, 10),
    ),
    (
        "oa-mini-plain",
        "gpt-4o-mini",
        "openai",
        {"prompt_tokens": 123456, "completion_tokens": 7890, "total_tokens": 131346},
        openai(GPT_4O_MINI, 123456, 0, 7890),
    ),
    (
        "oa-reasoning",
        "o3",
        "openai",
        {
            "prompt_tokens": 2000,
            "completion_tokens": 3000,
            "completion_tokens_details": {"reasoning_tokens": 2500},
        },
        openai(O3, 2000, 0, 3000),
    ),
    (
        "oa-reasoning-cached",
        "o4-mini",
        "openai",
        {
            "prompt_tokens": 50000,
            "completion_tokens": 4000,
            "prompt_tokens_details": {"cached_tokens": 45000},
            "completion_tokens_details": {"reasoning_tokens": 3500},
        },
        openai(O4_MINI, 5000, 45000, 4000),
    ),
    (
        "oa-41",
        "gpt-4.1",
        "openai",
        {
            "prompt_tokens": 30000,
            "completion_tokens": 1000,
            "prompt_tokens_details": {"cached_tokens": 29000, "audio_tokens": 0},
        },
        openai(GPT_41, 1000, 29000, 1000),
    ),
    (
        "oa-41-mini",
        "gpt-4.1-mini",
        "openai",
        {"prompt_tokens": 777, "completion_tokens": 333},
        openai(GPT_41_MINI, 777, 0, 333),
    ),
    (
        "oa-5",
        "gpt-5",
        "openai",
        {
            "prompt_tokens": 20000,
            "completion_tokens": 6000,
            "prompt_tokens_details": {"cached_tokens": 12000},
            "completion_tokens_details": {"reasoning_tokens": 5000},
        },
        openai(GPT_5, 8000, 12000, 6000),
    ),
    (
        "oa-5-mini-no-provider",
        "gpt-5-mini",
        None,
        {"prompt_tokens": 1000, "completion_tokens": 1000},
        openai(GPT_5_MINI, 1000, 0, 1000),
    ),
    (
        "oa-zero-output",
        "gpt-4o",
        "openai",
        {"prompt_tokens": 100, "completion_tokens": 0},
        openai(GPT_4O, 100, 0, 0),
    ),
    # -- OpenAI Responses API: input_tokens INCLUDES cached_tokens ----------------------------
    (
        "resp-cached",
        "gpt-4.1",
        "openai",
        {
            "input_tokens": 9000,
            "output_tokens": 300,
            "input_tokens_details": {"cached_tokens": 6000},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
        openai(GPT_41, 3000, 6000, 300),
    ),
    (
        "resp-reasoning",
        "o3",
        "openai",
        {
            "input_tokens": 1500,
            "output_tokens": 900,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 800},
        },
        openai(O3, 1500, 0, 900),
    ),
    (
        "resp-5",
        "gpt-5",
        "openai",
        {
            "input_tokens": 64000,
            "output_tokens": 2000,
            "input_tokens_details": {"cached_tokens": 63000},
        },
        openai(GPT_5, 1000, 63000, 2000),
    ),
    # -- wayline hook usage (post_api_request): input_tokens INCLUDES cache reads -------------
    (
        "hook-cached",
        "gpt-4o",
        "openai",
        {
            "input_tokens": 5000,
            "output_tokens": 100,
            "prompt_tokens": 5000,
            "completion_tokens": 100,
            "cache_read_tokens": 4000,
            "reasoning_tokens": 0,
        },
        openai(GPT_4O, 1000, 4000, 100),
    ),
    (
        "hook-custom-provider",
        "gpt-4o-mini",
        "custom",
        {"input_tokens": 2000, "output_tokens": 50, "cache_read_tokens": 0},
        openai(GPT_4O_MINI, 2000, 0, 50),
    ),
    # -- relay annotation: uncached_input_tokens explicit --------------------------------------
    (
        "relay-openai",
        "gpt-4.1",
        "openai",
        {
            "prompt_tokens": 10,
            "completion_tokens": 1,
            "cache_read_tokens": 1,
            "uncached_input_tokens": 9,
            "total_tokens": 11,
        },
        openai(GPT_41, 9, 1, 1),
    ),
    (
        "relay-anthropic",
        "claude-sonnet-4-0",
        "anthropic",
        {
            "prompt_tokens": 100,
            "completion_tokens": 50,
            "cache_read_tokens": 3000,
            "cache_write_tokens": 1000,
            "uncached_input_tokens": 100,
        },
        anthropic(SONNET_4, 100, 3000, 1000, 50),
    ),
    # -- Anthropic Messages: input_tokens EXCLUDES both cache counts -------------------------
    (
        "an-plain",
        "claude-sonnet-4-20250514",
        "anthropic",
        {
            "input_tokens": 1200,
            "output_tokens": 300,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
        anthropic(SONNET_4, 1200, 0, 0, 300),
    ),
    (
        "an-read",
        "claude-sonnet-4-20250514",
        "anthropic",
        {
            "input_tokens": 20,
            "output_tokens": 400,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 90000,
        },
        anthropic(SONNET_4, 20, 90000, 0, 400),
    ),
    (
        "an-write",
        "claude-sonnet-4-20250514",
        "anthropic",
        {
            "input_tokens": 4,
            "output_tokens": 255,
            "cache_creation_input_tokens": 4735,
            "cache_read_input_tokens": 0,
        },
        anthropic(SONNET_4, 4, 0, 4735, 255),
    ),
    (
        "an-read-write",
        "claude-3-5-haiku-20241022",
        "anthropic",
        {
            "input_tokens": 150,
            "output_tokens": 80,
            "cache_creation_input_tokens": 2000,
            "cache_read_input_tokens": 18000,
        },
        anthropic(HAIKU_35, 150, 18000, 2000, 80),
    ),
    (
        "an-opus",
        "claude-opus-4-1-20250805",
        "anthropic",
        {
            "input_tokens": 3000,
            "output_tokens": 1200,
            "cache_creation_input_tokens": 500,
            "cache_read_input_tokens": 10000,
        },
        anthropic(OPUS_41, 3000, 10000, 500, 1200),
    ),
    (
        "an-haiku-45",
        "claude-haiku-4-5",
        "anthropic",
        {"input_tokens": 1000, "output_tokens": 1000, "cache_read_input_tokens": 0},
        anthropic(HAIKU_45, 1000, 0, 0, 1000),
    ),
    (
        "an-only-read-key",
        "claude-haiku-4-5",
        None,
        {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 990},
        anthropic(HAIKU_45, 10, 990, 0, 5),
    ),
    # -- Google Gemini: promptTokenCount INCLUDES cachedContentTokenCount; thoughts are NOT in
    #    candidatesTokenCount and are billed as output ----------------------------------------
    (
        "gg-plain",
        "gemini-2.5-flash",
        "google",
        {"promptTokenCount": 1000, "candidatesTokenCount": 200, "totalTokenCount": 1200},
        openai(FLASH_25, 1000, 0, 200),
    ),
    (
        "gg-thoughts",
        "gemini-2.5-flash",
        "google",
        {
            "promptTokenCount": 1000,
            "candidatesTokenCount": 200,
            "thoughtsTokenCount": 800,
            "totalTokenCount": 2000,
        },
        openai(FLASH_25, 1000, 0, 1000),
    ),
    (
        "gg-cached",
        "gemini-2.5-flash",
        "google",
        {"promptTokenCount": 50000, "candidatesTokenCount": 100, "cachedContentTokenCount": 40000},
        openai(FLASH_25, 10000, 40000, 100),
    ),
    (
        "gg-cached-thoughts-wrapped",
        "gemini-2.5-flash",
        "google",
        {
            "usageMetadata": {
                "promptTokenCount": 8000,
                "candidatesTokenCount": 50,
                "cachedContentTokenCount": 6000,
                "thoughtsTokenCount": 450,
            }
        },
        openai(FLASH_25, 2000, 6000, 500),
    ),
    (
        "gg-snake",
        "gemini-2.0-flash",
        "google",
        {"prompt_token_count": 3000, "candidates_token_count": 700},
        openai(FLASH_20, 3000, 0, 700),
    ),
    (
        "gg-lite",
        "gemini-2.5-flash-lite",
        "google",
        {"promptTokenCount": 1000, "candidatesTokenCount": 1000},
        openai(FLASH_LITE_25, 1000, 0, 1000),
    ),
    (
        "gg-pro-short",
        "gemini-2.5-pro",
        "google",
        {
            "promptTokenCount": 100000,
            "candidatesTokenCount": 2000,
            "thoughtsTokenCount": 3000,
            "cachedContentTokenCount": 50000,
        },
        openai(PRO_25, 50000, 50000, 5000),
    ),
    (
        "gg-pro-long-tier",
        "gemini-2.5-pro",
        "google",
        {
            "promptTokenCount": 300000,
            "candidatesTokenCount": 1000,
            "cachedContentTokenCount": 100000,
        },
        openai(PRO_25_LONG, 200000, 100000, 1000),
    ),
    (
        "gg-tool-prompt",
        "gemini-2.0-flash",
        "google",
        {"promptTokenCount": 1000, "toolUsePromptTokenCount": 500, "candidatesTokenCount": 10},
        openai(FLASH_20, 1500, 0, 10),
    ),
]


@pytest.mark.parametrize(
    ("model", "provider", "usage", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_cost_matches_the_published_prices(
    model: str, provider: str | None, usage: dict[str, Any], expected: float
) -> None:
    """Each payload costs what the published per-token prices give, cached, cache-write and
    reasoning tokens included, with each provider's own idea of what input counts."""
    cost = Pricer().cost_usd(model, usage, provider=provider)
    assert cost == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_there_are_at_least_thirty_payloads_of_three_providers() -> None:
    """The table above covers >= 30 payloads and all three provider shapes."""
    assert len(CASES) >= 30
    assert {c[0].split("-")[0] for c in CASES} >= {"oa", "resp", "an", "gg"}


def test_anthropic_cached_input_is_not_charged_twice() -> None:
    """The 40x bug: Anthropic's cache reads are billed once at the read rate, not again as input."""
    usage = {"input_tokens": 10, "output_tokens": 0, "cache_read_input_tokens": 100_000}
    cost = Pricer().cost_usd("claude-sonnet-4-0", usage, provider="anthropic")
    assert cost == pytest.approx((10 * 3.00 + 100_000 * 0.30) / M)
    naive = (100_010 * 3.00) / M  # every token at the input rate
    assert cost is not None and naive / cost > 9


def test_openai_cached_tokens_are_a_part_of_the_prompt() -> None:
    """OpenAI's cached tokens are inside prompt_tokens: never added on top of it."""
    counts = token_counts(
        {
            "prompt_tokens": 1000,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 900},
        }
    )
    assert counts == TokenCounts(input=1000, output=5, cache_read=900)


def test_unknown_model_is_none_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    """A model the table lacks costs None (never $0), with one warning per model."""
    pricer = Pricer()
    usage = {"prompt_tokens": 10, "completion_tokens": 1}
    with caplog.at_level(logging.WARNING, logger="wayline.pricing"):
        assert pricer.cost_usd("scripted-model", usage) is None
        assert pricer.cost_usd("scripted-model", usage) is None
        assert pricer.cost_usd("another-unknown", usage) is None
    warnings = [r.getMessage() for r in caplog.records if r.name == "wayline.pricing"]
    assert len(warnings) == 2
    assert "scripted-model" in warnings[0] and "another-unknown" in warnings[1]


def test_unknown_model_on_a_custom_endpoint_is_said_at_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A local server's model (provider "custom") is unpriced as expected: one INFO line, no
    warning on every run of a local model."""
    pricer = Pricer()
    usage = {"prompt_tokens": 10, "completion_tokens": 1}
    with caplog.at_level(logging.INFO, logger="wayline.pricing"):
        assert pricer.cost_usd("qwen3:8b", usage, provider="custom") is None
        assert pricer.cost_usd("qwen3:8b", usage, provider="custom") is None
    records = [r for r in caplog.records if r.name == "wayline.pricing"]
    assert [r.levelno for r in records] == [logging.INFO]
    assert "qwen3:8b" in records[0].getMessage()


def test_candidates_fall_back_to_the_requested_model() -> None:
    """An unknown response model falls back to the requested one before giving up."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    cost = Pricer().cost_usd(["scripted-model", "gpt-4o"], usage, provider="custom")
    assert cost == pytest.approx(openai(GPT_4O, 1000, 0, 0))


def test_no_usage_or_model_is_none() -> None:
    """Without usage, or without a model name, there is no cost."""
    pricer = Pricer()
    assert pricer.cost_usd("gpt-4o", None) is None
    assert pricer.cost_usd("gpt-4o", {"foo": 1}) is None
    assert pricer.cost_usd(None, {"prompt_tokens": 1}) is None


def test_inconsistent_counts_give_none() -> None:
    """More cached tokens than input is a broken payload: no cost rather than a wrong one."""
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 99},
    }
    assert Pricer().cost_usd("gpt-4o", usage, provider="openai") is None


def test_prices_in_force_at_the_call_time_are_used() -> None:
    """A timestamp selects the table's prices at that time (same figure today for gpt-4o)."""
    when = datetime(2025, 6, 1, tzinfo=UTC)
    usage = {"prompt_tokens": 1000, "completion_tokens": 1000}
    assert Pricer().cost_usd("gpt-4o", usage, provider="openai", when=when) == pytest.approx(
        openai(GPT_4O, 1000, 0, 1000)
    )


def test_price_table_names_its_snapshot() -> None:
    """The table in use is named with its version and the snapshot's date."""
    table = price_table()
    assert table["source"] == "genai-prices"
    assert table["version"] == "0.2.3"
    assert table["date"] == "2026-11-10"


def test_pricing_needs_no_network_and_imports_lazily() -> None:
    """Importing wayline.pricing loads no genai-prices; pricing works with sockets disabled."""
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "import wayline.pricing as p\n"
        "assert 'genai_prices' not in sys.modules\n"
        "cost = p.Pricer().cost_usd('gpt-4o', {'prompt_tokens': 1000, 'completion_tokens': 0})\n"
        "print(cost)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) == pytest.approx(2500 / M)


def test_a_fetched_table_elsewhere_in_the_process_is_not_used() -> None:
    """Prices come from the bundled snapshot even when another library installed a custom
    (fetched) genai-prices snapshot, so the recorded table date stays true."""
    from genai_prices.data_snapshot import DataSnapshot, set_custom_snapshot

    set_custom_snapshot(DataSnapshot(providers=[], from_auto_update=True))
    try:
        usage = {"prompt_tokens": 1000, "completion_tokens": 0}
        assert Pricer().cost_usd("gpt-4o", usage, provider="openai") == pytest.approx(2500 / M)
    finally:
        set_custom_snapshot(None)
