"""A trajectory's cost total: the sum of its priced steps, or unknown when any step is not."""

from __future__ import annotations

from wayline.relay.atif.model import Step, final_metrics


def _step(metrics: dict[str, float | int]) -> Step:
    return Step(source="agent", timestamp=None, message="", metrics=dict(metrics))


def test_total_cost_sums_priced_steps() -> None:
    """Every step priced: total_cost_usd is their sum."""
    totals = final_metrics(
        [
            _step({"prompt_tokens": 10, "cost_usd": 0.25}),
            _step({"prompt_tokens": 5, "cost_usd": 0.5}),
        ]
    )
    assert totals["total_cost_usd"] == 0.75


def test_one_unpriced_step_leaves_the_total_unknown() -> None:
    """A step with usage but no price (an unknown model) drops the total, never understates it."""
    totals = final_metrics(
        [_step({"prompt_tokens": 10, "cost_usd": 0.25}), _step({"prompt_tokens": 5})]
    )
    assert "total_cost_usd" not in totals
    assert totals["total_prompt_tokens"] == 15


def test_steps_without_metrics_do_not_count() -> None:
    """User and system steps carry no metrics and do not make the total unknown."""
    user = Step(source="user", timestamp=None, message="hi")
    totals = final_metrics([user, _step({"prompt_tokens": 10, "cost_usd": 0.25})])
    assert totals["total_cost_usd"] == 0.25
