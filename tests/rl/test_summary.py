"""Held-out summary: bootstrap intervals over tasks and paired gains."""

from __future__ import annotations

import pytest

from envsched_gym.rl.summary import heldout_table, paired_gain, success_interval


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
