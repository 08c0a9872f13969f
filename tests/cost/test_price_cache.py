"""The per-user cache of genai-prices lookups gives the costs the table gives, for every model.

The reference is genai-prices itself: its ``calc_price`` on its bundled table. Nothing here
asks wayline for the expected figure.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import genai_prices
import pytest
from genai_prices.data import providers

from wayline.pricing import Pricer, TokenCounts
from wayline.pricing_cache import MAX_ENTRIES, cache_dir, decode, encode

# Usages that reach every part of a price: plain, cache reads and writes, reasoning, a prompt
# past the 200k-token tiers, and nothing at all.
USAGES = [
    TokenCounts(input=1000, output=500),
    TokenCounts(input=12_000, output=900, cache_read=8000, cache_write=1500, reasoning=300),
    TokenCounts(input=300_000, output=20_000, cache_read=100_000),
    TokenCounts(),
]
# Prices in force at different times: an old date, a recent one, and off-peak hours.
TIMES = [
    datetime(2024, 6, 1, 12, tzinfo=UTC),
    datetime(2026, 11, 1, 3, 30, tzinfo=UTC),
    datetime(2026, 11, 1, 17, 45, tzinfo=UTC),
]
QUERIES = [(p.id, m.id) for p in providers for m in p.models]
# A query can take two lookups (its provider, then none): a chunk's all fit in one file.
CHUNK = MAX_ENTRIES // 2


def _usage(counts: TokenCounts) -> dict[str, Any]:
    """The counts as an OpenAI-shaped usage dict (its input includes the cached parts)."""
    return {
        "prompt_tokens": counts.input,
        "completion_tokens": counts.output,
        "prompt_tokens_details": {
            "cached_tokens": counts.cache_read,
            "cache_write_tokens": counts.cache_write,
        },
        "completion_tokens_details": {"reasoning_tokens": counts.reasoning},
    }


def _table_cost(model: str, provider: str, counts: TokenCounts, when: datetime) -> float | None:
    """genai-prices' own figure, as wayline asked it before the cache (provider, then none)."""
    usage = genai_prices.Usage(
        input_tokens=counts.input,
        output_tokens=counts.output,
        cache_read_tokens=counts.cache_read or None,
        cache_write_tokens=counts.cache_write or None,
        output_reasoning_tokens=counts.reasoning or None,
    )
    for provider_id in (provider, None):
        try:
            calc = genai_prices.calc_price(
                usage, model, provider_id=provider_id, genai_request_timestamp=when
            )
        except LookupError:
            continue
        except ValueError:
            return None
        return float(calc.total_price)
    return None


def _cache_file(directory: Path) -> Path:
    files = list(directory.glob("prices-*.json"))
    assert len(files) == 1, files
    return files[0]


def test_every_model_entry_survives_the_cache_form() -> None:
    """Every model of the bundled table, written to JSON and read back, equals the original."""
    for provider in providers:
        for model in provider.models:
            assert decode(json.loads(json.dumps(encode(model)))) == model, (provider.id, model.id)


@pytest.mark.parametrize("start", range(0, len(QUERIES), CHUNK))
def test_cached_costs_equal_the_table_for_every_model(start: int, tmp_path: Path) -> None:
    """For every model, a pricer reading the cache another one wrote gives exactly the cost
    genai-prices gives, at several usages and times."""
    queries = QUERIES[start : start + CHUNK]
    cold = Pricer(cache=tmp_path)
    for provider, model in queries:
        figure = _table_cost(model, provider, USAGES[0], TIMES[0])
        assert cold.cost_usd(model, _usage(USAGES[0]), provider=provider, when=TIMES[0]) == figure
    lookups = json.loads(_cache_file(tmp_path).read_text())["lookups"]
    assert {json.dumps([p, m]) for p, m in queries} <= set(lookups)
    warm = Pricer(cache=tmp_path)
    for provider, model in queries:
        for counts in USAGES:
            for when in TIMES:
                figure = _table_cost(model, provider, counts, when)
                cost = warm.cost_usd(model, _usage(counts), provider=provider, when=when)
                assert cost == figure, (provider, model, counts, when)


def test_the_cache_file_is_private_and_names_its_table(tmp_path: Path) -> None:
    """The file is 0600 in a 0700 directory, named and marked with the genai-prices version."""
    directory = tmp_path / "cache" / "wayline"
    Pricer(cache=directory).cost_usd("gpt-4o", {"prompt_tokens": 10}, provider="openai")
    path = _cache_file(directory)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert path.name.startswith(f"prices-{genai_prices.__version__}-")
    doc = json.loads(path.read_text())
    assert doc["table"].startswith(f"{genai_prices.__version__}:")
    assert list(doc["lookups"]) == [json.dumps(["openai", "gpt-4o"])]


