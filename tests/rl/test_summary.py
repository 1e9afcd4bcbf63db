"""Held-out summary: bootstrap intervals over tasks and paired gains."""

from __future__ import annotations

import pytest

from envsched_gym.rl.summary import heldout_table, paired_gain, seeds_and_tasks_gain, success_interval


def test_interval_brackets_the_mean_and_narrows_with_more_tasks():
    small, large = success_interval([1, 0] * 10), success_interval([1, 0] * 200)
    assert small.low < 0.5 < small.high and large.low < 0.5 < large.high
    assert large.high - large.low < small.high - small.low


def test_constant_results_have_a_point_interval():
    ci = success_interval([0.0] * 30)
    assert (ci.mean, ci.low, ci.high) == (0.0, 0.0, 0.0)


def test_paired_gain_sees_a_consistent_improvement_that_unpaired_noise_would_hide():
    before = [0, 1] * 25
    after = [1, 1] * 25
    gain = paired_gain(before, after)
    assert gain.mean == pytest.approx(0.5) and gain.low > 0


def test_gain_needs_the_same_tasks():
    with pytest.raises(ValueError, match="same tasks"):
        paired_gain([1, 0], [1])


def test_pooling_seeds_that_disagree_widens_the_interval_to_their_spread():
    befores = [[0.0] * 50, [0.0] * 50]
    afters = [[1.0] * 50, [0.0] * 50]  # one training seed gains on every task, the other on none
    tasks_only = paired_gain([0.0] * 100, [1.0] * 50 + [0.0] * 50)  # the same tasks, pooled
    across = seeds_and_tasks_gain(befores, afters)
    assert across.mean == tasks_only.mean == pytest.approx(0.5)
    assert tasks_only.low > 0.3  # the held-out sample alone says "a gain"
    assert across.low == 0.0 and across.high == 1.0  # the seeds say it may be none or all


def test_pooling_seeds_that_agree_keeps_the_task_level_noise():
    befores = [[0, 1] * 25 for _ in range(5)]
    afters = [[1, 1] * 25 for _ in range(5)]
    across = seeds_and_tasks_gain(befores, afters)
    assert across.mean == pytest.approx(0.5) and 0.35 < across.low < 0.5 < across.high < 0.65


def test_pooling_needs_paired_seeds():
    with pytest.raises(ValueError, match="one before and one after per seed: 2 befores, 1 afters"):
        seeds_and_tasks_gain([[0], [1]], [[1]])
    with pytest.raises(ValueError, match="seed 1: a paired gain needs the same tasks: 2 results before, 1 after"):
        seeds_and_tasks_gain([[0], [1, 0]], [[1], [1]])
    with pytest.raises(ValueError, match="seed 0 has no held-out results"):
        seeds_and_tasks_gain([[]], [[]])


def test_table_reports_the_gain_over_the_base_and_over_the_start_of_grpo():
    ids = [f"t{i}" for i in range(40)]
    evals = [
        {"stage": "base", "step": 0, "n": 40, "successes": [0.0] * 40, "task_ids": ids},
        {"stage": "warm-start", "step": 0, "n": 40, "successes": [1.0, 0.0] * 20, "task_ids": ids},
        {"stage": "grpo", "step": 8, "n": 40, "successes": [1.0, 0.0] * 20, "task_ids": ids},
    ]
    table = heldout_table(evals)
    assert "over base step 0: 0.500" in table and "above the interval" in table
    assert "over warm-start step 0: 0.000 [0.000, 0.000]" in table and "within noise" in table