def test_an_entry_is_used_only_by_the_table_it_came_from(tmp_path: Path) -> None:
    """A planted answer is used when the file names this table and ignored under another
    table's name (an upgraded genai-prices never reads an older table's answers)."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    Pricer(cache=tmp_path).cost_usd("gpt-4o", usage, provider="openai")
    path = _cache_file(tmp_path)
    doc = json.loads(path.read_text())
    for provider in ("openai", None):  # "not in the table", asked with and without provider
        doc["lookups"][json.dumps([provider, "gpt-4o"])] = None
    path.write_text(json.dumps(doc))
    assert Pricer(cache=tmp_path).cost_usd("gpt-4o", usage, provider="openai") is None
    doc["table"] = "0.0.1:1:1"
    path.write_text(json.dumps(doc))
    assert Pricer(cache=tmp_path).cost_usd("gpt-4o", usage, provider="openai") == pytest.approx(
        0.0025
    )


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"format": 1}', b"\xff\xfe", b""],
    ids=["broken", "list", "no-table", "binary", "empty"],
)
def test_a_damaged_file_counts_as_empty_and_is_rewritten(content: bytes, tmp_path: Path) -> None:
    """A file the cache did not write gives way: the cost is the table's and the file is
    written anew."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    Pricer(cache=tmp_path).cost_usd("gpt-4o", usage, provider="openai")
    path = _cache_file(tmp_path)
    path.write_bytes(content)
    assert Pricer(cache=tmp_path).cost_usd("gpt-4o", usage, provider="openai") == pytest.approx(
        0.0025
    )
    assert json.dumps(["openai", "gpt-4o"]) in json.loads(path.read_text())["lookups"]


def test_an_entry_it_cannot_rebuild_is_looked_up_again(tmp_path: Path) -> None:
    """An entry naming a class genai-prices does not have is not trusted: the table answers."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    Pricer(cache=tmp_path).cost_usd("gpt-4o", usage, provider="openai")
    path = _cache_file(tmp_path)
    doc = json.loads(path.read_text())
    doc["lookups"][json.dumps(["openai", "gpt-4o"])]["model"] = {"$": "Path", "v": {}}
    path.write_text(json.dumps(doc))
    assert Pricer(cache=tmp_path).cost_usd("gpt-4o", usage, provider="openai") == pytest.approx(
        0.0025
    )


def test_an_unwritable_cache_leaves_pricing_as_it_was(tmp_path: Path) -> None:
    """A cache directory that cannot be made (a file is in the way) costs nothing but speed."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    pricer = Pricer(cache=blocker / "wayline")
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    assert pricer.cost_usd("gpt-4o", usage, provider="openai") == pytest.approx(0.0025)
    assert pricer.cost_usd("gpt-4o-mini", usage, provider="openai") == pytest.approx(0.00015)
    assert pricer.cost_usd("gpt-4o", usage, provider="custom") == pytest.approx(0.0025)


def test_the_cache_lives_in_the_user_cache_directory(tmp_path: Path) -> None:
    """The default directory is ``$XDG_CACHE_HOME/wayline``, else ``~/.cache/wayline``."""
    assert cache_dir() == Path(os.environ["XDG_CACHE_HOME"]) / "wayline"
    code = "from wayline.pricing_cache import cache_dir; print(cache_dir())"
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == str(tmp_path / ".cache" / "wayline")


def test_a_later_process_prices_without_loading_the_table() -> None:
    """A second process pricing the models a first one priced reads the cache: the table
    module is never imported, and the costs are the first process's."""
    code = (
        "import json, sys\n"
        "from wayline.pricing import Pricer\n"
        "p = Pricer()\n"
        "p.load()\n"
        "usage = {'prompt_tokens': 1200, 'completion_tokens': 30,"
        " 'prompt_tokens_details': {'cached_tokens': 1000}}\n"
        "costs = [p.cost_usd('gpt-4o', usage, provider='openai'),"
        " p.cost_usd(['local-model', 'claude-sonnet-4-0'], usage, provider='custom'),"
        " p.cost_usd('local-model', usage, provider='custom')]\n"
        "print(json.dumps([costs, 'genai_prices.data' in sys.modules]))\n"
    )

    def run() -> list[Any]:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        result: list[Any] = json.loads(proc.stdout)
        return result

    first, second = run(), run()
    assert first[1] is True and second[1] is False
    assert second[0] == first[0]
    assert first[0][0] is not None and first[0][1] is not None and first[0][2] is None
